#include "stepback/https/integrity/integrity.hpp"

#include <atomic>
#include <cstring>

#if !defined(MBEDTLS_MD5_C)
#error "stepback's integrity check needs MD5: define MBEDTLS_MD5_C in the mbedTLS configuration"
#endif

// Hardware CRC-32C paths, compiled with a per-function target attribute so that the library
// needs no -msse4.2 / -march=...+crc and runs on CPUs without them (checked at run time).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STEPBACK_CRC32C_HW 1
#define STEPBACK_CRC32C_HW_PATH Crc32cPath::kSse42
#define STEPBACK_CRC32C_HW_TARGET __attribute__((target("sse4.2,pclmul")))
#include <cpuid.h>
#include <nmmintrin.h>
#include <wmmintrin.h>
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define STEPBACK_CRC32C_HW 1
#define STEPBACK_CRC32C_HW_PATH Crc32cPath::kArmCrc
#if defined(__clang__)
#define STEPBACK_CRC32C_HW_TARGET __attribute__((target("crc")))
#else
#define STEPBACK_CRC32C_HW_TARGET __attribute__((target("+crc")))
#endif
#if defined(__linux__) || defined(__ANDROID__)
#define STEPBACK_CRC32C_HWCAP 1
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1UL << 7)  // <asm/hwcap.h>, arm64
#endif
#endif
#endif

