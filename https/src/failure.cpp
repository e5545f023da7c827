#include "stepback/https/failure.hpp"

namespace stepback::https {

Failure to_failure(Status s) {
  switch (s) {
    case Status::kOk:
    case Status::kWouldBlock:
      return Failure::kNone;
    case Status::kDnsFailed:
      return Failure::kDns;
    case Status::kConnectFailed:
      return Failure::kConnect;
    case Status::kConnectTimeout:
      return Failure::kConnectTimeout;
    case Status::kTlsHandshake:
      return Failure::kTlsHandshake;
    case Status::kTlsVerify:
      return Failure::kTlsVerify;
    case Status::kClosed:
    case Status::kReset:
      return Failure::kReset;
    case Status::kTimeout:
      return Failure::kTimeout;
    case Status::kHeadersTooLarge:
    case Status::kBodyTooLarge:
    case Status::kBufferTooSmall:
      return Failure::kTooLarge;
    case Status::kProtocol:
    case Status::kRedirect:  // The server's answers lead nowhere a request may go.
      return Failure::kProtocol;
    case Status::kTlsRefused:
      return Failure::kTlsRefused;
    case Status::kIntegrity:
      return Failure::kIntegrity;
    case Status::kTimeLimit:
      return Failure::kTimeLimit;
    case Status::kProxyAuth:  // The proxy settings need other credentials: no retry helps.
    case Status::kInvalidArgument:
    case Status::kRestartRefused:
    case Status::kBodySource:
    case Status::kError:
      return Failure::kLocal;
  }
  return Failure::kProtocol;
}

}  // namespace stepback::https
