// google.rpc.RetryInfo from JSON error bodies.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "stepback/https/http/retry_info.hpp"

namespace stepback::https {
namespace {

constexpr std::optional<std::uint64_t> kNone = std::nullopt;

// Reads from an exact-size heap copy, so a sanitizer sees any read past the end.
std::optional<std::uint64_t> read(std::string_view body) {
  auto copy = std::make_unique<std::uint8_t[]>(body.empty() ? 1 : body.size());
  std::copy(body.begin(), body.end(), copy.get());
  const std::optional<Millis> m = retry_delay_from_status_json(ConstBytes{copy.get(), body.size()});
  if (!m) return std::nullopt;
  return m->count();
}

// The shape Google APIs send with a 429 (here the Gemini API's, pretty-printed as served).
constexpr std::string_view kQuotaBody = R"({
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "quotaDimensions": {
              "location": "global",
              "model": "gemini-2.0-flash"
            },
            "quotaValue": "15"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [
          {
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "43s"
      }
    ]
  }
}
)";

std::string detail(std::string_view type, std::string_view delay) {
  return std::string(R"({"@type":")") + std::string(type) + R"(","retryDelay":")" +
         std::string(delay) + R"("})";
}
std::string error_with(std::string_view details) {
  return std::string(
             R"({"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED","details":[)") +
         std::string(details) + "]}}";
}
constexpr std::string_view kUrl = "type.googleapis.com/google.rpc.RetryInfo";

TEST(RetryInfoJson, ReadsARealWorldBody) { EXPECT_EQ(read(kQuotaBody), 43000U); }

TEST(RetryInfoJson, WhitespaceDoesNotMatter) {
  EXPECT_EQ(read(error_with(detail(kUrl, "30s"))), 30000U);
  EXPECT_EQ(read("\r\n\t {\r\n\"error\"\t:\r\n{ \"details\" : [ { \"@type\" : "
                 "\"type.googleapis.com/google.rpc.RetryInfo\" ,\n\"retryDelay\"\t:\t\"2s\" } ] "
                 "} }\r\n\t "),
            2000U);
  EXPECT_EQ(read("\xEF\xBB\xBF" + error_with(detail(kUrl, "1s"))), 1000U);  // Byte order mark.
}

TEST(RetryInfoJson, KeysAndValuesAreComparedAfterUnescaping) {
  EXPECT_EQ(
      read(
          R"({"details":[{"\u0040type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"5s"}]})"),
      5000U);
  EXPECT_EQ(
      read(
          R"({"details":[{"@type":"type.googleapis.com\/google.rpc.RetryInfo","retry\u0044elay":"5s"}]})"),
      5000U);
  EXPECT_EQ(
      read(
          R"({"details":[{"@\u0074\u0079\u0070\u0065":"type.googleapis.com\u002Fgoogle\u002erpc.RetryInfo","retryDelay":"\u0035.5\u0073"}]})"),
      5500U);
  // Escapes that decode to something else do not match.
  EXPECT_EQ(
      read(
          R"({"details":[{"\u0041type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"5s"}]})"),
      kNone);
  EXPECT_EQ(
      read(
          R"({"details":[{"@type":"type.googleapis.com/google.rpc.RetryInf\u00f6","retryDelay":"5s"}]})"),
      kNone);
}

TEST(RetryInfoJson, TheDetailMaySitAnywhere) {
  EXPECT_EQ(read(std::string(R"({"details":[)") + detail(kUrl, "3s") + "]}"), 3000U);
  EXPECT_EQ(read("[" + error_with(detail(kUrl, "4s")) + "]"), 4000U);
  EXPECT_EQ(read(detail(kUrl, "6s")), 6000U);
  EXPECT_EQ(read(std::string(R"({"a":{"b":[[)") + detail(kUrl, "7s") + "]]}}"), 7000U);
  // Keys in any order, with other keys around.
  EXPECT_EQ(
      read(
          R"({"details":[{"retryDelay":"8s","x":[1,{"y":null}],"@type":"type.googleapis.com/google.rpc.RetryInfo","z":true}]})"),
      8000U);
}

