// PollingPolicy: how often a long-running operation is polled, beside Policy (which says how a
// failed request is retried). The two stay apart: a poll that answers "not done" waits per this
// policy, a poll that fails is retried per the retry policy.
#ifndef STEPBACK_CORE_POLLING_HPP_
#define STEPBACK_CORE_POLLING_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"

namespace stepback {

// The wait before poll n (0-based) is
//   max(min_delay, jitter(min(initial_delay * multiplier^n, max_delay)))
// with the core's jitter strategies (Jitter); with kEqual, t/2 + U[0, t/2], a poll never comes
// sooner than half its schedule, so a fleet that started together spreads out without anyone
// polling faster than the schedule's floor. The device profiles hold one per device class.
struct PollingPolicy {
  Millis min_delay{500};       // The floor of every wait (the first poll: 0.5 s at least).
  Millis initial_delay{1000};  // t for the first poll.
  std::uint32_t multiplier = 2;
  Millis max_delay{60000};  // The cap on t.
  Jitter jitter = Jitter::kEqual;
  // From the mutation's answer: no poll starts after it, and the last wait is cut to end at it
  // (one last look); 0: none. Each poll's own retries are bounded by the retry policy.
  Millis total_deadline{0};
};

// Whether `p` is usable: the floor no larger than the cap, a positive initial delay no larger
// than the cap, multiplier 2..16, all within the core's limits.
constexpr bool valid(const PollingPolicy& p) {
  return p.initial_delay.count() >= 1 && p.initial_delay <= p.max_delay &&
         p.min_delay <= p.max_delay && p.max_delay <= kMaxBackoffLimit && p.multiplier >= 2 &&
         p.multiplier <= 16 &&
         static_cast<std::uint8_t>(p.jitter) <= static_cast<std::uint8_t>(Jitter::kNone) &&
         p.total_deadline <= kMaxDeadlineLimit;
}

// The wait before poll `n` under `p` (the formula above); `previous` is the last wait (used by
// kDecorrelated only; initial_delay before the first). Needs valid(p).
Millis polling_wait(const PollingPolicy& p, std::uint32_t n, Millis previous, RandomSource& random);

}  // namespace stepback

#endif  // STEPBACK_CORE_POLLING_HPP_
