// DeviceProfile: a complete device parameter set, the retry policy plus the transport
// timeouts and budget size that the HTTPS layer uses, and the polling policy of long-running
// operations.
#ifndef STEPBACK_PROFILES_PROFILE_HPP_
#define STEPBACK_PROFILES_PROFILE_HPP_

#include "stepback/core/budget.hpp"
#include "stepback/core/checkpoint.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/polling.hpp"
#include "stepback/core/timeouts.hpp"

namespace stepback::profiles {

// The per-attempt transport limits (core's type; the name is kept for existing callers).
using Timeouts = stepback::Timeouts;

// One device class's parameters, selected at build time (see active.hpp).
struct DeviceProfile {
  const char* name = "";
  Policy retry;
  Timeouts timeouts;
  BudgetConfig budget;
  PollingPolicy polling;        // Between polls of a long-running operation (transfer::Operation).
  CheckpointPolicy checkpoint;  // How often a download's position is saved (transfer::Download).
  std::uint8_t max_redirects = 5;  // Redirects one request follows (0: none).
};

// Whether every part of `p` is usable and its timeouts are positive.
constexpr bool valid(const DeviceProfile& p) {
  return p.name != nullptr && p.name[0] != '\0' && valid(p.retry) && valid(p.budget) &&
         valid(p.timeouts) && valid(p.polling) && valid(p.checkpoint);
}

}  // namespace stepback::profiles

#endif  // STEPBACK_PROFILES_PROFILE_HPP_
