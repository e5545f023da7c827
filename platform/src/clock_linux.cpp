// Clocks for Linux and Android. monotonic_now() counts suspend (CLOCK_BOOTTIME), so a wait
// spanning a phone's sleep ends on time when the phone wakes.
#include <time.h>

#include <cstdint>

#include "stepback/platform/clock.hpp"

namespace stepback::platform {
namespace {

// Milliseconds in `ts`, or 0 if it lies before the clock's origin.
Millis to_millis(const timespec& ts) {
  if (ts.tv_sec < 0) return Millis(0);
  return Millis(static_cast<std::uint64_t>(ts.tv_sec) * 1000U +
                static_cast<std::uint64_t>(ts.tv_nsec) / 1000000U);
}

}  // namespace

// Suspend counts. CLOCK_BOOTTIME exists since Linux 2.6.39 (every Android); the
// CLOCK_MONOTONIC fallback (which excludes suspend) only serves older kernels, where
// BOOTTIME fails on every call, so one process never mixes the two clocks.
Millis monotonic_now() {
  timespec ts{};
  if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0 && clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
    return Millis(0);
  }
  return to_millis(ts);
}

Millis wall_now() {
  timespec ts{};
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return Millis(0);
  return to_millis(ts);
}

}  // namespace stepback::platform
