// Calendar arithmetic, HTTP-date parsing and Retry-After interpretation (RFC 9110 5.6.7,
// 10.2.3), without allocation or the C library's time functions.
#ifndef STEPBACK_HTTPS_HTTP_HTTP_DATE_HPP_
#define STEPBACK_HTTPS_HTTP_HTTP_DATE_HPP_

#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/core/millis.hpp"

namespace stepback::https {

// Days from 1970-01-01 to the proleptic Gregorian date `year`-`month`-`day` (negative
// before it); needs month in 1..12 and day in 1..31 (Howard Hinnant's days_from_civil).
constexpr std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) {
  year -= month <= 2 ? 1 : 0;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto yoe = static_cast<std::uint64_t>(year - era * 400);    // [0, 399]
  const std::uint64_t mp = month > 2 ? month - 3 : month + 9;       // March = 0
  const std::uint64_t doy = (153 * mp + 2) / 5 + day - 1;           // [0, 365]
  const std::uint64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;  // [0, 146096]
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The Gregorian year containing day `days` counted from 1970-01-01 (inverse of the above).
constexpr std::int64_t year_from_days(std::int64_t days) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<std::uint64_t>(days - era * 146097);                 // [0, 146096]
  const std::uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const std::uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const std::uint64_t mp = (5 * doy + 2) / 153;                                     // March = 0
  return static_cast<std::int64_t>(yoe) + era * 400 + (mp >= 10 ? 1 : 0);
}

// Whether `year` is a Gregorian leap year.
constexpr bool is_leap_year(std::int64_t year) {
  return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

// Parses an HTTP-date in IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), RFC 850
// ("Sunday, 06-Nov-94 08:49:37 GMT") or asctime ("Sun Nov  6 08:49:37 1994") form into
// seconds since the Unix epoch. Matching is exact and case-sensitive, fields are range
// checked (the day against the month and leap years; second 60 is accepted as a leap
// second), and the day name must be a real one but need not match the date (RFC 9110 does
// not ask recipients to check it, and the date fields carry the meaning). A two-digit RFC
// 850 year is placed within 50 years of `wall_now` (Millis since the Unix epoch), as RFC
// 9110 5.6.7 requires. nullopt for anything else.
std::optional<std::int64_t> parse_http_date(std::string_view text, Millis wall_now);

// The delay a Retry-After value asks for, given the wall-clock `wall_now` (Millis since
// the Unix epoch): delay-seconds (ASCII digits only; huge values saturate at
// Millis::max()) or an HTTP-date (a date at or before now means zero). nullopt for
// anything else, surrounding whitespace included (the parser strips it from fields), so
// garbage is ignored rather than trusted.
std::optional<Millis> parse_retry_after(std::string_view value, Millis wall_now);

// The same, with an HTTP-date read against `date`, the same response's Date field, when it
// is a valid HTTP-date after the epoch: the delay is then Retry-After - Date, both the
// server's clock, so a device clock that is wrong (not yet set after a boot, or far off)
// neither shortens nor stretches it. Without a usable Date, against `wall_now` as above.
std::optional<Millis> parse_retry_after(std::string_view value,
                                        std::optional<std::string_view> date, Millis wall_now);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_HTTP_DATE_HPP_
