// CRC-32C (every path against known vectors and each other), MD5 (RFC 1321), strict base64,
// x-goog-hash / Content-MD5 parsing and whole IntegrityChecks over bodies fed in pieces.
#include "stepback/https/integrity/integrity.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/heap_trap.hpp"

namespace stepback::https {
namespace {

using namespace std::string_view_literals;

ConstBytes bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

ConstBytes bytes_of(const std::vector<std::uint8_t>& v, std::size_t offset = 0,
                    std::size_t size = SIZE_MAX) {
  if (size == SIZE_MAX) size = v.size() - offset;
  return {v.data() + offset, size};
}

// Bit at a time, straight from the definition: the reference for everything else.
std::uint32_t crc32c_bitwise(ConstBytes b) {
  std::uint32_t r = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < b.size; ++i) {
    r ^= b.data[i];
    for (int k = 0; k < 8; ++k) r = (r & 1u) != 0 ? (r >> 1) ^ 0x82F63B78u : r >> 1;
  }
  return ~r;
}

std::vector<Crc32cPath> available_paths() {
  std::vector<Crc32cPath> paths;
  for (Crc32cPath p : {Crc32cPath::kTable, Crc32cPath::kSse42, Crc32cPath::kArmCrc}) {
    if (crc32c_path_available(p)) paths.push_back(p);
  }
  return paths;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(gen());
  return v;
}

std::string base64_of(ConstBytes b) {
  char out[64];
  const std::size_t n = base64_encode(b, out, sizeof out);
  return std::string(out, n);
}

std::string message_of(const IntegrityResult& r) {
  char out[kIntegrityMessageMax];
  const std::size_t n = format_integrity_message(r, out, sizeof out);
  EXPECT_LT(n, sizeof out);
  EXPECT_EQ(std::strlen(out), n);
  return out;
}

// ---- CRC-32C ------------------------------------------------------------------------------

struct Vector {
  const char* name;
  std::vector<std::uint8_t> data;
  std::uint32_t crc;
};

std::vector<Vector> known_vectors() {
  std::vector<std::uint8_t> ascending(32);
  for (std::size_t i = 0; i < 32; ++i) ascending[i] = static_cast<std::uint8_t>(i);
  std::vector<std::uint8_t> descending(32);
  for (std::size_t i = 0; i < 32; ++i) descending[i] = static_cast<std::uint8_t>(31 - i);
  const std::string_view digits = "123456789";
  return {
      // RFC 3720 appendix B.4.
      {"32 zeros", std::vector<std::uint8_t>(32, 0x00), 0x8A9136AAu},
      {"32 x 0xFF", std::vector<std::uint8_t>(32, 0xFF), 0x62A8AB43u},
      {"0..31", ascending, 0x46DD794Eu},
      {"31..0", descending, 0x113FDB5Cu},
      // The CRC catalogue's check value.
      {"123456789", std::vector<std::uint8_t>(digits.begin(), digits.end()), 0xE3069283u},
      {"empty", {}, 0x00000000u},
  };
}

TEST(Crc32c, KnownVectors) {
  for (const Vector& v : known_vectors()) {
    EXPECT_EQ(crc32c(bytes_of(v.data)), v.crc) << v.name;
    EXPECT_EQ(crc32c_bitwise(bytes_of(v.data)), v.crc) << v.name << " (reference)";
  }
}

TEST(Crc32c, KnownVectorsOnEveryPath) {
  for (Crc32cPath path : available_paths()) {
    for (const Vector& v : known_vectors()) {
      EXPECT_EQ(crc32c_extend_with(path, 0, bytes_of(v.data)), v.crc)
          << v.name << " via " << to_string(path);
    }
  }
}

TEST(Crc32c, ReportsItsPath) {
  const Crc32cPath path = crc32c_path();
  EXPECT_TRUE(crc32c_path_available(path));
  EXPECT_TRUE(crc32c_path_available(Crc32cPath::kTable));
#if defined(__x86_64__)
  EXPECT_FALSE(crc32c_path_available(Crc32cPath::kArmCrc));
#elif defined(__aarch64__)
  EXPECT_FALSE(crc32c_path_available(Crc32cPath::kSse42));
#else
  EXPECT_EQ(path, Crc32cPath::kTable);
#endif
  std::printf("crc32c path: %s (paths available:", to_string(path));
  for (Crc32cPath p : available_paths()) std::printf(" %s", to_string(p));
  std::printf(")\n");
}

TEST(Crc32c, UnavailablePathFallsBackToTheTable) {
  const auto data = random_bytes(5000, 7);
  const std::uint32_t want = crc32c_bitwise(bytes_of(data));
  for (Crc32cPath p : {Crc32cPath::kTable, Crc32cPath::kSse42, Crc32cPath::kArmCrc}) {
    EXPECT_EQ(crc32c_extend_with(p, 0, bytes_of(data)), want) << to_string(p);
  }
}

// Lengths around the word size and the hardware paths' block sizes (x86-64: 8 streams of 32,
// 128 and 1024 bytes; AArch64: 3 streams of 336 and 2720 bytes).
TEST(Crc32c, PathsAgreeAtBlockBoundaries) {
  const auto data = random_bytes(3 * 8192 + 2 * 8160 + 64, 11);
  std::vector<std::size_t> lengths;
  for (std::size_t base : std::vector<std::size_t>{0, 8, 256, 512, 1008, 1024, 1024 + 256, 2016,
                                                   2048, 8160, 8192, 8192 + 1024 + 256, 8160 + 1008,
                                                   16320, 16384, 3 * 8192, 3 * 8192 + 8160}) {
    for (std::size_t d = 0; d <= 17; ++d) {
      lengths.push_back(base + d);
      if (base >= d) lengths.push_back(base - d);
    }
  }
  for (Crc32cPath path : available_paths()) {
    for (std::size_t n : lengths) {
      for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{7}}) {
        if (offset + n > data.size()) continue;
        const ConstBytes b = bytes_of(data, offset, n);
        // The bit-at-a-time reference where it is quick, the table (checked against it
        // elsewhere) beyond.
        const std::uint32_t want =
            n <= 2100 ? crc32c_bitwise(b) : crc32c_extend_with(Crc32cPath::kTable, 0, b);
        EXPECT_EQ(crc32c_extend_with(path, 0, b), want)
            << to_string(path) << " length " << n << " offset " << offset;
      }
    }
  }
}

