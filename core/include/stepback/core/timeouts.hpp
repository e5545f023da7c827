// Timeouts: the per-attempt transport limits, next to Policy (which limits the retry loop).
#ifndef STEPBACK_CORE_TIMEOUTS_HPP_
#define STEPBACK_CORE_TIMEOUTS_HPP_

#include "stepback/core/millis.hpp"

namespace stepback {

// Per-attempt transport limits. None of them bounds a transfer that keeps making progress.
struct Timeouts {
  Millis connect{10000};        // TCP connect, per address tried.
  Millis tls_handshake{10000};  // From connected to handshake done.
  Millis read{30000};           // Longest silence (no byte sent or received) within an attempt.
};

// Whether every limit is positive.
constexpr bool valid(const Timeouts& t) {
  return t.connect.count() > 0 && t.tls_handshake.count() > 0 && t.read.count() > 0;
}

}  // namespace stepback

#endif  // STEPBACK_CORE_TIMEOUTS_HPP_
