// The Client's basic transitions against scripted connections (client_harness.hpp): a request
// sent and its body delivered, retries on the kept connection, timeouts, partial writes,
// terminal answers, the main-loop contract of its waits, the limits on an attempt and on the
// request, and Retry-After read as an HTTP-date.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/https/client/client_harness.hpp"

namespace stepback::https::client_test {
namespace {

TEST(Client, TheLastResponsesFieldsStayReadableAfterDone) {
  Harness h;
  h.connector.add().recv_data(
      "HTTP/1.1 308 Resume Incomplete\r\nRange: bytes=0-262143\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().status, 308);
  EXPECT_EQ(h.client->response_header("range"), std::optional<std::string_view>("bytes=0-262143"));
  EXPECT_EQ(h.client->response_header("location"), std::nullopt);
}

TEST(Client, SendsTheRequestAndDeliversTheBody) {
  Harness h;
  h.connector.add().recv_data(kOk);
  const ClientNext done = h.run(h.start());
  ASSERT_EQ(done.kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 200);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes, "hello");
  EXPECT_EQ(h.connector.host(), "example.test");
  EXPECT_EQ(h.connector.connection(0).sent().rfind("GET /x HTTP/1.1\r\nHost: example.test\r\n", 0),
            0U);
  EXPECT_EQ(h.connector.exchanges(), 1U);
}

TEST(Client, RetriesOnTheKeptConnectionAtEverySplitOfTheResponses) {
  const std::string first = k503;
  for (std::size_t chunk = 1; chunk <= first.size() + 5; ++chunk) {
    Harness h;
    h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk).set_max_recv_chunk(chunk);
    const ClientNext done = h.run(h.start());
    ASSERT_EQ(done.kind, ClientNext::Kind::kDone) << chunk;
    EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << chunk;
    EXPECT_EQ(h.client->result().attempts, 2U) << chunk;
    EXPECT_EQ(h.connector.opened(), 1U) << "keep-alive, chunk " << chunk;
    EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100})) << chunk;
    EXPECT_EQ(h.body.bytes, "hello") << "the 503's body never reaches the caller, chunk " << chunk;
  }
}

TEST(Client, WaitsForReadableDataAndTimesOutSilence) {
  Harness h;
  h.connector.add().recv_would_block();  // Then silence (the script's end is would-block).
  h.connector.add().recv_data(kOk);
  ClientNext next = h.start();
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(next.fd, 101);
  EXPECT_EQ(next.interest, IoInterest::kRead);
  EXPECT_EQ(next.at, h.now + h.timeouts.read);
  h.now = next.at;  // Nothing arrived within the read timeout.
  next = h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  bool saw_timeout = false;
  for (const ClientEvent& e : h.events)
    saw_timeout |= e.kind == ClientEvent::Kind::kError && e.failure == Failure::kTimeout;
  EXPECT_TRUE(saw_timeout);
}

TEST(Client, PartialWritesAndWriteWaitsSendTheWholeRequest) {
  Harness h("https://example.test/upload", "PUT");
  const std::string payload(300, 'p');
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
  h.spec.body = BodySource::of(&bytes);
  ScriptedTransport& c = h.connector.add();
  c.send_accept(10).send_would_block().send_accept(7).set_max_send_chunk(50);
  c.recv_data(kOk);
  ClientNext next = h.start();
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(next.interest, IoInterest::kWrite);
  next = h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  const std::string& sent = c.sent();
  EXPECT_NE(sent.find("Content-Length: 300\r\n"), std::string::npos);
  EXPECT_EQ(sent.substr(sent.size() - payload.size()), payload);
}

