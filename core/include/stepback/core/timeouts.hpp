// Timeouts: the per-attempt transport limits, next to Policy (which limits the retry loop).
#ifndef STEPBACK_CORE_TIMEOUTS_HPP_
#define STEPBACK_CORE_TIMEOUTS_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"

namespace stepback {

// Per-attempt transport limits. None of them bounds a transfer that keeps making progress,
// but a trickle is not progress: a response head must be complete within `read` of the
// request, and a body must keep up `speed_limit` over every `speed_time` window.
struct Timeouts {
  Millis connect{10000};        // TCP connect, per address tried.
  Millis tls_handshake{10000};  // From connected to handshake done.
  // Longest silence (no byte sent or received) within an attempt, and the longest wait for
  // a whole response head after the request has left.
  Millis read{30000};
  // The throughput floor, as curl's --speed-limit and --speed-time: an attempt whose body
  // (sent or received) moves fewer than `speed_limit` bytes per second over a window of
  // `speed_time` ends as a timeout. 0 bytes per second: no floor.
  std::uint32_t speed_limit = 1024;  // Bytes per second.
  Millis speed_time{30000};
  // How long a request waits for a network it may use (none, or only ones its network policy
  // refuses) before it ends with Outcome::kOffline; the wait spends no retry and no deadline.
  Millis offline{300000};
};

// Whether every limit is positive (a floor needs a window to measure it over).
constexpr bool valid(const Timeouts& t) {
  return t.connect.count() > 0 && t.tls_handshake.count() > 0 && t.read.count() > 0 &&
         (t.speed_limit == 0 || t.speed_time.count() > 0) && t.offline.count() > 0;
}

}  // namespace stepback

#endif  // STEPBACK_CORE_TIMEOUTS_HPP_
