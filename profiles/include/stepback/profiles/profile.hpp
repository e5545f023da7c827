// DeviceProfile: a complete device parameter set, the retry policy plus the transport
// timeouts and budget size that the HTTPS layer uses, and the polling policy of long-running
// operations.
#ifndef STEPBACK_PROFILES_PROFILE_HPP_
#define STEPBACK_PROFILES_PROFILE_HPP_

#include <cstdint>

#include "stepback/core/budget.hpp"
#include "stepback/core/checkpoint.hpp"
#include "stepback/core/defer.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/polling.hpp"
#include "stepback/core/timeouts.hpp"

namespace stepback::profiles {

// The per-attempt transport limits (core's type; the name is kept for existing callers).
using Timeouts = stepback::Timeouts;

// The sizes of the buffers a request runs in (https::ClientBuffers, the redirect URL, an
// upload's session URI), in bytes; stepback::app sizes its storage from them. 32-bit: the
// profiles compile freestanding (<cstdint> only, no <cstddef>), for bare metal and Android.
struct BufferSizes {
  std::uint32_t request = 4096;        // The request head: method line, fields, Range.
  std::uint32_t response_head = 8192;  // A response's status line and fields.
  std::uint32_t io = 16384;            // Receive and body-send scratch: one TLS record.
  std::uint32_t error_body = 2048;     // A retryable answer's body, for RetryInfo.
  std::uint32_t redirect_url = 2048;   // The URL a redirect or a URL refresh leads to.
  std::uint32_t session_uri = 2048;    // An upload's session URI (the record holds 2048).
};

// Whether every buffer can hold what it is for: a request line with a few fields, a
// response head of a few fields, a read, a short URL.
constexpr bool valid(const BufferSizes& b) {
  return b.request >= 512 && b.response_head >= 1024 && b.io >= 1024 && b.error_body >= 256 &&
         b.redirect_url >= 256 && b.session_uri >= 256;
}

// One device class's parameters, selected at build time (see active.hpp).
struct DeviceProfile {
  const char* name = "";
  Policy retry;
  Timeouts timeouts;
  BudgetConfig budget;
  PollingPolicy polling;        // Between polls of a long-running operation (transfer::Operation).
  CheckpointPolicy checkpoint;  // How often a download's position is saved (transfer::Download).
  std::uint8_t max_redirects = 5;  // Redirects one request follows (0: none).
  BufferSizes buffers;             // The request's buffers (stepback::app's storage).
  DeferPolicy defer;               // When a resumable transfer whose retries ran out runs again.
};

// Whether every part of `p` is usable and its timeouts are positive.
constexpr bool valid(const DeviceProfile& p) {
  return p.name != nullptr && p.name[0] != '\0' && valid(p.retry) && valid(p.budget) &&
         valid(p.timeouts) && valid(p.polling) && valid(p.checkpoint) && valid(p.buffers) &&
         valid(p.defer);
}

}  // namespace stepback::profiles

#endif  // STEPBACK_PROFILES_PROFILE_HPP_
