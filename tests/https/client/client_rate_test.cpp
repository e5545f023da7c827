// The Client's receive and send limits (ClientOptions::receive_limit, send_limit) against
// scripted connections on a fake clock: timed waits of a quantum each, receives no larger
// than the bucket, the same bytes offered again after a send would block, and a limit that
// never trips the throughput floor. And the kProgress events that follow a paced body
// (ClientOptions::progress): spaced by bytes and time, with the rate it really moves at.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stepback/core/rate_limit.hpp"
#include "stepback/https/client.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/scripted_transport.hpp"
#include "tests/support/string_sink.hpp"

namespace stepback::https {
namespace {

using testing::ScriptedConnector;
using testing::StringSink;

std::string bytes_of(std::size_t n) {
  std::string b;
  for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<char>('a' + (i * 7) % 26));
  return b;
}

// One client over scripted connections, stepped on a fake clock that jumps to every timed
// wait; a wait for I/O moves it by `io_tick`.
struct Harness {
  explicit Harness(const char* method = "GET") {
    policy.jitter = Jitter::kNone;
    policy.max_retries = 0;
    timeouts.read = Millis(60000);
    timeouts.speed_limit = 0;
    EXPECT_EQ(parse_url("https://example.test/x", &spec.head.url), Status::kOk);
    spec.head.method = method;
  }
  void start() {
    ClientOptions options;
    options.timeouts = timeouts;
    options.buffers =
        ClientBuffers{MutableBytes{request, sizeof request}, MutableBytes{head, sizeof head},
                      MutableBytes{io, sizeof io}, MutableBytes{error_body, sizeof error_body}};
    options.body = body.sink();
    options.wall_now = [] { return Millis(1'700'000'000'000); };
    options.receive_limit = receive_limit;
    options.send_limit = send_limit;
    options.progress = progress;
    options.events = EventSink{[](void* self, const ClientEvent& e) {
                                 if (e.kind == ClientEvent::Kind::kProgress) {
                                   static_cast<Harness*>(self)->progress_events.push_back(e);
                                 }
                               },
                               this};
    client = std::make_unique<Client>(connector, context, options);
    ASSERT_EQ(client->start(spec), Status::kOk);
    began = now;
  }
  // Steps to the end (at most `limit` steps), recording every answer.
  ClientNext run(int limit = 100000) {
    ClientNext next = client->step(now);
    ++steps;
    for (int i = 0; i < limit && next.kind != ClientNext::Kind::kDone; ++i) {
      if (next.kind == ClientNext::Kind::kWaitIo) {
        now = now + io_tick;
      } else if (next.at > now) {
        waits.push_back((next.at - now).count());
        now = next.at;
      } else {
        ++turns;  // The client handing back its turn: a step at once.
      }
      next = client->step(now);
      ++steps;
    }
    return next;
  }

