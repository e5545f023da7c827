// The desktop profile: wired or Wi-Fi clients with a user waiting, so fewer, shorter retries.
#ifndef STEPBACK_PROFILES_DESKTOP_HPP_
#define STEPBACK_PROFILES_DESKTOP_HPP_

#include "stepback/profiles/profile.hpp"

namespace stepback::profiles {

// Cap 32 s, 6 retries, deadline 120 s, equal jitter (see README: "Why equal jitter").
inline constexpr DeviceProfile desktop = [] {
  DeviceProfile p;
  p.name = "desktop";
  p.retry.jitter = Jitter::kEqual;
  p.retry.max_backoff = Millis::seconds(32);
  p.retry.max_retries = 6;
  p.retry.total_deadline = Millis::seconds(120);
  p.retry.max_server_delay = Millis::seconds(120);
  p.timeouts.connect = Millis::seconds(10);
  p.timeouts.tls_handshake = Millis::seconds(10);
  p.timeouts.read = Millis::seconds(30);
  p.budget.max_tokens = 10;
  p.budget.refund_milli = 100;
  return p;
}();
static_assert(valid(desktop), "the desktop profile must be valid");

}  // namespace stepback::profiles

#endif  // STEPBACK_PROFILES_DESKTOP_HPP_
