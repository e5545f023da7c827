#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "stepback/https/http/http_date.hpp"
#include "tests/support/case_label.hpp"

namespace stepback::https {
namespace {

// 2025-06-15 12:00:00 UTC, a Sunday.
constexpr std::int64_t kNowSeconds = 1749988800;
constexpr Millis kNow(static_cast<std::uint64_t>(kNowSeconds) * 1000);
constexpr std::int64_t kRfcExample = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT.

static_assert(days_from_civil(1970, 1, 1) == 0);
static_assert(days_from_civil(1969, 12, 31) == -1);
static_assert(days_from_civil(2000, 3, 1) == 11017);
static_assert(days_from_civil(2024, 2, 29) == 19782);
static_assert(days_from_civil(2025, 6, 15) * 86400 + 43200 == kNowSeconds);
static_assert(year_from_days(0) == 1970 && year_from_days(-1) == 1969);
static_assert(is_leap_year(2000) && is_leap_year(2024) && !is_leap_year(1900) &&
              !is_leap_year(2023));

TEST(Http1Date, CivilRoundTripsOverFourCenturies) {
  std::int64_t days = days_from_civil(1800, 1, 1);
  for (std::int64_t year = 1800; year < 2200; ++year) {
    for (unsigned month = 1; month <= 12; ++month) {
      ASSERT_EQ(days_from_civil(year, month, 1), days) << year << "-" << month;
      ASSERT_EQ(year_from_days(days), year);
      constexpr unsigned kLengths[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      days += kLengths[month - 1] + (month == 2 && is_leap_year(year) ? 1 : 0);
      ASSERT_EQ(year_from_days(days - 1), year);
    }
  }
}

struct DateCase {
  const char* text;
  std::optional<std::int64_t> unix_seconds;
};

void PrintTo(const DateCase& c, std::ostream* os) { *os << testing::case_label(c.text); }

class Http1DateTable : public ::testing::TestWithParam<DateCase> {};

TEST_P(Http1DateTable, Parses) {
  const DateCase& c = GetParam();
  EXPECT_EQ(parse_http_date(c.text, kNow), c.unix_seconds) << '"' << c.text << '"';
}

constexpr std::optional<std::int64_t> kBad = std::nullopt;

INSTANTIATE_TEST_SUITE_P(
    Formats, Http1DateTable,
    ::testing::Values(
        DateCase{"Sun, 06 Nov 1994 08:49:37 GMT", kRfcExample},
        DateCase{"Sunday, 06-Nov-94 08:49:37 GMT", kRfcExample},
        DateCase{"Sun Nov  6 08:49:37 1994", kRfcExample},
        DateCase{"Sun Nov 06 08:49:37 1994", kRfcExample},
        DateCase{"Thu, 01 Jan 1970 00:00:00 GMT", 0},
        DateCase{"Fri, 31 Dec 9999 23:59:59 GMT", 253402300799},
        // Leap days and range checks.
        DateCase{"Thu, 29 Feb 2024 00:00:00 GMT", 19782 * 86400},
        DateCase{"Tue, 29 Feb 2000 12:00:00 GMT", 11016 * 86400 + 43200},
        DateCase{"Wed, 29 Feb 2023 00:00:00 GMT", kBad},
        DateCase{"Thu, 29 Feb 1900 00:00:00 GMT", kBad},
        DateCase{"Thu Feb 29 00:00:00 2024", 19782 * 86400},
        DateCase{"Thursday, 29-Feb-24 00:00:00 GMT", 19782 * 86400},
        DateCase{"Wednesday, 29-Feb-23 00:00:00 GMT", kBad},
        DateCase{"Sun, 00 Nov 1994 08:49:37 GMT", kBad},
        DateCase{"Sun, 32 Dec 1994 08:49:37 GMT", kBad},
        DateCase{"Sun, 31 Apr 1994 08:49:37 GMT", kBad},
        DateCase{"Sun, 30 Apr 1994 08:49:37 GMT", days_from_civil(1994, 4, 30) * 86400 + 31777},
        DateCase{"Sun, 06 Nov 1994 24:00:00 GMT", kBad},
        DateCase{"Sun, 06 Nov 1994 23:60:00 GMT", kBad},
        DateCase{"Sun, 06 Nov 1994 23:59:61 GMT", kBad},
        DateCase{"Sun, 06 Nov 1994 08:49:60 GMT", kRfcExample + 23},  // Leap second.
        // Day names: must be real, need not match the date (documented choice).
        DateCase{"Mon, 06 Nov 1994 08:49:37 GMT", kRfcExample},
        DateCase{"Monday, 06-Nov-94 08:49:37 GMT", kRfcExample},
        DateCase{"Xyz, 06 Nov 1994 08:49:37 GMT", kBad},
        DateCase{"Sunday, 06 Nov 1994 08:49:37 GMT", kBad},
        DateCase{"Sun, 06-Nov-94 08:49:37 GMT", kBad},
        DateCase{"Sundae, 06-Nov-94 08:49:37 GMT", kBad},
        // Exact syntax: case, zone, padding, separators, trailing bytes.
        DateCase{"sun, 06 nov 1994 08:49:37 gmt", kBad},
        DateCase{"Sun, 06 Nov 1994 08:49:37 UTC", kBad},
        DateCase{"Sun, 06 Nov 1994 08:49:37 GMT ", kBad},
        DateCase{" Sun, 06 Nov 1994 08:49:37 GMT", kBad},
        DateCase{"Sun, 6 Nov 1994 08:49:37 GMT", kBad},
        DateCase{"Sun, 06 Nov 94 08:49:37 GMT", kBad},
        DateCase{"Sun, 06 Nov 1994 8:49:37 GMT", kBad},
        DateCase{"Sun, 06 Nov 1994 08-49-37 GMT", kBad},
        DateCase{"Sun, 06 Foo 1994 08:49:37 GMT", kBad}, DateCase{"Sun Nov 6 08:49:37 1994", kBad},
        DateCase{"Sun Nov  6 08:49:37 94", kBad}, DateCase{"Sun Nov  6 08:49:37 1994 GMT", kBad},
        DateCase{"Sun, 06 Nov 1994 08:49:37", kBad}, DateCase{"Sun,", kBad}, DateCase{"", kBad}));

// RFC 9110 5.6.7: a two-digit year more than 50 years ahead is in the previous century.
TEST(Http1Date, Rfc850TwoDigitYearIsWithinFiftyYearsOfNow) {
  auto year_of = [](const char* text, Millis now) {
    const std::optional<std::int64_t> t = parse_http_date(text, now);
    return t ? year_from_days(*t / 86400) : -1;
  };
  EXPECT_EQ(year_of("Tuesday, 01-Jan-30 00:00:00 GMT", kNow), 2030);
  EXPECT_EQ(year_of("Tuesday, 01-Jan-75 00:00:00 GMT", kNow), 2075);  // Exactly 50 ahead.
  EXPECT_EQ(year_of("Tuesday, 01-Jan-76 00:00:00 GMT", kNow), 1976);
  EXPECT_EQ(year_of("Tuesday, 01-Jan-99 00:00:00 GMT", kNow), 1999);
  EXPECT_EQ(year_of("Tuesday, 01-Jan-00 00:00:00 GMT", kNow), 2000);
  const Millis late_2099(static_cast<std::uint64_t>(days_from_civil(2099, 7, 1)) * 86400 * 1000);
  EXPECT_EQ(year_of("Friday, 01-Jan-00 00:00:00 GMT", late_2099), 2100);
  EXPECT_EQ(year_of("Friday, 01-Jan-49 00:00:00 GMT", late_2099), 2149);
  EXPECT_EQ(year_of("Friday, 01-Jan-50 00:00:00 GMT", late_2099), 2050);
  EXPECT_EQ(year_of("Friday, 01-Jan-70 00:00:00 GMT", Millis(0)), 1970);
  EXPECT_EQ(year_of("Friday, 01-Jan-20 00:00:00 GMT", Millis(0)), 2020);
  EXPECT_EQ(year_of("Friday, 01-Jan-21 00:00:00 GMT", Millis(0)), 1921);
}

// A date past Millis::max() saturates there: the delay is the rest of the clock's range, never
// a wrapped multiplication's small value (found by tests/fuzz/retry_after_fuzz.cpp).
TEST(Http1Date, RetryAfterDatePastMillisRangeSaturates) {
  // About 31 years before Millis::max() (year 584555987); "27" expands to 40 years ahead.
  const Millis now(0xFFFFFF172B5AEFFFu);
  const std::optional<std::int64_t> date = parse_http_date("Friday, 01-Jan-27 00:00:00 GMT", now);
  ASSERT_TRUE(date.has_value());
  ASSERT_GT(*date, static_cast<std::int64_t>(Millis::max().count() / 1000));
  const std::optional<Millis> delay = parse_retry_after("Friday, 01-Jan-27 00:00:00 GMT", now);
  ASSERT_TRUE(delay.has_value());
  EXPECT_EQ(delay->count(), (Millis::max() - now).count());
}

// Retry-After - Date: the response's own clock, whatever the device's says (1970 because it was
// never set, or ten years ahead); a Date that is not a valid HTTP-date leaves the wall clock.
TEST(Http1Date, RetryAfterDateIsMeasuredAgainstTheResponsesDate) {
  constexpr std::string_view kDate = "Sun, 06 Nov 1994 08:49:37 GMT";
  constexpr std::string_view kLater = "Sun, 06 Nov 1994 08:51:07 GMT";  // 90 s later.
  const Millis ten_years_ahead = kNow + Millis::seconds(10ULL * 365 * 86400);
  for (const Millis wall : {Millis(0), kNow, ten_years_ahead}) {
    EXPECT_EQ(parse_retry_after(kLater, kDate, wall), Millis(90000)) << wall.count();
    EXPECT_EQ(parse_retry_after(kDate, kLater, wall), Millis(0)) << "a date before Date";
    EXPECT_EQ(parse_retry_after("7", kDate, wall), Millis(7000)) << "delay-seconds as they are";
    EXPECT_EQ(parse_retry_after("soon", kDate, wall), std::nullopt);
  }
  // No Date, or one that does not parse: the wall clock.
  const Millis before(static_cast<std::uint64_t>(kRfcExample - 30) * 1000);
  EXPECT_EQ(parse_retry_after(kDate, std::nullopt, before), Millis(30000));
  EXPECT_EQ(parse_retry_after(kDate, std::string_view("yesterday"), before), Millis(30000));
  EXPECT_EQ(parse_retry_after(kDate, std::string_view("Thu, 01 Jan 1970 00:00:00 GMT"), before),
            Millis(30000));
}

struct RetryAfterCase {
  const char* value;
  std::optional<Millis> delay;
};

void PrintTo(const RetryAfterCase& c, std::ostream* os) { *os << testing::case_label(c.value); }

class Http1RetryAfterTable : public ::testing::TestWithParam<RetryAfterCase> {};

TEST_P(Http1RetryAfterTable, Interprets) {
  const RetryAfterCase& c = GetParam();
  const std::optional<Millis> got = parse_retry_after(c.value, kNow);
  ASSERT_EQ(got.has_value(), c.delay.has_value()) << '"' << c.value << '"';
  if (got) {
    EXPECT_EQ(got->count(), c.delay->count()) << '"' << c.value << '"';
  }
}

constexpr std::optional<Millis> kIgnored = std::nullopt;

// The delay from kNow until `unix_seconds` (which must be later).
constexpr Millis ms_after_now(std::int64_t unix_seconds) {
  return Millis(static_cast<std::uint64_t>(unix_seconds - kNowSeconds) * 1000);
}

INSTANTIATE_TEST_SUITE_P(
    Values, Http1RetryAfterTable,
    ::testing::Values(RetryAfterCase{"0", Millis(0)}, RetryAfterCase{"1", Millis(1000)},
                      RetryAfterCase{"120", Millis(120000)}, RetryAfterCase{"00012", Millis(12000)},
                      RetryAfterCase{"18446744073709551", Millis(18446744073709551000U)},
                      RetryAfterCase{"18446744073709552", Millis::max()},
                      RetryAfterCase{"18446744073709551616", Millis::max()},
                      RetryAfterCase{"999999999999999999999999999999999999", Millis::max()},
                      // HTTP-dates relative to now (Sun, 15 Jun 2025 12:00:00 GMT).
                      RetryAfterCase{"Sun, 15 Jun 2025 12:00:30 GMT", Millis(30000)},
                      RetryAfterCase{"Sunday, 15-Jun-25 12:01:00 GMT", Millis(60000)},
                      RetryAfterCase{"Sun Jun 15 13:00:00 2025", Millis(3600000)},
                      RetryAfterCase{"Sun, 15 Jun 2025 12:00:00 GMT", Millis(0)},
                      RetryAfterCase{"Sun, 15 Jun 2025 11:59:59 GMT", Millis(0)},
                      RetryAfterCase{"Sun, 06 Nov 1994 08:49:37 GMT", Millis(0)},
                      RetryAfterCase{"Thu, 01 Jan 1970 00:00:00 GMT", Millis(0)},
                      RetryAfterCase{"Mon, 01 Jan 1900 00:00:00 GMT", Millis(0)},
                      RetryAfterCase{"Fri, 31 Dec 9999 23:59:59 GMT", ms_after_now(253402300799)},
                      RetryAfterCase{"Tue, 29 Feb 2028 00:00:00 GMT",
                                     ms_after_now(days_from_civil(2028, 2, 29) * 86400)},
                      // 2028-02-29 is a Tuesday, but day names are not checked against the date.
                      RetryAfterCase{"Sat, 29 Feb 2028 00:00:00 GMT",
                                     ms_after_now(days_from_civil(2028, 2, 29) * 86400)},
                      RetryAfterCase{"Sun, 29 Feb 2027 00:00:00 GMT",
                                     kIgnored},  // No leap day in 2027.
                      // Garbage is ignored, never trusted.
                      RetryAfterCase{"", kIgnored}, RetryAfterCase{"abc", kIgnored},
                      RetryAfterCase{"-5", kIgnored}, RetryAfterCase{"+5", kIgnored},
                      RetryAfterCase{"1.5", kIgnored}, RetryAfterCase{"12 ", kIgnored},
                      RetryAfterCase{" 12", kIgnored}, RetryAfterCase{"1e3", kIgnored},
                      RetryAfterCase{"0x10", kIgnored}, RetryAfterCase{"12s", kIgnored},
                      RetryAfterCase{"Xyz, 15 Jun 2025 12:00:30 GMT", kIgnored},
                      RetryAfterCase{"Sun, 15 Jun 2025 12:00:30", kIgnored}));

}  // namespace
}  // namespace stepback::https
