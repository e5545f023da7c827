#include "stepback/https/types.hpp"

namespace stepback::https {

const char* to_string(Status s) {
  static const char* const kNames[] = {
      "error",         "ok",          "would_block", "closed",          "invalid_argument",
      "buffer_too_small", "dns_failed", "connect_failed", "connect_timeout", "tls_handshake",
      "tls_verify",    "reset",       "timeout",     "protocol",        "headers_too_large",
      "body_too_large"};
  const auto i = static_cast<unsigned>(s);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "unknown";
}

}  // namespace stepback::https
