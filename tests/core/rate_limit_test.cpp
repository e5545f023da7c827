#include "stepback/core/rate_limit.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace stepback {
namespace {

TEST(RateLimiter, WithoutARateEverythingPassesAtOnce) {
  RateLimiter none;
  EXPECT_FALSE(none.limited());
  EXPECT_EQ(none.available(Millis(5), 123456), 123456U);
  none.take(1U << 30);
  EXPECT_EQ(none.available(Millis(5), 7), 7U);
  EXPECT_EQ(none.ready_at(Millis(5), 1000), Millis(5));
  EXPECT_FALSE(RateLimiter(0, 100).limited());
}

TEST(RateLimiter, StartsEmptyAndFillsAtTheRateExactly) {
  RateLimiter r(1000, 500);  // A byte a millisecond.
  EXPECT_EQ(r.available(Millis(100), 1000), 0U);
  EXPECT_EQ(r.ready_at(Millis(100), 250), Millis(350));
  EXPECT_EQ(r.available(Millis(101), 1000), 1U);
  EXPECT_EQ(r.available(Millis(350), 1000), 250U);
  EXPECT_EQ(r.available(Millis(350), 100), 100U);  // No more than asked.
  r.take(250);
  EXPECT_EQ(r.available(Millis(350), 1000), 0U);
  EXPECT_EQ(r.ready_at(Millis(350), 1), Millis(351));
}

// 1500 B/s is 1.5 bytes a millisecond: the half bytes are kept, not rounded away, so every
// second carries 1500 bytes however the takes fall.
TEST(RateLimiter, FractionsOfAByteAreKept) {
  RateLimiter r(1500, 1500);
  std::uint64_t passed = 0;
  (void)r.available(Millis(0), 1);
  for (std::uint64_t t = 1; t <= 1000; ++t) {
    const std::uint64_t n = r.available(Millis(t), 1000);
    r.take(n);
    passed += n;
  }
  EXPECT_EQ(passed, 1500U);
}

TEST(RateLimiter, AnIdleBucketHoldsNoMoreThanTheBurst) {
  RateLimiter r(1000, 64);
  (void)r.available(Millis(0), 1);
  EXPECT_EQ(r.available(Millis(1'000'000), 1'000'000), 64U);
  EXPECT_EQ(r.ready_at(Millis(1'000'000), 64), Millis(1'000'000));
  // Asking for more than the burst waits for the burst, never forever.
  r.take(64);
  EXPECT_EQ(r.ready_at(Millis(1'000'000), 1'000'000), Millis(1'000'064));
}

// A transport that moved more than granted puts the bucket in debt: the rate still holds.
TEST(RateLimiter, DebtIsPaidBackBeforeAnythingPasses) {
  RateLimiter r(1000, 100);
  (void)r.available(Millis(0), 1);
  EXPECT_EQ(r.available(Millis(10), 1000), 10U);
  r.take(110);  // 100 bytes more than there were.
  EXPECT_EQ(r.available(Millis(50), 1000), 0U);
  EXPECT_EQ(r.ready_at(Millis(50), 10), Millis(120));
  EXPECT_EQ(r.available(Millis(119), 1000), 9U);
  EXPECT_EQ(r.available(Millis(120), 1000), 10U);
}

TEST(RateLimiter, AClockThatGoesBackAddsNothing) {
  RateLimiter r(1000, 1000);
  (void)r.available(Millis(500), 1);
  EXPECT_EQ(r.available(Millis(600), 1000), 100U);
  r.take(100);
  EXPECT_EQ(r.available(Millis(400), 1000), 0U);
  EXPECT_EQ(r.ready_at(Millis(400), 10), Millis(610));
  EXPECT_EQ(r.available(Millis(610), 1000), 10U);
}

TEST(RateLimiter, TheLargestValuesNeitherOverflowNorStall) {
  RateLimiter r(UINT64_MAX, UINT64_MAX);
  EXPECT_EQ(r.rate(), kMaxRate);
  EXPECT_EQ(r.burst(), kMaxRate);
  (void)r.available(Millis(0), 1);
  EXPECT_EQ(r.available(Millis::max(), UINT64_MAX), kMaxRate);
  r.take(UINT64_MAX);  // The deepest debt, kept finite.
  EXPECT_EQ(r.available(Millis::max(), UINT64_MAX), 0U);
  RateLimiter slow(1, 0);
  EXPECT_EQ(slow.burst(), 1U);
  (void)slow.available(Millis(0), 1);
  EXPECT_EQ(slow.ready_at(Millis(0), 1), Millis(1000));
  EXPECT_EQ(default_burst(8000), 1000U);
  EXPECT_EQ(default_burst(3), 1U);
}

// A loop that sleeps until ready_at() and then takes what is there: over ten seconds it moves
// the rate times ten, and it wakes once per quantum, not once per byte or per millisecond.
TEST(RateLimiter, ALoopWakesOncePerQuantumAndHoldsTheRate) {
  constexpr std::uint64_t kRate = 1024 * 1024;
  constexpr std::uint64_t kQuantum = 16 * 1024;
  RateLimiter r(kRate, default_burst(kRate));
  Millis now(1000);
  std::uint64_t passed = 0;
  int wakes = 0;
  while (now < Millis(11000)) {
    const std::uint64_t n = r.available(now, kQuantum);
    if (n == 0) {
      const Millis at = r.ready_at(now, kQuantum);
      ASSERT_GT(at, now);  // Never a wait that is no wait.
      now = at;
      ++wakes;
      continue;
    }
    r.take(n);
    passed += n;
  }
  // Every token that accrued since the first call passed or is still there: none was lost
  // to rounding or to the loop's pace.
  passed += r.available(now, UINT64_MAX);
  const std::uint64_t elapsed = (now - Millis(1000)).count();
  EXPECT_EQ(passed, kRate * elapsed / 1000);
  EXPECT_LE(now, Millis(11000 + 16));  // A quantum takes 15.6 ms at this rate.
  EXPECT_LE(wakes, static_cast<int>(kRate * 10 / kQuantum) + 1);
}

}  // namespace
}  // namespace stepback
