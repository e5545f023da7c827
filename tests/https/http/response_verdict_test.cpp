// response_verdict: what a complete response tells the retry machine, as a table.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "stepback/https/http/response_verdict.hpp"

namespace stepback::https {
namespace {

bool ignore_body(void*, ConstBytes) { return true; }

struct Row {
  const char* name;
  std::string_view head;        // The response head, through its blank line.
  std::string_view error_body;  // What the client captured of its body.
  bool strict;
  std::uint16_t status;
  DelaySource source;
  std::int64_t delay_ms;  // When source is not kNone.
  bool may_have_been_processed;
};

// 2026-11-29T00:00:00Z, the wall clock the rows read HTTP-dates against.
constexpr Millis kNow{1795910400000};

const Row kRows[] = {
    {"plain 503", "HTTP/1.1 503 Unavailable\r\nContent-Length: 0\r\n\r\n", "", false, 503,
     DelaySource::kNone, 0, false},
    {"Retry-After seconds", "HTTP/1.1 429 Too Many\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n",
     "", false, 429, DelaySource::kRetryAfter, 7000, false},
    {"Retry-After date against Date, not the device clock",
     "HTTP/1.1 503 Unavailable\r\nDate: Sun, 01 Jan 2023 00:00:00 GMT\r\n"
     "Retry-After: Sun, 01 Jan 2023 00:00:30 GMT\r\nContent-Length: 0\r\n\r\n",
     "", false, 503, DelaySource::kRetryAfter, 30000, false},
    {"RetryInfo in a JSON error body",
     "HTTP/1.1 429 Too Many\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n",
     R"({"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo",)"
     R"("retryDelay":"2.5s"}]}})",
     false, 429, DelaySource::kRetryInfo, 2500, false},
    {"Retry-After wins over RetryInfo",
     "HTTP/1.1 429 Too Many\r\nRetry-After: 1\r\nContent-Type: application/json\r\n"
     "Content-Length: 0\r\n\r\n",
     R"({"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo",)"
     R"("retryDelay":"9s"}]}})",
     false, 429, DelaySource::kRetryAfter, 1000, false},
    {"garbage Retry-After is ignored",
     "HTTP/1.1 503 Unavailable\r\nRetry-After: soon\r\nContent-Length: 0\r\n\r\n", "", false, 503,
     DelaySource::kNone, 0, false},
    {"strict rules: a 503 may have been processed",
     "HTTP/1.1 503 Unavailable\r\nContent-Length: 0\r\n\r\n", "", true, 503, DelaySource::kNone, 0,
     true},
};

TEST(ResponseVerdict, EachRowGivesItsStatusDelayAndProcessing) {
  for (const Row& row : kRows) {
    std::uint8_t head[512];
    ResponseParser parser{MutableBytes{head, sizeof head}, BodySink{&ignore_body, nullptr}, 1024};
    std::size_t consumed = 0;
    ASSERT_EQ(parser.feed(ConstBytes{reinterpret_cast<const std::uint8_t*>(row.head.data()),
                                     row.head.size()},
                          &consumed),
              ParseProgress::kDone)
        << row.name;
    const AttemptResult r =
        response_verdict(parser,
                         ConstBytes{reinterpret_cast<const std::uint8_t*>(row.error_body.data()),
                                    row.error_body.size()},
                         kNow, row.strict);
    EXPECT_EQ(r.status, row.status) << row.name;
    EXPECT_EQ(r.delay_source, row.source) << row.name;
    if (row.source != DelaySource::kNone) {
      EXPECT_EQ(r.server_delay.count(), row.delay_ms) << row.name;
    }
    EXPECT_EQ(r.may_have_been_processed, row.may_have_been_processed) << row.name;
  }
}

}  // namespace
}  // namespace stepback::https
