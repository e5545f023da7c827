// GetaddrinfoResolver: the system resolver through getaddrinfo(), which BLOCKS the calling
// thread inside start() for as long as the system takes (seconds on a bad network). It is
// never the default: choose it explicitly, e.g. for a tool that must honour nsswitch.conf
// (mDNS, LDAP hosts) and may block, or on a platform without c-ares.
#ifndef STEPBACK_HTTPS_DNS_GETADDRINFO_RESOLVER_HPP_
#define STEPBACK_HTTPS_DNS_GETADDRINFO_RESOLVER_HPP_

#include <cstdint>

#include "stepback/https/dns/resolver.hpp"

namespace stepback::https {

// Looks names up with getaddrinfo(AF_UNSPEC, SOCK_STREAM) in start() (blocking, and libc
// allocates); step() then answers kDone at once. EAI_NONAME counts as kNxDomain, EAI_NODATA
// as kNoData, EAI_AGAIN as kTimeout, EAI_MEMORY as kOutOfMemory, the rest as kInternal.
class GetaddrinfoResolver final : public Resolver {
 public:
  GetaddrinfoResolver() = default;

  void start(const char* host, std::uint16_t port, Millis now) override;
  [[nodiscard]] ResolverNext step(Millis now) override;
  const ResolveResult& result() const override { return result_; }
  void cancel() override {}

 private:
  SocketAddress addresses_[kMaxAddresses];
  ResolveResult result_;
  char message_[320] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_DNS_GETADDRINFO_RESOLVER_HPP_