TEST(Crc32c, PathsAgreeOverRandomLengthsAndAlignments) {
  const auto data = random_bytes(64 * 1024 + 64, 12);
  const auto paths = available_paths();
  std::mt19937 gen(13);
  for (int i = 0; i < 1500; ++i) {
    // Mostly short (one or two short blocks), some spanning long blocks.
    const std::size_t max_length = i % 10 == 0 ? 64 * 1024 : 3000;
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, max_length)(gen);
    const std::size_t offset = std::uniform_int_distribution<std::size_t>(0, 63)(gen);
    const std::uint32_t seed_crc = i % 3 == 0 ? 0 : static_cast<std::uint32_t>(gen());
    const ConstBytes b = bytes_of(data, offset, n);
    const std::uint32_t want = crc32c_extend_with(Crc32cPath::kTable, seed_crc, b);
    if (n <= 3000 && seed_crc == 0) {
      // The table itself against the bit-at-a-time definition.
      EXPECT_EQ(want, crc32c_bitwise(b)) << "length " << n;
    }
    for (Crc32cPath path : paths) {
      ASSERT_EQ(crc32c_extend_with(path, seed_crc, b), want)
          << to_string(path) << " length " << n << " offset " << offset << " seed " << seed_crc;
    }
    ASSERT_EQ(crc32c_extend(seed_crc, b), want);
  }
}

TEST(Crc32c, IncrementalEqualsOneShotAtEverySplit) {
  const auto data = random_bytes(2500, 21);
  const std::uint32_t whole = crc32c_bitwise(bytes_of(data));
  for (Crc32cPath path : available_paths()) {
    for (std::size_t split = 0; split <= data.size(); ++split) {
      const std::uint32_t head = crc32c_extend_with(path, 0, bytes_of(data, 0, split));
      ASSERT_EQ(crc32c_extend_with(path, head, bytes_of(data, split)), whole)
          << to_string(path) << " split at " << split;
    }
  }
}

