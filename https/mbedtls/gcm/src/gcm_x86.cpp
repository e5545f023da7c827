// The x86-64 engine: AES-NI for eight counter blocks in flight, PCLMULQDQ for GHASH over eight
// blocks at a time with one reduction (Gueron and Kounavis, "Intel Carry-Less Multiplication
// Instruction and its Usage for Computing the GCM Mode", rev. 2.02, algorithm of figure 5,
// aggregated as in its section on "reduction-aggregated" multiplication). Every function that
// uses the instructions carries the target attribute, so the build needs no -maes -mpclmul
// and the code only runs after CPUID said yes.
#include "kernel.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <cpuid.h>
#include <immintrin.h>

#include <atomic>

#define STEPBACK_GCM_TARGET __attribute__((target("aes,pclmul,sse4.1")))

namespace stepback::gcm::detail {
namespace {

using Block = __m128i;

// The 256-bit unreduced sum of products: lo, hi and the two middle terms.
struct Wide {
  __m128i lo, mid, hi;
};

STEPBACK_GCM_TARGET inline __m128i zero() { return _mm_setzero_si128(); }

STEPBACK_GCM_TARGET inline __m128i bxor(__m128i a, __m128i b) { return _mm_xor_si128(a, b); }

STEPBACK_GCM_TARGET inline __m128i bswap(__m128i v) {
  return _mm_shuffle_epi8(v, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

STEPBACK_GCM_TARGET inline __m128i load(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

STEPBACK_GCM_TARGET inline void store(unsigned char* p, __m128i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
}

STEPBACK_GCM_TARGET inline void mul_acc(Wide& w, __m128i a, __m128i h) {
  w.lo = _mm_xor_si128(w.lo, _mm_clmulepi64_si128(a, h, 0x00));
  w.hi = _mm_xor_si128(w.hi, _mm_clmulepi64_si128(a, h, 0x11));
  w.mid = _mm_xor_si128(
      w.mid, _mm_xor_si128(_mm_clmulepi64_si128(a, h, 0x10), _mm_clmulepi64_si128(a, h, 0x01)));
}

// Folds the middle terms, shifts the 256-bit product left by one (GCM's reflected bit order)
// and reduces modulo x^128 + x^7 + x^2 + x + 1. Inputs and result are byte-reversed blocks.
STEPBACK_GCM_TARGET inline __m128i reduce(const Wide& w) {
  __m128i t3 = _mm_xor_si128(w.lo, _mm_slli_si128(w.mid, 8));
  __m128i t6 = _mm_xor_si128(w.hi, _mm_srli_si128(w.mid, 8));
  __m128i t7 = _mm_srli_epi32(t3, 31);
  __m128i t8 = _mm_srli_epi32(t6, 31);
  t3 = _mm_slli_epi32(t3, 1);
  t6 = _mm_slli_epi32(t6, 1);
  __m128i t9 = _mm_srli_si128(t7, 12);
  t8 = _mm_slli_si128(t8, 4);
  t7 = _mm_slli_si128(t7, 4);
  t3 = _mm_or_si128(t3, t7);
  t6 = _mm_or_si128(_mm_or_si128(t6, t8), t9);
  t7 = _mm_xor_si128(_mm_xor_si128(_mm_slli_epi32(t3, 31), _mm_slli_epi32(t3, 30)),
                     _mm_slli_epi32(t3, 25));
  t8 = _mm_srli_si128(t7, 4);
  t7 = _mm_slli_si128(t7, 12);
  t3 = _mm_xor_si128(t3, t7);
  __m128i t2 = _mm_xor_si128(_mm_xor_si128(_mm_srli_epi32(t3, 1), _mm_srli_epi32(t3, 2)),
                             _mm_srli_epi32(t3, 7));
  t2 = _mm_xor_si128(t2, t8);
  t3 = _mm_xor_si128(t3, t2);
  return _mm_xor_si128(t6, t3);
}

STEPBACK_GCM_TARGET std::uint32_t sub_word(std::uint32_t word) {
  // All four columns equal, so ShiftRows is the identity and lane 0 is SubBytes(word).
  const __m128i v =
      _mm_aesenclast_si128(_mm_set1_epi32(static_cast<int>(word)), _mm_setzero_si128());
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(v));
}

// AESENC is SubBytes, ShiftRows, MixColumns, then AddRoundKey: rk[0] is added first on its own,
// and middle round i takes rk[i + 1].
STEPBACK_GCM_TARGET inline __m128i aes_first(__m128i b, const __m128i* rk) {
  return _mm_xor_si128(b, rk[0]);
}
STEPBACK_GCM_TARGET inline __m128i aes_round(__m128i b, const __m128i* rk, unsigned i) {
  return _mm_aesenc_si128(b, rk[i + 1]);
}
STEPBACK_GCM_TARGET inline __m128i aes_last(__m128i b, const __m128i* rk, unsigned rounds) {
  return _mm_aesenclast_si128(b, rk[rounds]);
}

STEPBACK_GCM_TARGET inline __m128i counter_block(__m128i y, std::uint32_t c) {
  return _mm_insert_epi32(y, static_cast<int>(__builtin_bswap32(c)), 3);
}
STEPBACK_GCM_TARGET inline std::uint32_t counter_of(__m128i y) {
  return __builtin_bswap32(static_cast<std::uint32_t>(_mm_extract_epi32(y, 3)));
}

#include "engine.inc"

bool cpu_has_aes_clmul() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const unsigned need = bit_AES | bit_PCLMUL | bit_SSE4_1 | bit_SSSE3;
  return (c & need) == need;
}

}  // namespace

const Kernel* x86_kernel() {
  // Constant-initialised (no guard, so no C++ runtime); racing first calls store the same.
  static std::atomic<int> has{-1};
  int v = has.load(std::memory_order_relaxed);
  if (v < 0) {
    v = cpu_has_aes_clmul() ? 1 : 0;
    has.store(v, std::memory_order_relaxed);
  }
  return v != 0 ? &kEngine : nullptr;
}

}  // namespace stepback::gcm::detail

#else

namespace stepback::gcm::detail {
const Kernel* x86_kernel() { return nullptr; }
}  // namespace stepback::gcm::detail

#endif
