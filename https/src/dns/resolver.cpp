#include "stepback/https/dns/resolver.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace stepback::https {

const char* to_string(ResolveError e) {
  // A switch, so that -Wswitch names any enumerator left out.
  switch (e) {
    case ResolveError::kNone:
      return "none";
    case ResolveError::kNxDomain:
      return "nxdomain";
    case ResolveError::kNoData:
      return "no_data";
    case ResolveError::kInvalidName:
      return "invalid_name";
    case ResolveError::kTimeout:
      return "timeout";
    case ResolveError::kServerFailure:
      return "server_failure";
    case ResolveError::kBadResponse:
      return "bad_response";
    case ResolveError::kNoNetwork:
      return "no_network";
    case ResolveError::kOutOfMemory:
      return "out_of_memory";
    case ResolveError::kCancelled:
      return "cancelled";
    case ResolveError::kInternal:
      return "internal";
  }
  return "unknown";
}

FamilyQuota family_quota(std::size_t v6, std::size_t v4, std::size_t capacity) {
  const std::size_t half = capacity / 2;
  // IPv4 may always keep the larger half (or what it has, if less); IPv6 takes what is left.
  const std::size_t v4_kept = v4 < capacity - half ? v4 : capacity - half;
  FamilyQuota q;
  q.v6 = v6 < capacity - v4_kept ? v6 : capacity - v4_kept;
  q.v4 = v4 < capacity - q.v6 ? v4 : capacity - q.v6;
  return q;
}

void FixedResolver::set(const SocketAddress* addresses, std::size_t count) {
  std::size_t v6 = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (address_family(addresses[i]) == AF_INET6) ++v6;
  }
  FamilyQuota left = family_quota(v6, count - v6, kMaxAddresses);
  given_count_ = 0;
  for (std::size_t i = 0; i < count && given_count_ < kMaxAddresses; ++i) {
    std::size_t& room = address_family(addresses[i]) == AF_INET6 ? left.v6 : left.v4;
    if (room == 0) continue;
    --room;
    given_[given_count_++] = addresses[i];
  }
}

void FixedResolver::start(const char* host, std::uint16_t port, Millis /*now*/) {
  result_ = ResolveResult{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < given_count_; ++i) {
    out_[n] = given_[i];
    if (set_address_port(&out_[n], port)) ++n;
  }
  if (n == 0) {
    result_.error = ResolveError::kNoNetwork;
    result_.message = "no addresses were given to the FixedResolver";
    (void)host;
    return;
  }
  result_.addresses = out_;
  result_.count = n;
}

ResolverNext FixedResolver::step(Millis /*now*/) { return ResolverNext{}; }

void FixedResolver::cancel() {
  if (result_.count == 0 && result_.error == ResolveError::kNone) {
    result_.error = ResolveError::kCancelled;
  }
}

}  // namespace stepback::https
