// libFuzzer target for the two range values a transfer trusts: a 206's Content-Range
// ("bytes FIRST-LAST/TOTAL", https/src/http/content_range.hpp, read by the Client when it
// resumes a download) and a resumable upload's 308 Range ("bytes=0-K",
// transfer/src/held_range.hpp). The input is the field value, given to both. The target
// aborts unless each parser agrees with a reference written here apart, and:
//   - a Content-Range it accepts has FIRST <= LAST, LAST < TOTAL when TOTAL is known, and
//     formatted again in decimal it parses to the same numbers;
//   - a Range it accepts holds K + 1 bytes with no overflow (so at least 1).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "content_range.hpp"
#include "held_range.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// Reads a run of 1 to 19 digits at the front of *s (no more digits may follow it).
bool digits(std::string_view* s, std::uint64_t* out) {
  std::size_t n = 0;
  while (n < s->size() && (*s)[n] >= '0' && (*s)[n] <= '9') ++n;
  if (n == 0 || n > 19) return false;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v * 10 + static_cast<std::uint64_t>((*s)[i] - '0');
  s->remove_prefix(n);
  *out = v;
  return true;
}

bool take(std::string_view* s, std::string_view literal) {
  if (s->substr(0, literal.size()) != literal) return false;
  s->remove_prefix(literal.size());
  return true;
}

struct Range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
};

std::optional<Range> reference_content_range(std::string_view s) {
  Range r;
  if (!take(&s, "bytes ") || !digits(&s, &r.first) || !take(&s, "-") || !digits(&s, &r.last) ||
      !take(&s, "/")) {
    return std::nullopt;
  }
  if (s != "*") {
    std::uint64_t total = 0;
    if (!digits(&s, &total) || !s.empty()) return std::nullopt;
    r.total = total;
  }
  if (r.first > r.last || (r.total && *r.total <= r.last)) return std::nullopt;
  return r;
}

std::optional<std::uint64_t> reference_held(std::string_view s) {
  std::uint64_t last = 0;
  if (!take(&s, "bytes=0-") || !digits(&s, &last) || !s.empty()) return std::nullopt;
  std::uint64_t held = 0;
  require(!__builtin_add_overflow(last, 1, &held));
  return held;
}

std::optional<Range> content_range(std::string_view s) {
  Range r;
  if (!stepback::https::detail::parse_content_range(s, &r.first, &r.last, &r.total)) {
    return std::nullopt;
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const std::optional<Range> range = content_range(text);
  const std::optional<Range> expected = reference_content_range(text);
  require(range.has_value() == expected.has_value());
  if (range) {
    require(range->first == expected->first && range->last == expected->last &&
            range->total == expected->total);
    require(range->first <= range->last);
    if (range->total) require(range->last < *range->total);
    const std::string again = "bytes " + std::to_string(range->first) + "-" +
                              std::to_string(range->last) + "/" +
                              (range->total ? std::to_string(*range->total) : std::string("*"));
    const std::optional<Range> reparsed = content_range(again);
    require(reparsed && reparsed->first == range->first && reparsed->last == range->last &&
            reparsed->total == range->total);
  }

  std::uint64_t held = 0;
  const bool held_ok = stepback::transfer::detail::parse_held(text, &held);
  const std::optional<std::uint64_t> expected_held = reference_held(text);
  require(held_ok == expected_held.has_value());
  if (held_ok) require(held == *expected_held && held >= 1);
  return 0;
}
