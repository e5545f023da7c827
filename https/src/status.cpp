#include "stepback/https/types.hpp"

namespace stepback::https {

const char* to_string(Status s) {
  // A switch, so that -Wswitch names any enumerator left out.
  switch (s) {
    case Status::kError:
      return "error";
    case Status::kOk:
      return "ok";
    case Status::kWouldBlock:
      return "would_block";
    case Status::kClosed:
      return "closed";
    case Status::kInvalidArgument:
      return "invalid_argument";
    case Status::kBufferTooSmall:
      return "buffer_too_small";
    case Status::kDnsFailed:
      return "dns_failed";
    case Status::kConnectFailed:
      return "connect_failed";
    case Status::kConnectTimeout:
      return "connect_timeout";
    case Status::kTlsHandshake:
      return "tls_handshake";
    case Status::kTlsVerify:
      return "tls_verify";
    case Status::kReset:
      return "reset";
    case Status::kTimeout:
      return "timeout";
    case Status::kProtocol:
      return "protocol";
    case Status::kHeadersTooLarge:
      return "headers_too_large";
    case Status::kBodyTooLarge:
      return "body_too_large";
    case Status::kRestartRefused:
      return "restart_refused";
    case Status::kTimeLimit:
      return "time_limit";
    case Status::kBodySource:
      return "body_source";
    case Status::kTlsRefused:
      return "tls_refused";
    case Status::kIntegrity:
      return "integrity";
    case Status::kRedirect:
      return "redirect";
    case Status::kProxyAuth:
      return "proxy_auth";
  }
  return "unknown";
}

}  // namespace stepback::https
