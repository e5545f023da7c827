// libFuzzer target for parse_http_date() and parse_retry_after() (https/src/http/http_date.cpp).
// The input's first 8 bytes are the wall clock (little-endian milliseconds since the epoch;
// with the top bit clear only the low 48 bits count, which keeps most inputs within a
// plausible 9000 years), the rest is the field value. The target aborts unless:
//   - an accepted date has the fields of its text: the heap-free gmtime
//     (mbedtls_platform_gmtime_r) of the result gives back the text's date and time (an
//     IMF-fixdate formatted from it equals the text but for the unchecked day name), a
//     leap second 60 is the next minute's second 0, and a two-digit RFC 850 year lands
//     within 50 years of the clock's year;
//   - only RFC 850 depends on the clock; any accepted date formatted again in each of the
//     three forms parses to the same instant;
//   - parse_retry_after() answers exactly what RFC 9110 10.2.3 says, computed here apart:
//     delay-seconds times 1000 saturating at Millis::max(), an HTTP-date's distance from
//     the clock (zero for a date at or before it, so never negative), nullopt otherwise
//     and for any value with surrounding whitespace.
#include <mbedtls/platform_time.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/https/http/http_date.hpp"

extern "C" struct tm* mbedtls_platform_gmtime_r(const mbedtls_time_t* tt, struct tm* tm_buf);

namespace {

using stepback::Millis;
using stepback::https::parse_http_date;
using stepback::https::parse_retry_after;

constexpr const char* kShortDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kLongDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                     "Thursday", "Friday", "Saturday"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void require(bool condition) {
  if (!condition) std::abort();
}

// The decimal value of `n` digits of `s` at `at`, or -1.
long long field(std::string_view s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return -1;
  long long v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[at + i];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// The 1-based month named at `at`, or 0.
int month_at(std::string_view s, std::size_t at) {
  for (int m = 0; m < 12; ++m) {
    if (s.substr(at < s.size() ? at : s.size(), 3) == kMonths[m]) return m + 1;
  }
  return 0;
}

bool is_one_of(std::string_view s, const char* const (&names)[7]) {
  for (const char* n : names) {
    if (s == n) return true;
  }
  return false;
}

// The broken-down UTC time of `t` seconds, or nullopt where mbedtls_time_t (time_t, 32
// bits on armhf) cannot hold it.
std::optional<std::tm> utc(std::int64_t t) {
  const auto tt = static_cast<mbedtls_time_t>(t);
  if (static_cast<std::int64_t>(tt) != t) return std::nullopt;
  std::tm out{};
  if (mbedtls_platform_gmtime_r(&tt, &out) == nullptr) return std::nullopt;
  return out;
}

// Fields read back from an accepted date's text.
struct TextFields {
  long long year = -1;  // Four digits, or the two of RFC 850.
  int month = 0;
  long long day = -1;
  long long hour = -1;
  long long minute = -1;
  long long second = -1;
  bool two_digit_year = false;
};

// Reads the fields of an accepted date, by the positions its form fixes; the lengths must
// be the form's.
TextFields read_fields(std::string_view text) {
  TextFields f;
  if (text[3] == ',') {  // "Sun, 06 Nov 1994 08:49:37 GMT"
    require(text.size() == 29 && is_one_of(text.substr(0, 3), kShortDays));
    f.day = field(text, 5, 2);
    f.month = month_at(text, 8);
    f.year = field(text, 12, 4);
    f.hour = field(text, 17, 2);
    f.minute = field(text, 20, 2);
    f.second = field(text, 23, 2);
  } else if (text[3] == ' ') {  // "Sun Nov  6 08:49:37 1994"
    require(text.size() == 24 && is_one_of(text.substr(0, 3), kShortDays));
    f.month = month_at(text, 4);
    f.day = text[8] == ' ' ? field(text, 9, 1) : field(text, 8, 2);
    f.hour = field(text, 11, 2);
    f.minute = field(text, 14, 2);
    f.second = field(text, 17, 2);
    f.year = field(text, 20, 4);
  } else {  // "Sunday, 06-Nov-94 08:49:37 GMT"
    const std::size_t comma = text.find(',');
    require(comma != std::string_view::npos && is_one_of(text.substr(0, comma), kLongDays));
    require(text.size() == comma + 24);
    f.day = field(text, comma + 2, 2);
    f.month = month_at(text, comma + 5);
    f.year = field(text, comma + 9, 2);
    f.hour = field(text, comma + 12, 2);
    f.minute = field(text, comma + 15, 2);
    f.second = field(text, comma + 18, 2);
    f.two_digit_year = true;
  }
  require(f.year >= 0 && f.month >= 1 && f.day >= 1 && f.hour >= 0 && f.minute >= 0 &&
          f.second >= 0);
  return f;
}

void check_date(std::string_view text, Millis now, std::int64_t t) {
  const TextFields f = read_fields(text);
  // Only RFC 850's two-digit year depends on the clock.
  if (!f.two_digit_year) {
    require(parse_http_date(text, Millis(0)) == t);
    require(parse_http_date(text, Millis::max()) == t);
  }
  // A leap second is the next minute's second 0.
  const bool leap = f.second == 60;
  const std::int64_t plain = leap ? t - 1 : t;
  const std::optional<std::tm> tm = utc(plain);
  if (!tm) return;
  const long long year = tm->tm_year + 1900LL;
  require(tm->tm_mon + 1 == f.month && tm->tm_mday == f.day && tm->tm_hour == f.hour &&
          tm->tm_min == f.minute && tm->tm_sec == (leap ? 59 : f.second));
  if (f.two_digit_year) {
    require(year % 100 == f.year);
    const std::optional<std::tm> clock = utc(static_cast<std::int64_t>(now.count() / 1000));
    if (clock) {
      const long long now_year = clock->tm_year + 1900LL;
      require(year > now_year - 50 && year <= now_year + 50);
    }
  } else {
    require(year == f.year);
  }
  if (year < 0 || year > 9999) return;

  // Formatted back from the recomputed fields, with the true day name.
  char imf[128];
  std::snprintf(imf, sizeof imf, "%s, %02d %s %04lld %02d:%02d:%02d GMT", kShortDays[tm->tm_wday],
                tm->tm_mday, kMonths[tm->tm_mon], year, tm->tm_hour, tm->tm_min,
                leap ? 60 : tm->tm_sec);
  if (text[3] == ',') require(text.substr(3) == std::string_view(imf).substr(3));
  require(parse_http_date(imf, now) == t);
  char asc[128];
  std::snprintf(asc, sizeof asc, "%s %s %2d %02d:%02d:%02d %04lld", kShortDays[tm->tm_wday],
                kMonths[tm->tm_mon], tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, year);
  require(parse_http_date(asc, now) == plain);
  char rfc850[128];
  std::snprintf(rfc850, sizeof rfc850, "%s, %02d-%s-%02lld %02d:%02d:%02d GMT",
                kLongDays[tm->tm_wday], tm->tm_mday, kMonths[tm->tm_mon], year % 100, tm->tm_hour,
                tm->tm_min, tm->tm_sec);
  if (f.two_digit_year) require(parse_http_date(rfc850, now) == plain);
}

// a * b + c saturating at 2^64 - 1.
std::uint64_t saturating_mul_add(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t product = 0;
  std::uint64_t sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum)) {
    return ~std::uint64_t{0};
  }
  return sum;
}

