// The mobile profile: radios that drop and come back, so more retries, longer intervals
// and longer transport timeouts than desktop.
#ifndef STEPBACK_PROFILES_MOBILE_HPP_
#define STEPBACK_PROFILES_MOBILE_HPP_

#include "stepback/profiles/profile.hpp"

namespace stepback::profiles {

// Cap 128 s, 16 retries, deadline 900 s, full jitter, deferral 10-20 minutes (docs/retry.md,
// "Safe for a fleet"); polls
// from 2 s doubling to 60 s for at most 30 minutes.
inline constexpr DeviceProfile mobile = [] {
  DeviceProfile p;
  p.name = "mobile";
  p.retry.jitter = Jitter::kFull;
  p.retry.max_backoff = Millis::seconds(128);
  p.retry.max_retries = 16;
  p.retry.total_deadline = Millis::seconds(900);
  p.retry.max_server_delay = Millis::seconds(300);
  p.timeouts.connect = Millis::seconds(20);
  p.timeouts.tls_handshake = Millis::seconds(20);
  p.timeouts.read = Millis::seconds(60);
  // The body floor: 100 B/s over 60 s (the read timeout's span), ten times lower and twice
  // as patient as desktop's. A cellular link at the edge of coverage (GPRS, NB-IoT, LTE-M)
  // still moves a few KB/s, and a radio fading for tens of seconds is the read timeout's
  // business; 100 B/s for a whole minute is a server or path that trickles, and a new
  // attempt (resuming by Range) costs less than waiting on it.
  p.timeouts.speed_limit = 100;
  p.timeouts.speed_time = Millis::seconds(60);
  // Without a network it may use (a lift, a tunnel, a metered network a large transfer must
  // not use) a request waits up to 30 minutes for one, spending no retry and no deadline.
  p.timeouts.offline = Millis::seconds(1800);
  p.budget.max_tokens = 20;
  p.budget.refund_milli = 100;
  // Operations: the same floor and cap as desktop but starting at 2 s (1-2 s, 2-4 s, ...): each
  // poll wakes the radio, which then stays in its high-power state for seconds, so the first,
  // cheapest-to-skip polls are fewer. The same 30-minute polling deadline.
  p.polling.min_delay = Millis(500);
  p.polling.initial_delay = Millis(2000);
  p.polling.multiplier = 2;
  p.polling.max_delay = Millis::seconds(60);
  p.polling.jitter = Jitter::kEqual;
  p.polling.total_deadline = Millis::seconds(1800);  // 30 minutes
  // Downloads: a checkpoint every 1 MiB and at most every 5 s: each costs an fsync of the
  // file and of the record on flash, and a phone link moves 1 MiB in seconds anyway.
  p.checkpoint.bytes = std::uint64_t{1} << 20;
  p.checkpoint.interval = Millis::seconds(5);
  // Buffers: the defaults, an io scratch of one TLS record (16 KiB): a phone's link
  // rarely has more than a record waiting per turn of the loop, and an app's memory is
  // watched; heads of a few KiB and URLs as long as the state record keeps.
  p.buffers.io = 16 * 1024;
  // A resumable transfer whose retries ran out runs again 10 to 20 minutes later.
  p.defer.delay = Millis::seconds(600);
  p.defer.spread = Millis::seconds(600);
  return p;
}();
static_assert(valid(mobile), "the mobile profile must be valid");

}  // namespace stepback::profiles

#endif  // STEPBACK_PROFILES_MOBILE_HPP_