TEST(Client, ResetMidBodyIsRetriedForGetButNotForPost) {
  const char* partial = "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhalf";
  Harness get;
  get.connector.add().recv_data(partial).recv_reset();
  get.connector.add().recv_data(kOk);
  get.run(get.start());
  EXPECT_EQ(get.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(get.connector.opened(), 2U);
  // No validator to resume with: the sink started over rather than splicing "halfhello".
  EXPECT_EQ(get.body.bytes, "hello");
  EXPECT_EQ(get.body.restarts, 1U);

  Harness post("https://example.test/orders", "POST");
  post.connector.add().recv_data(partial).recv_reset();
  post.connector.add().recv_data(kOk);
  post.run(post.start());
  EXPECT_EQ(post.client->result().outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(post.client->result().error, Status::kReset);
  EXPECT_EQ(post.connector.opened(), 1U);
}

TEST(Client, PostIsRetriedWhenItProvablyWasNotProcessed) {
  Harness h("https://example.test/orders", "POST");
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 3U);  // Refused, 503, 200.
}

TEST(Client, AKeptConnectionTheServerClosedIsReplacedWithoutCountingAnAttempt) {
  Harness h;
  h.connector.add().recv_data(k503).recv_closed();  // Closes while idle during the wait.
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.client->connections(), 2U);
}

// The server's delay comes first, then the loop's own backoff (100 ms here): a fleet told the
// same delay spreads after it instead of coming back in the same second.
TEST(Client, RetryAfterSetsTheWait) {
  Harness h;
  h.policy.max_server_delay = Millis::seconds(60);
  h.connector.add()
      .recv_data("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 0\r\n\r\n")
      .recv_would_block()
      .recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{3000 + 100}));
  bool saw = false;
  for (const ClientEvent& e : h.events)
    saw |= e.kind == ClientEvent::Kind::kWait && e.wait_reason == WaitReason::kRetryAfter;
  EXPECT_TRUE(saw);
}

TEST(Client, RetryInfoInAJsonErrorBodySetsTheWait) {
  Harness h;
  const std::string json =
      R"({"error":{"code":503,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}})";
  h.connector.add()
      .recv_data(
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
          std::to_string(json.size()) + "\r\n\r\n" + json)
      .recv_would_block()
      .recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{1500 + 100}));  // RetryInfo, then backoff.
  EXPECT_EQ(h.body.bytes, "hello");
}

TEST(Client, OversizedHeadIsTerminal) {
  Harness h;
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nX-Big: " + std::string(2000, 'b') + "\r\n\r\n");
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kHeadersTooLarge);
  EXPECT_EQ(h.client->result().attempts, 1U);
}

// Regression: 1000 interim 103s before the 200 ended in "the response is not valid
// HTTP/1.1"; the message now says which limit was hit, and its value.
TEST(Client, EndlessInterimResponsesEndWithTheLimitNamed) {
  Harness h;
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n";
  h.connector.add().recv_data(many + kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kProtocol);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_STREQ(h.client->result().message,
               "the server sent more than 16 interim (1xx) responses before the final one (the "
               "limit, ResponseParser::kMaxInterimHeads)");
}

// Regression: a Content-Length of 2^64-1 with a short body was taken for a cut body,
// retried and, on stdout, ended in "the body had to start over"; such a length is now
// refused at the head, once, with a message naming it, and no byte reaches the sink.
TEST(Client, AnAbsurdContentLengthIsRefusedAtTheHead) {
  Harness h;
  h.body_limit = ~std::uint64_t{0};  // No limit of the caller's: the length alone is absurd.
  h.body.restartable = false;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 18446744073709551615\r\n"
          "\r\nshort")
      .recv_closed();
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kProtocol);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_NE(std::string(h.client->result().message).find("Content-Length is above 2^63-1"),
            std::string::npos)
      << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "");
}

// A transport that cannot take what the server sent (TlsTransport: a record beyond its input
// buffer) ends the request at once, in its own words, which name the buffer: the generic
// "the connection failed while receiving the response" did not say which.
TEST(Client, AReceiveTheTransportCannotHoldFailsOnceInTheTransportsWords) {
  Harness h;
  h.connector.add()
      .recv_data("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
      .recv_fail(Status::kBufferTooSmall)
      .set_failure_message("the server sent a TLS record of 16401 bytes, more than ...");
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kBufferTooSmall);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_STREQ(h.client->result().message,
               "the server sent a TLS record of 16401 bytes, more than ...");
  EXPECT_EQ(h.body.bytes, "hello");
}

