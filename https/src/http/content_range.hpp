// The Content-Range value of a 206 answer (private to the Client; a header of its own so
// that its fuzz target, tests/fuzz/content_range_fuzz.cpp, can reach it).
#ifndef STEPBACK_HTTPS_SRC_HTTP_CONTENT_RANGE_HPP_
#define STEPBACK_HTTPS_SRC_HTTP_CONTENT_RANGE_HPP_

#include <cstdint>
#include <optional>
#include <string_view>

#include "http1_text.hpp"

namespace stepback::https::detail {

// Parses "bytes FIRST-LAST/TOTAL" (TOTAL may be "*", for nullopt) of RFC 9110 14.4: each
// number 1 to 19 ASCII digits (so none overflows), FIRST <= LAST, and LAST < TOTAL when
// TOTAL is known; false when malformed, the outputs then unspecified.
inline bool parse_content_range(std::string_view v, std::uint64_t* first, std::uint64_t* last,
                                std::optional<std::uint64_t>* total) {
  if (http1_text::sub(v, 0, 6) != "bytes ") return false;
  v.remove_prefix(6);
  auto number = [&v](std::uint64_t* out) {
    std::size_t i = 0;
    std::uint64_t n = 0;
    for (; i < v.size() && v[i] >= '0' && v[i] <= '9' && i < 19; ++i) {
      n = n * 10 + static_cast<std::uint64_t>(v[i] - '0');
    }
    if (i == 0) return false;
    v.remove_prefix(i);
    *out = n;
    return true;
  };
  std::uint64_t t = 0;
  if (!number(first) || v.empty() || v[0] != '-') return false;
  v.remove_prefix(1);
  if (!number(last) || v.empty() || v[0] != '/' || *last < *first) return false;
  v.remove_prefix(1);
  if (v == "*") {
    *total = std::nullopt;
    return true;
  }
  if (!number(&t) || !v.empty() || t <= *last) return false;
  *total = t;
  return true;
}

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_HTTP_CONTENT_RANGE_HPP_
