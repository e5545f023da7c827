// ASCII and UTF-8 helpers shared by the rooms of https/ and by transfer/ and tools/: one
// case-insensitive compare, one optional-white-space trim, one UTF-8 encoder. Nothing here
// allocates or throws.
#ifndef STEPBACK_HTTPS_DETAIL_TEXT_HPP_
#define STEPBACK_HTTPS_DETAIL_TEXT_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace stepback::https::detail {

// Whether `c` is optional white space (RFC 9110 5.6.3: SP or HTAB).
constexpr bool is_ows(char c) { return c == ' ' || c == '\t'; }

// Whether `c` is an ASCII digit.
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// `c` in lower case when it is an ASCII capital, else `c`.
constexpr char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// ASCII case-insensitive equality (header names, digest names, type URLs).
constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  }
  return true;
}

// `s` without leading and trailing SP and HTAB.
constexpr std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// Writes code point `cp` as UTF-8 to `out` and returns its length (1 to 4); 0, and nothing
// written, for a surrogate (U+D800-U+DFFF) or a value past U+10FFFF, which are no characters.
constexpr std::size_t encode_utf8(std::uint32_t cp, std::uint8_t (&out)[4]) {
  if (cp < 0x80) {
    out[0] = static_cast<std::uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<std::uint8_t>(0xC0 | (cp >> 6));
    out[1] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    out[0] = static_cast<std::uint8_t>(0xE0 | (cp >> 12));
    out[1] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  if (cp < 0x110000) {
    out[0] = static_cast<std::uint8_t>(0xF0 | (cp >> 18));
    out[1] = static_cast<std::uint8_t>(0x80 | ((cp >> 12) & 0x3F));
    out[2] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[3] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
    return 4;
  }
  return 0;
}

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_DETAIL_TEXT_HPP_