// The head-size message names the buffer; a trailer section too large for it says so.
TEST(Client, AnOversizedTrailerIsNotCalledAnOversizedHead) {
  Harness h;
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n"
      "X-Big: " +
      std::string(2000, 'b') + "\r\n\r\n");
  h.run(h.start());
  EXPECT_EQ(h.client->result().error, Status::kHeadersTooLarge);
  EXPECT_STREQ(h.client->result().message,
               "the response's trailer section is larger than the response-head buffer");
}

TEST(Client, CancelEndsTheRequestAndClosesTheConnection) {
  Harness h;
  h.connector.add().recv_would_block();
  ASSERT_EQ(h.start().kind, ClientNext::Kind::kWaitIo);
  h.client->cancel();
  EXPECT_EQ(h.client->step(h.now).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kCancelled);
  EXPECT_TRUE(h.connector.connection(0).closed());
}

// The main-loop contract: a "wait for I/O" always names a descriptor to poll.
// Returns the first kWaitIo answer without one, or nullptr.
const ClientNext* io_wait_without_fd(const std::vector<ClientNext>& nexts) {
  for (const ClientNext& n : nexts) {
    if (n.kind == ClientNext::Kind::kWaitIo && (n.fd < 0 || n.interest == IoInterest::kNone)) {
      return &n;
    }
  }
  return nullptr;
}

// Regression: while a connection was being made the Client asked to wait for I/O
// on the TLS stream's fd, -1 until the handshake starts, so the app's loop slept until the
// connect deadline. A connector with nothing to watch now gets a plain timed wait.
TEST(ClientWaitContract, ConnectingWithoutADescriptorIsATimedWait) {
  Harness h;
  h.connector.connect_blocks = 2;
  h.connector.connecting_fd = -1;
  h.connector.add().recv_data(kOk);
  const ClientNext first = h.start();
  EXPECT_EQ(first.kind, ClientNext::Kind::kWaitUntil);
  h.nexts.clear();
  const ClientNext done = h.run(first);
  ASSERT_EQ(done.kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(io_wait_without_fd(h.nexts), nullptr);
}

TEST(ClientWaitContract, ConnectingReportsTheConnectingSocketForWriting) {
  Harness h;
  h.connector.connect_blocks = 1;
  h.connector.connecting_fd = 9;
  h.connector.add().recv_data(kOk);
  const ClientNext first = h.start();
  ASSERT_EQ(first.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(first.fd, 9);
  EXPECT_EQ(first.interest, IoInterest::kWrite);
}

// Every phase that can wait: connect, a send and a receive that block, a backoff wait, and a
// second attempt on the kept connection.
TEST(ClientWaitContract, NoPhaseWaitsForIoWithoutADescriptor) {
  Harness h;
  h.connector.connect_blocks = 1;
  h.connector.connecting_fd = -1;
  ScriptedTransport& c = h.connector.add();
  c.send_would_block(IoInterest::kWrite).recv_would_block(IoInterest::kRead).recv_data(k503);
  // The first would-block answers the liveness check of the kept connection.
  c.recv_would_block(IoInterest::kRead).recv_would_block(IoInterest::kRead).recv_data(kOk);
  const ClientNext done = h.run(h.start());
  ASSERT_EQ(done.kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.connector.opened(), 1U);  // The second attempt reused the connection.
  EXPECT_EQ(io_wait_without_fd(h.nexts), nullptr);
  std::size_t io_waits = 0;
  for (const ClientNext& n : h.nexts) io_waits += n.kind == ClientNext::Kind::kWaitIo ? 1 : 0;
  EXPECT_GE(io_waits, 3U);
}

// Regression: the retry deadline cut a healthy download that was still receiving.
TEST(ClientLimits, RetryDeadlineDoesNotCutAnAttemptThatIsReceiving) {
  Harness h;
  h.policy.total_deadline = Millis(1000);
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_would_block().recv_data("56789");
  ClientNext next = h.start();
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(next.at, h.now + h.timeouts.read);  // The stall limit, not the retry deadline.
  h.now = h.now + Millis(3000);                 // Past the deadline, within the read timeout.
  next = h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
}

TEST(ClientLimits, StallEndsAnAttemptThatStopsReceiving) {
  Harness h;
  h.policy.max_retries = 0;
  h.connector.add().recv_data(std::string(kHead10) + "01234");  // Then silence.
  ClientNext next = h.start();
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);
  h.now = next.at;
  next = h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().error, Status::kTimeout);
  EXPECT_STREQ(h.client->result().message, "the response stalled: no byte for the read timeout");
}

