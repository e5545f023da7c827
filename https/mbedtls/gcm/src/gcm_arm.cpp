// The ARMv8 engine: AESE/AESMC for eight counter blocks in flight, PMULL for GHASH over eight
// blocks at a time with one reduction; the same algorithm as gcm_x86.cpp, lane for lane (the
// reduction's 32-bit lane shifts and byte shifts map to NEON's VSHL/VSHR/EXT). Compiled with a
// target attribute (no -march flag needed) and used only when the CPU reports AES and PMULL.
// Clang before 16 declares the crypto intrinsics in <arm_neon.h> only under these macros,
// which -march would set; the target attributes below make using them legal (mbedTLS's
// aesce.c does the same).
#if defined(__aarch64__) && defined(__clang__) && !defined(__ARM_FEATURE_AES)
#define __ARM_FEATURE_CRYPTO 1
#define __ARM_FEATURE_AES 1
#endif

#include "kernel.hpp"

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))

#include <arm_neon.h>

#include <atomic>

#if defined(__linux__) || defined(__ANDROID__)
#include <sys/auxv.h>
#ifndef HWCAP_AES
#define HWCAP_AES (1 << 3)
#endif
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1 << 4)
#endif
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#if defined(__clang__)
#define STEPBACK_GCM_TARGET __attribute__((target("aes")))
#else
#define STEPBACK_GCM_TARGET __attribute__((target("+crypto")))
#endif

namespace stepback::gcm::detail {
namespace {

using Block = uint8x16_t;

struct Wide {
  uint8x16_t lo, mid, hi;
};

STEPBACK_GCM_TARGET inline uint8x16_t zero() { return vdupq_n_u8(0); }

STEPBACK_GCM_TARGET inline uint8x16_t bxor(uint8x16_t a, uint8x16_t b) { return veorq_u8(a, b); }

STEPBACK_GCM_TARGET inline uint8x16_t load(const unsigned char* p) { return vld1q_u8(p); }

STEPBACK_GCM_TARGET inline void store(unsigned char* p, uint8x16_t v) { vst1q_u8(p, v); }

STEPBACK_GCM_TARGET inline uint8x16_t bswap(uint8x16_t v) {
  const uint8x16_t r = vrev64q_u8(v);
  return vextq_u8(r, r, 8);
}

STEPBACK_GCM_TARGET inline uint8x16_t pmull(uint8x16_t a, unsigned ai, uint8x16_t b, unsigned bi) {
  const uint64x2_t a64 = vreinterpretq_u64_u8(a);
  const uint64x2_t b64 = vreinterpretq_u64_u8(b);
  const poly64_t pa =
      static_cast<poly64_t>(ai != 0 ? vgetq_lane_u64(a64, 1) : vgetq_lane_u64(a64, 0));
  const poly64_t pb =
      static_cast<poly64_t>(bi != 0 ? vgetq_lane_u64(b64, 1) : vgetq_lane_u64(b64, 0));
  return vreinterpretq_u8_p128(vmull_p64(pa, pb));
}

STEPBACK_GCM_TARGET inline void mul_acc(Wide& w, uint8x16_t a, uint8x16_t h) {
  w.lo = veorq_u8(w.lo, pmull(a, 0, h, 0));
  w.hi = veorq_u8(w.hi, vreinterpretq_u8_p128(
                            vmull_high_p64(vreinterpretq_p64_u8(a), vreinterpretq_p64_u8(h))));
  w.mid = veorq_u8(w.mid, veorq_u8(pmull(a, 0, h, 1), pmull(a, 1, h, 0)));
}

// Byte shifts of the whole register (x86's PSLLDQ / PSRLDQ).
#define STEPBACK_SHL_BYTES(v, n) vextq_u8(zero(), (v), 16 - (n))
#define STEPBACK_SHR_BYTES(v, n) vextq_u8((v), zero(), (n))

STEPBACK_GCM_TARGET inline uint8x16_t shl32(uint8x16_t v, int n) {
  return vreinterpretq_u8_u32(vshlq_u32(vreinterpretq_u32_u8(v), vdupq_n_s32(n)));
}
STEPBACK_GCM_TARGET inline uint8x16_t shr32(uint8x16_t v, int n) {
  return vreinterpretq_u8_u32(vshlq_u32(vreinterpretq_u32_u8(v), vdupq_n_s32(-n)));
}

STEPBACK_GCM_TARGET inline uint8x16_t reduce(const Wide& w) {
  uint8x16_t t3 = veorq_u8(w.lo, STEPBACK_SHL_BYTES(w.mid, 8));
  uint8x16_t t6 = veorq_u8(w.hi, STEPBACK_SHR_BYTES(w.mid, 8));
  uint8x16_t t7 = shr32(t3, 31);
  uint8x16_t t8 = shr32(t6, 31);
  t3 = shl32(t3, 1);
  t6 = shl32(t6, 1);
  const uint8x16_t t9 = STEPBACK_SHR_BYTES(t7, 12);
  t8 = STEPBACK_SHL_BYTES(t8, 4);
  t7 = STEPBACK_SHL_BYTES(t7, 4);
  t3 = vorrq_u8(t3, t7);
  t6 = vorrq_u8(vorrq_u8(t6, t8), t9);
  t7 = veorq_u8(veorq_u8(shl32(t3, 31), shl32(t3, 30)), shl32(t3, 25));
  t8 = STEPBACK_SHR_BYTES(t7, 4);
  t7 = STEPBACK_SHL_BYTES(t7, 12);
  t3 = veorq_u8(t3, t7);
  uint8x16_t t2 = veorq_u8(veorq_u8(shr32(t3, 1), shr32(t3, 2)), shr32(t3, 7));
  t2 = veorq_u8(t2, t8);
  t3 = veorq_u8(t3, t2);
  return veorq_u8(t6, t3);
}

STEPBACK_GCM_TARGET std::uint32_t sub_word(std::uint32_t word) {
  // AESE with a zero key is ShiftRows + SubBytes; with four equal columns lane 0 is SubWord.
  const uint8x16_t v = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(word)), zero());
  return vgetq_lane_u32(vreinterpretq_u32_u8(v), 0);
}

