// The desktop profile: wired or Wi-Fi clients with a user waiting, so fewer, shorter retries.
#ifndef STEPBACK_PROFILES_DESKTOP_HPP_
#define STEPBACK_PROFILES_DESKTOP_HPP_

#include "stepback/profiles/profile.hpp"

namespace stepback::profiles {

// Cap 100 s, 14 retries, deadline 480 s, full jitter, deferral 5-10 minutes (docs/retry.md,
// "Safe for a fleet"); polls
// from 1 s doubling to 60 s for at most 30 minutes.
inline constexpr DeviceProfile desktop = [] {
  DeviceProfile p;
  p.name = "desktop";
  p.retry.jitter = Jitter::kFull;
  p.retry.max_backoff = Millis::seconds(100);
  p.retry.max_retries = 14;
  p.retry.total_deadline = Millis::seconds(480);
  p.retry.max_server_delay = Millis::seconds(120);
  p.timeouts.connect = Millis::seconds(10);
  p.timeouts.tls_handshake = Millis::seconds(10);
  p.timeouts.read = Millis::seconds(30);
  // The body floor: 1 KiB/s over 30 s (the read timeout's span). A wired or Wi-Fi link that
  // works at all moves tens of KB/s even when congested; below 1 KiB/s for half a minute the
  // attempt is alive but useless (a 1 MiB file would take 17 minutes), so it is cut and a GET
  // resumes by Range on a fresh connection.
  p.timeouts.speed_limit = 1024;
  p.timeouts.speed_time = Millis::seconds(30);
  // Without a network it may use, a request waits up to 5 minutes for one (a laptop between
  // networks), spending no retry and no deadline.
  p.timeouts.offline = Millis::seconds(300);
  p.budget.max_tokens = 10;
  p.budget.refund_milli = 100;
  // Operations: about 1 s doubling to a 60 s cap with equal jitter (0.5-1 s, 1-2 s, 2-4 s,
  // ..., then 30-60 s), never sooner than 0.5 s; polling ends 30 minutes after the mutation's
  // answer (a Memorystore create takes minutes, a large one tens of minutes).
  p.polling.min_delay = Millis(500);
  p.polling.initial_delay = Millis(1000);
  p.polling.multiplier = 2;
  p.polling.max_delay = Millis::seconds(60);
  p.polling.jitter = Jitter::kEqual;
  p.polling.total_deadline = Millis::seconds(1800);  // 30 minutes
  // Downloads: a checkpoint every 1 MiB and at most every 2 s (a disk takes it in stride).
  p.checkpoint.bytes = std::uint64_t{1} << 20;
  p.checkpoint.interval = Millis::seconds(2);
  // Buffers: the io scratch holds four TLS records, so a fast wired link drains more per
  // turn of the loop; a desktop has the memory. The rest keep the defaults: heads of a few
  // KiB, and URLs as long as the state record keeps.
  p.buffers.io = 64 * 1024;
  // A resumable transfer whose retries ran out runs again 5 to 10 minutes later.
  p.defer.delay = Millis::seconds(300);
  p.defer.spread = Millis::seconds(300);
  return p;
}();
static_assert(valid(desktop), "the desktop profile must be valid");

}  // namespace stepback::profiles

#endif  // STEPBACK_PROFILES_DESKTOP_HPP_
