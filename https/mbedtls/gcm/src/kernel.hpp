// The pipelined AES-GCM engines behind gcm_alt.cpp: one per instruction set (gcm_x86.cpp,
// gcm_arm.cpp: the instructions), both running the same engine (engine.inc: key set-up, GHASH,
// CTR with GHASH interleaved), each compiled with its own target attribute so that the build
// needs no global -maes / -march flag.
#ifndef STEPBACK_GCM_SRC_KERNEL_HPP_
#define STEPBACK_GCM_SRC_KERNEL_HPP_

#include <cstddef>
#include <cstdint>

#include <mbedtls/platform_util.h>

#include "gcm_alt.h"

namespace stepback::gcm::detail {

// Bytes in an AES block: the unit of every pointer step in the engines (a std::size_t, so
// that kBlock * index is computed in the pointer's width).
constexpr std::size_t kBlock = 16;

// The operations gcm_alt.cpp needs from an engine. Blocks and the GHASH accumulator are in
// GCM's own byte order at this interface; each engine converts internally.
struct Kernel {
  // Expands a 16- or 32-byte key into s->rk, sets s->rounds, and stores H^1..H^8 in s->htab.
  void (*setup)(stepback_gcm_accel_state* s, const unsigned char* key, unsigned keybits);
  // out = AES(K, in).
  void (*encrypt_block)(const stepback_gcm_accel_state* s, const unsigned char in[16],
                        unsigned char out[16]);
  // For each of n blocks: x = (x ^ block) * H.
  void (*ghash)(const stepback_gcm_accel_state* s, unsigned char x[16], const unsigned char* data,
                std::size_t n);
  // n whole blocks of CTR (the counter s->y incremented before each block, low 32 bits) with
  // the ciphertext folded into s->x; in may equal out, or lie above it.
  void (*crypt)(stepback_gcm_accel_state* s, const unsigned char* in, unsigned char* out,
                std::size_t n, bool encrypt);
};

// The engine for this CPU, or nullptr: compiled for x86-64 / aarch64 only, and then used only
// when the CPU reports the instructions (CPUID; getauxval(AT_HWCAP); sysctl on Apple).
const Kernel* x86_kernel();
const Kernel* arm_kernel();

// FIPS-197 key expansion into 4 * (rounds + 1) words, each stored in byte order, with the
// S-box applied by the engine's AES instruction (sub_word), so no table is indexed by key bytes.
inline void expand_key(unsigned char* rk, const unsigned char* key, unsigned keybits,
                       std::uint32_t (*sub_word)(std::uint32_t)) {
  // 4, 6 or 8 key words (gcm_alt.cpp takes 128- and 256-bit keys only); anything else
  // would overrun w, so it expands nothing.
  const std::size_t nk = keybits / 32;
  if (nk != 4 && nk != 6 && nk != 8) return;
  const std::size_t words = 4 * (nk + 7);
  std::uint32_t w[60] = {};
  for (std::size_t i = 0; i < nk; ++i) {
    w[i] = static_cast<std::uint32_t>(key[4 * i]) |
           static_cast<std::uint32_t>(key[4 * i + 1]) << 8 |
           static_cast<std::uint32_t>(key[4 * i + 2]) << 16 |
           static_cast<std::uint32_t>(key[4 * i + 3]) << 24;
  }
  std::uint32_t rcon = 1;
  for (std::size_t i = nk; i < words; ++i) {
    std::uint32_t t = w[i - 1];
    if (i % nk == 0) {
      t = sub_word((t >> 8) | (t << 24)) ^ rcon;
      rcon = (rcon << 1) ^ (0x11bu & (0u - (rcon >> 7)));
    } else if (nk > 6 && i % nk == 4) {
      t = sub_word(t);
    }
    w[i] = w[i - nk] ^ t;
  }
  for (std::size_t i = 0; i < words; ++i) {
    for (unsigned b = 0; b < 4; ++b) rk[4 * i + b] = static_cast<unsigned char>(w[i] >> (8 * b));
  }
  mbedtls_platform_zeroize(w, sizeof w);
}

}  // namespace stepback::gcm::detail

#endif  // STEPBACK_GCM_SRC_KERNEL_HPP_
