// Injected randomness: the RandomSource interface, an unbiased bounded draw, and
// Xoshiro128, a small fast generator that platform/ seeds from the OS and tests seed
// with a constant.
#ifndef STEPBACK_CORE_RANDOM_HPP_
#define STEPBACK_CORE_RANDOM_HPP_

#include <cstdint>

namespace stepback {

// A source of uniformly distributed 32-bit values; the caller owns it.
class RandomSource {
 public:
  // The next 32 uniformly distributed bits.
  virtual std::uint32_t next_u32() = 0;

 protected:
  RandomSource() = default;
  RandomSource(const RandomSource&) = default;
  RandomSource& operator=(const RandomSource&) = default;
  ~RandomSource() = default;
};

// A uniform value in [0, bound] (inclusive) without modulo bias (Lemire's method).
std::uint32_t uniform(RandomSource& random, std::uint32_t bound);

// The splitmix64 finalizer: a bijection of 64-bit values in which every input bit affects
// every output bit (for deriving seeds; not a generator by itself).
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro128++: 16 bytes of state, a few instructions per draw, no system calls.
// Not cryptographic; seeded once (platform::os_seed() or a test constant).
class Xoshiro128 final : public RandomSource {
 public:
  // Expands a 64-bit seed into a never-zero state with a 32-bit bijective mixer, so any
  // seed (even 0) is good and distinct seeds give distinct states.
  explicit Xoshiro128(std::uint64_t seed);

  std::uint32_t next_u32() override;

 private:
  std::uint32_t s_[4];
};

}  // namespace stepback

#endif  // STEPBACK_CORE_RANDOM_HPP_
