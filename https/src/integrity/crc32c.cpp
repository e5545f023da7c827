#include "stepback/https/integrity/crc32c.hpp"

#include <atomic>
#include <cstring>

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

constexpr std::uint32_t kPoly = 0x82F63B78u;  // Reflected Castagnoli polynomial.

// slices[k][b]: the CRC register after byte b followed by k zero bytes, from register 0.
using SliceTables = std::uint32_t[8][256];

constexpr void fill_slice_tables(SliceTables& t) {
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t r = b;
    for (int i = 0; i < 8; ++i) r = (r & 1u) != 0 ? (r >> 1) ^ kPoly : r >> 1;
    t[0][b] = r;
  }
  for (int k = 1; k < 8; ++k) {
    for (std::uint32_t b = 0; b < 256; ++b) {
      const std::uint32_t prev = t[k - 1][b];
      t[k][b] = (prev >> 8) ^ t[0][prev & 0xFFu];
    }
  }
}

// Bit at a time, with no table: for a call that finds another thread still filling them.
std::uint32_t bitwise_update(std::uint32_t r, const std::uint8_t* p, std::size_t n) {
  while (n-- != 0) {
    r ^= *p++;
    for (int i = 0; i < 8; ++i) r = (r & 1u) != 0 ? (r >> 1) ^ kPoly : r >> 1;
  }
  return r;
}

// A little-endian 64-bit load from any alignment.
inline std::uint64_t load_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#if defined(STEPBACK_CRC32C_HW) && defined(__aarch64__)
// shift_n as four table lookups (it is linear in the register):
// t[i][b] = (b << 8i) * x^(8n) mod P. 4 KiB per length.
struct ShiftTable {
  std::uint32_t t[4][256];
};
#endif

// The tables are computed on first use into static storage (.bss) instead of being constants
// in the binary, so they are not in the file an app ships (16 KiB on aarch64, 8 KiB elsewhere).
// The price is the same amount of private memory once filled, where constant tables would be
// pages shared with the file, and one fill (a few thousand table entries) on the first call.
// The small-RAM build (STEPBACK_SMALL_RAM) keeps them constant instead, computed by the
// compiler: on a microcontroller they then sit in flash, not in its scarce RAM (8 KiB of it).
struct Tables {
  SliceTables slices;
#if defined(STEPBACK_CRC32C_HW) && defined(__aarch64__)
  ShiftTable long_shift;
  ShiftTable short_shift;
#endif
};

// Advances the (pre-inverted) register over n bytes.
std::uint32_t table_update(const SliceTables& t, std::uint32_t r, const std::uint8_t* p,
                           std::size_t n) {
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
// three streams saturate the unit, more on newer ones: docs/performance.md), joined with
// PCLMULQDQ: for a
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

constexpr void fill_shift_table(ShiftTable& s, std::size_t bytes) {
  const std::uint32_t k = x_pow_mod_p(8 * std::uint64_t{bytes});
  for (int i = 0; i < 4; ++i) {
    for (std::uint32_t b = 0; b < 256; ++b) s.t[i][b] = mul_mod_p(b << (8 * i), k);
  }
}

inline std::uint32_t shift(const ShiftTable& s, std::uint32_t r) {
  return s.t[0][r & 0xFFu] ^ s.t[1][(r >> 8) & 0xFFu] ^ s.t[2][(r >> 16) & 0xFFu] ^ s.t[3][r >> 24];
}

// Long blocks make the joins (two table shifts) negligible; short ones keep 1 KiB buffers
// on three streams.
constexpr std::size_t kLongStride = 2720;  // Blocks of 8160 bytes.
constexpr std::size_t kShortStride = 336;  // Blocks of 1008 bytes.

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

// Without the tables (another thread still filling them) one stream does it all, slower.
STEPBACK_CRC32C_HW_TARGET std::uint32_t hw_update(std::uint32_t r, const std::uint8_t* p,
                                                  std::size_t n, const Tables* t) {
  if (t != nullptr) {
    r = hw_blocks<kLongStride>(r, p, n, t->long_shift);
    r = hw_blocks<kShortStride>(r, p, n, t->short_shift);
  }
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

constexpr void fill_tables(Tables& t) {
  fill_slice_tables(t.slices);
#if defined(STEPBACK_CRC32C_HW) && defined(__aarch64__)
  fill_shift_table(t.long_shift, kLongStride);
  fill_shift_table(t.short_shift, kShortStride);
#endif
}

#if defined(STEPBACK_SMALL_RAM) && STEPBACK_SMALL_RAM

constexpr Tables make_tables() {
  Tables t{};
  fill_tables(t);
  return t;
}

constexpr Tables kTables = make_tables();

const Tables* tables() { return &kTables; }

#else  // The tables in .bss, filled by the first call.

Tables g_tables;
// 0 not filled, 1 being filled by one thread, 2 filled (and published by the release store).
std::atomic<std::uint8_t> g_tables_state{0};

// The tables, filled by the first call; null while another thread is filling them (those calls
// compute without them rather than wait, so no call ever blocks).
const Tables* tables() {
  std::uint8_t state = g_tables_state.load(std::memory_order_acquire);
  if (state == 2) return &g_tables;
  if (state == 0 && g_tables_state.compare_exchange_strong(state, 1, std::memory_order_acquire)) {
    fill_tables(g_tables);
    g_tables_state.store(2, std::memory_order_release);
    return &g_tables;
  }
  return nullptr;
}

#endif  // STEPBACK_SMALL_RAM

std::uint32_t update_with(Crc32cPath path, std::uint32_t crc, ConstBytes bytes) {
  if (bytes.size == 0) return crc;
  const std::uint32_t r = ~crc;
  const Tables* t = tables();
#if defined(STEPBACK_CRC32C_HW)
  if (path == STEPBACK_CRC32C_HW_PATH && hardware_available()) {
#if defined(__aarch64__)
    return ~hw_update(r, bytes.data, bytes.size, t);
#else
    return ~hw_update(r, bytes.data, bytes.size);
#endif
  }
#else
  (void)path;
#endif
  return t != nullptr ? ~table_update(t->slices, r, bytes.data, bytes.size)
                      : ~bitwise_update(r, bytes.data, bytes.size);
}

}  // namespace

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

}  // namespace stepback::https
