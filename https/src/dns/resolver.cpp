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

void FixedResolver::set(const SocketAddress* addresses, std::size_t count) {
  given_count_ = 0;
  for (std::size_t i = 0; i < count && given_count_ < kMaxAddresses; ++i) {
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
