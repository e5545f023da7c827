#include "stepback/https/dns/getaddrinfo_resolver.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>

#include "tcp/socket_length.hpp"

namespace stepback::https {

void GetaddrinfoResolver::start(const char* host, std::uint16_t port, Millis /*now*/) {
  result_ = ResolveResult{};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* list = nullptr;
  const int rc = getaddrinfo(host, nullptr, &hints, &list);  // Blocks: see the header.
  std::size_t n = 0;
  if (rc == 0) {
    for (const addrinfo* a = list; a != nullptr && n < kMaxAddresses; a = a->ai_next) {
      if (detail::copy_socket_address(a->ai_addr, a->ai_addrlen, port, &addresses_[n])) ++n;
    }
    freeaddrinfo(list);
  }
  if (n > 0) {
    result_.addresses = addresses_;
    result_.count = n;
    return;
  }
  switch (rc) {
    case 0:
    case EAI_NONAME:
      result_.error = ResolveError::kNxDomain;
      break;
#ifdef EAI_NODATA
    case EAI_NODATA:
      result_.error = ResolveError::kNoData;
      break;
#endif
    case EAI_AGAIN:
      result_.error = ResolveError::kTimeout;
      break;
    case EAI_MEMORY:
      result_.error = ResolveError::kOutOfMemory;
      break;
    default:
      result_.error = ResolveError::kInternal;
      break;
  }
  std::snprintf(message_, sizeof message_, "looking up '%s' failed: %s", host,
                rc == 0 ? "no usable address" : gai_strerror(rc));
  result_.message = message_;
}

ResolverNext GetaddrinfoResolver::step(Millis /*now*/) { return ResolverNext{}; }

}  // namespace stepback::https
