// Clock shims. The monotonic clock counts time the device spends suspended, because a
// backoff wait is about the server's time, not the CPU's (docs/architecture.md, "Where time,
// randomness and memory come from").
#ifndef STEPBACK_PLATFORM_CLOCK_HPP_
#define STEPBACK_PLATFORM_CLOCK_HPP_

#include "stepback/core/millis.hpp"

namespace stepback::platform {

// Monotonic milliseconds since an unspecified origin, including suspend: CLOCK_BOOTTIME on
// Linux and Android, mach_continuous_time on Apple, QueryInterruptTime on Windows 10+
// (GetTickCount64 before). Never goes back.
Millis monotonic_now();

// Wall-clock milliseconds since the Unix epoch (UTC), 0 if the clock reads before 1970.
// Only for HTTP-dates and persisted state: it jumps when the user or NTP sets the time.
Millis wall_now();

}  // namespace stepback::platform

#endif  // STEPBACK_PLATFORM_CLOCK_HPP_
