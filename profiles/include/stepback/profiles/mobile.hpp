// The mobile profile: radios that drop and come back, so more retries, longer intervals
// and longer transport timeouts than desktop.
#ifndef STEPBACK_PROFILES_MOBILE_HPP_
#define STEPBACK_PROFILES_MOBILE_HPP_

#include "stepback/profiles/profile.hpp"

namespace stepback::profiles {

// Cap 64 s, 10 retries, deadline 600 s, equal jitter (see README: "Why equal jitter").
inline constexpr DeviceProfile mobile = [] {
  DeviceProfile p;
  p.name = "mobile";
  p.retry.jitter = Jitter::kEqual;
  p.retry.max_backoff = Millis::seconds(64);
  p.retry.max_retries = 10;
  p.retry.total_deadline = Millis::seconds(600);
  p.retry.max_server_delay = Millis::seconds(300);
  p.timeouts.connect = Millis::seconds(20);
  p.timeouts.tls_handshake = Millis::seconds(20);
  p.timeouts.read = Millis::seconds(60);
  p.budget.max_tokens = 20;
  p.budget.refund_milli = 100;
  return p;
}();
static_assert(valid(mobile), "the mobile profile must be valid");

}  // namespace stepback::profiles

#endif  // STEPBACK_PROFILES_MOBILE_HPP_
