// Socket addresses on POSIX: numeric hosts, ports and families.
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "stepback/https/tcp/address.hpp"

namespace stepback::https {
namespace {

// Longest numeric host accepted: an IPv6 literal with brackets and a scope id.
constexpr std::size_t kMaxNumericHost = 64;

// Copies a numeric host into `buf` without the brackets of an IPv6 literal; false if it
// does not fit or the brackets do not match.
bool strip_brackets(const char* host, char (&buf)[kMaxNumericHost + 1]) {
  std::size_t len = std::strlen(host);
  if (len > kMaxNumericHost) return false;
  if (host[0] == '[') {
    if (len < 2 || host[len - 1] != ']') return false;
    ++host;
    len -= 2;
  }
  std::memcpy(buf, host, len);
  buf[len] = '\0';
  return true;
}

}  // namespace

bool is_numeric_host(const char* host) {
  if (host[0] == '[' || std::strchr(host, ':') != nullptr) return true;
  for (const char* c = host; *c != '\0'; ++c) {
    if ((*c < '0' || *c > '9') && *c != '.') return false;
  }
  return true;
}

int address_family(const SocketAddress& address) {
  sa_family_t family = 0;
  if (address.size < offsetof(sockaddr, sa_family) + sizeof family) return 0;
  std::memcpy(&family, address.bytes + offsetof(sockaddr, sa_family), sizeof family);
  return family;
}

bool set_address_port(SocketAddress* address, std::uint16_t port) {
  const int family = address_family(*address);
  const std::uint16_t net = htons(port);
  if (family == AF_INET && address->size >= sizeof(sockaddr_in)) {
    std::memcpy(address->bytes + offsetof(sockaddr_in, sin_port), &net, sizeof net);
    return true;
  }
  if (family == AF_INET6 && address->size >= sizeof(sockaddr_in6)) {
    std::memcpy(address->bytes + offsetof(sockaddr_in6, sin6_port), &net, sizeof net);
    return true;
  }
  return false;
}

Status parse_numeric_address(const char* host, std::uint16_t port, SocketAddress* out) {
  if (host == nullptr || out == nullptr || !is_numeric_host(host)) return Status::kInvalidArgument;
  char buf[kMaxNumericHost + 1];
  if (!strip_brackets(host, buf) || buf[0] == '\0') return Status::kInvalidArgument;
  // inet_aton / inet_pton rather than getaddrinfo(AI_NUMERICHOST): the same answers without
  // the allocations getaddrinfo makes inside libc, so a request's step loop stays heap-free.
  *out = SocketAddress{};
  if (std::strchr(buf, ':') == nullptr) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    if (::inet_aton(buf, &sin.sin_addr) == 0) return Status::kInvalidArgument;  // Also "127.1".
    std::memcpy(out->bytes, &sin, sizeof sin);
    out->size = sizeof sin;
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    char* zone = std::strchr(buf, '%');
    if (zone != nullptr) {
      *zone++ = '\0';
      char* end = nullptr;
      const auto index = std::strtoul(zone, &end, 10);
      sin6.sin6_scope_id = (*zone != '\0' && *end == '\0') ? static_cast<std::uint32_t>(index)
                                                           : ::if_nametoindex(zone);
      if (sin6.sin6_scope_id == 0) return Status::kInvalidArgument;
    }
    if (::inet_pton(AF_INET6, buf, &sin6.sin6_addr) != 1) return Status::kInvalidArgument;
    std::memcpy(out->bytes, &sin6, sizeof sin6);
    out->size = sizeof sin6;
  }
  return set_address_port(out, port) ? Status::kOk : Status::kInvalidArgument;
}

}  // namespace stepback::https