  Policy policy;
  Xoshiro128 random{7};
  RetryContext context{policy, random, nullptr};
  Timeouts timeouts;
  ScriptedConnector connector;
  RequestSpec spec;
  std::uint8_t request[1024];
  std::uint8_t head[1024];
  std::uint8_t io[4096];
  std::uint8_t error_body[256];
  StringSink body;
  RateLimiter* receive_limit = nullptr;
  RateLimiter* send_limit = nullptr;
  ProgressPolicy progress;
  std::vector<ClientEvent> progress_events;
  Millis io_tick{0};
  Millis now{1000};
  Millis began{};
  int steps = 0;
  int turns = 0;
  std::vector<std::uint64_t> waits;
  std::unique_ptr<Client> client;
};

// A server that could send everything at once is read a quantum at a time: each step reads
// what the bucket holds and then sleeps until the next quantum is there, so the body takes
// its size over the rate, the loop wakes once per quantum, and no receive asks for more than
// the bucket holds (the rest stays with the sender) or for nothing.
TEST(ClientRateLimit, AReceiveLimitReadsAQuantumPerTimedWait) {
  constexpr std::uint64_t kRate = 8000;  // A burst of 1000 bytes: 500 (62.5 ms) a quantum.
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h;
  h.receive_limit = &limit;
  const std::string body = bytes_of(40000);
  const std::string response =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  h.connector.add().recv_data(response);
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  // To the millisecond: the last bytes wait for themselves, not for a whole quantum.
  const std::uint64_t elapsed = (h.now - h.began).count();
  const std::uint64_t ideal = response.size() * 1000 / kRate;
  EXPECT_GE(elapsed, ideal);
  EXPECT_LE(elapsed, ideal + 1);
  // Every wait but that last one is one quantum long: never a busy turn, never a byte-sized
  // wait.
  EXPECT_EQ(h.turns, 0);
  ASSERT_FALSE(h.waits.empty());
  for (std::size_t i = 0; i + 1 < h.waits.size(); ++i) {
    EXPECT_TRUE(h.waits[i] == 62 || h.waits[i] == 63) << i << ": " << h.waits[i];
  }
  EXPECT_LT(h.waits.back(), 62U);
  EXPECT_LE(h.steps, static_cast<int>(response.size() / 500) + 3);
  const testing::ScriptedTransport& t = h.connector.connection(0);
  EXPECT_EQ(t.empty_recvs(), 0U);
  EXPECT_LE(t.largest_recv(), 1000U);  // What the bucket held, not the 4 KiB io buffer.
}

// With half the burst about what one step reads (four io buffers), a wake reads four buffers
// and, the bucket spent, sleeps at once until the next quantum: no turn that would only find
// the bucket empty, one step per quantum.
TEST(ClientRateLimit, AFullStepSleepsUntilTheNextQuantumWithoutABusyTurn) {
  constexpr std::uint64_t kRate = 256000;  // A burst of 32000 bytes: 16000 (62.5 ms) a wake.
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h;
  h.receive_limit = &limit;
  const std::string body = bytes_of(200000);
  const std::string response =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  h.connector.add().recv_data(response);
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_EQ(h.turns, 0);
  EXPECT_LE(h.steps, static_cast<int>(response.size() / 16000) + 3);
  const std::uint64_t elapsed = (h.now - h.began).count();
  EXPECT_GE(elapsed, response.size() * 1000 / kRate);
  EXPECT_LE(elapsed, response.size() * 1000 / kRate + 1);
}

// TLS must be offered the same bytes again after a send would block: the grant of the
// blocked send holds, though the bucket has filled meanwhile. The upload then keeps the rate.
TEST(ClientRateLimit, ASendLimitOffersTheSameBytesAgainAfterAWouldBlock) {
  constexpr std::uint64_t kRate = 4000;  // A burst of 500 bytes.
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h("PUT");
  h.send_limit = &limit;
  h.io_tick = Millis(50);  // 200 more bytes in the bucket per wait on the socket.
  const std::string payload = bytes_of(6000);
  const ConstBytes payload_bytes{reinterpret_cast<const std::uint8_t*>(payload.data()),
                                 payload.size()};
  h.spec.body = BodySource::of(&payload_bytes);
  testing::ScriptedTransport& t = h.connector.add();
  t.send_accept(100000).send_would_block().send_accept(100000).send_would_block();
  t.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(t.changed_resends(), 0U);
  const std::string& sent = t.sent();
  ASSERT_GT(sent.size(), payload.size());
  EXPECT_EQ(sent.substr(sent.size() - payload.size()), payload);
  const std::uint64_t elapsed = (h.now - h.began).count();
  EXPECT_GE(elapsed, sent.size() * 1000 / kRate);
  EXPECT_LE(elapsed, sent.size() * 1000 / kRate + 125 + 2 * 50);
  EXPECT_EQ(h.turns, 0);
}

// A rate limit under the throughput floor would make every limited transfer "too slow": the
// floor is held to half the rate. (Before, this 2000 B/s body failed after a second.)
TEST(ClientRateLimit, ALimitBelowTheSpeedFloorDoesNotFailItsTransfer) {
  constexpr std::uint64_t kRate = 2000;
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h;
  h.receive_limit = &limit;
  h.timeouts.speed_limit = 5000;  // Bytes a second, over each second.
  h.timeouts.speed_time = Millis(1000);
  const std::string body = bytes_of(6000);
  testing::ScriptedTransport& t = h.connector.add();
  t.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 6000\r\n\r\n");
  // The socket runs dry between pieces, where the floor is judged.
  for (std::size_t at = 0; at < body.size(); at += 200) {
    t.recv_would_block().recv_data(body.substr(at, 200));
  }
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_GE((h.now - h.began).count(), 3000U);
}

// The floor still ends a server slower than half the rate.
TEST(ClientRateLimit, AServerBelowHalfTheRateStillFailsTheFloor) {
  constexpr std::uint64_t kRate = 100000;
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h;
  h.receive_limit = &limit;
  h.io_tick = Millis(100);  // 100 bytes per 100 ms: 1000 B/s.
  h.timeouts.speed_limit = 5000;
  h.timeouts.speed_time = Millis(1000);
  testing::ScriptedTransport& t = h.connector.add();
  t.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 6000\r\n\r\n");
  for (int i = 0; i < 60; ++i) t.recv_would_block().recv_data(std::string(100, 'x'));
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kTimeout);
  EXPECT_NE(std::string(h.client->result().message).find("below the speed limit of 5000 B/s"),
            std::string::npos)
      << h.client->result().message;
}

