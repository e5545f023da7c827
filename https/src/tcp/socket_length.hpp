// Sign-correct handling of socklen_t, which is unsigned 32-bit on glibc and 64-bit bionic but
// a signed int on 32-bit bionic (armeabi-v7a, x86). Written over the length type so that
// tests/https/tcp/socket_length_test.cpp compiles it with both flavours under -Werror.
#ifndef STEPBACK_HTTPS_SRC_TCP_SOCKET_LENGTH_HPP_
#define STEPBACK_HTTPS_SRC_TCP_SOCKET_LENGTH_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

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

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_TCP_SOCKET_LENGTH_HPP_
