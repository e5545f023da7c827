// Whether an OS error says there is no path from this device to an address: the network or
// the host cannot be reached from here, the network or the bound device is down, the local
// address is gone, or the machine is on no network. A refusal, a reset or a timeout came from
// (or went to) somewhere. Shared by the TCP connect (TcpTransport::unreachable()) and the
// lookups (ResolveResult::unreachable).
#ifndef STEPBACK_HTTPS_SRC_TCP_NO_PATH_HPP_
#define STEPBACK_HTTPS_SRC_TCP_NO_PATH_HPP_

#include <cerrno>

namespace stepback::https::detail {

inline bool no_path(int error) {
  switch (error) {
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
    case EADDRNOTAVAIL:
    case ENODEV:
#if defined(ENONET)
    case ENONET:
#endif
      return true;
    default:
      return false;
  }
}

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_TCP_NO_PATH_HPP_