// A body paced to 100 kB/s reports its progress by the default policy: each report at least
// 64 KiB and 250 ms after the last, about every 64 KiB (the bytes come slower than that), the
// count rising to the body's end, the length known, the rate within a few percent of the pace.
TEST(ClientProgress, ReportsComeAtLeastTheirBytesAndIntervalApartWithTheRealRate) {
  constexpr std::uint64_t kRate = 100000;
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h;
  h.receive_limit = &limit;
  const std::string body = bytes_of(1000000);
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + body);
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  ASSERT_EQ(h.body.bytes, body);
  // 1,000,000 bytes / 65,536: 15 reports (one more would need the 16th 64 KiB).
  ASSERT_GE(h.progress_events.size(), 14U);
  ASSERT_LE(h.progress_events.size(), 15U);
  for (std::size_t i = 0; i < h.progress_events.size(); ++i) {
    const ClientEvent& e = h.progress_events[i];
    EXPECT_FALSE(e.sending);
    EXPECT_EQ(e.attempt, 1U);
    ASSERT_TRUE(e.total.has_value());
    EXPECT_EQ(*e.total, body.size());
    EXPECT_LE(e.bytes, body.size());
    if (i == 0) continue;
    const ClientEvent& before = h.progress_events[i - 1];
    EXPECT_GE(e.bytes - before.bytes, 65536U) << i;
    EXPECT_GE((e.at - before.at).count(), 250U) << i;
    // The bytes set the pace here: far less than two steps of them between reports.
    EXPECT_LT(e.bytes - before.bytes, 65536U + 2 * 4 * sizeof h.io) << i;
    EXPECT_GE(e.rate, kRate * 95 / 100) << i;
    EXPECT_LE(e.rate, kRate * 105 / 100) << i;
  }
}

// bytes = 1 paces reports by time alone: at a fast pace, one each interval (no more often),
// whatever moved between.
TEST(ClientProgress, AnIntervalAlonePacesTheReports) {
  constexpr std::uint64_t kRate = 1000000;
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h;
  h.receive_limit = &limit;
  h.progress = ProgressPolicy{1, Millis(500)};
  const std::string body = bytes_of(3000000);  // Three seconds at the rate.
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + body);
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  ASSERT_EQ(h.body.bytes, body);
  ASSERT_GE(h.progress_events.size(), 5U);
  ASSERT_LE(h.progress_events.size(), 6U);
  for (std::size_t i = 1; i < h.progress_events.size(); ++i) {
    const std::uint64_t gap = (h.progress_events[i].at - h.progress_events[i - 1].at).count();
    EXPECT_GE(gap, 500U) << i;
    EXPECT_LT(gap, 600U) << i;  // The step after the interval passed, a quantum at most.
  }
}

// The request body's progress: `sending`, the bytes of the body (not of the head) sent, of
// its length.
TEST(ClientProgress, ARequestBodyReportsTheBytesSent) {
  constexpr std::uint64_t kRate = 100000;
  RateLimiter limit(kRate, default_burst(kRate));
  Harness h("PUT");
  h.send_limit = &limit;
  const std::string payload = bytes_of(300000);
  const ConstBytes payload_bytes{reinterpret_cast<const std::uint8_t*>(payload.data()),
                                 payload.size()};
  h.spec.body = BodySource::of(&payload_bytes);
  testing::ScriptedTransport& t = h.connector.add();
  t.send_accept(1000000);
  t.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  ASSERT_GE(h.progress_events.size(), 3U);
  std::uint64_t last = 0;
  for (const ClientEvent& e : h.progress_events) {
    EXPECT_TRUE(e.sending);
    ASSERT_TRUE(e.total.has_value());
    EXPECT_EQ(*e.total, payload.size());
    EXPECT_GT(e.bytes, last);
    EXPECT_LE(e.bytes, payload.size());
    last = e.bytes;
  }
}

// bytes = 1 and no interval: a report after every read that moved a byte.
TEST(ClientProgress, ThePolicyCanAskForAReportPerRead) {
  Harness h;
  const std::string body = bytes_of(200000);
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + body);
  h.progress = ProgressPolicy{1, Millis(0)};
  h.start();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.body.bytes, body);
  // Every read is a report at this policy: 200,000 bytes in reads of at most 4096.
  EXPECT_GE(h.progress_events.size(), 200000U / sizeof h.io);
}

// A policy of no bytes or of more than an hour is refused by start(), as a missing clock is.
TEST(ClientProgress, AnInvalidPolicyIsRefused) {
  for (const ProgressPolicy& p :
       {ProgressPolicy{0, Millis(250)}, ProgressPolicy{1, Millis::seconds(3601)}}) {
    Harness h;
    h.progress = p;
    ClientOptions options;
    options.buffers = ClientBuffers{
        MutableBytes{h.request, sizeof h.request}, MutableBytes{h.head, sizeof h.head},
        MutableBytes{h.io, sizeof h.io}, MutableBytes{h.error_body, sizeof h.error_body}};
    options.wall_now = [] { return Millis(1'700'000'000'000); };
    options.progress = p;
    Client client(h.connector, h.context, options);
    EXPECT_EQ(client.start(h.spec), Status::kInvalidArgument);
  }
}

}  // namespace
}  // namespace stepback::https