namespace stepback::https {
namespace {

// ---- Tables -------------------------------------------------------------------------------

constexpr std::uint32_t kPoly = 0x82F63B78u;  // Reflected Castagnoli polynomial.

// kSlices.t[k][b]: the CRC register after byte b followed by k zero bytes, from register 0.
struct SliceTables {
  std::uint32_t t[8][256];
};

constexpr SliceTables make_slice_tables() {
  SliceTables s{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t r = b;
    for (int i = 0; i < 8; ++i) r = (r & 1u) != 0 ? (r >> 1) ^ kPoly : r >> 1;
    s.t[0][b] = r;
  }
  for (int k = 1; k < 8; ++k) {
    for (std::uint32_t b = 0; b < 256; ++b) {
      const std::uint32_t prev = s.t[k - 1][b];
      s.t[k][b] = (prev >> 8) ^ s.t[0][prev & 0xFFu];
    }
  }
  return s;
}

constexpr SliceTables kSlices = make_slice_tables();

// A little-endian 64-bit load from any alignment.
inline std::uint64_t load_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

// ---- Portable path: slicing-by-8 ------------------------------------------------------------

// Advances the (pre-inverted) register over n bytes.
std::uint32_t table_update(std::uint32_t r, const std::uint8_t* p, std::size_t n) {
  const auto& t = kSlices.t;
  while (n >= 8) {
    const std::uint64_t w = load_le64(p) ^ r;
    r = t[7][w & 0xFFu] ^ t[6][(w >> 8) & 0xFFu] ^ t[5][(w >> 16) & 0xFFu] ^
        t[4][(w >> 24) & 0xFFu] ^ t[3][(w >> 32) & 0xFFu] ^ t[2][(w >> 40) & 0xFFu] ^
        t[1][(w >> 48) & 0xFFu] ^ t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- != 0) r = (r >> 8) ^ t[0][(r ^ *p++) & 0xFFu];
  return r;
}

// ---- Hardware paths -------------------------------------------------------------------------

#if defined(STEPBACK_CRC32C_HW)

// Polynomials mod P in the reflected representation (x^0 in bit 31), as zlib's
// crc32_combine: a * b mod P.
constexpr std::uint32_t mul_mod_p(std::uint32_t a, std::uint32_t b) {
  std::uint32_t p = 0;
  for (int i = 31; i >= 0; --i) {
    if (((a >> i) & 1u) != 0) p ^= b;
    b = (b & 1u) != 0 ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// x^bits mod P. Moving a CRC register past n zero bytes multiplies it by x^(8n).
constexpr std::uint32_t x_pow_mod_p(std::uint64_t bits) {
  std::uint32_t result = 1u << 31;  // x^0
  std::uint32_t square = 1u << 30;  // x^1
  while (bits != 0) {
    if ((bits & 1u) != 0) result = mul_mod_p(result, square);
    square = mul_mod_p(square, square);
    bits >>= 1;
  }
  return result;
}

// The crc instruction has a latency of 2 or 3 cycles and a throughput of one or more per
// cycle, so a single chain of them runs at a fraction of the unit's speed. The bodies below
// split a block into independent streams of Stride bytes, each a CRC started from register
// 0 (the first from the running register), and join them:
//   register(a ++ b) = shift_|b|(register(a)) ^ register_from_0(b),
// where shift_n (the register moved past n zero bytes) is linear in the register.

#if defined(__x86_64__)

// x86-64: crc32q on eight streams (latency 3; one issues per cycle on older cores, where
// three streams saturate the unit, more on newer ones: an AMD EPYC with Zen 5's feature set ran
// 9 GB/s on one stream, 28 on three, 60 on eight), joined with PCLMULQDQ: for a
// 32-bit register c, clmul(c, x^(8n - 33) mod P) is a 64-bit value that crc32q folds into
// shift_n(c); the shifted streams are XORed first, so a join is 7 carry-less multiplies in
// parallel and one crc32q.
constexpr std::size_t kStreams = 8;

// The register is kept 64 bits wide between crc32q instructions: narrowing it to 32 bits
// each time puts a zero-extending mov on the dependency chain (a quarter of the speed).
STEPBACK_CRC32C_HW_TARGET inline std::uint64_t hw_u64(std::uint64_t r, std::uint64_t v) {
  return _mm_crc32_u64(r, v);
}
STEPBACK_CRC32C_HW_TARGET inline std::uint32_t hw_u8(std::uint32_t r, std::uint8_t v) {
  return _mm_crc32_u8(r, v);
}

// k[s] moves stream s past the (kStreams - 1 - s) streams after it.
struct Join {
  std::uint32_t k[kStreams - 1];
};

constexpr Join make_join(std::size_t stride) {
  Join j{};
  for (std::size_t s = 0; s + 1 < kStreams; ++s) {
    j.k[s] = x_pow_mod_p(8 * (kStreams - 1 - s) * stride - 33);
  }
  return j;
}

template <std::size_t Stride>
constexpr Join kJoin = make_join(Stride);

STEPBACK_CRC32C_HW_TARGET inline __m128i clmul(std::uint64_t c, std::uint32_t k) {
  return _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(c)),
                              _mm_cvtsi64_si128(static_cast<long long>(k)), 0x00);
}

// Advances register r over whole blocks of kStreams * Stride bytes while they last.
template <std::size_t Stride>
STEPBACK_CRC32C_HW_TARGET inline std::uint32_t hw_blocks(std::uint32_t r, const std::uint8_t*& p,
                                                         std::size_t& n) {
  static_assert(Stride % 8 == 0 && Stride >= 8, "a stride is whole 8-byte words");
  const Join& j = kJoin<Stride>;
  while (n >= kStreams * Stride) {
    std::uint64_t c0 = r, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;
    for (std::size_t i = 0; i < Stride; i += 8) {
      c0 = hw_u64(c0, load_le64(p + i));
      c1 = hw_u64(c1, load_le64(p + 1 * Stride + i));
      c2 = hw_u64(c2, load_le64(p + 2 * Stride + i));
      c3 = hw_u64(c3, load_le64(p + 3 * Stride + i));
      c4 = hw_u64(c4, load_le64(p + 4 * Stride + i));
      c5 = hw_u64(c5, load_le64(p + 5 * Stride + i));
      c6 = hw_u64(c6, load_le64(p + 6 * Stride + i));
      c7 = hw_u64(c7, load_le64(p + 7 * Stride + i));
    }
    const __m128i x = _mm_xor_si128(
        _mm_xor_si128(_mm_xor_si128(clmul(c0, j.k[0]), clmul(c1, j.k[1])),
                      _mm_xor_si128(clmul(c2, j.k[2]), clmul(c3, j.k[3]))),
        _mm_xor_si128(_mm_xor_si128(clmul(c4, j.k[4]), clmul(c5, j.k[5])), clmul(c6, j.k[6])));
    // crc32q leaves the upper half of its 64-bit register zero.
    r = static_cast<std::uint32_t>(hw_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(x)))) ^
        static_cast<std::uint32_t>(c7);
    p += kStreams * Stride;
    n -= kStreams * Stride;
  }
  return r;
}

