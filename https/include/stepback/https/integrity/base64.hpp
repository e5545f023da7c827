// Base64 (RFC 4648 section 4, standard alphabet, padded), the one implementation of the
// library: the digests header fields carry, public-key pins, and (through base64_value) the
// trust store's streaming PEM reader. A strict decoder that accepts one spelling per byte
// string, and the encoder. Nothing here allocates or throws.
#ifndef STEPBACK_HTTPS_INTEGRITY_BASE64_HPP_
#define STEPBACK_HTTPS_INTEGRITY_BASE64_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/types.hpp"

namespace stepback::https {

// The 6-bit value of a character of the standard alphabet, or -1 for any other.
constexpr int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Decodes `text` into exactly `size` bytes at `out`. Strict: the text is exactly
// 4 * ceil(size / 3) characters of the standard alphabet with the padding '=' that length
// needs and nowhere else, and the bits the padding leaves over are zero (canonical), so each
// byte string has one accepted spelling. No whitespace, no URL-safe alphabet. False for
// anything else, with `out` unspecified.
[[nodiscard]] bool base64_decode_exact(std::string_view text, std::uint8_t* out, std::size_t size);

// Writes the padded base64 of `bytes` to `out` (no NUL) and returns its length,
// 4 * ceil(bytes.size / 3); 0 and nothing written when that exceeds `capacity`.
std::size_t base64_encode(ConstBytes bytes, char* out, std::size_t capacity);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_INTEGRITY_BASE64_HPP_
