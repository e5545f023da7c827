// Checks of the clock shims against the OS. Only lower bounds on elapsed time are tight:
// a loaded machine may stall the test for long, so upper bounds are deliberately generous.
#include "stepback/platform/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <thread>

#if defined(__linux__)
#include <time.h>
#endif

namespace stepback::platform {
namespace {

TEST(MonotonicNow, NeverDecreases) {
  Millis previous = monotonic_now();
  for (int i = 0; i < 100000; ++i) {
    const Millis now = monotonic_now();
    ASSERT_GE(now, previous) << "read " << i;
    previous = now;
  }
}

TEST(MonotonicNow, AdvancesAcrossSleep) {
  const Millis before = monotonic_now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const Millis elapsed = monotonic_now() - before;
  // 15 rather than 20: the shims truncate to whole ms and Windows' fallback ticks coarsely.
  EXPECT_GE(elapsed.count(), 15U);
  EXPECT_LT(elapsed.count(), 10000U);
}

TEST(MonotonicNow, IsNotZero) {
  // Every source counts from boot, so zero would mean the shim failed.
  EXPECT_GT(monotonic_now().count(), 0U);
}

#if defined(__linux__)
TEST(MonotonicNow, MatchesClockBoottime) {
  timespec ts{};
  ASSERT_EQ(clock_gettime(CLOCK_BOOTTIME, &ts), 0);
  const Millis now = monotonic_now();
  const Millis boottime(static_cast<std::uint64_t>(ts.tv_sec) * 1000U +
                        static_cast<std::uint64_t>(ts.tv_nsec) / 1000000U);
  EXPECT_GE(now, boottime);
  EXPECT_LT((now - boottime).count(), 1000U);
}
#endif

TEST(WallNow, IsAfter2020) {
  constexpr std::uint64_t k2020_01_01 = 1577836800000ULL;  // Unix ms.
  EXPECT_GT(wall_now().count(), k2020_01_01);
}

TEST(WallNow, AgreesWithTime) {
  const std::time_t before = std::time(nullptr);
  const Millis wall = wall_now();
  const std::time_t after = std::time(nullptr);
  ASSERT_GE(before, 0);
  // time() truncates to whole seconds and may read a slightly different kernel clock.
  EXPECT_GE(wall.count() + 1000U, static_cast<std::uint64_t>(before) * 1000U);
  EXPECT_LE(wall.count(), static_cast<std::uint64_t>(after) * 1000U + 2000U);
}

}  // namespace
}  // namespace stepback::platform
