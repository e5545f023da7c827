// The jitter draw in 32-bit milliseconds, shared by jittered() and RetryMachine (private to
// core/src).
#ifndef STEPBACK_CORE_SRC_JITTER_HPP_
#define STEPBACK_CORE_SRC_JITTER_HPP_

#include <cstdint>

#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"

namespace stepback {

// jittered(p, Millis(t), Millis(previous), random) in 32-bit ms; needs valid(p) and t and
// previous at most p.max_backoff. Every such wait fits 32 bits, so a Cortex-M computes it
// without 64-bit arithmetic and gets the result in a register, not through memory.
std::uint32_t jitter_ms(const Policy& p, std::uint32_t t, std::uint32_t previous,
                        RandomSource& random);

}  // namespace stepback

#endif  // STEPBACK_CORE_SRC_JITTER_HPP_
