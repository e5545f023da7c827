// Clocks for macOS and iOS. monotonic_now() counts suspend (mach_continuous_time, macOS
// 10.12 / iOS 10 and later); mach_absolute_time would stop while the device sleeps.
#include <mach/mach_time.h>
#include <time.h>

#include <cstdint>

#include "stepback/platform/clock.hpp"

namespace stepback::platform {
namespace {

// Nanoseconds per mach tick, as the ratio numer / denom.
struct Timebase {
  std::uint64_t numer = 1;
  std::uint64_t denom = 1;
};

// The timebase, asked of the kernel once per process.
const Timebase& timebase() {
  static const Timebase kTimebase = [] {
    mach_timebase_info_data_t info{};
    Timebase t;
    if (mach_timebase_info(&info) == KERN_SUCCESS && info.numer != 0 && info.denom != 0) {
      t.numer = info.numer;
      t.denom = info.denom;
    }
    return t;
  }();
  return kTimebase;
}

}  // namespace

// Suspend counts.
Millis monotonic_now() {
  const std::uint64_t ticks = mach_continuous_time();
  const Timebase& tb = timebase();
  // The timebase is any ratio of two uint32s, so ticks * numer may overflow; the
  // quotient/remainder split overflows only when the result would (past ~584 years).
  const std::uint64_t ns = (ticks / tb.denom) * tb.numer + (ticks % tb.denom) * tb.numer / tb.denom;
  return Millis(ns / 1000000U);
}

Millis wall_now() {
  timespec ts{};
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || ts.tv_sec < 0) return Millis(0);
  return Millis(static_cast<std::uint64_t>(ts.tv_sec) * 1000U +
                static_cast<std::uint64_t>(ts.tv_nsec) / 1000000U);
}

}  // namespace stepback::platform
