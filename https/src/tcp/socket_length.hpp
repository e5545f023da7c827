// Sign-correct handling of socklen_t, which is unsigned 32-bit on glibc and 64-bit bionic but
// a signed int on 32-bit bionic (armeabi-v7a, x86). Written over the length type so that
// tests/https/tcp/socket_length_test.cpp compiles it with both flavours under -Werror.
#ifndef STEPBACK_HTTPS_SRC_TCP_SOCKET_LENGTH_HPP_
#define STEPBACK_HTTPS_SRC_TCP_SOCKET_LENGTH_HPP_

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "stepback/https/tcp/address.hpp"

namespace stepback::https::detail {

// `length` as a byte count when it is within [0, capacity]; nullopt for a negative length
// (possible only where socklen_t is signed) or one above `capacity`.
template <typename Len>
constexpr std::optional<std::uint32_t> checked_socket_length(Len length, std::size_t capacity) {
  static_assert(std::is_integral_v<Len>, "socklen_t is an integer type");
  if constexpr (std::is_signed_v<Len>) {
    if (length < 0) return std::nullopt;
  }
  const auto n = static_cast<std::make_unsigned_t<Len>>(length);
  if (static_cast<std::uint64_t>(n) > static_cast<std::uint64_t>(capacity)) return std::nullopt;
  return static_cast<std::uint32_t>(n);
}

// A byte count that is known to fit (a sockaddr size) as the OS's length type `Len`.
template <typename Len>
constexpr Len to_socket_length(std::size_t size) {
  return static_cast<Len>(size);
}

// Copies the IPv4 or IPv6 sockaddr at `address`, `length` bytes (a socklen_t or
// ares_socklen_t, signed or not), into *out with `port`: the one copy every resolver and the
// transport use. False, and *out cleared, for no address, a length that is negative, 0 or
// above SocketAddress's capacity, or another family.
template <typename Len>
bool copy_socket_address(const sockaddr* address, Len length, std::uint16_t port,
                         SocketAddress* out) {
  *out = SocketAddress{};
  const std::optional<std::uint32_t> n = checked_socket_length(length, sizeof out->bytes);
  if (address == nullptr || !n || *n == 0) return false;
  std::memcpy(out->bytes, address, *n);
  out->size = *n;
  if (set_address_port(out, port)) return true;
  *out = SocketAddress{};
  return false;
}

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_TCP_SOCKET_LENGTH_HPP_
