#include "stepback/core/attempt.hpp"
#include "stepback/core/policy.hpp"

namespace stepback {
namespace {

template <typename Enum, unsigned N>
const char* name_of(Enum e, const char* const (&names)[N]) {
  const auto i = static_cast<unsigned>(e);
  return i < N ? names[i] : "unknown";
}

// Whether `e` is an enumerator: a switch without a default, so that -Wswitch (an error in the
// warning-checked builds) makes it list every enumerator. Compile-time only: it counts the
// enumerators for the static_asserts that keep each name table as long as its enumeration.
constexpr bool known(Jitter e) {
  switch (e) {
    case Jitter::kSeed:
    case Jitter::kFull:
    case Jitter::kEqual:
    case Jitter::kDecorrelated:
    case Jitter::kNone:
      return true;
  }
  return false;
}
constexpr bool known(Failure e) {
  switch (e) {
    case Failure::kNone:
    case Failure::kDns:
    case Failure::kConnect:
    case Failure::kConnectTimeout:
    case Failure::kTlsHandshake:
    case Failure::kTlsVerify:
    case Failure::kReset:
    case Failure::kTimeout:
    case Failure::kProtocol:
    case Failure::kTooLarge:
    case Failure::kTlsRefused:
    case Failure::kIntegrity:
    case Failure::kTimeLimit:
    case Failure::kLocal:
      return true;
  }
  return false;
}
constexpr bool known(Outcome e) {
  switch (e) {
    case Outcome::kSuccess:
    case Outcome::kRetriesExhausted:
    case Outcome::kDeadline:
    case Outcome::kTerminalStatus:
    case Outcome::kTerminalFailure:
    case Outcome::kNotIdempotent:
    case Outcome::kBudgetExhausted:
    case Outcome::kServerDelayTooLong:
    case Outcome::kCancelled:
    case Outcome::kOffline:
      return true;
  }
  return false;
}
constexpr bool known(Verdict e) {
  switch (e) {
    case Verdict::kSuccess:
    case Verdict::kRetryable:
    case Verdict::kTerminal:
      return true;
  }
  return false;
}
constexpr bool known(WaitReason e) {
  switch (e) {
    case WaitReason::kBackoff:
    case WaitReason::kRetryAfter:
    case WaitReason::kRetryInfo:
    case WaitReason::kNetworkBack:
    case WaitReason::kOffline:
      return true;
  }
  return false;
}

// The number of enumerators, which the tables index from 0 without gaps.
template <typename Enum>
constexpr unsigned enumerators() {
  unsigned n = 0;
  while (n < 256 && known(static_cast<Enum>(n))) ++n;
  return n;
}

#define STEPBACK_NAMES_MATCH(Enum, names)                                  \
  static_assert(sizeof(names) / sizeof((names)[0]) == enumerators<Enum>(), \
                "a name for every " #Enum " enumerator, in order")

}  // namespace

const char* to_string(Jitter j) {
  static const char* const kNames[] = {"seed", "full", "equal", "decorrelated", "none"};
  STEPBACK_NAMES_MATCH(Jitter, kNames);
  return name_of(j, kNames);
}

const char* to_string(Failure f) {
  static const char* const kNames[] = {
      "none",       "dns",     "connect",  "connect_timeout", "tls_handshake", "tls_verify",
      "reset",      "timeout", "protocol", "too_large",       "tls_refused",   "integrity",
      "time_limit", "local"};
  STEPBACK_NAMES_MATCH(Failure, kNames);
  return name_of(f, kNames);
}

const char* to_string(Outcome o) {
  static const char* const kNames[] = {"success",          "retries_exhausted",
                                       "deadline",         "terminal_status",
                                       "terminal_failure", "not_idempotent",
                                       "budget_exhausted", "server_delay_too_long",
                                       "cancelled",        "offline"};
  STEPBACK_NAMES_MATCH(Outcome, kNames);
  return name_of(o, kNames);
}

const char* to_string(Verdict v) {
  static const char* const kNames[] = {"success", "retryable", "terminal"};
  STEPBACK_NAMES_MATCH(Verdict, kNames);
  return name_of(v, kNames);
}

const char* to_string(WaitReason w) {
  static const char* const kNames[] = {"backoff", "retry_after", "retry_info", "network_back",
                                       "offline"};
  STEPBACK_NAMES_MATCH(WaitReason, kNames);
  return name_of(w, kNames);
}

}  // namespace stepback