TEST(Crc32c, IncrementalOverLongBlocksInRandomPieces) {
  const auto data = random_bytes(100'000, 22);
  const std::uint32_t whole = crc32c_extend_with(Crc32cPath::kTable, 0, bytes_of(data));
  std::mt19937 gen(23);
  for (Crc32cPath path : available_paths()) {
    for (int round = 0; round < 20; ++round) {
      std::uint32_t crc = 0;
      std::size_t at = 0;
      while (at < data.size()) {
        const std::size_t n = std::min<std::size_t>(
            data.size() - at, std::uniform_int_distribution<std::size_t>(0, 20000)(gen));
        crc = crc32c_extend_with(path, crc, bytes_of(data, at, n));
        at += n;
      }
      ASSERT_EQ(crc, whole) << to_string(path) << " round " << round;
    }
  }
}

// ---- Base64 -------------------------------------------------------------------------------

TEST(Base64, DecodesExactSizes) {
  std::uint8_t out[16];
  ASSERT_TRUE(base64_decode_exact("4waSgw==", out, 4));
  EXPECT_EQ(out[0], 0xE3);
  EXPECT_EQ(out[1], 0x06);
  EXPECT_EQ(out[2], 0x92);
  EXPECT_EQ(out[3], 0x83);
  ASSERT_TRUE(base64_decode_exact("Zm9v", out, 3));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 3), "foo");
  ASSERT_TRUE(base64_decode_exact("Zm9vYg==", out, 4));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 4), "foob");
  ASSERT_TRUE(base64_decode_exact("Zm9vYmE=", out, 5));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 5), "fooba");
  ASSERT_TRUE(base64_decode_exact("", out, 0));
}

TEST(Base64, RejectsAnythingNotStrict) {
  std::uint8_t out[16];
  for (std::string_view bad : {
           "4waSgw="sv,       // Padding short.
           "4waSgw"sv,        // No padding.
           "4waSgw==="sv,     // Too long.
           "4waSg==="sv,      // Three '='.
           "4waSgx=="sv,      // Non-zero bits under the padding ('x' = 49 has low bits set).
           "4wa=gw=="sv,      // '=' inside.
           "4waS gw=="sv,     // Space inside.
           " 4waSgw=="sv,     // Leading space (callers trim field whitespace themselves).
           "4waSgw==\r\n"sv,  // Line end.
           "4w-Sgw=="sv,      // URL-safe alphabet.
           "4w_Sgw=="sv,      // URL-safe alphabet.
           "4wa\x80gw=="sv,   // Non-ASCII.
           "4waSgw\0="sv,     // NUL.
       }) {
    EXPECT_FALSE(base64_decode_exact(bad, out, 4)) << bad;
  }
  EXPECT_FALSE(base64_decode_exact("Zm9vYg==", out, 5));  // Wrong size asked.
  EXPECT_FALSE(base64_decode_exact("Zm9vYmE=", out, 4));  // Wrong size asked.
  EXPECT_FALSE(base64_decode_exact("Zm9vYmF=", out, 5));  // Non-canonical: 'F' leaves bits.
  EXPECT_FALSE(base64_decode_exact("====", out, 1));
}

TEST(Base64, EncodesAndRoundTrips) {
  EXPECT_EQ(base64_of(bytes_of("")), "");
  EXPECT_EQ(base64_of(bytes_of("f")), "Zg==");
  EXPECT_EQ(base64_of(bytes_of("fo")), "Zm8=");
  EXPECT_EQ(base64_of(bytes_of("foo")), "Zm9v");
  EXPECT_EQ(base64_of(bytes_of("foobar")), "Zm9vYmFy");
  char small[7];
  EXPECT_EQ(base64_encode(bytes_of("foobar"), small, sizeof small), 0u);
  const auto data = random_bytes(40, 31);
  for (std::size_t n = 0; n <= 40; ++n) {
    const std::string text = base64_of(bytes_of(data, 0, n));
    std::uint8_t back[40];
    ASSERT_TRUE(base64_decode_exact(text, back, n)) << text;
    EXPECT_EQ(std::memcmp(back, data.data(), n), 0);
  }
}

