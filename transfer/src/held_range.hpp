// The Range value of a resumable upload's 308 answer (private to Upload; a header of its own
// so that its fuzz target, tests/fuzz/content_range_fuzz.cpp, can reach it).
#ifndef STEPBACK_TRANSFER_SRC_HELD_RANGE_HPP_
#define STEPBACK_TRANSFER_SRC_HELD_RANGE_HPP_

#include <cstdint>
#include <string_view>

namespace stepback::transfer::detail {

// Parses the value of a 308's Range field, "bytes=0-K" (K 1 to 19 ASCII digits, so K + 1
// never overflows), into the count of bytes held, K + 1; false when malformed.
inline bool parse_held(std::string_view v, std::uint64_t* held) {
  constexpr std::string_view kPrefix = "bytes=0-";
  if (v.substr(0, kPrefix.size()) != kPrefix) return false;
  v.remove_prefix(kPrefix.size());
  if (v.empty() || v.size() > 19) return false;
  std::uint64_t last = 0;
  for (const char c : v) {
    if (c < '0' || c > '9') return false;
    last = last * 10 + static_cast<std::uint64_t>(c - '0');
  }
  *held = last + 1;
  return true;
}

}  // namespace stepback::transfer::detail

#endif  // STEPBACK_TRANSFER_SRC_HELD_RANGE_HPP_
