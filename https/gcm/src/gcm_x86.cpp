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

// The 256-bit unreduced sum of products: lo, hi and the two middle terms.
struct Wide {
  __m128i lo, mid, hi;
};

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

STEPBACK_GCM_TARGET inline __m128i gfmul(__m128i a, __m128i b) {
  Wide w{_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
  mul_acc(w, a, b);
  return reduce(w);
}

// x absorbs n (1..8) blocks with one reduction: (x ^ b0) H^n ^ b1 H^(n-1) ^ ... ^ b_{n-1} H;
// all byte-reversed.
STEPBACK_GCM_TARGET inline __m128i ghash_group(__m128i x, const __m128i* b, unsigned n,
                                               const __m128i* h) {
  Wide w{_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
  mul_acc(w, _mm_xor_si128(x, b[0]), h[n - 1]);
  for (unsigned j = 1; j < n; ++j) mul_acc(w, b[j], h[n - 1 - j]);
  return reduce(w);
}

STEPBACK_GCM_TARGET std::uint32_t sub_word(std::uint32_t word) {
  // All four columns equal, so ShiftRows is the identity and lane 0 is SubBytes(word).
  const __m128i v =
      _mm_aesenclast_si128(_mm_set1_epi32(static_cast<int>(word)), _mm_setzero_si128());
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(v));
}

STEPBACK_GCM_TARGET inline __m128i encrypt(__m128i b, const __m128i* rk, unsigned rounds) {
  b = _mm_xor_si128(b, rk[0]);
  for (unsigned r = 1; r < rounds; ++r) b = _mm_aesenc_si128(b, rk[r]);
  return _mm_aesenclast_si128(b, rk[rounds]);
}

STEPBACK_GCM_TARGET void load_keys(const stepback_gcm_accel_state* s, __m128i* rk) {
  for (unsigned r = 0; r <= s->rounds; ++r) rk[r] = load(s->rk + kBlock * r);
}

STEPBACK_GCM_TARGET void x86_encrypt_block(const stepback_gcm_accel_state* s,
                                           const unsigned char in[16], unsigned char out[16]) {
  __m128i rk[15];
  load_keys(s, rk);
  store(out, encrypt(load(in), rk, s->rounds));
}

STEPBACK_GCM_TARGET void x86_setup(stepback_gcm_accel_state* s, const unsigned char* key,
                                   unsigned keybits) {
  expand_key(s->rk, key, keybits, &sub_word);
  s->rounds = static_cast<unsigned char>(keybits == 256 ? 14 : 10);
  __m128i rk[15];
  load_keys(s, rk);
  const __m128i h = bswap(encrypt(_mm_setzero_si128(), rk, s->rounds));
  __m128i p = h;
  for (unsigned i = 0; i < 8; ++i) {
    store(s->htab + kBlock * i, p);
    p = gfmul(p, h);
  }
}

STEPBACK_GCM_TARGET void x86_ghash(const stepback_gcm_accel_state* s, unsigned char x[16],
                                   const unsigned char* data, std::size_t n) {
  __m128i h[8];
#pragma GCC unroll 8
  for (unsigned i = 0; i < 8; ++i) h[i] = load(s->htab + kBlock * i);
  __m128i acc = bswap(load(x));
  while (n > 0) {
    const unsigned group = n >= 8 ? 8u : static_cast<unsigned>(n);
    __m128i b[8];
    for (unsigned j = 0; j < group; ++j) b[j] = bswap(load(data + kBlock * j));
    acc = ghash_group(acc, b, group, h);
    data += kBlock * group;
    n -= group;
  }
  store(x, bswap(acc));
}

STEPBACK_GCM_TARGET inline __m128i counter_block(__m128i y, std::uint32_t c) {
  return _mm_insert_epi32(y, static_cast<int>(__builtin_bswap32(c)), 3);
}

STEPBACK_GCM_TARGET void x86_crypt(stepback_gcm_accel_state* s, const unsigned char* in,
                                   unsigned char* out, std::size_t n, bool encrypt_mode) {
  __m128i rk[15];
  load_keys(s, rk);
  const unsigned rounds = s->rounds;
  __m128i h[8];
#pragma GCC unroll 8
  for (unsigned i = 0; i < 8; ++i) h[i] = load(s->htab + kBlock * i);
  const __m128i y = load(s->y);
  std::uint32_t ctr = __builtin_bswap32(static_cast<std::uint32_t>(_mm_extract_epi32(y, 3)));
  __m128i acc = bswap(load(s->x));

  // Ciphertext waiting for GHASH: for encryption, the previous group's output, hashed while
  // the next group's AES runs; for decryption, the current group's input.
  __m128i pending[8];
  bool have_pending = false;
  while (n >= 8) {
    __m128i b[8];
    __m128i text[8];
#pragma GCC unroll 8
    for (unsigned j = 0; j < 8; ++j) {
      text[j] = load(in + kBlock * j);
      b[j] = _mm_xor_si128(counter_block(y, ctr + 1 + j), rk[0]);
    }
    if (!encrypt_mode) {
#pragma GCC unroll 8
      for (unsigned j = 0; j < 8; ++j) pending[j] = bswap(text[j]);
      have_pending = true;
    }
    if (have_pending) {
      Wide w{_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
      pending[0] = _mm_xor_si128(pending[0], acc);
#pragma GCC unroll 8
      for (unsigned r = 1; r <= 8; ++r) {
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; ++j) b[j] = _mm_aesenc_si128(b[j], rk[r]);
        mul_acc(w, pending[r - 1], h[8 - r]);
      }
      for (unsigned r = 9; r < rounds; ++r) {
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; ++j) b[j] = _mm_aesenc_si128(b[j], rk[r]);
      }
      acc = reduce(w);
    } else {
      for (unsigned r = 1; r < rounds; ++r) {
#pragma GCC unroll 8
        for (unsigned j = 0; j < 8; ++j) b[j] = _mm_aesenc_si128(b[j], rk[r]);
      }
    }
#pragma GCC unroll 8
    for (unsigned j = 0; j < 8; ++j) {
      const __m128i c = _mm_xor_si128(_mm_aesenclast_si128(b[j], rk[rounds]), text[j]);
      store(out + kBlock * j, c);
      if (encrypt_mode) pending[j] = bswap(c);
    }
    have_pending = encrypt_mode;
    ctr += 8;
    in += kBlock * 8;
    out += kBlock * 8;
    n -= 8;
  }
  if (have_pending) acc = ghash_group(acc, pending, 8, h);

  if (n > 0) {
    const auto group = static_cast<unsigned>(n);
    __m128i b[8];
    __m128i text[8];
    for (unsigned j = 0; j < group; ++j) {
      text[j] = load(in + kBlock * j);
      b[j] = _mm_xor_si128(counter_block(y, ctr + 1 + j), rk[0]);
    }
    for (unsigned r = 1; r < rounds; ++r) {
      for (unsigned j = 0; j < group; ++j) b[j] = _mm_aesenc_si128(b[j], rk[r]);
    }
    for (unsigned j = 0; j < group; ++j) {
      const __m128i c = _mm_xor_si128(_mm_aesenclast_si128(b[j], rk[rounds]), text[j]);
      store(out + kBlock * j, c);
      pending[j] = bswap(encrypt_mode ? c : text[j]);
    }
    acc = ghash_group(acc, pending, group, h);
    ctr += group;
  }
  store(s->x, bswap(acc));
  store(s->y, counter_block(y, ctr));
}

constexpr Kernel kX86{&x86_setup, &x86_encrypt_block, &x86_ghash, &x86_crypt};

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
  return v != 0 ? &kX86 : nullptr;
}

}  // namespace stepback::gcm::detail

#else

namespace stepback::gcm::detail {
const Kernel* x86_kernel() { return nullptr; }
}  // namespace stepback::gcm::detail

#endif
