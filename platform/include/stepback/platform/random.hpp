// OS entropy for seeding the fast generator once; no system call per draw.
#ifndef STEPBACK_PLATFORM_RANDOM_HPP_
#define STEPBACK_PLATFORM_RANDOM_HPP_

#include <cstdint>

#include "stepback/core/random.hpp"

namespace stepback::platform {

// The platform layer's status.
enum class Status : std::uint8_t {
  kEntropyUnavailable,  // The OS did not supply random bytes.
  kOk,
};

// "ok" or "entropy_unavailable".
const char* to_string(Status s);

// Fills *seed with 64 bits from the OS (getrandom on Linux, arc4random_buf on Android and
// Apple, BCryptGenRandom on Windows); leaves it unchanged on failure, and fails if seed is
// null.
[[nodiscard]] Status os_seed(std::uint64_t* seed);

// A fast generator seeded once from os_seed(); if the OS fails, *status says so and the
// seed falls back to the clocks mixed with an address (still usable, not unpredictable).
// `status` may be null when the caller does not care.
Xoshiro128 make_os_random(Status* status);

}  // namespace stepback::platform

#endif  // STEPBACK_PLATFORM_RANDOM_HPP_
