// mbedtls_platform_gmtime_r for MBEDTLS_PLATFORM_GMTIME_R_ALT (set in the project's mbedTLS
// configuration): UTC by arithmetic. glibc's gmtime_r loads time-zone data on first use, and
// allocates doing so, so the first certificate check of a process would touch the system
// heap; embedded libcs may have no gmtime_r at all.
#include <mbedtls/platform_time.h>
#include <mbedtls/platform_util.h>

#include <cstdint>
#include <ctime>

namespace {

// Howard Hinnant's civil_from_days: the proleptic Gregorian date of a day count from 1970-01-01.
void civil_from_days(std::int64_t days, std::int64_t* year, unsigned* month, unsigned* day) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<std::uint64_t>(days - era * 146097);
  const std::uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::uint64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  *year = static_cast<std::int64_t>(yoe) + era * 400 + (*month <= 2 ? 1 : 0);
}

}  // namespace

extern "C" struct tm* mbedtls_platform_gmtime_r(const mbedtls_time_t* tt, struct tm* tm_buf) {
  if (tt == nullptr || tm_buf == nullptr) return nullptr;
  const auto t = static_cast<std::int64_t>(*tt);
  std::int64_t days = t / 86400;
  std::int64_t secs = t % 86400;
  if (secs < 0) {
    secs += 86400;
    --days;
  }
  std::int64_t year = 0;
  unsigned month = 0;
  unsigned day = 0;
  civil_from_days(days, &year, &month, &day);
  if (year - 1900 < INT32_MIN || year - 1900 > INT32_MAX) return nullptr;
  *tm_buf = tm{};
  tm_buf->tm_year = static_cast<int>(year - 1900);
  tm_buf->tm_mon = static_cast<int>(month) - 1;
  tm_buf->tm_mday = static_cast<int>(day);
  tm_buf->tm_hour = static_cast<int>(secs / 3600);
  tm_buf->tm_min = static_cast<int>(secs / 60 % 60);
  tm_buf->tm_sec = static_cast<int>(secs % 60);
  tm_buf->tm_wday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday.
  return tm_buf;
}