// What RFC 9110 10.2.3 asks of a Retry-After value, computed apart from the library.
std::optional<Millis> expected_delay(std::string_view text, Millis now,
                                     std::optional<std::int64_t> date) {
  if (text.empty()) return std::nullopt;
  if (text.front() >= '0' && text.front() <= '9') {
    std::uint64_t seconds = 0;
    for (const char c : text) {
      if (c < '0' || c > '9') return std::nullopt;
      seconds = saturating_mul_add(seconds, 10, static_cast<std::uint64_t>(c - '0'));
    }
    return Millis(saturating_mul_add(seconds, 1000, 0));
  }
  if (!date) return std::nullopt;
  if (*date <= 0) return Millis(0);
  const std::uint64_t at = saturating_mul_add(static_cast<std::uint64_t>(*date), 1000, 0);
  return Millis(at > now.count() ? at - now.count() : 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kClock = 8;
  if (size < kClock) return 0;
  std::uint64_t clock = 0;
  for (std::size_t i = 0; i < kClock; ++i) clock |= std::uint64_t{data[i]} << (8 * i);
  if ((clock >> 63) == 0) clock &= (std::uint64_t{1} << 48) - 1;
  const Millis now(clock);
  const std::string_view text(reinterpret_cast<const char*>(data + kClock), size - kClock);

  const std::optional<std::int64_t> date = parse_http_date(text, now);
  if (date) check_date(text, now, *date);

  const std::optional<Millis> delay = parse_retry_after(text, now);
  require(delay == expected_delay(text, now, date));
  // Whitespace around the value is refused, never trimmed.
  const std::string padded = " " + std::string(text);
  require(!parse_retry_after(padded, now));
  require(!parse_retry_after(std::string(text) + "\t", now));
  return 0;
}