STEPBACK_CRC32C_HW_TARGET std::uint32_t hw_update(std::uint32_t r, const std::uint8_t* p,
                                                  std::size_t n) {
  r = hw_blocks<1024>(r, p, n);  // 8 KiB blocks.
  r = hw_blocks<128>(r, p, n);   // 1 KiB.
  r = hw_blocks<32>(r, p, n);    // 256 bytes.
  std::uint64_t w = r;
  while (n >= 8) {
    w = hw_u64(w, load_le64(p));
    p += 8;
    n -= 8;
  }
  r = static_cast<std::uint32_t>(w);
  while (n-- != 0) r = hw_u8(r, *p++);
  return r;
}

#else  // AArch64

// AArch64: crc32cx on three streams (latency 2 or 3, one per cycle on the cores we know),
// joined with table shifts (the carry-less multiply, PMULL, is an optional extension).
#if defined(__clang__)
STEPBACK_CRC32C_HW_TARGET inline std::uint32_t hw_u64(std::uint32_t r, std::uint64_t v) {
  return __builtin_arm_crc32cd(r, v);
}
STEPBACK_CRC32C_HW_TARGET inline std::uint32_t hw_u8(std::uint32_t r, std::uint8_t v) {
  return __builtin_arm_crc32cb(r, v);
}
#else
STEPBACK_CRC32C_HW_TARGET inline std::uint32_t hw_u64(std::uint32_t r, std::uint64_t v) {
  return __builtin_aarch64_crc32cx(r, v);
}
STEPBACK_CRC32C_HW_TARGET inline std::uint32_t hw_u8(std::uint32_t r, std::uint8_t v) {
  return __builtin_aarch64_crc32cb(r, v);
}
#endif

// shift_n as four table lookups (it is linear in the register):
// t[i][b] = (b << 8i) * x^(8n) mod P. 4 KiB per length.
struct ShiftTable {
  std::uint32_t t[4][256];
};

constexpr ShiftTable make_shift_table(std::size_t bytes) {
  ShiftTable s{};
  const std::uint32_t k = x_pow_mod_p(8 * std::uint64_t{bytes});
  for (int i = 0; i < 4; ++i) {
    for (std::uint32_t b = 0; b < 256; ++b) s.t[i][b] = mul_mod_p(b << (8 * i), k);
  }
  return s;
}

inline std::uint32_t shift(const ShiftTable& s, std::uint32_t r) {
  return s.t[0][r & 0xFFu] ^ s.t[1][(r >> 8) & 0xFFu] ^ s.t[2][(r >> 16) & 0xFFu] ^ s.t[3][r >> 24];
}

// Long blocks make the joins (two table shifts) negligible; short ones keep 1 KiB buffers
// on three streams.
constexpr std::size_t kLongStride = 2720;  // Blocks of 8160 bytes.
constexpr std::size_t kShortStride = 336;  // Blocks of 1008 bytes.
constexpr ShiftTable kLongShift = make_shift_table(kLongStride);
constexpr ShiftTable kShortShift = make_shift_table(kShortStride);

