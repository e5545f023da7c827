#include "stepback/https/integrity/base64.hpp"

namespace stepback::https {
namespace {

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

bool base64_decode_exact(std::string_view text, std::uint8_t* out, std::size_t size) {
  const std::size_t groups = (size + 2) / 3;
  if (text.size() != groups * 4) return false;
  const std::size_t pad = groups * 3 - size;  // 0, 1 or 2 trailing '='.
  std::size_t o = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const bool last = g + 1 == groups;
    const std::size_t chars = last ? 4 - pad : 4;  // Data characters in this group.
    std::uint32_t bits = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const char c = text[g * 4 + i];
      if (i >= chars) {
        if (c != '=') return false;
        bits <<= 6;
        continue;
      }
      const int v = base64_value(c);
      if (v < 0) return false;
      bits = (bits << 6) | static_cast<std::uint32_t>(v);
    }
    // Canonical: the bits under the padding are zero (pad 1: 2 bits, pad 2: 4 bits).
    if (last && pad != 0 && (bits & ((1u << (8 * pad)) - 1u)) != 0) return false;
    const std::size_t bytes = last ? 3 - pad : 3;
    for (std::size_t i = 0; i < bytes; ++i) {
      out[o++] = static_cast<std::uint8_t>(bits >> (16 - 8 * i));
    }
  }
  return true;
}

std::size_t base64_encode(ConstBytes bytes, char* out, std::size_t capacity) {
  const std::size_t length = (bytes.size + 2) / 3 * 4;
  if (length > capacity) return 0;
  std::size_t o = 0;
  for (std::size_t i = 0; i < bytes.size; i += 3) {
    const std::size_t n = bytes.size - i < 3 ? bytes.size - i : 3;
    std::uint32_t bits = static_cast<std::uint32_t>(bytes.data[i]) << 16;
    if (n > 1) bits |= static_cast<std::uint32_t>(bytes.data[i + 1]) << 8;
    if (n > 2) bits |= bytes.data[i + 2];
    out[o++] = kBase64Alphabet[(bits >> 18) & 63u];
    out[o++] = kBase64Alphabet[(bits >> 12) & 63u];
    out[o++] = n > 1 ? kBase64Alphabet[(bits >> 6) & 63u] : '=';
    out[o++] = n > 2 ? kBase64Alphabet[bits & 63u] : '=';
  }
  return length;
}

}  // namespace stepback::https
