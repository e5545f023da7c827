#include "stepback/core/random.hpp"

namespace stepback {

std::uint32_t uniform(RandomSource& random, std::uint32_t bound) {
  if (bound == ~std::uint32_t{0}) return random.next_u32();
  const std::uint32_t range = bound + 1;
  std::uint64_t m = std::uint64_t{random.next_u32()} * range;
  auto low = static_cast<std::uint32_t>(m);
  if (low < range) {
    // Rejects the 2^32 mod range values that would make some results more likely.
    const std::uint32_t threshold = (0U - range) % range;
    while (low < threshold) {
      m = std::uint64_t{random.next_u32()} * range;
      low = static_cast<std::uint32_t>(m);
    }
  }
  return static_cast<std::uint32_t>(m >> 32);
}

namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

constexpr std::uint32_t rotl(std::uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

}  // namespace

Xoshiro128::Xoshiro128(std::uint64_t seed) : s_{} {
  const std::uint64_t a = splitmix64(seed);
  const std::uint64_t b = splitmix64(seed);
  s_[0] = static_cast<std::uint32_t>(a);
  s_[1] = static_cast<std::uint32_t>(a >> 32);
  s_[2] = static_cast<std::uint32_t>(b);
  s_[3] = static_cast<std::uint32_t>(b >> 32);
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