// Advances register r over whole blocks of 3 * Stride bytes while they last.
template <std::size_t Stride>
STEPBACK_CRC32C_HW_TARGET inline std::uint32_t hw_blocks(std::uint32_t r, const std::uint8_t*& p,
                                                         std::size_t& n, const ShiftTable& s) {
  static_assert(Stride % 8 == 0, "a stride is whole 8-byte words");
  while (n >= 3 * Stride) {
    std::uint32_t a = r;
    std::uint32_t b = 0;
    std::uint32_t c = 0;
    for (std::size_t i = 0; i < Stride; i += 8) {
      a = hw_u64(a, load_le64(p + i));
      b = hw_u64(b, load_le64(p + Stride + i));
      c = hw_u64(c, load_le64(p + 2 * Stride + i));
    }
    r = shift(s, shift(s, a) ^ b) ^ c;
    p += 3 * Stride;
    n -= 3 * Stride;
  }
  return r;
}

STEPBACK_CRC32C_HW_TARGET std::uint32_t hw_update(std::uint32_t r, const std::uint8_t* p,
                                                  std::size_t n) {
  r = hw_blocks<kLongStride>(r, p, n, kLongShift);
  r = hw_blocks<kShortStride>(r, p, n, kShortShift);
  while (n >= 8) {
    r = hw_u64(r, load_le64(p));
    p += 8;
    n -= 8;
  }
  while (n-- != 0) r = hw_u8(r, *p++);
  return r;
}

#endif  // AArch64

// The CPU's answer, asked once: 0 not yet asked, else kDetected | kHasHardware when it has.
constexpr std::uint8_t kDetected = 1;
constexpr std::uint8_t kHasHardware = 2;
std::atomic<std::uint8_t> g_cpu{0};

bool cpu_has_crc32c() {
#if defined(__x86_64__)
#if defined(__SSE4_2__) && defined(__PCLMUL__)
  return true;
#else
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_SSE4_2) != 0 &&
         (ecx & bit_PCLMUL) != 0;
#endif
#elif defined(__ARM_FEATURE_CRC32)
  return true;
#elif defined(STEPBACK_CRC32C_HWCAP)
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
  return false;
#endif
}

bool hardware_available() {
  std::uint8_t v = g_cpu.load(std::memory_order_relaxed);
  if (v == 0) {
    // Racing first calls compute the same answer; either store is right.
    v = static_cast<std::uint8_t>(kDetected | (cpu_has_crc32c() ? kHasHardware : 0));
    g_cpu.store(v, std::memory_order_relaxed);
  }
  return (v & kHasHardware) != 0;
}

#endif  // STEPBACK_CRC32C_HW

std::uint32_t update_with(Crc32cPath path, std::uint32_t crc, ConstBytes bytes) {
  if (bytes.size == 0) return crc;
  const std::uint32_t r = ~crc;
#if defined(STEPBACK_CRC32C_HW)
  if (path == STEPBACK_CRC32C_HW_PATH && hardware_available()) {
    return ~hw_update(r, bytes.data, bytes.size);
  }
#else
  (void)path;
#endif
  return ~table_update(r, bytes.data, bytes.size);
}

// ---- Base64 ---------------------------------------------------------------------------------

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of a base64 character, or -1.
int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// ---- Field values ---------------------------------------------------------------------------

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != b[i]) return false;  // b is lower case.
  }
  return true;
}

// Appends to a bounded buffer, snprintf-like: counts everything, writes what fits.
class Writer {
 public:
  Writer(char* out, std::size_t capacity) : out_(out), capacity_(capacity) {}
  void text(std::string_view s) {
    for (char c : s) put(c);
  }
  void digest(const Digest& d) {
    char b64[((kMd5DigestSize + 2) / 3) * 4];
    text(std::string_view(b64, base64_encode(d.view(), b64, sizeof b64)));
  }
  std::size_t finish() {
    if (capacity_ != 0) out_[length_ < capacity_ ? length_ : capacity_ - 1] = '\0';
    return length_;
  }

 private:
  void put(char c) {
    if (capacity_ != 0 && length_ < capacity_ - 1) out_[length_] = c;
    ++length_;
  }
  char* out_;
  std::size_t capacity_;
  std::size_t length_ = 0;
};

}  // namespace

// ---- CRC32C ---------------------------------------------------------------------------------

