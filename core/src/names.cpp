#include "stepback/core/attempt.hpp"
#include "stepback/core/policy.hpp"

namespace stepback {
namespace {

template <typename Enum, unsigned N>
const char* name_of(Enum e, const char* const (&names)[N]) {
  const auto i = static_cast<unsigned>(e);
  return i < N ? names[i] : "unknown";
}

}  // namespace

const char* to_string(Jitter j) {
  static const char* const kNames[] = {"seed", "full", "equal", "decorrelated", "none"};
  return name_of(j, kNames);
}

const char* to_string(Failure f) {
  static const char* const kNames[] = {"none",          "dns",        "connect", "connect_timeout",
                                       "tls_handshake", "tls_verify", "reset",   "timeout",
                                       "protocol",      "too_large"};
  return name_of(f, kNames);
}

const char* to_string(Outcome o) {
  static const char* const kNames[] = {
      "success",          "retries_exhausted",     "deadline",
      "terminal_status",  "terminal_failure",      "not_idempotent",
      "budget_exhausted", "server_delay_too_long", "cancelled"};
  return name_of(o, kNames);
}

const char* to_string(Verdict v) {
  static const char* const kNames[] = {"success", "retryable", "terminal"};
  return name_of(v, kNames);
}

const char* to_string(WaitReason w) {
  static const char* const kNames[] = {"backoff", "retry_after", "retry_info", "network_back"};
  return name_of(w, kNames);
}

}  // namespace stepback
