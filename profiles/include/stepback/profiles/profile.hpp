// DeviceProfile: a complete device parameter set, the retry policy plus the transport
// timeouts and budget size that the HTTPS layer uses.
#ifndef STEPBACK_PROFILES_PROFILE_HPP_
#define STEPBACK_PROFILES_PROFILE_HPP_

#include "stepback/core/budget.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"

namespace stepback::profiles {

// Per-attempt transport limits.
struct Timeouts {
  Millis connect{10000};        // TCP connect, per address tried.
  Millis tls_handshake{10000};  // From connected to handshake done.
  Millis read{30000};           // Longest silence while waiting for response bytes.
};

// One device class's parameters, selected at build time (see active.hpp).
struct DeviceProfile {
  const char* name = "";
  Policy retry;
  Timeouts timeouts;
  BudgetConfig budget;
};

// Whether every part of `p` is usable and its timeouts are positive.
constexpr bool valid(const DeviceProfile& p) {
  return p.name != nullptr && p.name[0] != '\0' && valid(p.retry) && valid(p.budget) &&
         p.timeouts.connect.count() > 0 && p.timeouts.tls_handshake.count() > 0 &&
         p.timeouts.read.count() > 0;
}

}  // namespace stepback::profiles

#endif  // STEPBACK_PROFILES_PROFILE_HPP_