std::uint32_t crc32c_extend(std::uint32_t crc, ConstBytes bytes) {
#if defined(STEPBACK_CRC32C_HW)
  return update_with(STEPBACK_CRC32C_HW_PATH, crc, bytes);
#else
  return update_with(Crc32cPath::kTable, crc, bytes);
#endif
}

std::uint32_t crc32c_extend_with(Crc32cPath path, std::uint32_t crc, ConstBytes bytes) {
  return update_with(path, crc, bytes);
}

const char* to_string(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::kTable:
      return "table";
    case Crc32cPath::kSse42:
      return "sse4.2";
    case Crc32cPath::kArmCrc:
      return "arm-crc";
  }
  return "?";
}

bool crc32c_path_available(Crc32cPath path) {
  if (path == Crc32cPath::kTable) return true;
#if defined(STEPBACK_CRC32C_HW)
  return path == STEPBACK_CRC32C_HW_PATH && hardware_available();
#else
  return false;
#endif
}

Crc32cPath crc32c_path() {
#if defined(STEPBACK_CRC32C_HW)
  if (hardware_available()) return STEPBACK_CRC32C_HW_PATH;
#endif
  return Crc32cPath::kTable;
}

// ---- Base64 ---------------------------------------------------------------------------------

bool base64_decode_exact(std::string_view text, std::uint8_t* out, std::size_t size) {
  const std::size_t groups = (size + 2) / 3;
  if (text.size() != groups * 4) return false;
  const std::size_t pad = groups * 3 - size;  // 0, 1 or 2 trailing '='.
  std::size_t o = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const bool last = g + 1 == groups;
    const std::size_t chars = last ? 4 - pad : 4;  // Data characters in this group.
    std::uint32_t bits = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const char c = text[g * 4 + i];
      if (i >= chars) {
        if (c != '=') return false;
        bits <<= 6;
        continue;
      }
      const int v = base64_value(c);
      if (v < 0) return false;
      bits = (bits << 6) | static_cast<std::uint32_t>(v);
    }
    // Canonical: the bits under the padding are zero (pad 1: 2 bits, pad 2: 4 bits).
    if (last && pad != 0 && (bits & ((1u << (8 * pad)) - 1u)) != 0) return false;
    const std::size_t bytes = last ? 3 - pad : 3;
    for (std::size_t i = 0; i < bytes; ++i) {
      out[o++] = static_cast<std::uint8_t>(bits >> (16 - 8 * i));
    }
  }
  return true;
}

std::size_t base64_encode(ConstBytes bytes, char* out, std::size_t capacity) {
  const std::size_t length = (bytes.size + 2) / 3 * 4;
  if (length > capacity) return 0;
  std::size_t o = 0;
  for (std::size_t i = 0; i < bytes.size; i += 3) {
    const std::size_t n = bytes.size - i < 3 ? bytes.size - i : 3;
    std::uint32_t bits = static_cast<std::uint32_t>(bytes.data[i]) << 16;
    if (n > 1) bits |= static_cast<std::uint32_t>(bytes.data[i + 1]) << 8;
    if (n > 2) bits |= bytes.data[i + 2];
    out[o++] = kBase64Alphabet[(bits >> 18) & 63u];
    out[o++] = kBase64Alphabet[(bits >> 12) & 63u];
    out[o++] = n > 1 ? kBase64Alphabet[(bits >> 6) & 63u] : '=';
    out[o++] = n > 2 ? kBase64Alphabet[bits & 63u] : '=';
  }
  return length;
}

// ---- Expectations and results ---------------------------------------------------------------

const char* to_string(HashAlgorithm algorithm) {
  switch (algorithm) {
    case HashAlgorithm::kCrc32c:
      return "crc32c";
    case HashAlgorithm::kMd5:
      return "md5";
  }
  return "?";
}

const char* to_string(IntegrityStatus status) {
  switch (status) {
    case IntegrityStatus::kNoExpectation:
      return "no_expectation";
    case IntegrityStatus::kMatch:
      return "match";
    case IntegrityStatus::kMismatch:
      return "mismatch";
  }
  return "?";
}

