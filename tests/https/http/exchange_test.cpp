#include "stepback/https/http/exchange.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tests/support/scripted_transport.hpp"

namespace stepback::https {
namespace {

using testing::ScriptedTransport;
using Kind = Exchange::Result::Kind;

ConstBytes bytes_of(std::string_view s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// An exchange over a scripted transport, with a parser whose body goes into `body`.
struct Rig {
  Rig() { parser.reset(false); }
  static bool keep(void* self, ConstBytes data) {
    static_cast<Rig*>(self)->body.append(reinterpret_cast<const char*>(data.data), data.size);
    return true;
  }
  Timeouts timeouts;
  std::uint8_t io[64];
  std::uint8_t head[256];
  std::string body;
  ResponseParser parser{MutableBytes{head, sizeof head}, BodySink{keep, this}, 1 << 20};
  Exchange exchange{timeouts, MutableBytes{io, sizeof io}};
  ScriptedTransport stream;
};

constexpr std::string_view kHead = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";

TEST(Exchange, SendsTheHeadAndTheBodyThenReadsTheResponse) {
  Rig r;
  const std::string payload(150, 'p');  // More than one io buffer: read in runs.
  const ConstBytes payload_bytes = bytes_of(payload);
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource::of(&payload_bytes));
  std::uint64_t reported = 0;
  const Exchange::SendProgress progress{
      [](void* c, Millis, std::uint64_t n) { *static_cast<std::uint64_t*>(c) = n; }, &reported};
  ASSERT_EQ(r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), progress).kind,
            Kind::kSent);
  EXPECT_EQ(r.stream.sent(), std::string(kHead) + payload);
  EXPECT_EQ(r.exchange.sent(), kHead.size() + payload.size());
  EXPECT_EQ(reported, payload.size());
  r.stream.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  const Exchange::Result done =
      r.exchange.receive(Millis(0), r.stream, r.parser, nullptr, Millis::max());
  ASSERT_EQ(done.kind, Kind::kComplete);
  EXPECT_TRUE(done.reusable);
  EXPECT_EQ(r.body, "ok");
}

TEST(Exchange, ASourceThatEndsEarlyIsNamed) {
  Rig r;
  BodySource short_source;
  short_source.read = [](void*, std::uint64_t, MutableBytes) -> std::size_t { return 0; };
  short_source.size = 10;
  r.exchange.begin(Millis(0), bytes_of(kHead), short_source);
  const Exchange::Result res = r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), {});
  EXPECT_EQ(res.kind, Kind::kBodySource);
  EXPECT_EQ(res.status, Status::kBodySource);
}

TEST(Exchange, SilenceEndsTheAttemptAtTheReadTimeout) {
  Rig r;
  r.timeouts.read = Millis(1000);
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource{});
  ASSERT_EQ(r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), {}).kind, Kind::kSent);
  r.stream.set_fd(7).recv_would_block().recv_would_block();
  Exchange::Result w = r.exchange.receive(Millis(10), r.stream, r.parser, nullptr, Millis::max());
  ASSERT_EQ(w.kind, Kind::kWait);
  EXPECT_EQ(w.fd, 7);
  EXPECT_EQ(w.at, Millis(1000));
  w = r.exchange.receive(Millis(1000), r.stream, r.parser, nullptr, Millis::max());
  EXPECT_EQ(w.kind, Kind::kFailed);
  EXPECT_EQ(w.status, Status::kTimeout);
  EXPECT_STREQ(w.message, "timed out waiting for the response");
}

TEST(Exchange, AHeadThatTricklesPastTheReadTimeoutIsTooSlow) {
  Rig r;
  r.timeouts.read = Millis(1000);
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource{});
  ASSERT_EQ(r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), {}).kind, Kind::kSent);
  // A byte every 600 ms keeps silence away, but the head is due 1000 ms after the request.
  r.stream.recv_data("H").recv_would_block();
  ASSERT_EQ(r.exchange.receive(Millis(600), r.stream, r.parser, nullptr, Millis::max()).kind,
            Kind::kWait);
  r.stream.recv_data("T").recv_would_block();
  const Exchange::Result slow =
      r.exchange.receive(Millis(1200), r.stream, r.parser, nullptr, Millis::max());
  EXPECT_EQ(slow.kind, Kind::kFailed);
  EXPECT_STREQ(slow.message, "the response head did not arrive within the read timeout (1000 ms)");
}