// ---- MD5 ----------------------------------------------------------------------------------

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(
        static_cast<std::uint8_t>(std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

void expect_md5_of(IntegrityCheck* check, std::string_view hex) {
  const auto raw = from_hex(hex);
  std::uint8_t digest[kMd5DigestSize];
  std::memcpy(digest, raw.data(), sizeof digest);
  check->expect_md5(digest);
}

TEST(Md5, Rfc1321Vectors) {
  const struct {
    const char* text;
    const char* md5;
  } vectors[] = {
      {"", "d41d8cd98f00b204e9800998ecf8427e"},
      {"a", "0cc175b9c0f1b6a831c399e269772661"},
      {"abc", "900150983cd24fb0d6963f7d28e17f72"},
      {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
      {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
      {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
       "d174ab98d277d9f5a5611c2c9f419d9f"},
      {"1234567890123456789012345678901234567890123456789012345678901234567890123456789"
       "0",
       "57edf4a22be3c955ac49da2e2107b67a"},
  };
  for (const auto& v : vectors) {
    IntegrityCheck check;
    expect_md5_of(&check, v.md5);
    // In pieces of 1, 2, 3... bytes: the digest may not depend on how the body arrives.
    const std::string_view text = v.text;
    std::size_t at = 0;
    for (std::size_t piece = 1; at < text.size(); ++piece) {
      const std::size_t n = std::min(piece, text.size() - at);
      check.update(bytes_of(text.substr(at, n)));
      at += n;
    }
    const IntegrityResult r = check.finish();
    EXPECT_EQ(r.status, IntegrityStatus::kMatch) << v.text << ": " << message_of(r);
    EXPECT_TRUE(r.md5.checked);
    EXPECT_FALSE(r.crc32c.checked);
    const auto want = from_hex(v.md5);
    EXPECT_EQ(std::vector<std::uint8_t>(r.md5.got.bytes, r.md5.got.bytes + 16), want) << v.text;
  }
}

TEST(Md5, WrongDigestIsAMismatchThatNamesBoth) {
  IntegrityCheck check;
  expect_md5_of(&check, "900150983cd24fb0d6963f7d28e17f72");  // MD5("abc")
  check.update(bytes_of("abd"));
  const IntegrityResult r = check.finish();
  EXPECT_EQ(r.status, IntegrityStatus::kMismatch);
  EXPECT_EQ(message_of(r),
            "md5 mismatch: expected kAFQmDzST7DWlj99KOF/cg==, got " + base64_of(r.md5.got.view()));
  EXPECT_NE(r.md5.got, r.md5.expected);
}

// ---- IntegrityState: a check that outlives its process -------------------------------------

// A check saved at every split of a 200-byte body and restored into a new one ends with the
// digests of the whole body: the second process never reads the first part again.
TEST(IntegrityState, RestoredAtEverySplitChecksTheWholeBody) {
  std::string body;
  for (int i = 0; i < 200; ++i) body.push_back(static_cast<char>('a' + i % 26));
  IntegrityCheck whole;
  ASSERT_TRUE(whole.add_x_goog_hash("crc32c=AAAAAA==,md5=AAAAAAAAAAAAAAAAAAAAAA=="));
  whole.update(bytes_of(body));
  const IntegrityResult want = whole.finish();
  for (std::size_t split = 0; split <= body.size(); ++split) {
    IntegrityCheck first;
    ASSERT_TRUE(first.add_x_goog_hash("crc32c=AAAAAA==,md5=AAAAAAAAAAAAAAAAAAAAAA=="));
    first.update(bytes_of(std::string_view(body).substr(0, split)));
    const IntegrityState saved = first.state();
    IntegrityCheck second;
    ASSERT_TRUE(second.restore(saved)) << split;
    second.update(bytes_of(std::string_view(body).substr(split)));
    const IntegrityResult got = second.finish();
    EXPECT_EQ(got.size, body.size()) << split;
    EXPECT_EQ(got.crc32c.got, want.crc32c.got) << split;
    EXPECT_EQ(got.md5.got, want.md5.got) << split;
    EXPECT_TRUE(got.md5.checked) << split;
    EXPECT_EQ(got.crc32c.expected, want.crc32c.expected) << split;
  }
}

TEST(IntegrityState, KeepsTwoDifferentAnnouncements) {
  IntegrityCheck first;
  ASSERT_TRUE(first.add_x_goog_hash("crc32c=yZRlqg=="));
  ASSERT_TRUE(first.add_x_goog_hash("crc32c=AAAAAA=="));
  first.update(bytes_of("hello "));
  IntegrityCheck second;
  ASSERT_TRUE(second.restore(first.state()));
  second.update(bytes_of("world"));
  // The body matches the first value; the second announcement still makes it a mismatch.
  EXPECT_EQ(second.finish().status, IntegrityStatus::kMismatch);
}

TEST(IntegrityState, RefusesWhatStateCannotHaveMade) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  check.update(bytes_of("hello"));
  IntegrityState s = check.state();
  s.size = 4;  // The MD5 has seen 5 bytes.
  IntegrityCheck restored;
  EXPECT_FALSE(restored.restore(s));
  EXPECT_FALSE(restored.has_expectation());
  s = check.state();
  s.expected_md5.size = 4;  // An MD5 of four bytes.
  EXPECT_FALSE(restored.restore(s));
  s = check.state();
  s.expected_crc32c = s.expected_md5;  // An MD5 where the CRC-32C goes.
  EXPECT_FALSE(restored.restore(s));
  EXPECT_TRUE(restored.restore(check.state()));
  restored.update(bytes_of(" world"));
  EXPECT_EQ(restored.finish().status, IntegrityStatus::kMatch);
}

// ---- x-goog-hash and Content-MD5 ----------------------------------------------------------

// "hello world": crc32c 0xC99465AA = yZRlqg==, md5 XrY7u+Ae7tCTyyK7j1rNww==.
constexpr std::string_view kHello = "hello world";

IntegrityResult check_hello(IntegrityCheck* check) {
  check->update(bytes_of(kHello));
  return check->finish();
}

TEST(XGoogHash, BothDigestsInOneValue) {
  IntegrityCheck check;
  EXPECT_TRUE(check.add_x_goog_hash("crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  const IntegrityResult r = check_hello(&check);
  EXPECT_EQ(r.status, IntegrityStatus::kMatch);
  EXPECT_TRUE(r.crc32c.checked);
  EXPECT_TRUE(r.md5.checked);
  EXPECT_EQ(r.size, kHello.size());
  EXPECT_EQ(message_of(r), "integrity verified: crc32c yZRlqg==, md5 XrY7u+Ae7tCTyyK7j1rNww==");
}

TEST(XGoogHash, OneDigestOnly) {
  IntegrityCheck crc_only;
  EXPECT_TRUE(crc_only.add_x_goog_hash("crc32c=yZRlqg=="));
  IntegrityResult r = check_hello(&crc_only);
  EXPECT_EQ(r.status, IntegrityStatus::kMatch);
  EXPECT_TRUE(r.crc32c.checked);
  EXPECT_FALSE(r.md5.checked);

  IntegrityCheck md5_only;
  EXPECT_TRUE(md5_only.add_x_goog_hash("md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  r = check_hello(&md5_only);
  EXPECT_EQ(r.status, IntegrityStatus::kMatch);
  EXPECT_FALSE(r.crc32c.checked);
  EXPECT_TRUE(r.md5.checked);
}

TEST(XGoogHash, RepeatedHeaderLines) {
  IntegrityCheck check;
  EXPECT_TRUE(check.add_header("X-Goog-Hash", "crc32c=yZRlqg=="));
  EXPECT_TRUE(check.add_header("x-goog-hash", "md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  // The same values again (a resumed part's 206 repeats them): no conflict.
  EXPECT_TRUE(check.add_header("x-goog-hash", "crc32c=yZRlqg==, md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  const IntegrityResult r = check_hello(&check);
  EXPECT_EQ(r.status, IntegrityStatus::kMatch);
  EXPECT_TRUE(r.crc32c.checked);
  EXPECT_TRUE(r.md5.checked);
}

TEST(XGoogHash, WhitespaceCaseAndEmptyItems) {
  for (std::string_view value : {
           "crc32c=yZRlqg==, md5=XrY7u+Ae7tCTyyK7j1rNww==",
           "  crc32c=yZRlqg==\t,\tmd5=XrY7u+Ae7tCTyyK7j1rNww==  ",
           "crc32c = yZRlqg== , md5 = XrY7u+Ae7tCTyyK7j1rNww==",
           ",crc32c=yZRlqg==,,md5=XrY7u+Ae7tCTyyK7j1rNww==,",
           "CRC32C=yZRlqg==,MD5=XrY7u+Ae7tCTyyK7j1rNww==",
           "md5=XrY7u+Ae7tCTyyK7j1rNww==,crc32c=yZRlqg==",
       }) {
    IntegrityCheck check;
    EXPECT_TRUE(check.add_x_goog_hash(value)) << value;
    const IntegrityResult r = check_hello(&check);
    EXPECT_EQ(r.status, IntegrityStatus::kMatch) << value;
    EXPECT_TRUE(r.crc32c.checked) << value;
    EXPECT_TRUE(r.md5.checked) << value;
  }
}

TEST(XGoogHash, GarbageIsIgnoredNeverTrusted) {
  for (std::string_view value : {
           "",
           " , ",
           "crc32c",
           "crc32c=",
           "crc32c=yZRlqg",                    // Unpadded.
           "crc32c=yZRlqg=",                   // Short padding.
           "crc32c=yZRlqh==",                  // Non-canonical bits.
           "crc32c=yZR!qg==",                  // Not the alphabet.
           "crc32c=\"yZRlqg==\"",              // Quoted.
           "crc32c=yZRl",                      // 3 bytes.
           "crc32c=yZRlqgA=",                  // 5 bytes.
           "crc32c=XrY7u+Ae7tCTyyK7j1rNww==",  // An md5's length.
           "md5=yZRlqg==",                     // A crc32c's length.
           "md5=XrY7u+Ae7tCTyyK7j1rNwx==",     // Non-canonical bits.
           "sha256=yZRlqg==",                  // Unknown algorithm.
           "crc32c:yZRlqg==",
           "crc32cx=yZRlqg==",
           "xcrc32c=yZRlqg==",
       }) {
    IntegrityCheck check;
    EXPECT_FALSE(check.add_x_goog_hash(value)) << value;
    EXPECT_FALSE(check.has_expectation()) << value;
    const IntegrityResult r = check_hello(&check);
    EXPECT_EQ(r.status, IntegrityStatus::kNoExpectation) << value;
    EXPECT_EQ(message_of(r), "no integrity digest announced");
  }
}

TEST(XGoogHash, AGoodItemNextToGarbageIsTaken) {
  IntegrityCheck check;
  EXPECT_TRUE(check.add_x_goog_hash("crc32c=bad, md5=XrY7u+Ae7tCTyyK7j1rNww==, sha1=zzz"));
  const IntegrityResult r = check_hello(&check);
  EXPECT_EQ(r.status, IntegrityStatus::kMatch);
  EXPECT_FALSE(r.crc32c.checked);
  EXPECT_TRUE(r.md5.checked);
}

TEST(XGoogHash, OtherHeaderNamesAreNotTaken) {
  IntegrityCheck check;
  EXPECT_FALSE(check.add_header("x-goog-hashes", "crc32c=yZRlqg=="));
  EXPECT_FALSE(check.add_header("etag", "crc32c=yZRlqg=="));
  EXPECT_FALSE(check.has_expectation());
}

TEST(ContentMd5, ParsesStrictly) {
  IntegrityCheck check;
  EXPECT_TRUE(check.add_header("Content-MD5", " XrY7u+Ae7tCTyyK7j1rNww== "));
  EXPECT_EQ(check_hello(&check).status, IntegrityStatus::kMatch);

  for (std::string_view bad :
       {"", "XrY7u+Ae7tCTyyK7j1rNww", "yZRlqg==", "XrY7u+Ae7tCTyyK7j1rNww==,",
        "md5=XrY7u+Ae7tCTyyK7j1rNww==", "5eb63bbbe01eeed093cb22bb8f5acdc3"}) {
    IntegrityCheck c;
    EXPECT_FALSE(c.add_content_md5(bad)) << bad;
    EXPECT_FALSE(c.has_expectation()) << bad;
  }
}

// ---- Whole checks -------------------------------------------------------------------------

TEST(IntegrityCheck, BodyFedInPiecesAcrossParts) {
  const auto body = random_bytes(300'000, 41);
  const std::uint32_t crc = crc32c_bitwise(bytes_of(body));
  const std::string crc_b64 = base64_of(Digest::crc32c(crc).view());

  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=" + crc_b64));
  std::mt19937 gen(42);
  std::size_t at = 0;
  while (at < body.size()) {
    const std::size_t n = std::min<std::size_t>(
        body.size() - at, std::uniform_int_distribution<std::size_t>(0, 17000)(gen));
    check.update(bytes_of(body, at, n));
    at += n;
    if (at > 100'000 && at < 120'000) {
      // A resumed part's 206 announces the same digest again.
      EXPECT_TRUE(check.add_x_goog_hash("crc32c=" + crc_b64));
    }
  }
  EXPECT_EQ(check.size(), body.size());
  EXPECT_EQ(check.crc32c(), crc);
  const IntegrityResult r = check.finish();
  EXPECT_EQ(r.status, IntegrityStatus::kMatch) << message_of(r);
  EXPECT_EQ(r.size, body.size());
}

TEST(IntegrityCheck, MismatchNamesAlgorithmExpectedAndGot) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=AAAAAA=="));
  check.update(bytes_of("123456789"));
  const IntegrityResult r = check.finish();
  EXPECT_EQ(r.status, IntegrityStatus::kMismatch);
  EXPECT_TRUE(r.crc32c.checked);
  EXPECT_FALSE(r.crc32c.match);
  EXPECT_EQ(message_of(r), "crc32c mismatch: expected AAAAAA==, got 4waSgw==");
}

TEST(IntegrityCheck, BothMismatchesAreNamed) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=AAAAAA==,md5=AAAAAAAAAAAAAAAAAAAAAA=="));
  const IntegrityResult r = check_hello(&check);
  EXPECT_EQ(r.status, IntegrityStatus::kMismatch);
  EXPECT_EQ(message_of(r),
            "crc32c mismatch: expected AAAAAA==, got yZRlqg==; "
            "md5 mismatch: expected AAAAAAAAAAAAAAAAAAAAAA==, got XrY7u+Ae7tCTyyK7j1rNww==");
}

TEST(IntegrityCheck, OneBadDigestIsAMismatchEvenIfTheOtherMatches) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=yZRlqg==,md5=AAAAAAAAAAAAAAAAAAAAAA=="));
  const IntegrityResult r = check_hello(&check);
  EXPECT_EQ(r.status, IntegrityStatus::kMismatch);
  EXPECT_TRUE(r.crc32c.match);
  EXPECT_FALSE(r.md5.match);
  EXPECT_EQ(message_of(r),
            "md5 mismatch: expected AAAAAAAAAAAAAAAAAAAAAA==, got XrY7u+Ae7tCTyyK7j1rNww==");
}

TEST(IntegrityCheck, ConflictingAnnouncementsCannotBothMatch) {
  // The body matches the first value announced...
  IntegrityCheck first_right;
  ASSERT_TRUE(first_right.add_x_goog_hash("crc32c=yZRlqg=="));
  ASSERT_TRUE(first_right.add_x_goog_hash("crc32c=AAAAAA=="));
  IntegrityResult r = check_hello(&first_right);
  EXPECT_EQ(r.status, IntegrityStatus::kMismatch);
  EXPECT_EQ(message_of(r), "crc32c mismatch: expected AAAAAA==, got yZRlqg==");
  // ... or the second.
  IntegrityCheck second_right;
  ASSERT_TRUE(second_right.add_x_goog_hash("crc32c=AAAAAA==, crc32c=yZRlqg=="));
  r = check_hello(&second_right);
  EXPECT_EQ(r.status, IntegrityStatus::kMismatch);
  EXPECT_EQ(message_of(r), "crc32c mismatch: expected AAAAAA==, got yZRlqg==");
  // Content-MD5 and x-goog-hash md5 feed the same expectation.
  IntegrityCheck md5s;
  ASSERT_TRUE(md5s.add_header("content-md5", "XrY7u+Ae7tCTyyK7j1rNww=="));
  ASSERT_TRUE(md5s.add_header("x-goog-hash", "md5=AAAAAAAAAAAAAAAAAAAAAA=="));
  EXPECT_EQ(check_hello(&md5s).status, IntegrityStatus::kMismatch);
}

TEST(IntegrityCheck, ResetRestartsTheBodyAndKeepsExpectations) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  check.update(bytes_of("hello wor"));  // A first attempt, cut.
  check.reset();                        // The sink restarted the representation.
  EXPECT_EQ(check.size(), 0u);
  EXPECT_TRUE(check.has_expectation());
  const IntegrityResult r = check_hello(&check);
  EXPECT_EQ(r.status, IntegrityStatus::kMatch) << message_of(r);
  EXPECT_TRUE(r.md5.checked);

  // Without the reset the spliced bytes would not match.
  IntegrityCheck spliced;
  ASSERT_TRUE(spliced.add_x_goog_hash("crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  spliced.update(bytes_of("hello wor"));
  EXPECT_EQ(check_hello(&spliced).status, IntegrityStatus::kMismatch);
}

TEST(IntegrityCheck, ClearForgetsExpectations) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=AAAAAA==,md5=AAAAAAAAAAAAAAAAAAAAAA=="));
  check.update(bytes_of("old version"));
  check.clear();  // A different representation replaced it.
  EXPECT_FALSE(check.has_expectation());
  EXPECT_EQ(check.size(), 0u);
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  const IntegrityResult r = check_hello(&check);
  EXPECT_EQ(r.status, IntegrityStatus::kMatch) << message_of(r);
  EXPECT_TRUE(r.md5.checked);
}

TEST(IntegrityCheck, LateCrcIsCheckedLateMd5IsNot) {
  IntegrityCheck check;
  check.update(bytes_of("hello "));
  // Announced only with a later part: CRC-32C has run over every byte, MD5 has not.
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=yZRlqg==,md5=AAAAAAAAAAAAAAAAAAAAAA=="));
  check.update(bytes_of("world"));
  IntegrityResult r = check.finish();
  EXPECT_EQ(r.status, IntegrityStatus::kMatch) << message_of(r);
  EXPECT_TRUE(r.crc32c.checked);
  EXPECT_FALSE(r.md5.checked);
  // After a restart MD5 covers the whole body again.
  check.reset();
  r = check_hello(&check);
  EXPECT_TRUE(r.md5.checked);
  EXPECT_EQ(r.status, IntegrityStatus::kMismatch);
}

TEST(IntegrityCheck, FinishChangesNothingAndCopiesAreIndependent) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  check.update(bytes_of("hello"));
  EXPECT_EQ(check.finish().status, IntegrityStatus::kMismatch);
  IntegrityCheck copy = check;
  check.update(bytes_of(" world"));
  EXPECT_EQ(check.finish().status, IntegrityStatus::kMatch);
  EXPECT_EQ(check.finish().status, IntegrityStatus::kMatch);
  EXPECT_EQ(copy.finish().status, IntegrityStatus::kMismatch);
  copy.update(bytes_of(" world"));
  EXPECT_EQ(copy.finish().status, IntegrityStatus::kMatch);
  IntegrityCheck assigned;
  assigned = copy;
  EXPECT_EQ(assigned.finish().status, IntegrityStatus::kMatch);
  EXPECT_TRUE(assigned.finish().md5.checked);
}

TEST(IntegrityCheck, NoExpectationWhateverTheBody) {
  IntegrityCheck check;
  EXPECT_FALSE(check.has_expectation());
  check.update(bytes_of("anything"));
  const IntegrityResult r = check.finish();
  EXPECT_EQ(r.status, IntegrityStatus::kNoExpectation);
  EXPECT_STREQ(to_string(r.status), "no_expectation");
}

TEST(IntegrityMessage, TruncatesLikeSnprintf) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=AAAAAA=="));
  check.update(bytes_of("123456789"));
  const IntegrityResult r = check.finish();
  const std::string full = "crc32c mismatch: expected AAAAAA==, got 4waSgw==";
  char out[10];
  EXPECT_EQ(format_integrity_message(r, out, sizeof out), full.size());
  EXPECT_STREQ(out, full.substr(0, 9).c_str());
  EXPECT_EQ(format_integrity_message(r, nullptr, 0), full.size());
  char one[1] = {'x'};
  EXPECT_EQ(format_integrity_message(r, one, 1), full.size());
  EXPECT_EQ(one[0], '\0');
}

TEST(IntegrityMessage, LongestFitsTheDocumentedMaximum) {
  IntegrityCheck check;
  ASSERT_TRUE(check.add_x_goog_hash("crc32c=AAAAAA==,md5=AAAAAAAAAAAAAAAAAAAAAA=="));
  const IntegrityResult r = check_hello(&check);
  EXPECT_LT(format_integrity_message(r, nullptr, 0), kIntegrityMessageMax);
}

TEST(IntegrityCheck, MakesNoHeapCalls) {
  if (!stepback::testing::heap_trap_available()) {
    GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  }
  const auto body = random_bytes(50'000, 51);
  const std::string header = "crc32c=AAAAAA==, md5=" + std::string(22, 'A') + "==";
  long calls = -1;
  std::size_t length = 0;
  IntegrityStatus status = IntegrityStatus::kNoExpectation;
  {
    stepback::testing::HeapTrap trap;
    for (Crc32cPath path : {Crc32cPath::kTable, Crc32cPath::kSse42, Crc32cPath::kArmCrc}) {
      volatile std::uint32_t crc = crc32c_extend_with(path, 1, {body.data(), body.size()});
      (void)crc;
    }
    IntegrityCheck check;
    (void)check.add_header("x-goog-hash", header);
    (void)check.add_header("content-md5", "XrY7u+Ae7tCTyyK7j1rNww==");
    for (std::size_t at = 0; at < body.size(); at += 4096) {
      check.update({body.data() + at, std::min<std::size_t>(4096, body.size() - at)});
    }
    IntegrityCheck copy = check;
    check.reset();
    check.clear();
    const IntegrityResult r = copy.finish();
    char message[kIntegrityMessageMax];
    length = format_integrity_message(r, message, sizeof message);
    status = r.status;
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 0) << stepback::testing::HeapTrap::describe();
  EXPECT_EQ(status, IntegrityStatus::kMismatch);
  EXPECT_GT(length, 0u);
}

}  // namespace
}  // namespace stepback::https
