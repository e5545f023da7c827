// DeferPolicy: when a resumable transfer that ran out of retries runs again.
#ifndef STEPBACK_CORE_DEFER_HPP_
#define STEPBACK_CORE_DEFER_HPP_

#include "stepback/core/millis.hpp"

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

}  // namespace stepback

#endif  // STEPBACK_CORE_DEFER_HPP_
