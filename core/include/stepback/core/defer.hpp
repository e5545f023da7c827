// DeferPolicy: when a resumable transfer that ran out of retries runs again.
#ifndef STEPBACK_CORE_DEFER_HPP_
#define STEPBACK_CORE_DEFER_HPP_

#include <cstdint>

#include "stepback/core/attempt.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/random.hpp"

namespace stepback {

// A download keeps its checkpoint and an upload its session when their retries end on a
// retryable failure; they are deferred, not lost, and run again after delay + U[0, spread]
// (the spread keeps a fleet that gave up together from coming back together).
struct DeferPolicy {
  Millis delay{0};   // 0: no deferral, the give-up is final.
  Millis spread{0};  // The random part, drawn per deferral.
};

// Whether `d` is usable: each part within a day.
constexpr bool valid(const DeferPolicy& d) {
  return d.delay <= Millis::seconds(86400) && d.spread <= Millis::seconds(86400);
}

// Whether `o` is a give-up that a later run may well turn into a success: the retries, the
// deadline, the offline limit or the budget ran out, or the server asked for a longer wait than
// allowed. Success, a terminal status or failure, a request that is not idempotent and a
// cancel are final.
constexpr bool deferrable(Outcome o) {
  return o == Outcome::kRetriesExhausted || o == Outcome::kDeadline || o == Outcome::kOffline ||
         o == Outcome::kBudgetExhausted || o == Outcome::kServerDelayTooLong;
}

// Whether a transfer that ended with `o` is deferred under `d`: a policy with a delay, a
// deferrable outcome, and what a later run needs kept (`resumable`: a record that counts bytes,
// an open session). The one rule downloads and uploads share.
constexpr bool defers(const DeferPolicy& d, Outcome o, bool resumable) {
  return d.delay > Millis(0) && deferrable(o) && resumable;
}

// When a transfer deferred at `end` (monotonic) runs again: end + delay + U[0, spread], the
// random part drawn once from `random` (Millis' sum saturates at Millis::max()).
inline Millis defer_until(const DeferPolicy& d, Millis end, RandomSource& random) {
  const std::uint64_t spread = min(d.spread, Millis(UINT32_MAX)).count();
  const Millis wait =
      d.delay + Millis(spread == 0 ? 0 : uniform(random, static_cast<std::uint32_t>(spread)));
  return end + wait;
}

}  // namespace stepback

#endif  // STEPBACK_CORE_DEFER_HPP_
