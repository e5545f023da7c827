#include "stepback/core/random.hpp"

namespace stepback {

std::uint32_t uniform(RandomSource& random, std::uint32_t bound) {
  if (bound == ~std::uint32_t{0}) return random.next_u32();
  const std::uint32_t range = bound + 1;
  // Rejects the 2^32 mod range draws that would make some results more likely. The
  // threshold is below range, so a draw whose low half reaches range is never rejected
  // (Lemire's shortcut, which would only skip a hardware divide here).
  const std::uint32_t threshold = (0U - range) % range;
  std::uint64_t m = 0;
  do {
    m = std::uint64_t{random.next_u32()} * range;
  } while (static_cast<std::uint32_t>(m) < threshold);
  return static_cast<std::uint32_t>(m >> 32);
}

namespace {

// lowbias32 (C. Wellons): a bijective 32-bit mixer with 32-bit multiplies only, which
// keeps the constructor small on 32-bit cores.
constexpr std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352DU;
  x ^= x >> 15;
  x *= 0x846CA68BU;
  return x ^ (x >> 16);
}

constexpr std::uint32_t rotl(std::uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

}  // namespace

// Every word of s_ is set by the loop; zeroing them first pulled memset into the Cortex-M4
// image (bench/footprint_core.sh).
Xoshiro128::Xoshiro128(std::uint64_t seed) {  // NOLINT(cppcoreguidelines-pro-type-member-init)
  // mix32 of lo, lo + G, hi and hi + G: s_[0] and s_[1] mix different inputs through a
  // bijection, so they differ and the state is never all zero. (A loop: one copy of
  // mix32 is smaller on a Cortex-M than four.)
  auto x = static_cast<std::uint32_t>(seed);
  for (unsigned i = 0; i < 4; ++i) {
    s_[i] = mix32(x);
    x = i == 1 ? static_cast<std::uint32_t>(seed >> 32) ^ 0x6A09E667U : x + 0x9E3779B9U;
  }
}

std::uint32_t Xoshiro128::next_u32() {
  const std::uint32_t result = rotl(s_[0] + s_[3], 7) + s_[0];
  const std::uint32_t t = s_[1] << 9;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 11);
  return result;
}

}  // namespace stepback
