#include "stepback/core/backoff.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/support/scripted_random.hpp"

namespace stepback {
namespace {

using testing::ScriptedRandom;

Policy with_jitter(Jitter j) {
  Policy p;
  p.jitter = j;
  return p;
}

std::vector<std::uint64_t> first_waits(const Policy& p, std::uint64_t seed, std::uint32_t count) {
  Xoshiro128 g(seed);
  std::vector<std::uint64_t> out;
  Millis previous = p.initial_delay;
  for (std::uint32_t n = 0; n < count; ++n) {
    previous = backoff_wait(p, n, previous, g);
    out.push_back(previous.count());
  }
  return out;
}

TEST(Exponential, DoublesFromTheInitialDelayUpToTheCap) {
  const Policy p;  // 1 s, x2, cap 32 s.
  const std::uint64_t expected[] = {1000, 2000, 4000, 8000, 16000, 32000, 32000};
  for (std::uint32_t n = 0; n < 7; ++n) EXPECT_EQ(exponential(p, n).count(), expected[n]) << n;
}

TEST(Exponential, SaturatesAtTheCapForHugeRetryIndexes) {
  Policy p;
  p.max_backoff = kMaxBackoffLimit;
  p.multiplier = 16;
  for (std::uint32_t n : {31U, 32U, 63U, 64U, 1000U, 0xFFFFFFFFU}) {
    EXPECT_EQ(exponential(p, n), kMaxBackoffLimit) << n;
  }
  const Policy d;
  for (std::uint32_t n : {31U, 32U, 63U, 64U, 1000U, 0xFFFFFFFFU}) {
    EXPECT_EQ(exponential(d, n).count(), 32000U) << n;
  }
  static_assert(exponential(Policy{}, 0xFFFFFFFFU).count() == 32000);
}

// Expected values come from an independent Python implementation of the formulas,
// the seeding, xoshiro128++ and Lemire's bounded draw (seed 42; 1 s initial, x2, cap 32 s, 1 s
// range).
TEST(Jitter, SeedIsTheDocumentedFormulaExactly) {
  EXPECT_EQ(first_waits(with_jitter(Jitter::kSeed), 42, 8),
            (std::vector<std::uint64_t>{1947, 2529, 4529, 8605, 16176, 32000, 32000, 32000}));
}
TEST(Jitter, FullExactValues) {
  EXPECT_EQ(first_waits(with_jitter(Jitter::kFull), 42, 8),
            (std::vector<std::uint64_t>{947, 1058, 2116, 4839, 2816, 30434, 29178, 21944}));
}
TEST(Jitter, EqualExactValues) {
  EXPECT_EQ(first_waits(with_jitter(Jitter::kEqual), 42, 8),
            (std::vector<std::uint64_t>{974, 1529, 3058, 6419, 9408, 31217, 30589, 26972}));
}
TEST(Jitter, DecorrelatedExactValues) {
  EXPECT_EQ(first_waits(with_jitter(Jitter::kDecorrelated), 42, 8),
            (std::vector<std::uint64_t>{2894, 5063, 8505, 15827, 9182, 26247, 32000, 32000}));
}
TEST(Jitter, NoneIsTheCappedExponential) {
  EXPECT_EQ(first_waits(with_jitter(Jitter::kNone), 42, 8),
            (std::vector<std::uint64_t>{1000, 2000, 4000, 8000, 16000, 32000, 32000, 32000}));
}

TEST(Jitter, SeedAddsAtMostTheJitterRangeAndNeverPassesTheCap) {
  const Policy p = with_jitter(Jitter::kSeed);
  ScriptedRandom top{0xFFFFFFFFU};
  EXPECT_EQ(backoff_wait(p, 0, p.initial_delay, top).count(), 2000U);   // 1 s + 1000 ms.
  EXPECT_EQ(backoff_wait(p, 4, p.initial_delay, top).count(), 17000U);  // 16 s + 1000 ms.
  EXPECT_EQ(backoff_wait(p, 5, p.initial_delay, top).count(), 32000U);  // Capped.
  ScriptedRandom half{0x80000000U};
  EXPECT_EQ(backoff_wait(p, 1, p.initial_delay, half).count(), 2500U);
}

TEST(Jitter, EqualStaysInTheUpperHalf) {
  const Policy p = with_jitter(Jitter::kEqual);
  ScriptedRandom top{0xFFFFFFFFU};
  EXPECT_EQ(backoff_wait(p, 3, p.initial_delay, top).count(), 8000U);
  Policy odd = p;
  odd.initial_delay = Millis(999);
  odd.max_backoff = Millis(999);
  EXPECT_EQ(backoff_wait(odd, 0, odd.initial_delay, top).count(), 999U);
}

// Bounds and moments over many draws of each strategy at a fixed seed (deterministic).
struct Moments {
  std::uint64_t lo = ~std::uint64_t{0};
  std::uint64_t hi = 0;
  double mean = 0;
};

Moments sample(const Policy& p, std::uint32_t n, Millis previous, int draws) {
  Xoshiro128 g(2024);
  Moments m;
  double sum = 0;
  for (int i = 0; i < draws; ++i) {
    const std::uint64_t w = backoff_wait(p, n, previous, g).count();
    m.lo = w < m.lo ? w : m.lo;
    m.hi = w > m.hi ? w : m.hi;
    sum += static_cast<double>(w);
  }
  m.mean = sum / draws;
  return m;
}

TEST(JitterDistribution, EveryStrategyStaysInItsRangeWithTheExpectedMean) {
  constexpr int kDraws = 100000;
  const Moments seed = sample(with_jitter(Jitter::kSeed), 3, Millis(1000), kDraws);
  EXPECT_GE(seed.lo, 8000U);
  EXPECT_LE(seed.hi, 9000U);
  EXPECT_NEAR(seed.mean, 8500, 10);

  const Moments full = sample(with_jitter(Jitter::kFull), 3, Millis(1000), kDraws);
  EXPECT_LE(full.hi, 8000U);
  EXPECT_LT(full.lo, 100U);
  EXPECT_NEAR(full.mean, 4000, 40);

  const Moments equal = sample(with_jitter(Jitter::kEqual), 3, Millis(1000), kDraws);
  EXPECT_GE(equal.lo, 4000U);
  EXPECT_LE(equal.hi, 8000U);
  EXPECT_NEAR(equal.mean, 6000, 20);

  const Moments dec = sample(with_jitter(Jitter::kDecorrelated), 0, Millis(4000), kDraws);
  EXPECT_GE(dec.lo, 1000U);
  EXPECT_LE(dec.hi, 12000U);
  EXPECT_NEAR(dec.mean, 6500, 50);

  const Moments capped = sample(with_jitter(Jitter::kDecorrelated), 0, Millis(32000), kDraws);
  EXPECT_LE(capped.hi, 32000U);  // min(cap, U[1 s, 96 s]) piles up at the cap.
  EXPECT_GT(capped.mean, 24000);
}

TEST(JitterDistribution, SpreadAtTheCapDiffersByStrategy) {
  // Past the cap the literal formula has no spread left; equal keeps half the cap.
  const Moments seed = sample(with_jitter(Jitter::kSeed), 10, Millis(1000), 1000);
  EXPECT_EQ(seed.lo, 32000U);
  EXPECT_EQ(seed.hi, 32000U);
  const Moments equal = sample(with_jitter(Jitter::kEqual), 10, Millis(1000), 1000);
  EXPECT_LT(equal.lo, 17000U);
  EXPECT_GT(equal.hi, 31000U);
}

}  // namespace
}  // namespace stepback
