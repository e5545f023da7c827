#include "stepback/core/random.hpp"

namespace stepback {

std::uint32_t uniform(RandomSource& random, std::uint32_t bound) {
  if (bound == ~std::uint32_t{0}) return random.next_u32();
  const std::uint32_t range = bound + 1;
  std::uint64_t m = std::uint64_t{random.next_u32()} * range;
  if (static_cast<std::uint32_t>(m) < range) {
    // Rejects the 2^32 mod range draws that would make some results more likely.
    const std::uint32_t threshold = (0U - range) % range;
    while (static_cast<std::uint32_t>(m) < threshold) m = std::uint64_t{random.next_u32()} * range;
  }
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

Xoshiro128::Xoshiro128(std::uint64_t seed) : s_{} {
  const auto lo = static_cast<std::uint32_t>(seed);
  const auto hi = static_cast<std::uint32_t>(seed >> 32) ^ 0x6A09E667U;
  // s_[0] and s_[1] mix different inputs through a bijection, so they differ: the state
  // is never all zero.
  s_[0] = mix32(lo);
  s_[1] = mix32(lo + 0x9E3779B9U);
  s_[2] = mix32(hi);
  s_[3] = mix32(hi + 0x9E3779B9U);
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
