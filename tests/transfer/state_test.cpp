// The transfer state record: round trips, the frame's refusals (cut, damaged, foreign,
// newer, self-contradictory), the restore rule for the wait under way, the frame's CRC-32C, and a
// randomized mutation run that drives nanopb's decoder with records whose checksum is
// recomputed, so that damage gets past the frame.
#include "stepback/transfer/state.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "stepback/https/integrity/crc32c.hpp"
#include "stepback/https/integrity/integrity.hpp"

namespace stepback::transfer {
namespace {

using https::ConstBytes;
using https::MutableBytes;

constexpr char kSession[] =
    "https://storage.googleapis.com/upload/storage/v1/b/my-bucket/o?uploadType=resumable&"
    "name=videos%2F2024%2Fholiday.mp4&upload_id=ADPycdtYKz5oX7k3vQxM1y9q_2kJc1l8bTq0wR4uP6sE"
    "nV3hG7fD5aZ2xC9mL1oK4jH8gF6dS3aQ0wE2rT5yU7iO9pA1sD3fG5hJ7kL9zX1cV3bN5mQ7wE9rT1yU3iO5pA7s";

TransferState sample() {
  TransferState s;
  s.kind = TransferKind::kUpload;
  EXPECT_TRUE(
      s.set_url("https://storage.googleapis.com/upload/storage/v1/b/my-bucket/o"
                "?uploadType=resumable&name=videos%2F2024%2Fholiday.mp4"));
  EXPECT_TRUE(s.set_session_uri(kSession));
  s.total_size = 52'428'800;
  s.committed = 20'971'520;
  s.chunk_size = 8 * 1024 * 1024;
  s.crc32c = 0x12345678U;
  s.retries = 3;
  s.wait_remaining = Millis(23'456);
  s.release_wall_ms = 1'700'000'023'456;
  s.saved_wall_ms = 1'700'000'000'000;
  return s;
}

std::vector<std::uint8_t> encode(const TransferState& s) {
  std::vector<std::uint8_t> out(kMaxStateBytes);
  std::size_t n = 0;
  EXPECT_EQ(encode_state(s, MutableBytes{out.data(), out.size()}, &n), StateStatus::kOk);
  out.resize(n);
  return out;
}

StateStatus decode(const std::vector<std::uint8_t>& bytes, TransferState* out) {
  return decode_state(ConstBytes{bytes.data(), bytes.size()}, out);
}

// Recomputes the trailing CRC-32C of a record whose header and message were changed.
void reseal(std::vector<std::uint8_t>* bytes) {
  if (bytes->size() < 16) return;
  const std::size_t body = bytes->size() - 4;
  const std::uint32_t crc = https::crc32c(ConstBytes{bytes->data(), body});
  for (int i = 0; i < 4; ++i)
    (*bytes)[body + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(crc >> (8 * i));
}

void expect_same(const TransferState& a, const TransferState& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.url(), b.url());
  EXPECT_EQ(a.session_uri(), b.session_uri());
  EXPECT_EQ(a.validator(), b.validator());
  EXPECT_EQ(a.total_size, b.total_size);
  EXPECT_EQ(a.committed, b.committed);
  EXPECT_EQ(a.delivered, b.delivered);
  EXPECT_EQ(a.chunk_size, b.chunk_size);
  EXPECT_EQ(a.crc32c, b.crc32c);
  EXPECT_EQ(a.retries, b.retries);
  EXPECT_EQ(a.wait_remaining, b.wait_remaining);
  EXPECT_EQ(a.release_wall_ms, b.release_wall_ms);
  EXPECT_EQ(a.saved_wall_ms, b.saved_wall_ms);
  EXPECT_EQ(a.final_url(), b.final_url());
  EXPECT_EQ(a.generation(), b.generation());
  EXPECT_EQ(a.validator_is_etag, b.validator_is_etag);
  if (a.kind == TransferKind::kDownload) {
    EXPECT_EQ(a.integrity.expected_crc32c, b.integrity.expected_crc32c);
    EXPECT_EQ(a.integrity.other_crc32c, b.integrity.other_crc32c);
    EXPECT_EQ(a.integrity.expected_md5, b.integrity.expected_md5);
    EXPECT_EQ(a.integrity.other_md5, b.integrity.other_md5);
    EXPECT_EQ(a.integrity.md5_running, b.integrity.md5_running);
    if (a.integrity.md5_running) {
      EXPECT_EQ(0, std::memcmp(a.integrity.md5_context, b.integrity.md5_context,
                               sizeof a.integrity.md5_context));
    }
  }
}

// A download's record with its integrity check: `body` delivered of a 1000-byte object
// whose x-goog-hash announced both digests.
TransferState download_sample(std::string_view body) {
  TransferState s;
  s.kind = TransferKind::kDownload;
  EXPECT_TRUE(s.set_url("https://releases.example.test/fw/latest"));
  EXPECT_TRUE(s.set_final_url("https://cdn.example.test/fw/1.2.3.bin"));
  EXPECT_TRUE(s.set_validator("\"5d41402abc4b2a76b9719d911017c592\""));
  EXPECT_TRUE(s.set_generation("1700000000123456"));
  s.validator_is_etag = true;
  s.total_size = 1000;
  https::IntegrityCheck check;
  EXPECT_TRUE(check.add_x_goog_hash("crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww=="));
  check.update(ConstBytes{reinterpret_cast<const std::uint8_t*>(body.data()), body.size()});
  s.integrity = check.state();
  s.delivered = body.size();
  s.crc32c = check.crc32c();
  return s;
}

TEST(TransferState, RoundTrips) {
  const TransferState s = sample();
  const std::vector<std::uint8_t> bytes = encode(s);
  TransferState back;
  ASSERT_EQ(decode(bytes, &back), StateStatus::kOk);
  expect_same(s, back);
  std::printf("state record of an upload with a %zu-byte session URI: %zu bytes (at most %zu)\n",
              s.session_uri().size(), bytes.size(), kMaxStateBytes);
  RecordProperty("record_bytes", std::to_string(bytes.size()));
}

TEST(TransferState, ADownloadRoundTripsToo) {
  TransferState s;
  s.kind = TransferKind::kDownload;
  ASSERT_TRUE(s.set_url("https://storage.googleapis.com/b/o"));
  ASSERT_TRUE(s.set_validator("\"5d41402abc4b2a76b9719d911017c592\""));
  s.total_size = 1000;
  s.delivered = 400;
  TransferState back;
  ASSERT_EQ(decode(encode(s), &back), StateStatus::kOk);
  expect_same(s, back);
}

TEST(TransferState, ADownloadKeepsItsFinalUrlGenerationAndIntegrityCheck) {
  const TransferState s = download_sample("hello");
  const std::vector<std::uint8_t> bytes = encode(s);
  TransferState back;
  ASSERT_EQ(decode(bytes, &back), StateStatus::kOk);
  expect_same(s, back);
  // The restored check goes on where the saved one stopped: " world" completes "hello world".
  https::IntegrityCheck check;
  ASSERT_TRUE(check.restore(back.integrity));
  check.update(ConstBytes{reinterpret_cast<const std::uint8_t*>(" world"), 6});
  EXPECT_EQ(check.finish().status, https::IntegrityStatus::kMatch);
  std::printf("state record of a download with its integrity check: %zu bytes\n", bytes.size());
}

TEST(TransferState, TheLongestDownloadRecordFitsTheBound) {
  TransferState s = download_sample(std::string(63, 'x'));
  ASSERT_TRUE(s.set_url(std::string(kMaxStateUrl, 'u')));
  ASSERT_TRUE(s.set_final_url(std::string(kMaxStateUrl, 'f')));
  ASSERT_TRUE(s.set_validator(std::string(kMaxStateValidator, 'v')));
  ASSERT_TRUE(s.set_generation(std::string(kMaxStateGeneration, '9')));
  ASSERT_TRUE(s.set_session_uri(std::string(kMaxStateSessionUri, 's')));
  s.integrity.other_crc32c = https::Digest::crc32c(1);
  const std::uint8_t md5[16] = {1};
  s.integrity.other_md5 = https::Digest::md5(md5);
  s.total_size = UINT64_MAX;
  s.retries = UINT32_MAX;
  s.wait_remaining = Millis(24 * 3600 * 1000);
  s.release_wall_ms = s.saved_wall_ms = INT64_MIN;
  const std::vector<std::uint8_t> bytes = encode(s);
  EXPECT_LE(bytes.size(), kMaxStateBytes);
  TransferState back;
  ASSERT_EQ(decode(bytes, &back), StateStatus::kOk);
  expect_same(s, back);
}

TEST(TransferState, ADownloadWhoseCheckCannotBeTakenUpIsRefused) {
  // A CRC-32C announced but the running one missing.
  TransferState s = download_sample("hello");
  s.crc32c.reset();
  TransferState back;
  EXPECT_EQ(decode(encode(s), &back), StateStatus::kInvalid);
  // An MD5 context that has seen other bytes than the delivered ones.
  s = download_sample("hello");
  s.delivered = 6;
  EXPECT_EQ(decode(encode(s), &back), StateStatus::kInvalid);
  // A generation that is not a number.
  s = download_sample("hello");
  ASSERT_TRUE(s.set_generation("12x"));
  EXPECT_EQ(decode(encode(s), &back), StateStatus::kInvalid);
}

TEST(TransferState, TheLongestRecordFitsTheBound) {
  TransferState s = sample();
  ASSERT_TRUE(s.set_url(std::string(kMaxStateUrl, 'u')));
  ASSERT_TRUE(s.set_session_uri(std::string(kMaxStateSessionUri, 's')));
  s.kind = TransferKind::kUpload;
  ASSERT_TRUE(s.set_validator(std::string(kMaxStateValidator, 'v')));
  s.total_size = s.committed = s.delivered = UINT64_MAX - (UINT64_MAX % (256 * 1024));
  s.chunk_size = s.total_size;
  s.retries = UINT32_MAX;
  s.wait_remaining = Millis(24 * 3600 * 1000);
  s.release_wall_ms = INT64_MIN;
  s.saved_wall_ms = INT64_MIN;
  const std::vector<std::uint8_t> bytes = encode(s);
  EXPECT_LE(bytes.size(), kMaxStateBytes);
  TransferState back;
  ASSERT_EQ(decode(bytes, &back), StateStatus::kOk);
  expect_same(s, back);

  std::vector<std::uint8_t> small(bytes.size() - 1);
  std::size_t n = 99;
  EXPECT_EQ(encode_state(s, MutableBytes{small.data(), small.size()}, &n),
            StateStatus::kBufferTooSmall);
  EXPECT_EQ(n, 0U);
}

TEST(TransferState, SettersRefuseTextBeyondTheBounds) {
  TransferState s;
  EXPECT_FALSE(s.set_url(std::string(kMaxStateUrl + 1, 'u')));
  EXPECT_FALSE(s.set_session_uri(std::string(kMaxStateSessionUri + 1, 's')));
  EXPECT_FALSE(s.set_validator(std::string(kMaxStateValidator + 1, 'v')));
  EXPECT_TRUE(s.url().empty());
}

TEST(TransferState, EveryCutIsRefusedAsTruncated) {
  const std::vector<std::uint8_t> bytes = encode(sample());
  const TransferState untouched = sample();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    TransferState out = sample();
    const std::vector<std::uint8_t> cut(bytes.begin(),
                                        bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(decode(cut, &out), StateStatus::kTruncated) << n;
    if (n % 97 == 0) expect_same(out, untouched);
  }
}

TEST(TransferState, EveryBitFlipIsRefused) {
  const std::vector<std::uint8_t> bytes = encode(sample());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::uint8_t> bad = bytes;
      bad[i] ^= static_cast<std::uint8_t>(1U << bit);
      TransferState out;
      const StateStatus s = decode(bad, &out);
      EXPECT_NE(s, StateStatus::kOk) << "byte " << i << " bit " << bit;
      EXPECT_TRUE(out.url().empty()) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(TransferState, ForeignNewerAndPaddedFilesAreRefused) {
  TransferState out;
  const std::string json = R"({"session":"https://x"})";
  EXPECT_EQ(decode(std::vector<std::uint8_t>(json.begin(), json.end()), &out),
            StateStatus::kForeign);
  EXPECT_EQ(decode({0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a}, &out), StateStatus::kForeign);
  EXPECT_EQ(decode({'S', 'B', 'X'}, &out), StateStatus::kForeign);
  EXPECT_EQ(decode({'S', 'B'}, &out), StateStatus::kTruncated);

  std::vector<std::uint8_t> newer = encode(sample());
  newer[4] = 2;  // Version 2, resealed: a record this library cannot read.
  reseal(&newer);
  EXPECT_EQ(decode(newer, &out), StateStatus::kNewerVersion);
  newer[4] = 0;
  reseal(&newer);
  EXPECT_EQ(decode(newer, &out), StateStatus::kCorrupt);

  std::vector<std::uint8_t> padded = encode(sample());
  padded.push_back(0);
  EXPECT_EQ(decode(padded, &out), StateStatus::kCorrupt);
  EXPECT_TRUE(out.url().empty());
}

TEST(TransferState, SelfContradictoryRecordsAreRefused) {
  const auto invalid = [](TransferState s) {
    TransferState out;
    return decode(encode(s), &out);
  };
  TransferState s = sample();
  s.committed = s.total_size + 1;
  EXPECT_EQ(invalid(s), StateStatus::kInvalid);
  s = sample();
  ASSERT_TRUE(s.set_session_uri(""));
  EXPECT_EQ(invalid(s), StateStatus::kInvalid);
  s = sample();
  s.chunk_size = 1000;
  EXPECT_EQ(invalid(s), StateStatus::kInvalid);
  s = sample();
  ASSERT_TRUE(s.set_url(""));
  EXPECT_EQ(invalid(s), StateStatus::kInvalid);
  s = sample();
  s.wait_remaining = Millis(25ULL * 3600 * 1000);
  EXPECT_EQ(invalid(s), StateStatus::kInvalid);
}

TEST(TransferState, TheRestoredWaitIsNeverLongerNorBelowZero) {
  TransferState s;
  s.wait_remaining = Millis(30'000);
  s.saved_wall_ms = 1'700'000'000'000;
  s.release_wall_ms = s.saved_wall_ms + 30'000;
  const auto at = [](std::int64_t wall) { return Millis(static_cast<std::uint64_t>(wall)); };
  // Restarted at once: all of it.
  EXPECT_EQ(remaining_wait(s, at(s.saved_wall_ms)), Millis(30'000));
  // 10 s later by the wall clock: 20 s.
  EXPECT_EQ(remaining_wait(s, at(s.saved_wall_ms + 10'000)), Millis(20'000));
  // After the release instant: none.
  EXPECT_EQ(remaining_wait(s, at(s.saved_wall_ms + 31'000)), Millis(0));
  // The wall clock was set back an hour (or a reboot reset it): never more than was left.
  EXPECT_EQ(remaining_wait(s, at(s.saved_wall_ms - 3'600'000)), Millis(30'000));
  // Set forward a day: none, not a negative wait.
  EXPECT_EQ(remaining_wait(s, at(s.saved_wall_ms + 86'400'000)), Millis(0));
  // A wall clock at 0 (an unset RTC): what was left.
  EXPECT_EQ(remaining_wait(s, Millis(0)), Millis(30'000));
  // No wait under way.
  s.wait_remaining = Millis(0);
  EXPECT_EQ(remaining_wait(s, at(s.saved_wall_ms)), Millis(0));
}

// The frame ends with the CRC-32C (Castagnoli) of everything before it, little-endian: the
// format's checksum, computed here bit by bit apart from the library's.
TEST(TransferState, TheRecordEndsWithTheCrc32cOfWhatPrecedesIt) {
  const auto crc32c_bitwise = [](const std::uint8_t* p, std::size_t n) {
    std::uint32_t c = 0xFFFFFFFFU;
    for (std::size_t i = 0; i < n; ++i) {
      c ^= p[i];
      for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
    }
    return ~c;
  };
  const char* text = "123456789";
  ASSERT_EQ(crc32c_bitwise(reinterpret_cast<const std::uint8_t*>(text), 9), 0xE3069283U);
  const std::vector<std::uint8_t> bytes = encode(sample());
  ASSERT_GE(bytes.size(), 16U);
  const std::size_t body = bytes.size() - 4;
  std::uint32_t trailer = 0;
  for (int i = 3; i >= 0; --i) trailer = (trailer << 8) | bytes[body + static_cast<std::size_t>(i)];
  EXPECT_EQ(trailer, crc32c_bitwise(bytes.data(), body));
}

// Random damage behind a valid frame: byte changes, cuts, insertions, all resealed. The
// decoder must refuse or produce a consistent record, never crash (ASan, UBSan in the
// sanitizer build) or read outside the input.
TEST(TransferState, RandomDamageBehindAValidFrame) {
  std::mt19937 rng(20240601);
  const std::vector<std::uint8_t> seeds[] = {encode(sample()), encode([] {
                                               TransferState s;
                                               s.kind = TransferKind::kDownload;
                                               EXPECT_TRUE(s.set_url("https://h/o"));
                                               return s;
                                             }())};
  int accepted = 0;
  for (int i = 0; i < 100000; ++i) {
    std::vector<std::uint8_t> b = seeds[static_cast<std::size_t>(i) % 2];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && b.size() > 16; ++e) {
      const std::size_t at = 12 + rng() % (b.size() - 16);
      switch (rng() % 4) {
        case 0:
          b[at] = static_cast<std::uint8_t>(rng());
          break;
        case 1:
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
          break;
        case 2:
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng()));
          break;
        default:
          b[at] ^= 0x80;
          break;
      }
    }
    // Keeps the length field true to the message, so the decoder sees the damage.
    const auto length = static_cast<std::uint32_t>(b.size() - 16);
    for (int k = 0; k < 4; ++k)
      b[8 + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(length >> (8 * k));
    reseal(&b);
    TransferState out;
    if (decode(b, &out) == StateStatus::kOk) {
      ++accepted;
      if (out.kind == TransferKind::kUpload) {
        EXPECT_LE(out.committed, out.total_size);
        EXPECT_FALSE(out.session_uri().empty());
      }
      EXPECT_FALSE(out.url().empty());
    }
  }
  std::printf("%d of 100000 damaged records were still consistent and accepted\n", accepted);
}

}  // namespace
}  // namespace stepback::transfer
