// Socket addresses: the one place that knows the sockaddr layouts. Resolvers fill them, the
// TCP transport connects to them; numeric hosts are parsed here without touching DNS.
#ifndef STEPBACK_HTTPS_TCP_ADDRESS_HPP_
#define STEPBACK_HTTPS_TCP_ADDRESS_HPP_

#include <cstdint>

#include "stepback/https/types.hpp"

namespace stepback::https {

// One IPv4 or IPv6 socket address with its port, held in the OS's sockaddr layout.
struct SocketAddress {
  // The sockaddr_in or sockaddr_in6 bytes: 28 is sockaddr_in6's size, the larger of the two
  // on every platform served (a sockaddr_storage, 128 bytes, would hold only unused room, and
  // the resolvers and the transport keep 8 to 16 addresses each).
  static constexpr std::uint32_t kCapacity = 28;
  alignas(4) std::uint8_t bytes[kCapacity] = {};
  // How many of `bytes` are in use; 0 for no address.
  std::uint32_t size = 0;
};

// Whether `host` is meant as a numeric address: it has a ':' or a '[' (IPv6), or only digits
// and dots (IPv4: names never contain ':', and no top-level domain is all digits, RFC 3696
// section 2). Such a host is parsed, never looked up, even when it does not parse.
bool is_numeric_host(const char* host);

// Parses a numeric IPv4 or IPv6 literal ("192.0.2.1", "::1", "[::1]", "fe80::1%eth0") with
// `port` into *out without touching DNS; kInvalidArgument when `host` is not such a literal.
[[nodiscard]] Status parse_numeric_address(const char* host, std::uint16_t port,
                                           SocketAddress* out);

// Sets the port of `address` (IPv4 or IPv6) to `port`; false when it is neither family.
bool set_address_port(SocketAddress* address, std::uint16_t port);

// The address family of `address` (AF_INET, AF_INET6), 0 when it holds none.
int address_family(const SocketAddress& address);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_ADDRESS_HPP_