Digest Digest::crc32c(std::uint32_t crc) {
  Digest d;
  d.algorithm = HashAlgorithm::kCrc32c;
  d.size = kCrc32cDigestSize;
  for (std::size_t i = 0; i < kCrc32cDigestSize; ++i) {
    d.bytes[i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  }
  return d;
}

Digest Digest::md5(const std::uint8_t (&digest)[kMd5DigestSize]) {
  Digest d;
  d.algorithm = HashAlgorithm::kMd5;
  d.size = kMd5DigestSize;
  std::memcpy(d.bytes, digest, kMd5DigestSize);
  return d;
}

bool operator==(const Digest& a, const Digest& b) {
  return a.algorithm == b.algorithm && a.size == b.size &&
         std::memcmp(a.bytes, b.bytes, a.size) == 0;
}

std::size_t format_integrity_message(const IntegrityResult& result, char* out,
                                     std::size_t capacity) {
  Writer w(out, capacity);
  const DigestComparison* const both[] = {&result.crc32c, &result.md5};
  switch (result.status) {
    case IntegrityStatus::kNoExpectation:
      w.text("no integrity digest announced");
      break;
    case IntegrityStatus::kMismatch: {
      bool first = true;
      for (const DigestComparison* c : both) {
        if (!c->checked || c->match) continue;
        if (!first) w.text("; ");
        first = false;
        w.text(to_string(c->expected.algorithm));
        w.text(" mismatch: expected ");
        w.digest(c->expected);
        w.text(", got ");
        w.digest(c->got);
      }
      break;
    }
    case IntegrityStatus::kMatch: {
      w.text("integrity verified:");
      bool first = true;
      for (const DigestComparison* c : both) {
        if (!c->checked) continue;
        w.text(first ? " " : ", ");
        first = false;
        w.text(to_string(c->got.algorithm));
        w.text(" ");
        w.digest(c->got);
      }
      break;
    }
  }
  return w.finish();
}

// ---- The check ------------------------------------------------------------------------------

IntegrityCheck::IntegrityCheck() {
  mbedtls_md5_init(&md5_ctx_);
  (void)mbedtls_md5_starts(&md5_ctx_);
}

IntegrityCheck::~IntegrityCheck() { mbedtls_md5_free(&md5_ctx_); }

IntegrityCheck::IntegrityCheck(const IntegrityCheck& other)
    : crc_(other.crc_),
      md5_(other.md5_),
      size_(other.size_),
      crc_value_(other.crc_value_),
      md5_running_(other.md5_running_) {
  mbedtls_md5_init(&md5_ctx_);
  mbedtls_md5_clone(&md5_ctx_, &other.md5_ctx_);
}

IntegrityCheck& IntegrityCheck::operator=(const IntegrityCheck& other) {
  if (this != &other) {
    crc_ = other.crc_;
    md5_ = other.md5_;
    size_ = other.size_;
    crc_value_ = other.crc_value_;
    md5_running_ = other.md5_running_;
    mbedtls_md5_clone(&md5_ctx_, &other.md5_ctx_);
  }
  return *this;
}

void IntegrityCheck::expect(Expected* e, const Digest& d) {
  if (!e->present) {
    e->present = true;
    e->first = d;
  } else if (d != e->first) {
    e->conflict = true;
    e->other = d;
  }
}

void IntegrityCheck::expect_crc32c(std::uint32_t crc) { expect(&crc_, Digest::crc32c(crc)); }

void IntegrityCheck::expect_md5(const std::uint8_t (&digest)[kMd5DigestSize]) {
  expect(&md5_, Digest::md5(digest));
  if (size_ == 0) md5_running_ = true;
}

bool IntegrityCheck::add_x_goog_hash(std::string_view value) {
  bool taken = false;
  // Views are cut by hand: substr() would tie the library to libstdc++'s out_of_range.
  std::size_t begin = 0;
  while (begin < value.size()) {
    std::size_t end = value.find(',', begin);
    if (end == std::string_view::npos) end = value.size();
    const std::string_view item = trim_ows(std::string_view(value.data() + begin, end - begin));
    begin = end + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = trim_ows(std::string_view(item.data(), eq));
    const std::string_view b64 =
        trim_ows(std::string_view(item.data() + eq + 1, item.size() - eq - 1));
    if (iequals(name, "crc32c")) {
      std::uint8_t raw[kCrc32cDigestSize];
      if (base64_decode_exact(b64, raw, sizeof raw)) {
        expect_crc32c(static_cast<std::uint32_t>(raw[0]) << 24 |
                      static_cast<std::uint32_t>(raw[1]) << 16 |
                      static_cast<std::uint32_t>(raw[2]) << 8 | raw[3]);
        taken = true;
      }
    } else if (iequals(name, "md5")) {
      std::uint8_t raw[kMd5DigestSize];
      if (base64_decode_exact(b64, raw, sizeof raw)) {
        expect_md5(raw);
        taken = true;
      }
    }
  }
  return taken;
}

bool IntegrityCheck::add_content_md5(std::string_view value) {
  std::uint8_t raw[kMd5DigestSize];
  if (!base64_decode_exact(trim_ows(value), raw, sizeof raw)) return false;
  expect_md5(raw);
  return true;
}

bool IntegrityCheck::add_header(std::string_view name, std::string_view value) {
  if (iequals(name, "x-goog-hash")) return add_x_goog_hash(value);
  if (iequals(name, "content-md5")) return add_content_md5(value);
  return false;
}

void IntegrityCheck::update(ConstBytes bytes) {
  if (bytes.size == 0) return;
  crc_value_ = crc32c_extend(crc_value_, bytes);
  if (md5_running_) (void)mbedtls_md5_update(&md5_ctx_, bytes.data, bytes.size);
  size_ += bytes.size;
}

void IntegrityCheck::reset() {
  size_ = 0;
  crc_value_ = 0;
  md5_running_ = md5_.present;
  (void)mbedtls_md5_starts(&md5_ctx_);
}

void IntegrityCheck::clear() {
  crc_ = Expected();
  md5_ = Expected();
  reset();
}

IntegrityResult IntegrityCheck::finish() const {
  const Digest crc = Digest::crc32c(crc_value_);
  Digest md5;
  if (md5_.present && md5_running_) {
    mbedtls_md5_context copy;
    mbedtls_md5_init(&copy);
    mbedtls_md5_clone(&copy, &md5_ctx_);
    std::uint8_t raw[kMd5DigestSize];
    (void)mbedtls_md5_finish(&copy, raw);
    mbedtls_md5_free(&copy);
    md5 = Digest::md5(raw);
  }
  IntegrityResult result = compare_with(&crc, md5.size != 0 ? &md5 : nullptr);
  result.size = size_;
  return result;
}

IntegrityResult IntegrityCheck::compare_with(const Digest* crc32c, const Digest* md5) const {
  IntegrityResult result;
  const auto compare = [](const Expected& e, const Digest& got, DigestComparison* c) {
    c->checked = true;
    c->got = got;
    if (got != e.first) {
      c->expected = e.first;
    } else if (e.conflict) {
      c->expected = e.other;
    } else {
      c->expected = e.first;
      c->match = true;
    }
  };
  if (crc_.present && crc32c != nullptr) compare(crc_, *crc32c, &result.crc32c);
  if (md5_.present && md5 != nullptr) compare(md5_, *md5, &result.md5);

  if (!result.crc32c.checked && !result.md5.checked) {
    result.status = IntegrityStatus::kNoExpectation;
  } else if ((result.crc32c.checked && !result.crc32c.match) ||
             (result.md5.checked && !result.md5.match)) {
    result.status = IntegrityStatus::kMismatch;
  } else {
    result.status = IntegrityStatus::kMatch;
  }
  return result;
}

}  // namespace stepback::https
