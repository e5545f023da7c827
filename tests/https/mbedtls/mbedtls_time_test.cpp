// The heap-free mbedtls_platform_gmtime_r (https/mbedtls/mbedtls_time.cpp), which mbedTLS uses to
// check certificate validity, against glibc's gmtime_r: every day from 1900 to 2200 at a
// varying second, the edges of each day, and times before 1970.
#include <gtest/gtest.h>

#include <cstdint>
#include <ctime>

#include <mbedtls/platform_time.h>

extern "C" struct tm* mbedtls_platform_gmtime_r(const mbedtls_time_t* tt, struct tm* tm_buf);

namespace {

// The fields mbedTLS reads (x509.c: year, month, day, hour, minute, second) and the weekday.
void expect_same(std::int64_t t) {
  const auto tt = static_cast<mbedtls_time_t>(t);
  const auto ct = static_cast<std::time_t>(t);
  struct tm ours {};
  struct tm theirs {};
  ASSERT_NE(mbedtls_platform_gmtime_r(&tt, &ours), nullptr) << t;
  ASSERT_NE(gmtime_r(&ct, &theirs), nullptr) << t;
  EXPECT_EQ(ours.tm_year, theirs.tm_year) << t;
  EXPECT_EQ(ours.tm_mon, theirs.tm_mon) << t;
  EXPECT_EQ(ours.tm_mday, theirs.tm_mday) << t;
  EXPECT_EQ(ours.tm_hour, theirs.tm_hour) << t;
  EXPECT_EQ(ours.tm_min, theirs.tm_min) << t;
  EXPECT_EQ(ours.tm_sec, theirs.tm_sec) << t;
  EXPECT_EQ(ours.tm_wday, theirs.tm_wday) << t;
}

// Every day from 1900 to 2200, or of the part of it a 32-bit time_t holds (1901-12-14 to
// 2038-01-19, as on armhf), where glibc's gmtime_r is the reference.
TEST(MbedtlsGmtime, AgreesWithGlibcOnEveryDayFrom1900To2200) {
  constexpr std::int64_t kFrom = -2208988800;  // 1900-01-01T00:00:00Z
  constexpr std::int64_t kTo = 7258118400;     // 2200-01-01T00:00:00Z
  const bool narrow = sizeof(std::time_t) < 8;
  const std::int64_t from = narrow ? std::int64_t{INT32_MIN} : kFrom;
  const std::int64_t to = narrow ? std::int64_t{INT32_MAX} - 86399 : kTo;
  std::int64_t second = 0;
  int days = 0;
  for (std::int64_t day = from; day < to; day += 86400, ++days) {
    expect_same(day);
    expect_same(day + 86399);
    second = (second * 7919 + 104729) % 86400;
    expect_same(day + second);
    if (HasFailure()) return;  // One day's report is enough.
  }
  EXPECT_GT(days, narrow ? 49000 : 109000);
}

TEST(MbedtlsGmtime, AgreesAroundTheEpochAndLeapDays) {
  for (const std::int64_t t :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, std::int64_t{951782400},  // 2000-02-29
        std::int64_t{951868799},   // 2000-02-29T23:59:59Z
        std::int64_t{4107456000},  // 2100-02-28 (2100 is no leap year)
        std::int64_t{4107542400},  // 2100-03-01
        std::int64_t{2147483647}, std::int64_t{2147483648}}) {
    if (sizeof(std::time_t) < 8 && (t > INT32_MAX || t < INT32_MIN)) continue;
    expect_same(t);
  }
}

TEST(MbedtlsGmtime, RefusesNullArguments) {
  const mbedtls_time_t t = 0;
  struct tm out {};
  EXPECT_EQ(mbedtls_platform_gmtime_r(nullptr, &out), nullptr);
  EXPECT_EQ(mbedtls_platform_gmtime_r(&t, nullptr), nullptr);
}

}  // namespace
