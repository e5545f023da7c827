// Duration conversion and parsing, type URL matching and Content-Type dispatch.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "stepback/https/http/retry_info.hpp"

namespace stepback::https {
namespace {

ConstBytes bytes_of(std::string_view s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Milliseconds of a result, so failures print as numbers.
std::optional<std::uint64_t> ms(std::optional<Millis> m) {
  if (!m) return std::nullopt;
  return m->count();
}

std::optional<std::uint64_t> parse(std::string_view s) {
  return ms(parse_duration_string(bytes_of(s)));
}

constexpr std::optional<std::uint64_t> kNone = std::nullopt;

TEST(RetryInfoDuration, ConvertsWholeSecondsAndRoundsNanosUp) {
  EXPECT_EQ(ms(millis_from_duration(30, 0)), 30000U);
  EXPECT_EQ(ms(millis_from_duration(0, 0)), 0U);
  EXPECT_EQ(ms(millis_from_duration(0, 1)), 1U);
  EXPECT_EQ(ms(millis_from_duration(0, 999'999)), 1U);
  EXPECT_EQ(ms(millis_from_duration(0, 1'000'000)), 1U);
  EXPECT_EQ(ms(millis_from_duration(0, 1'000'001)), 2U);
  EXPECT_EQ(ms(millis_from_duration(1, 500'000'000)), 1500U);
  EXPECT_EQ(ms(millis_from_duration(30, 1)), 30001U);
  EXPECT_EQ(ms(millis_from_duration(0, 999'999'999)), 1000U);
}

TEST(RetryInfoDuration, RejectsNegativeAndOutOfRange) {
  EXPECT_EQ(ms(millis_from_duration(-1, 0)), kNone);
  EXPECT_EQ(ms(millis_from_duration(0, -1)), kNone);
  EXPECT_EQ(ms(millis_from_duration(-5, -500)), kNone);
  EXPECT_EQ(ms(millis_from_duration(0, 1'000'000'000)), kNone);
  EXPECT_EQ(ms(millis_from_duration(0, std::numeric_limits<std::int32_t>::max())), kNone);
  EXPECT_EQ(ms(millis_from_duration(kMaxDurationSeconds + 1, 0)), kNone);
  EXPECT_EQ(ms(millis_from_duration(std::numeric_limits<std::int64_t>::max(), 0)), kNone);
  EXPECT_EQ(ms(millis_from_duration(std::numeric_limits<std::int64_t>::min(), 0)), kNone);
}

TEST(RetryInfoDuration, LargestValidDurationIsExact) {
  // 10,000 years: far beyond any policy's max_server_delay, which then rejects it.
  EXPECT_EQ(ms(millis_from_duration(kMaxDurationSeconds, 999'999'999)),
            315'576'000'000'000U + 1000U);
}

TEST(RetryInfoDuration, ParsesTheJsonForm) {
  EXPECT_EQ(parse("30s"), 30000U);
  EXPECT_EQ(parse("0s"), 0U);
  EXPECT_EQ(parse("1.5s"), 1500U);
  EXPECT_EQ(parse("1.000s"), 1000U);
  EXPECT_EQ(parse("0.001s"), 1U);
  EXPECT_EQ(parse("0.000001s"), 1U);
  EXPECT_EQ(parse("0.000000001s"), 1U);
  EXPECT_EQ(parse("0.0010001s"), 2U);
  EXPECT_EQ(parse("2.999999999s"), 3000U);
  EXPECT_EQ(parse("007s"), 7000U);
  EXPECT_EQ(parse("315576000000s"), 315'576'000'000'000U);
  EXPECT_EQ(parse("315576000000.999999999s"), 315'576'000'001'000U);
}

TEST(RetryInfoDuration, RejectsMalformedNegativeAndOutOfRangeStrings) {
  for (std::string_view bad : {"",
                               "s",
                               "30",
                               "30 s",
                               " 30s",
                               "30s ",
                               "30S",
                               "30ms",
                               "+30s",
                               "-1s",
                               "-0s",
                               "-0.5s",
                               "1.s",
                               ".5s",
                               "1..5s",
                               "1.5.5s",
                               "1,5s",
                               "1e3s",
                               "0x10s",
                               "1.1234567891s",
                               "30ss",
                               "315576000001s",
                               "99999999999999999999999999999999s",
                               "１s"}) {
    EXPECT_EQ(parse(bad), kNone) << "'" << bad << "'";
  }
  EXPECT_EQ(parse(std::string_view("3\0s", 3)), kNone);
  EXPECT_EQ(ms(parse_duration_string(ConstBytes{})), kNone);
}

TEST(RetryInfoDuration, MatchesRetryInfoTypeUrlsByLastSegment) {
  EXPECT_TRUE(is_retry_info_type_url(bytes_of("type.googleapis.com/google.rpc.RetryInfo")));
  EXPECT_TRUE(is_retry_info_type_url(bytes_of("example.com/types/google.rpc.RetryInfo")));
  EXPECT_TRUE(is_retry_info_type_url(bytes_of("/google.rpc.RetryInfo")));
  EXPECT_FALSE(is_retry_info_type_url(bytes_of("google.rpc.RetryInfo")));
  EXPECT_FALSE(is_retry_info_type_url(bytes_of("type.googleapis.com/google.rpc.RetryInfoX")));
  EXPECT_FALSE(is_retry_info_type_url(bytes_of("type.googleapis.com/xgoogle.rpc.RetryInfo")));
  EXPECT_FALSE(is_retry_info_type_url(bytes_of("type.googleapis.com/google.rpc.retryinfo")));
  EXPECT_FALSE(is_retry_info_type_url(bytes_of("type.googleapis.com/google.rpc.ErrorInfo")));
  EXPECT_FALSE(is_retry_info_type_url(bytes_of("")));
  EXPECT_FALSE(is_retry_info_type_url(ConstBytes{}));
}

TEST(RetryInfoDuration, ReadsTheFormatFromContentType) {
  EXPECT_EQ(error_body_format(bytes_of("application/x-protobuf")), ErrorBodyFormat::kProtobuf);
  EXPECT_EQ(error_body_format(bytes_of("application/protobuf")), ErrorBodyFormat::kProtobuf);
  EXPECT_EQ(error_body_format(bytes_of("Application/X-Protobuf; proto=google.rpc.Status")),
            ErrorBodyFormat::kProtobuf);
  EXPECT_EQ(error_body_format(bytes_of("application/json")), ErrorBodyFormat::kJson);
  EXPECT_EQ(error_body_format(bytes_of("application/json; charset=UTF-8")), ErrorBodyFormat::kJson);
  EXPECT_EQ(error_body_format(bytes_of(" \tAPPLICATION/JSON ;charset=utf-8")),
            ErrorBodyFormat::kJson);
  for (std::string_view other :
       {"", "text/html", "application/jsonx", "application/jso", "application/json-seq", "json",
        "application/x-protobuffer", "text/json", "application/grpc"}) {
    EXPECT_EQ(error_body_format(bytes_of(other)), ErrorBodyFormat::kUnknown) << other;
  }
  EXPECT_EQ(error_body_format(ConstBytes{}), ErrorBodyFormat::kUnknown);
}

TEST(RetryInfoDuration, DispatchesOnContentType) {
  constexpr std::string_view kJson =
      R"({"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}})";
  // Status{details: [Any{RetryInfo{retry_delay: 3s}}]}
  constexpr std::string_view kProto =
      "\x1a\x30\x0a\x28type.googleapis.com/google.rpc.RetryInfo\x12\x04\x0a\x02\x08\x03";
  EXPECT_EQ(ms(retry_delay_from_error_body(bytes_of("application/json"), bytes_of(kJson))), 2000U);
  EXPECT_EQ(ms(retry_delay_from_error_body(bytes_of("application/x-protobuf"), bytes_of(kProto))),
            3000U);
  EXPECT_EQ(ms(retry_delay_from_error_body(bytes_of("application/x-protobuf"), bytes_of(kJson))),
            kNone);
  EXPECT_EQ(ms(retry_delay_from_error_body(bytes_of("application/json"), bytes_of(kProto))), kNone);
  EXPECT_EQ(ms(retry_delay_from_error_body(bytes_of("text/plain"), bytes_of(kJson))), kNone);
}

}  // namespace
}  // namespace stepback::https
