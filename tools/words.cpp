#include "words.hpp"

namespace stepback::tools {

const char* describe_stop(Outcome o) {
  switch (o) {
    case Outcome::kSuccess:
      return "an attempt succeeded";
    case Outcome::kRetriesExhausted:
      return "the last allowed retry failed too";
    case Outcome::kDeadline:
      return "the next wait would pass the total deadline";
    case Outcome::kTerminalStatus:
      return "the server answered with a status that is not retried";
    case Outcome::kTerminalFailure:
      return "the transport failed in a way that is not retried";
    case Outcome::kNotIdempotent:
      return "the request may have been processed and is not idempotent";
    case Outcome::kBudgetExhausted:
      return "the client's retry budget fell to half";
    case Outcome::kServerDelayTooLong:
      return "the server asked for a wait beyond max_server_delay";
    case Outcome::kCancelled:
      return "the loop was cancelled";
    case Outcome::kOffline:
      return "no network the request may use came within the offline limit";
  }
  return "unknown";
}

const char* wait_note(WaitReason reason) {
  switch (reason) {
    case WaitReason::kBackoff:
      return "";
    case WaitReason::kRetryAfter:
      return " (Retry-After)";
    case WaitReason::kRetryInfo:
      return " (RetryInfo)";
    case WaitReason::kNetworkBack:
      return " (network back)";
    case WaitReason::kOffline:
      return " (offline)";
  }
  return "";
}

}  // namespace stepback::tools