TEST(ClientLimits, MaxTimeEndsTheRequestWithItsOwnStatus) {
  Harness h;
  h.max_time = Millis(2000);
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0");
  ClientNext next = h.start();
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(next.at, h.now + Millis(2000));  // The loop sleeps no longer than the limit.
  h.now = next.at;
  next = h.client->step(h.now);
  EXPECT_EQ(next.kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kTimeLimit);
}

// Bounded work: a peer that never pauses still hands the loop its turn.
TEST(ClientLimits, StepReturnsAfterBoundedWorkWhileBytesKeepArriving) {
  Harness h;
  ScriptedTransport& c = h.connector.add();
  c.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
  for (int i = 0; i < 100; ++i) c.recv_data(std::string(10, 'x'));
  ClientNext next = h.start();
  int turns = 1;
  while (next.kind != ClientNext::Kind::kDone && turns < 1000) {
    next = h.client->step(h.now);
    ++turns;
  }
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes.size(), 1000U);
  EXPECT_GE(turns, 20);  // 101 reads at most 4 per step.
}

// Retry-After as an HTTP-date is read against the response's own Date: with the device's
// wall clock in 1970 (never set) or ten years ahead, the wait is Retry-After - Date (20 s).
// It used to be measured against the wall clock: 24 years (the delay was refused as too
// long) or nothing at all.
TEST(ClientRetryAfter, AnHttpDateIsMeasuredAgainstTheResponsesDate) {
  const Millis saved = Harness::wall;
  for (const Millis wall : {Millis(0), Millis(1'700'000'000'000 + 315'360'000'000)}) {
    Harness::wall = wall;
    Harness h;
    h.policy.max_server_delay = Millis::seconds(60);
    h.connector.add()
        .recv_data(
            "HTTP/1.1 503 Service Unavailable\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
            "Retry-After: Sun, 06 Nov 1994 08:49:57 GMT\r\nContent-Length: 0\r\n\r\n")
        .recv_would_block()
        .recv_data(kOk);
    h.run(h.start());
    EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << wall.count();
    EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{20000 + 100})) << wall.count();
  }
  Harness::wall = saved;
}

// Without a Date field the wall clock is all there is, as before.
TEST(ClientRetryAfter, WithoutADateTheWallClockIsUsed) {
  const Millis saved = Harness::wall;
  Harness::wall = Millis(784111777000 - 30000);  // 30 s before Sun, 06 Nov 1994 08:49:37 GMT.
  Harness h;
  h.policy.max_server_delay = Millis::seconds(60);
  h.connector.add()
      .recv_data(
          "HTTP/1.1 503 Service Unavailable\r\nRetry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
          "Content-Length: 0\r\n\r\n")
      .recv_would_block()
      .recv_data(kOk);
  h.run(h.start());
  Harness::wall = saved;
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{30000 + 100}));
}

}  // namespace
}  // namespace stepback::https::client_test
