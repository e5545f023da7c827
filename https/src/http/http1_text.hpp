// Character classes and ASCII helpers shared by the HTTP/1.1 sources (private).
#ifndef STEPBACK_HTTPS_SRC_HTTP_HTTP1_TEXT_HPP_
#define STEPBACK_HTTPS_SRC_HTTP_HTTP1_TEXT_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/detail/text.hpp"

namespace stepback::https::http1_text {

// tchar of RFC 9110 5.6.2.
constexpr bool is_tchar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

// Whether `s` is a non-empty token.
constexpr bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!is_tchar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Whether `c` may appear in a field value: VCHAR, SP, HTAB or obs-text.
constexpr bool is_field_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7F); }

// std::string_view::substr without its out_of_range throw, which would tie the library to
// the C++ runtime (scripts/check_runtime_free.sh): `pos` is clamped to the size.
constexpr std::string_view sub(std::string_view s, std::size_t pos,
                               std::size_t n = std::string_view::npos) {
  pos = pos < s.size() ? pos : s.size();
  const std::size_t left = s.size() - pos;
  return std::string_view(s.data() + pos, n < left ? n : left);
}

// What a URL's host and request target may hold (url.cpp parses, request_writer.cpp
// checks again before writing).
constexpr std::size_t kMaxHostSize = 255;

constexpr bool is_reg_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

constexpr bool is_ipv6_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' ||
         c == '.';
}

// A host name (reg-name without percent-encoding) or, when it holds a colon, the inside
// of an IPv6 literal; the resolver does the full check, this keeps the Host line safe.
constexpr bool valid_host(std::string_view host) {
  if (host.empty() || host.size() > kMaxHostSize) return false;
  if (host.find(':') != std::string_view::npos) {
    if (host.size() < 2) return false;
    for (const char c : host) {
      if (!is_ipv6_char(c)) return false;
    }
    return true;
  }
  for (const char c : host) {
    if (!is_reg_name_char(c)) return false;
  }
  return true;
}

// Visible ASCII without '#': what may follow the authority in a request target.
constexpr bool valid_target_chars(std::string_view s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7E || c == '#') return false;
  }
  return true;
}

using detail::iequals;
using detail::is_digit;
using detail::is_ows;
using detail::to_lower;
using detail::trim_ows;

// Calls fn(element) for each trimmed non-empty element of a comma-separated list;
// stops early and returns false when fn does.
template <typename Fn>
constexpr bool for_each_list_element(std::string_view list, Fn fn) {
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = trim_ows(sub(list, 0, comma));
    if (!item.empty() && !fn(item)) return false;
    if (comma == std::string_view::npos) return true;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace stepback::https::http1_text

#endif  // STEPBACK_HTTPS_SRC_HTTP_HTTP1_TEXT_HPP_
