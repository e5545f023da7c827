// What one attempt produced, how the policy classifies it, and how a retry loop ends.
#ifndef STEPBACK_CORE_ATTEMPT_HPP_
#define STEPBACK_CORE_ATTEMPT_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"

namespace stepback {

// Why an attempt produced no HTTP response.
enum class Failure : std::uint8_t {
  kNone,            // The attempt produced an HTTP status.
  kDns,             // Name lookup failed.
  kConnect,         // Connection refused or network unreachable.
  kConnectTimeout,  // No connection within the connect timeout.
  kTlsHandshake,    // The handshake failed for a reason other than verification.
  kTlsVerify,       // The peer's certificate or host name did not verify (terminal).
  kReset,           // The connection was reset or closed before a full response.
  kTimeout,         // No response within the read timeout.
  kProtocol,        // The response was not valid HTTP (terminal).
  kTooLarge,        // The response did not fit the caller's buffers (terminal).
  kTlsRefused,  // The server refused the handshake with an alert, e.g. protocol_version (terminal).
  kIntegrity,   // The body did not match the digest the server stated (terminal).
  kTimeLimit,   // The request's overall time limit (max_time) passed (terminal).
  kLocal,       // This side failed: a malformed request, a body source or sink (terminal).
};

// Where a server-requested delay came from.
enum class DelaySource : std::uint8_t { kNone, kRetryAfter, kRetryInfo };

// The result of one attempt, as the transport reports it to RetryMachine::report().
struct AttemptResult {
  std::uint16_t status = 0;  // HTTP status; 0 when failure != kNone.
  Failure failure = Failure::kNone;
  bool may_have_been_processed = true;  // False only when provably not processed.
  DelaySource delay_source = DelaySource::kNone;
  Millis server_delay{};  // Meaningful when delay_source != kNone.

  // A response with `status`; 429 and 503 count as not processed (RFC 9110 15.5.20, 15.6.4).
  static constexpr AttemptResult http(std::uint16_t status) {
    AttemptResult r;
    r.status = status;
    r.may_have_been_processed = !(status == 429 || status == 503);
    return r;
  }
  // A response with `status` whose server asked to wait `delay` (Retry-After or RetryInfo).
  static constexpr AttemptResult http(std::uint16_t status, Millis delay, DelaySource source) {
    AttemptResult r = http(status);
    r.delay_source = source;
    r.server_delay = delay;
    return r;
  }
  // A transport failure; failures before the request could be sent (DNS, connect,
  // handshake) count as not processed unless `may_have_been_processed` says otherwise.
  static constexpr AttemptResult transport(Failure f) {
    return transport(
        f, !(f == Failure::kDns || f == Failure::kConnect || f == Failure::kConnectTimeout ||
             f == Failure::kTlsHandshake || f == Failure::kTlsVerify || f == Failure::kTlsRefused));
  }
  // A transport failure with an explicit statement of whether the server may have acted.
  static constexpr AttemptResult transport(Failure f, bool may_have_been_processed) {
    AttemptResult r;
    r.failure = f;
    r.may_have_been_processed = may_have_been_processed;
    return r;
  }
};

// How a policy judges one attempt.
enum class Verdict : std::uint8_t { kSuccess, kRetryable, kTerminal };

// The verdict of `p` on `r`: statuses in p.retryable and the transport failures a later
// attempt may not meet (lookup, connect, handshake, reset, timeout) are retryable; 1xx-3xx
// succeed; the rest is terminal.
constexpr Verdict classify(const Policy& p, const AttemptResult& r) {
  if (r.failure != Failure::kNone) {
    // One bit per retryable kind: a test and a shift, smaller on a Cortex-M than a chain.
    constexpr std::uint32_t kRetryable = 1u << static_cast<unsigned>(Failure::kDns) |
                                         1u << static_cast<unsigned>(Failure::kConnect) |
                                         1u << static_cast<unsigned>(Failure::kConnectTimeout) |
                                         1u << static_cast<unsigned>(Failure::kTlsHandshake) |
                                         1u << static_cast<unsigned>(Failure::kReset) |
                                         1u << static_cast<unsigned>(Failure::kTimeout);
    const auto kind = static_cast<unsigned>(r.failure);
    return kind < 32 && ((kRetryable >> kind) & 1u) != 0 ? Verdict::kRetryable : Verdict::kTerminal;
  }
  if (p.retryable.contains(r.status)) return Verdict::kRetryable;
  return (r.status >= 100 && r.status < 400) ? Verdict::kSuccess : Verdict::kTerminal;
}

// How a retry loop ended.
enum class Outcome : std::uint8_t {
  kSuccess,             // An attempt succeeded.
  kRetriesExhausted,    // The last allowed retry failed too.
  kDeadline,            // The next wait would have passed the total deadline.
  kTerminalStatus,      // The server answered with a status that is not retried.
  kTerminalFailure,     // A transport failure that is not retried (verification, protocol).
  kNotIdempotent,       // Retryable, but the request may have been processed and is not idempotent.
  kBudgetExhausted,     // The client's retry budget is below half.
  kServerDelayTooLong,  // The server asked for a wait beyond max_server_delay.
  kCancelled,           // cancel() was called.
  kOffline,             // No network the request may use came within its offline limit.
};

// Why the current wait lasts as long as it does.
// kOffline: no network the request may use (none, or only metered or roaming ones it refuses).
enum class WaitReason : std::uint8_t { kBackoff, kRetryAfter, kRetryInfo, kNetworkBack, kOffline };

// Lower-case names for logs and JSON ("retries_exhausted", "tls_verify", ...).
const char* to_string(Failure f);
const char* to_string(Outcome o);
const char* to_string(Verdict v);
const char* to_string(WaitReason w);

}  // namespace stepback

#endif  // STEPBACK_CORE_ATTEMPT_HPP_