TEST(RetryInfoJson, OtherDetailsAndMissingFieldsGiveNoDelay) {
  EXPECT_EQ(read(error_with(detail("type.googleapis.com/google.rpc.ErrorInfo", "30s"))), kNone);
  EXPECT_EQ(read(error_with(R"({"@type":"type.googleapis.com/google.rpc.RetryInfo"})")), kNone);
  EXPECT_EQ(read(error_with(R"({"retryDelay":"30s"})")), kNone);
  EXPECT_EQ(read(R"({"error":{"code":503,"message":"unavailable"}})"), kNone);
  EXPECT_EQ(read("{}"), kNone);
  EXPECT_EQ(read("true"), kNone);
  EXPECT_EQ(read(R"("type.googleapis.com/google.rpc.RetryInfo")"), kNone);
  // "@type" and "retryDelay" in different objects do not combine.
  EXPECT_EQ(
      read(R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","inner":{"retryDelay":"3s"}})"),
      kNone);
}

TEST(RetryInfoJson, RetryDelayMustBeAValidDurationString) {
  EXPECT_EQ(read(error_with(detail(kUrl, "1.5s"))), 1500U);
  EXPECT_EQ(read(error_with(detail(kUrl, "0.000001s"))), 1U);
  EXPECT_EQ(read(error_with(detail(kUrl, "0s"))), 0U);
  EXPECT_EQ(read(error_with(detail(kUrl, "-1s"))), kNone);
  EXPECT_EQ(read(error_with(detail(kUrl, "30"))), kNone);
  EXPECT_EQ(read(error_with(detail(kUrl, "30 s"))), kNone);
  EXPECT_EQ(read(error_with(detail(kUrl, ""))), kNone);
  EXPECT_EQ(read(error_with(detail(kUrl, std::string(100, '1') + "s"))), kNone);
  EXPECT_EQ(read(error_with(detail(kUrl, "315576000001s"))), kNone);
  EXPECT_EQ(
      read(error_with(R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":30})")),
      kNone);
  EXPECT_EQ(
      read(error_with(
          R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":30}})")),
      kNone);
  EXPECT_EQ(
      read(error_with(R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":null})")),
      kNone);
}

TEST(RetryInfoJson, TypeUrlsMatchByLastSegment) {
  EXPECT_EQ(read(error_with(detail("example.com/google.rpc.RetryInfo", "2s"))), 2000U);
  EXPECT_EQ(read(error_with(detail(std::string(5000, 'h') + "/google.rpc.RetryInfo", "2s"))),
            2000U);
  EXPECT_EQ(read(error_with(detail("google.rpc.RetryInfo", "2s"))), kNone);
  EXPECT_EQ(read(error_with(
                R"({"@type":["type.googleapis.com/google.rpc.RetryInfo"],"retryDelay":"2s"})")),
            kNone);
}

TEST(RetryInfoJson, RepeatedKeysAndSeveralDetails) {
  // The last value of a repeated key counts.
  EXPECT_EQ(
      read(error_with(
          R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s","retryDelay":"9s"})")),
      9000U);
  EXPECT_EQ(
      read(error_with(
          R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","@type":"x","retryDelay":"2s"})")),
      kNone);
  EXPECT_EQ(
      read(error_with(
          R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s","retryDelay":7})")),
      kNone);
  // The first valid RetryInfo wins.
  EXPECT_EQ(read(error_with(detail(kUrl, "2s") + "," + detail(kUrl, "3s"))), 2000U);
  EXPECT_EQ(read(error_with(detail(kUrl, "-2s") + "," + detail(kUrl, "3s"))), 3000U);
}

TEST(RetryInfoJson, AcceptsAllOfJson) {
  EXPECT_EQ(
      read(
          R"({"n":[0,-0,1.5,-2.25e+10,3E-2,1e5,123456789012345678901234567890],"t":true,"f":false,"z":null,)"
          R"("s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 ünïcödé","e":{},"a":[],"d":[)" +
          detail(kUrl, "1s") + "]}"),
      1000U);
}

