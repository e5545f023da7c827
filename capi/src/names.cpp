// stepback_strerror: the names of the C statuses, here rather than from https/ so that the
// freestanding part (capi_core) has them without the HTTPS layer. The HTTPS layer's share
// are the names https::to_string gives (tests/capi checks they agree).
#include "stepback/stepback.h"

extern "C" const char* stepback_strerror(stepback_status status) {
  // A switch, so that -Wswitch names any enumerator left out.
  switch (status) {
    case STEPBACK_OK:
      return "ok";
    case STEPBACK_E_ERROR:
      return "error";
    case STEPBACK_E_WOULD_BLOCK:
      return "would_block";
    case STEPBACK_E_CLOSED:
      return "closed";
    case STEPBACK_E_INVALID_ARGUMENT:
      return "invalid_argument";
    case STEPBACK_E_BUFFER_TOO_SMALL:
      return "buffer_too_small";
    case STEPBACK_E_DNS:
      return "dns_failed";
    case STEPBACK_E_CONNECT:
      return "connect_failed";
    case STEPBACK_E_CONNECT_TIMEOUT:
      return "connect_timeout";
    case STEPBACK_E_TLS_HANDSHAKE:
      return "tls_handshake";
    case STEPBACK_E_TLS_VERIFY:
      return "tls_verify";
    case STEPBACK_E_RESET:
      return "reset";
    case STEPBACK_E_TIMEOUT:
      return "timeout";
    case STEPBACK_E_PROTOCOL:
      return "protocol";
    case STEPBACK_E_HEADERS_TOO_LARGE:
      return "headers_too_large";
    case STEPBACK_E_BODY_TOO_LARGE:
      return "body_too_large";
    case STEPBACK_E_RESTART_REFUSED:
      return "restart_refused";
    case STEPBACK_E_TIME_LIMIT:
      return "time_limit";
    case STEPBACK_E_BODY_SOURCE:
      return "body_source";
    case STEPBACK_E_TLS_REFUSED:
      return "tls_refused";
    case STEPBACK_E_INTEGRITY:
      return "integrity";
    case STEPBACK_E_REDIRECT:
      return "redirect";
    case STEPBACK_E_PROXY_AUTH:
      return "proxy_auth";
    case STEPBACK_E_STORAGE:
      return "storage";
    case STEPBACK_E_STATE:
      return "state";
    case STEPBACK_E_FILE:
      return "file";
    case STEPBACK_E_RECORD:
      return "record";
  }
  return "unknown";
}