// AESE is AddRoundKey, SubBytes and ShiftRows; AESMC is MixColumns: middle round i takes
// rk[i], and the last AESE (no AESMC) is followed by a plain AddRoundKey of rk[rounds].
STEPBACK_GCM_TARGET inline uint8x16_t aes_first(uint8x16_t b, const uint8x16_t*) { return b; }
STEPBACK_GCM_TARGET inline uint8x16_t aes_round(uint8x16_t b, const uint8x16_t* rk, unsigned i) {
  return vaesmcq_u8(vaeseq_u8(b, rk[i]));
}
STEPBACK_GCM_TARGET inline uint8x16_t aes_last(uint8x16_t b, const uint8x16_t* rk,
                                               unsigned rounds) {
  return veorq_u8(vaeseq_u8(b, rk[rounds - 1]), rk[rounds]);
}

STEPBACK_GCM_TARGET inline uint8x16_t counter_block(uint8x16_t y, std::uint32_t c) {
  return vreinterpretq_u8_u32(vsetq_lane_u32(__builtin_bswap32(c), vreinterpretq_u32_u8(y), 3));
}
STEPBACK_GCM_TARGET inline std::uint32_t counter_of(uint8x16_t y) {
  return __builtin_bswap32(vgetq_lane_u32(vreinterpretq_u32_u8(y), 3));
}

#include "engine.inc"

bool cpu_has_aes_pmull() {
#if defined(__linux__) || defined(__ANDROID__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  return (hwcap & (HWCAP_AES | HWCAP_PMULL)) == (HWCAP_AES | HWCAP_PMULL);
#elif defined(__APPLE__)
  // Every Apple arm64 CPU has both; the sysctls say so since macOS 12 / iOS 15.
  int aes = 0;
  int pmull = 0;
  std::size_t size = sizeof aes;
  if (sysctlbyname("hw.optional.arm.FEAT_AES", &aes, &size, nullptr, 0) != 0) return true;
  size = sizeof pmull;
  if (sysctlbyname("hw.optional.arm.FEAT_PMULL", &pmull, &size, nullptr, 0) != 0) return true;
  return aes != 0 && pmull != 0;
#else
  return false;
#endif
}

}  // namespace

const Kernel* arm_kernel() {
  static std::atomic<int> has{-1};
  int v = has.load(std::memory_order_relaxed);
  if (v < 0) {
    v = cpu_has_aes_pmull() ? 1 : 0;
    has.store(v, std::memory_order_relaxed);
  }
  return v != 0 ? &kEngine : nullptr;
}

}  // namespace stepback::gcm::detail

#else

namespace stepback::gcm::detail {
const Kernel* arm_kernel() { return nullptr; }
}  // namespace stepback::gcm::detail

#endif