TEST(Exchange, ABodyBelowTheFloorFailsAfterItsWindow) {
  Rig r;
  r.timeouts.read = Millis(10000);
  r.timeouts.speed_limit = 100;
  r.timeouts.speed_time = Millis(1000);
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource{});
  ASSERT_EQ(r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), {}).kind, Kind::kSent);
  r.stream.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n").recv_would_block();
  ASSERT_EQ(r.exchange.receive(Millis(0), r.stream, r.parser, nullptr, Millis::max()).kind,
            Kind::kWait);
  r.stream.recv_data("abc").recv_would_block();
  const Exchange::Result slow =
      r.exchange.receive(Millis(1000), r.stream, r.parser, nullptr, Millis::max());
  EXPECT_EQ(slow.kind, Kind::kFailed);
  EXPECT_STREQ(slow.message,
               "the response body arrived at 3 B/s over 1000 ms, below the speed limit of 100 B/s");
}

TEST(Exchange, AnEarlyAnswerIsReadAfterTheSendFails) {
  Rig r;
  const std::string payload(40, 'p');
  const ConstBytes payload_bytes = bytes_of(payload);
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource::of(&payload_bytes));
  r.stream.send_accept(kHead.size()).send_fail(Status::kReset);
  ASSERT_EQ(r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), {}).kind, Kind::kSent);
  r.stream.recv_data("HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n");
  const Exchange::Result done =
      r.exchange.receive(Millis(0), r.stream, r.parser, nullptr, Millis::max());
  ASSERT_EQ(done.kind, Kind::kComplete);
  EXPECT_FALSE(done.reusable);  // Never on to a connection whose send failed.
  EXPECT_EQ(r.parser.status(), 413);
}

TEST(Exchange, ASendThatFailsBeforeTheHeadLeftIsTheAttemptsFailure) {
  Rig r;
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource{});
  r.stream.send_fail(Status::kReset);
  const Exchange::Result res = r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), {});
  EXPECT_EQ(res.kind, Kind::kFailed);
  EXPECT_EQ(res.status, Status::kReset);
  EXPECT_EQ(r.exchange.sent(), 0U);
}

TEST(Exchange, AHeadLargerThanItsBufferNamesTheBuffer) {
  Rig r;
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource{});
  ASSERT_EQ(r.exchange.send(Millis(0), r.stream, nullptr, Millis::max(), {}).kind, Kind::kSent);
  r.stream.recv_data("HTTP/1.1 200 OK\r\nX-Long: " + std::string(300, 'x') + "\r\n\r\n");
  // A few receives a turn: the loop gets its turn back before the head has overrun.
  Exchange::Result res = r.exchange.receive(Millis(0), r.stream, r.parser, nullptr, Millis::max());
  for (int turns = 0; turns < 10 && res.kind == Kind::kWait; ++turns) {
    res = r.exchange.receive(Millis(0), r.stream, r.parser, nullptr, Millis::max());
  }
  EXPECT_EQ(res.kind, Kind::kParseFailed);
  EXPECT_EQ(res.status, Status::kHeadersTooLarge);
  EXPECT_STREQ(res.message,
               "the response head is larger than the response-head buffer "
               "(ClientBuffers::response_head, 256 bytes)");
}

TEST(Exchange, AnEmptyBucketWaitsForAQuantumNotAByte) {
  Rig r;
  RateLimiter limit(1000, 1000);  // It starts empty.
  ASSERT_EQ(limit.available(Millis(0), 1000), 0U);
  const std::string payload(1000, 'p');
  const ConstBytes payload_bytes = bytes_of(payload);
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource::of(&payload_bytes));
  Exchange::Result res = r.exchange.send(Millis(0), r.stream, &limit, Millis::max(), {});
  ASSERT_EQ(res.kind, Kind::kWait);
  EXPECT_EQ(res.fd, -1);
  // What a turn moves (four 64-byte io buffers), not one byte: a wake every 256 ms.
  EXPECT_EQ(res.at, Millis(256));
  // Near the end, only what is left.
  r.exchange.begin(Millis(0), bytes_of(kHead), BodySource{});
  res = r.exchange.send(Millis(0), r.stream, &limit, Millis::max(), {});
  EXPECT_EQ(res.at, Millis(kHead.size()));
}

}  // namespace
}  // namespace stepback::https