TEST(RetryInfoJson, MalformedBodiesGiveNoDelay) {
  const std::string good = detail(kUrl, "1s");
  ASSERT_EQ(read(good), 1000U);
  for (std::string_view tail : {",", "}", "]", "x", "{}", "\"s\"", "0", "/* */", "\x01"}) {
    EXPECT_EQ(read(good + std::string(tail)), kNone) << tail;
  }
  for (std::string_view bad : {
           "",
           " ",
           "\xEF\xBB",
           "{",
           "}",
           "[",
           "]",
           "{]",
           "[}",
           "[1,]",
           "[,1]",
           "{,}",
           R"({"a":1,})",
           R"({"a"})",
           R"({"a" 1})",
           R"({"a":})",
           R"({a:1})",
           R"({'a':1})",
           R"({"a":1 "b":2})",
           R"({1:2})",
           "[01]",
           "[1.]",
           "[.5]",
           "[-]",
           "[1e]",
           "[1e+]",
           "[+1]",
           "[NaN]",
           "[Infinity]",
           "[tru]",
           "[True]",
           "[nul]",
           "[\"a]",
           "[\"\\x\"]",
           "[\"\\u12\"]",
           "[\"\\u12G4\"]",
           "[\"\\uD800\"]",
           "[\"\\uDC00\"]",
           "[\"\\uD800\\u0041\"]",
           "[\"\\uD800x\"]",
           "[\"\t\"]",
           "[\"\n\"]",
           "[\"a\\\"]",
           "[1] [2]",
           "// c\n{}",
       }) {
    EXPECT_EQ(read(bad), kNone) << "'" << bad << "'";
  }
  EXPECT_EQ(read(std::string_view("{\"a\":1}\0", 8)), kNone);
  EXPECT_EQ(read(std::string("[\"\0\"]", 5)), kNone);  // Raw control character.
  EXPECT_FALSE(retry_delay_from_status_json(ConstBytes{}).has_value());
}

TEST(RetryInfoJson, EveryTruncationIsMalformed) {
  const std::size_t complete = kQuotaBody.rfind('}') + 1;
  for (std::size_t n = 0; n < complete; ++n) {
    EXPECT_EQ(read(kQuotaBody.substr(0, n)), kNone) << "length " << n;
  }
  for (std::size_t n = complete; n <= kQuotaBody.size(); ++n) {
    EXPECT_EQ(read(kQuotaBody.substr(0, n)), 43000U) << "length " << n;
  }
}

TEST(RetryInfoJson, NestingIsBoundedByMaxDepth) {
  const auto nested = [](std::size_t levels, const std::string& inner) {
    return std::string(levels, '[') + inner + std::string(levels, ']');
  };
  EXPECT_EQ(read(nested(kJsonMaxDepth, "")), kNone);  // Valid, no detail.
  EXPECT_EQ(read(nested(kJsonMaxDepth - 1, "{}") + ""), kNone);
  // The RetryInfo object itself may be the deepest level, not one deeper.
  EXPECT_EQ(read(nested(kJsonMaxDepth - 1, detail(kUrl, "2s"))), 2000U);
  EXPECT_EQ(read(nested(kJsonMaxDepth, detail(kUrl, "2s"))), kNone);
  EXPECT_EQ(read(nested(kJsonMaxDepth + 1, "")), kNone);
  EXPECT_EQ(read(std::string(100'000, '[')), kNone);
  EXPECT_EQ(read(nested(100'000, "")), kNone);
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += "{\"a\":";
  EXPECT_EQ(read(objects), kNone);
}

TEST(RetryInfoJson, CorruptedBodiesNeverCrash) {
  const std::string body(kQuotaBody);
  for (std::size_t i = 0; i < body.size(); ++i) {
    for (char v : {'\0', '"', '\\', '{', '[', '}', ']', ',', ':', 'u', '\xff'}) {
      std::string mutated = body;
      mutated[i] = v;
      const auto result = read(mutated);
      EXPECT_TRUE(!result || *result == 43000U) << "byte " << i;
    }
  }
  std::mt19937 rng(54321);
  const std::string alphabet = "{}[]\":,\\u0123456789abcdefnrtls.-+eE \t\n@";
  for (int round = 0; round < 20'000; ++round) {
    std::string random(rng() % 64, ' ');
    for (char& c : random) c = alphabet[rng() % alphabet.size()];
    // The alphabet cannot spell the RetryInfo type URL: nothing may be read as a delay.
    EXPECT_EQ(read(random), kNone) << random;
  }
}

}  // namespace
}  // namespace stepback::https
