// The Client's transitions against scripted connections: each test scripts what every
// connection receives and checks what was sent, the waits asked for and the outcome, with a
// fake clock and a seeded generator.
#include "stepback/https/client.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"
#include "tests/support/fake_tokens.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/scripted_transport.hpp"
#include "tests/support/string_sink.hpp"

namespace stepback::https {
namespace {

using testing::FakeTokens;
using testing::ScriptedConnector;
using testing::ScriptedTransport;
using testing::StringSink;

constexpr char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
constexpr char k503[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";

void record(void* context, const ClientEvent& e) {
  static_cast<std::vector<ClientEvent>*>(context)->push_back(e);
}

// One client with its buffers, a short policy (no jitter: exact waits) and a fake clock.
struct Harness {
  explicit Harness(const char* url = "https://example.test/x", const char* method = "GET") {
    policy.jitter = Jitter::kNone;
    policy.initial_delay = Millis(100);
    policy.max_backoff = Millis(400);
    policy.max_retries = 3;
    timeouts.read = Millis(5000);
    EXPECT_EQ(parse_url(url, &spec.head.url), Status::kOk);
    spec.head.method = method;
  }
  ClientNext start() {
    ClientOptions options;
    options.timeouts = timeouts;
    options.buffers =
        ClientBuffers{MutableBytes{request, sizeof request}, MutableBytes{head, sizeof head},
                      MutableBytes{io, sizeof io}, MutableBytes{error_body, sizeof error_body}};
    options.body = body.sink();
    options.body_limit = body_limit;
    options.events = EventSink{record, &events};
    options.wall_now = [] { return wall; };
    options.max_time = max_time;
    options.credentials = credentials;
    options.max_redirects = max_redirects;
    options.redirect_url = MutableBytes{redirect_url, sizeof redirect_url};
    options.url_refresh = url_refresh;
    options.network = network;
    client = std::make_unique<Client>(connector, context, options);
    if (network_info) client->network_changed(now, *network_info);
    EXPECT_EQ(resume ? client->start(spec, *resume) : client->start(spec), Status::kOk);
    return client->step(now);
  }
  // Steps until done, jumping the clock to each deadline; at most `limit` steps.
  ClientNext run(ClientNext next, int limit = 10000) {
    for (int i = 0; i < limit && next.kind != ClientNext::Kind::kDone; ++i) {
      nexts.push_back(next);
      // A wait that ends at once is the client handing back its turn, not a backoff.
      if (next.kind == ClientNext::Kind::kWaitUntil && next.at > now) {
        waits.push_back((next.at - now).count());
        now = next.at;
      }
      next = client->step(now);
    }
    return next;
  }

  Policy policy;
  Xoshiro128 random{7};
  RetryContext context{policy, random, nullptr};
  Timeouts timeouts;
  static inline Millis wall{1'700'000'000'000};  // The wall clock every Harness reads.
  ScriptedConnector connector;
  RequestSpec spec;
  std::uint8_t request[1024];
  std::uint8_t head[1024];
  std::uint8_t io[64];
  std::uint8_t error_body[512];
  StringSink body;  // body.restartable: whether the sink can start over.
  std::optional<Millis> max_time;
  std::optional<BodyResume> resume;  // start(spec, *resume) instead of start(spec).
  std::uint8_t max_redirects = 0;
  std::uint8_t redirect_url[256];
  std::uint64_t body_limit = 1 << 20;
  Credentials credentials;
  UrlRefresh url_refresh;
  NetworkPolicy network;
  std::optional<NetworkInfo> network_info;  // Told to the client before start().
  std::vector<ClientEvent> events;
  std::vector<std::uint64_t> waits;
  std::vector<ClientNext> nexts;  // Every answer of step() that run() followed.
  Millis now{1000};
  std::unique_ptr<Client> client;
};

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

TEST(Client, RetryAfterSetsTheWait) {
  Harness h;
  h.policy.max_server_delay = Millis::seconds(60);
  h.connector.add()
      .recv_data("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 0\r\n\r\n")
      .recv_would_block()
      .recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{3000}));
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
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{1500}));
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

}  // namespace
}  // namespace stepback::https

namespace stepback::https {
namespace {

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

}  // namespace
}  // namespace stepback::https

namespace stepback::https {
namespace {

constexpr char kHead10[] = "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 10\r\n\r\n";

// Regression: a GET whose body was cut and retried handed the sink the failed
// attempt's bytes followed by the whole body ("halfhello"). A sink that cannot start over
// now fails the request, with the partial bytes alone.
TEST(ClientResume, CutBodyIsNeverSplicedIntoASinkThatCannotRestart) {
  Harness h;
  h.body.restartable = false;
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhalf").recv_reset();
  h.connector.add().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kRestartRefused);
  EXPECT_EQ(h.body.bytes, "half");
  EXPECT_EQ(h.body.offset_violations, 0U);
}

TEST(ClientResume, CutBodyResumesWithRangeAndIfRange) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.client->refetched(), 0U);
  EXPECT_EQ(h.body.offset_violations, 0U);
  const std::string second = h.connector.connection(1).sent();
  EXPECT_NE(second.find("\r\nRange: bytes=5-\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << second;
  EXPECT_EQ(h.connector.connection(0).sent().find("Range:"), std::string::npos);
}

// body_resume() is what a later start(spec, resume) needs: a cut body's bytes, its validator and
// generation, its length, and the integrity count; a second Client goes on from it.
TEST(ClientResume, BodyResumeHoldsWhereTheCutBodyStoodForAnotherClient) {
  Harness h;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 42\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.policy.max_retries = 0;
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  ASSERT_NE(h.client->result().outcome, Outcome::kSuccess);
  const BodyResume r = h.client->body_resume();
  EXPECT_EQ(r.offset, 5U);
  EXPECT_EQ(r.validator, "\"v1\"");
  EXPECT_TRUE(r.validator_is_etag);
  EXPECT_EQ(r.generation, "42");
  EXPECT_EQ(r.total, std::optional<std::uint64_t>(10));
  EXPECT_EQ(r.integrity.size, 5U);
  EXPECT_EQ(r.until, UINT64_MAX);

  Harness next;
  const std::string validator(r.validator);
  const std::string generation(r.generation);
  next.resume = r;
  next.resume->validator = validator;
  next.resume->generation = generation;
  next.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nx-goog-generation: 42\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(next.run(next.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(next.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(next.body.bytes, "56789");
  const std::string sent = next.connector.connection(0).sent();
  EXPECT_NE(sent.find("Range: bytes=5-\r\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("x-goog-if-generation-match: 42\r\n"), std::string::npos) << sent;
}

// The generation is pinned with a precondition field; the URL goes as given. A V4
// signed URL's query is part of its signature: before, `&generation=N` was appended to it on
// resume, and the server answered 403.
TEST(ClientResume, CloudStorageGenerationIsPinnedOnResumeByAFieldNotTheUrl) {
  const std::string target =
      "/bkt/obj?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=a%2F20261129%2Fauto%2F"
      "storage%2Fgoog4_request&X-Goog-Date=20261129T000000Z&X-Goog-Expires=900&"
      "X-Goog-SignedHeaders=host&X-Goog-Signature=0123abcd";
  static const std::string url = "https://storage.example.test" + target;  // The Url views it.
  Harness h(url.c_str());
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 1700000000123456\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nx-goog-generation: 1700000000123456\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "0123456789");
  const std::string second = h.connector.connection(1).sent();
  EXPECT_EQ(second.rfind("GET " + target + " HTTP/1.1\r\n", 0), 0U) << second;
  EXPECT_NE(second.find("Range: bytes=5-\r\nIf-Range: \"v1\"\r\n"
                        "x-goog-if-generation-match: 1700000000123456\r\n\r\n"),
            std::string::npos)
      << second;
}

// The generation precondition failed (412): the object is another version; it is fetched
// whole, the sink restarted, never spliced.
TEST(ClientResume, AFailedGenerationPreconditionFetchesTheObjectWhole) {
  Harness h("https://storage.example.test/bkt/obj");
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 7\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data("HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nx-goog-generation: 8\r\n"
      "Content-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
  EXPECT_EQ(h.connector.connection(2).sent().find("Range:"), std::string::npos);
}

// A server that ignores If-Range and answers a resume with a part of another
// version (another ETag) got it spliced on, with success. Now the body starts over.
TEST(ClientResume, APartWithAnotherETagIsNeverSplicedOn) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v2\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\nFGHIJ");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
  bool said = false;
  for (const ClientEvent& e : h.events) {
    said = said || (e.kind == ClientEvent::Kind::kError &&
                    std::string(e.message).find("another version") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

// The same without an ETag: pinned to Last-Modified, a part with a later one is another
// version.
TEST(ClientResume, APartWithAnotherLastModifiedIsNeverSplicedOn) {
  Harness h;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nLast-Modified: Sun, 29 Nov 2026 01:00:00 GMT\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nLast-Modified: Sun, 29 Nov 2026 02:00:00 GMT\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\nFGHIJ");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nLast-Modified: Sun, 29 Nov 2026 02:00:00 GMT\r\n"
      "Content-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
  EXPECT_NE(h.connector.connection(1).sent().find("If-Range: Sun, 29 Nov 2026 01:00:00 GMT\r\n"),
            std::string::npos);
}

// A part of another Cloud Storage generation under the same ETag text is not spliced either.
TEST(ClientResume, APartOfAnotherGenerationIsNeverSplicedOn) {
  Harness h;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nx-goog-generation: 7\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"e\"\r\nx-goog-generation: 8\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\nFGHIJ");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nx-goog-generation: 8\r\n"
      "Content-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
}

// A server answering every request, the unranged one included, with the same first
// 16 KiB of a 100,000-byte object left a short file and success. A 206 nobody asked for that
// is not the whole representation is a protocol failure now.
TEST(ClientResume, AnUnaskedPartThatIsNotTheWholeBodyIsAnError) {
  Harness h;
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 0-4/10\r\n"
      "Content-Length: 5\r\n\r\n01234");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_NE(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().error, Status::kProtocol);
  EXPECT_NE(std::string(h.client->result().message).find("206"), std::string::npos)
      << h.client->result().message;
  EXPECT_TRUE(h.body.bytes.empty());
}

// A part whose body is longer than its Content-Range claims never writes past it: by
// Content-Length the part is refused and the body fetched whole; chunked, the extra bytes are
// dropped and the attempt fails. Before, the sink got bytes beyond the object's end.
TEST(ClientResume, APartLongerThanItsContentRangeNeverWritesPastIt) {
  {
    Harness h;
    h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
    h.connector.add().recv_data(
        "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
        "Content-Length: 8\r\n\r\n56789XYZ");
    h.connector.add().recv_data(std::string(kHead10) + "0123456789");
    ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
    EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
    EXPECT_EQ(h.body.bytes, "0123456789");
  }
  {
    Harness h;
    h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
    h.connector.add().recv_data(
        "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
        "Transfer-Encoding: chunked\r\n\r\n8\r\n56789XYZ\r\n0\r\n\r\n");
    ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
    EXPECT_EQ(h.client->result().error, Status::kProtocol) << h.client->result().message;
    EXPECT_EQ(h.body.bytes, "0123456789") << "nothing past the part's end";
  }
}

// A 206 to a request without Range that carries the whole representation is taken.
TEST(ClientResume, AnUnaskedPartThatIsTheWholeBodyIsTaken) {
  Harness h;
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 0-9/10\r\n"
      "Content-Length: 10\r\n\r\n0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "0123456789");
}

TEST(ClientResume, WholeBodyOfTheSameRepresentationIsSkippedThrough) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.client->refetched(), 5U);
  EXPECT_EQ(h.body.offset_violations, 0U);
}

TEST(ClientResume, ChangedRepresentationStartsTheSinkOver) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 10\r\n\r\nabcdefghij");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "abcdefghij");
  EXPECT_EQ(h.body.restarts, 1U);
}

TEST(ClientResume, RangeThatDoesNotContinueTheBodyIsFetchedWholeAgain) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 3-9/10\r\n"
      "Content-Length: 7\r\n\r\n3456789");
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 1U);
  EXPECT_EQ(h.connector.opened(), 3U);
  EXPECT_EQ(h.connector.connection(2).sent().find("Range:"), std::string::npos);
}

TEST(ClientResume, RangeNotSatisfiableStartsOver) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */4\r\nContent-Length: "
      "0\r\n\r\n");
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nETag: \"v3\"\r\nContent-Length: 4\r\n\r\nnew!");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "new!");
  EXPECT_EQ(h.body.restarts, 1U);
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

// The idempotency table: method x rule x precondition.
TEST(ClientIdempotency, RuleTable) {
  using I = RequestSpec::Idempotency;
  const Header if_match{"If-Match", "\"e1\""};
  const Header goog{"x-goog-if-generation-match", "7"};
  struct Row {
    const char* method;
    I rule;
    const char* target;
    const Header* header;
    bool expected;
  } rows[] = {
      {"GET", I::kByMethod, "/o", nullptr, true},
      {"PUT", I::kByMethod, "/o", nullptr, true},
      {"DELETE", I::kByMethod, "/o", nullptr, true},
      {"POST", I::kByMethod, "/o", nullptr, false},
      {"PATCH", I::kByMethod, "/o", nullptr, false},
      {"GET", I::kStrict, "/o", nullptr, true},
      {"HEAD", I::kStrict, "/o", nullptr, true},
      {"PUT", I::kStrict, "/o", nullptr, false},
      {"DELETE", I::kStrict, "/o", nullptr, false},
      {"PUT", I::kStrict, "/o", &if_match, true},
      {"DELETE", I::kStrict, "/b/o?ifGenerationMatch=7", nullptr, true},
      {"PATCH", I::kStrict, "/b/o?alt=json&ifMetagenerationMatch=3", nullptr, true},
      {"POST", I::kStrict, "/b/o?ifSourceGenerationMatch=1", nullptr, true},
      {"POST", I::kStrict, "/b/o", &goog, true},
      {"POST", I::kStrict, "/b/o?xifGenerationMatch=1", nullptr, false},
      {"POST", I::kYes, "/b", nullptr, true},
      {"GET", I::kNo, "/o", nullptr, false},
  };
  for (const Row& r : rows) {
    RequestSpec spec;
    spec.head.method = r.method;
    spec.head.url.target = r.target;
    spec.head.headers = r.header;
    spec.head.header_count = r.header != nullptr ? 1 : 0;
    spec.idempotency = r.rule;
    EXPECT_EQ(is_idempotent(spec), r.expected)
        << r.method << " " << r.target << " rule " << static_cast<int>(r.rule);
  }
}

// Under kStrict a 503 does not prove the server left the request alone (Cloud Storage's
// conformance); by method, RFC 9110 lets 503 and 429 count as not processed.
TEST(ClientIdempotency, StrictPostIsNotResentAfter503) {
  Harness strict("https://example.test/orders", "POST");
  strict.spec.idempotency = RequestSpec::Idempotency::kStrict;
  strict.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  strict.run(strict.start());
  EXPECT_EQ(strict.client->result().outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(strict.client->result().attempts, 1U);

  Harness by_method("https://example.test/orders", "POST");
  by_method.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  by_method.run(by_method.start());
  EXPECT_EQ(by_method.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(by_method.client->result().attempts, 2U);
}

TEST(ClientIdempotency, DeclaredIdempotentPostIsResentAfterAReset) {
  Harness h("https://example.test/b", "POST");
  h.spec.idempotency = RequestSpec::Idempotency::kYes;
  h.connector.add().recv_reset();
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
}

// A kept connection found closed before reuse is replaced before any byte is written.
TEST(ClientKeepAlive, DeadKeptConnectionIsReplacedBeforeSending) {
  Harness h("https://example.test/orders", "POST");
  h.connector.add().recv_data(k503).recv_closed();
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.connector.opened(), 2U);
  const std::string first = h.connector.connection(0).sent();
  EXPECT_EQ(first.find("POST", 1), std::string::npos)
      << "a request was written on the dead connection";
}

// A kept connection found dead only after the request went out on it is sent again
// at once on a new one, not counted, as before; now it is said (an event, so a trace line),
// where before the second connection came without a word.
TEST(ClientKeepAlive, AKeptConnectionFoundDeadAfterSendingIsSentAgainAndSaid) {
  Harness h;
  // The liveness check passes (would block); the server's reset comes after the request.
  h.connector.add().recv_data(k503).recv_would_block(IoInterest::kRead).recv_reset();
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U) << "the 503 and its retry; the re-send is free";
  EXPECT_EQ(h.connector.opened(), 2U);
  int said = 0;
  for (const ClientEvent& e : h.events) {
    said += e.kind == ClientEvent::Kind::kError &&
            std::string(e.message).find("kept connection") != std::string::npos;
  }
  EXPECT_EQ(said, 1);
}

// A connection kept after a request serves the next start() to the same origin.
TEST(ClientKeepAlive, TheNextRequestToTheSameOriginReusesTheKeptConnection) {
  Harness h;
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kOk).recv_would_block(IoInterest::kRead).recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  ASSERT_EQ(h.client->result().outcome, Outcome::kSuccess);
  ASSERT_EQ(h.client->start(h.spec), Status::kOk);
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_EQ(h.client->connections(), 1U);
  const std::string sent = c.sent();
  EXPECT_NE(sent.find("GET /x", sent.find("GET /x") + 1), std::string::npos) << sent;
  EXPECT_FALSE(c.closed());
  h.client->cancel();  // Also closes a connection kept after a finished request.
  EXPECT_TRUE(c.closed());
}

TEST(ClientKeepAlive, ARequestToAnotherOriginOpensItsOwnConnection) {
  for (const char* other :
       {"https://other.test/x", "https://example.test:8443/x", "http://example.test/x"}) {
    SCOPED_TRACE(other);
    Harness h;
    h.connector.add().recv_data(kOk).recv_would_block(IoInterest::kRead);
    h.connector.add().recv_data(kOk);
    ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
    EXPECT_FALSE(h.connector.connection(0).closed());  // Kept after the first request.
    RequestSpec spec = h.spec;
    ASSERT_EQ(parse_url(other, &spec.head.url), Status::kOk);
    ASSERT_EQ(h.client->start(spec), Status::kOk);
    EXPECT_TRUE(h.connector.connection(0).closed());
    ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
    EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
    EXPECT_EQ(h.connector.opened(), 2U);
  }
}

TEST(ClientKeepAlive, StartingAgainMidExchangeNeverReusesTheBusyConnection) {
  Harness h;
  h.connector.add().recv_would_block(IoInterest::kRead);  // The response never comes.
  h.connector.add().recv_data(kOk);
  ClientNext next = h.start();
  for (int i = 0; i < 5 && next.kind != ClientNext::Kind::kWaitIo; ++i)
    next = h.client->step(h.now);
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);  // Waiting for the response.
  ASSERT_EQ(h.client->start(h.spec), Status::kOk);
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.connector.opened(), 2U);
}

// Regression: a kept connection reset after part of an upload's body had left was taken as
// a stale connection and the request silently sent again from its first byte, so bytes the
// server had already committed went twice. Once body bytes have left it is a failed attempt.
TEST(ClientKeepAlive, AResetAfterBodyBytesLeftIsAFailedAttemptNotAStaleConnection) {
  Harness h("https://example.test/session", "PUT");
  h.spec.idempotency = RequestSpec::Idempotency::kYes;
  static const std::string body(100000, 'b');
  h.spec.body = BodySource{[](void*, std::uint64_t offset, MutableBytes out) {
                             const std::size_t n = static_cast<std::size_t>(
                                 std::min<std::uint64_t>(out.size, body.size() - offset));
                             std::memcpy(out.data, body.data() + offset, n);
                             return n;
                           },
                           nullptr, body.size()};
  ScriptedTransport& c = h.connector.add();
  c.recv_data(k503).recv_would_block(IoInterest::kRead);  // Alive when probed...
  c.recv_reset();                                         // ...reset once the body is going.
  h.connector.add().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 3U);  // 503, the reset, the success.
}

// network_available(): what belongs to the old network goes, an exchange under way stays.
TEST(ClientNetwork, AKeptConnectionIsDroppedAndTheBackoffShrinks) {
  Harness h;
  h.policy.initial_delay = Millis(4000);
  h.policy.max_backoff = Millis(8000);
  h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  h.connector.add().recv_data(kOk);
  ClientNext next = h.start();
  for (int i = 0; i < 100 && !(next.kind == ClientNext::Kind::kWaitUntil && next.at > h.now); ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  ASSERT_EQ(next.at, h.now + Millis(4000));  // The backoff after the 503.
  h.client->network_available(h.now);
  EXPECT_TRUE(h.connector.connection(0).closed())
      << "the kept connection belongs to the old network";
  EXPECT_EQ(h.connector.network_changes(), 1);
  next = h.client->step(h.now);
  EXPECT_TRUE(next.kind != ClientNext::Kind::kWaitUntil || next.at < h.now + Millis(4000))
      << "the backoff did not shrink";
  h.run(next);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.connector.opened(), 2U);  // A new connection, not the kept one.
  EXPECT_EQ(h.body.bytes, "hello");
}

TEST(ClientNetwork, AConnectUnderWayStartsOverAsTheSameAttempt) {
  Harness h;
  h.connector.connect_blocks = 2;
  h.connector.connecting_fd = 9;
  h.connector.add().recv_data(kOk);
  h.connector.add().recv_data(kOk);
  const ClientNext first = h.start();
  ASSERT_EQ(first.kind, ClientNext::Kind::kWaitIo);
  ASSERT_EQ(first.fd, 9);
  h.client->network_available(h.now);
  EXPECT_EQ(h.connector.network_changes(), 1);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U) << "starting over is not a retry";
  EXPECT_EQ(h.connector.opened(), 2U);
  EXPECT_TRUE(h.connector.connection(0).sent().empty());
  EXPECT_EQ(h.body.bytes, "hello");
}

TEST(ClientNetwork, AnExchangeUnderWayIsLeftAlone) {
  Harness h;
  h.connector.add().recv_would_block().recv_data(kOk);
  const ClientNext waiting = h.start();
  ASSERT_EQ(waiting.kind, ClientNext::Kind::kWaitIo);
  ASSERT_EQ(waiting.interest, IoInterest::kRead);
  h.client->network_available(h.now);
  EXPECT_FALSE(h.connector.connection(0).closed());
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_EQ(h.body.bytes, "hello");
}

// network_changed(): what runs on the old network ends at once, uncounted.
TEST(ClientNetwork, ASwitchMidBodyGoesOnByRangeOverTheNewNetworkWithoutARetry) {
  Harness h;
  // Half of the body, then the old network goes silent: no read timeout is waited for.
  h.connector.add().recv_data(std::string(kHead10) + "01234");
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n56789");
  ClientNext next = h.start();
  for (int i = 0; i < 20 && h.body.bytes.size() < 5; ++i) next = h.client->step(h.now);
  ASSERT_EQ(h.body.bytes, "01234");
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);
  h.client->network_changed(h.now, NetworkInfo{});
  EXPECT_FALSE(h.connector.connection(0).closed()) << "phases change in step() alone";
  h.run(h.client->step(h.now));
  EXPECT_TRUE(h.connector.connection(0).closed());
  EXPECT_EQ(h.connector.network_changes(), 1);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U) << "a network switch is not a retry";
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_TRUE(h.waits.empty()) << "no backoff, no read timeout";
  const std::string second = h.connector.connection(1).sent();
  EXPECT_NE(second.find("Range: bytes=5-\r\nIf-Range: \"v1\""), std::string::npos) << second;
}

// A request that may have reached the server over the old network is not sent again unless
// it is idempotent.
TEST(ClientNetwork, ASwitchAfterAPostLeftEndsItRatherThanSendItTwice) {
  Harness h("https://example.test/x", "POST");
  h.connector.add().recv_would_block().recv_data(kOk);
  h.connector.add().recv_data(kOk);
  const ClientNext waiting = h.start();
  ASSERT_EQ(waiting.kind, ClientNext::Kind::kWaitIo);
  ASSERT_FALSE(h.connector.connection(0).sent().empty());
  h.client->network_changed(h.now, NetworkInfo{});
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_NE(std::string(h.client->result().message).find("network changed"), std::string::npos)
      << h.client->result().message;
}

// No network, and the destination cannot be reached either: the request waits, the failed
// attempt uncounted, without a retry or the deadline going by, and goes at once when a
// network comes.
TEST(ClientNetwork, WithoutANetworkAnUnreachableDestinationWaitsAndGoesWhenOneComes) {
  Harness h;
  h.policy.total_deadline = Millis(1000);
  h.timeouts.offline = Millis(600000);
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.unreachable_failures = true;
  ClientNext next = h.start();
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, h.now + Millis(600000));
  ASSERT_FALSE(h.events.empty());
  const ClientEvent& wait = h.events.back();
  ASSERT_EQ(wait.kind, ClientEvent::Kind::kWait);
  EXPECT_EQ(wait.wait_reason, WaitReason::kOffline);
  EXPECT_STREQ(wait.message, "there is no network");
  EXPECT_EQ(h.client->run_hint(next).state, RunHint::State::kWaitingForNetwork);
  // Ten minutes offline, far past the one-second deadline: none of it was the request's.
  h.now = h.now + Millis(599000);
  next = h.client->step(h.now);
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  h.client->network_changed(h.now, NetworkInfo{});
  h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U)
      << "the unreachable attempt is not counted; the 503 was retried within the deadline";
}

// The platform's "no network" is no verdict on a destination. A server on loopback
// (or the LAN, or behind a VPN route) is tried and answers; before, the request waited for a
// network without a single attempt.
TEST(ClientNetwork, WithoutANetworkAReachableDestinationIsTriedAtOnce) {
  Harness h;
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_EQ(h.body.bytes, "hello");
  for (const ClientEvent& e : h.events) {
    EXPECT_FALSE(e.kind == ClientEvent::Kind::kWait && e.wait_reason == WaitReason::kOffline)
        << "waited for a network: " << e.message;
  }
}

// A failure at the far end (refused, a timeout) is no lack of a network: retried with backoff
// as ever, though the platform says offline.
TEST(ClientNetwork, WithoutANetworkARefusedConnectIsAnOrdinaryRetry) {
  Harness h;
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U);
  ASSERT_EQ(h.waits.size(), 1U);
  EXPECT_EQ(h.waits[0], 100U) << "the first backoff, not a wait for a network";
}

// With the platform saying connected, an unreachable destination is an ordinary retry too:
// the client does not second-guess the platform either way.
TEST(ClientNetwork, OnANetworkAnUnreachableDestinationIsAnOrdinaryRetry) {
  Harness h;
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.unreachable_failures = true;
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U);
  ASSERT_EQ(h.waits.size(), 1U);
  EXPECT_EQ(h.waits[0], 100U);
}

// A route table that changes without giving a way out lets the request try again each time,
// but does not restart the offline limit.
TEST(ClientNetwork, ChangesWithoutANetworkRetryTheDestinationButKeepTheOfflineLimit) {
  Harness h;
  h.timeouts.offline = Millis(10000);
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.unreachable_failures = true;  // Every open fails: no connection is scripted.
  ClientNext next = h.start();
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  const Millis end = next.at;
  EXPECT_EQ(end, h.now + Millis(10000));
  h.now = h.now + Millis(4000);
  NetworkInfo still_none;
  still_none.connected = false;
  h.client->network_changed(h.now, still_none);
  next = h.client->step(h.now);
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, end) << "the offline limit started over";
  h.run(next);
  EXPECT_EQ(h.client->result().outcome, Outcome::kOffline);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.now, end);
}

// The offline limit ends the request with its own outcome and words.
TEST(ClientNetwork, TheOfflineLimitEndsTheRequestWithItsOwnOutcome) {
  Harness h;
  h.timeouts.offline = Millis(2000);
  h.connector.add().recv_would_block().recv_data(kOk);
  h.connector.unreachable_failures = true;  // Once the network is gone, nothing is reached.
  const ClientNext waiting = h.start();
  ASSERT_EQ(waiting.kind, ClientNext::Kind::kWaitIo);
  NetworkInfo none;
  none.connected = false;
  h.client->network_changed(h.now, none);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kOffline);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_NE(std::string(h.client->result().message).find("within 2 s (Timeouts::offline)"),
            std::string::npos)
      << h.client->result().message;
  ASSERT_EQ(h.waits.size(), 1U);
  EXPECT_EQ(h.waits[0], 2000U);
}

// A download larger than a metered network may carry stops when its length is known and goes
// on, by Range, when an unmetered network comes.
TEST(ClientNetwork, AMeteredNetworkHoldsALargeDownloadUntilAnUnmeteredOne) {
  Harness h;
  h.network.metered_up_to = 8;
  h.connector.add().recv_data(std::string(kHead10) + "01").recv_would_block();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-9/10\r\n"
      "Content-Length: 8\r\n\r\n23456789");
  h.start();
  NetworkInfo metered;
  metered.metered = true;
  h.client->network_changed(h.now, metered);
  ClientNext next = h.client->step(h.now);
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  EXPECT_TRUE(h.connector.connection(0).closed());
  EXPECT_FALSE(h.client->network_usable());
  ASSERT_EQ(h.events.back().kind, ClientEvent::Kind::kWait);
  EXPECT_EQ(h.events.back().wait_reason, WaitReason::kOffline);
  EXPECT_NE(std::string(h.events.back().message).find("metered"), std::string::npos);
  h.client->network_changed(h.now + Millis(100), NetworkInfo{});
  h.now = h.now + Millis(100);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes, "0123456789");
}

// RunHint: what an OS scheduler is told at each stage: running, a backoff's end, held for an
// unmetered network with the bytes left, done.
TEST(ClientNetwork, TheRunHintFollowsTheRequestFromRunningToWaitingToDone) {
  Harness h;
  h.network.metered_up_to = 8;
  h.connector.add().recv_data(std::string(kHead10) + "01").recv_would_block();
  // The 503 keeps its connection: the retry goes on it.
  h.connector.add().recv_data(k503).recv_would_block().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-9/10\r\n"
      "Content-Length: 8\r\n\r\n23456789");
  ClientNext next = h.start();
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitIo; ++i) {
    next = h.client->step(h.now);
  }
  RunHint hint = h.client->run_hint(next);
  EXPECT_EQ(hint.state, RunHint::State::kRunning);
  ASSERT_TRUE(hint.bytes_left.has_value());
  EXPECT_EQ(*hint.bytes_left, 8U);  // Ten bytes, two delivered.
  EXPECT_TRUE(hint.unmetered) << "ten bytes are above metered_up_to";
  EXPECT_FALSE(hint.not_roaming);
  NetworkInfo metered;
  metered.metered = true;
  h.client->network_changed(h.now, metered);
  next = h.client->step(h.now);
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  hint = h.client->run_hint(next);
  EXPECT_EQ(hint.state, RunHint::State::kWaitingForNetwork);
  EXPECT_EQ(hint.run_at, next.at) << "the offline limit's end";
  EXPECT_EQ(hint.bytes_left.value_or(0), 8U);
  // An unmetered network: the 503 comes, and its backoff is a plain wait.
  h.client->network_changed(h.now, NetworkInfo{});
  next = h.client->step(h.now);
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  hint = h.client->run_hint(next);
  EXPECT_EQ(hint.state, RunHint::State::kWaiting);
  EXPECT_EQ(hint.run_at, next.at);
  EXPECT_GT(hint.run_at, h.now);
  h.run(next);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.client->run_hint(ClientNext::done()).state, RunHint::State::kDone);
}

TEST(ClientNetwork, TheRunHintAsksForANetworkThatIsNotRoamingWhenThePolicySays) {
  Harness h;
  h.network.roaming = false;
  h.network.metered = false;
  h.connector.add().recv_would_block();
  const ClientNext next = h.start();
  const RunHint hint = h.client->run_hint(next);
  EXPECT_TRUE(hint.not_roaming);
  EXPECT_TRUE(hint.unmetered);
  EXPECT_FALSE(hint.bytes_left.has_value()) << "no length is known before a response";
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

}  // namespace
}  // namespace stepback::https

namespace stepback::https {
namespace {

// "x-goog-hash: crc32c=BASE64" of `body`, computed by the library's own CRC32C.
std::string goog_crc32c(const std::string& body) {
  const std::uint32_t crc =
      crc32c(ConstBytes{reinterpret_cast<const std::uint8_t*>(body.data()), body.size()});
  const std::uint8_t be[4] = {static_cast<std::uint8_t>(crc >> 24),
                              static_cast<std::uint8_t>(crc >> 16),
                              static_cast<std::uint8_t>(crc >> 8), static_cast<std::uint8_t>(crc)};
  char b64[16] = {};
  const std::size_t n = base64_encode(ConstBytes{be, 4}, b64, sizeof b64);
  return "x-goog-hash: crc32c=" + std::string(b64, n) + "\r\n";
}

TEST(ClientIntegrity, MatchingCrc32cAcrossResumedPartsIsVerified) {
  Harness h;
  const std::string hash = goog_crc32c("0123456789");
  h.connector.add()
      .recv_data("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\n" + hash + "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                              "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  int verified = 0;
  for (const ClientEvent& e : h.events)
    verified += e.kind == ClientEvent::Kind::kIntegrity && e.verified;
  EXPECT_EQ(verified, 1);
}

// A body a first client (another process) got the first half of, taken up by a second
// client from what the first one kept: only the rest is asked for, and the integrity check
// covers the whole body.
TEST(ClientIntegrity, BodyResumedFromAnotherClientIsAskedForTheRestAndCheckedWhole) {
  const std::string hash = goog_crc32c("0123456789");
  Harness first;
  first.connector.add()
      .recv_data("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 42\r\n" + hash +
                 "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  first.policy.max_retries = 0;
  ASSERT_EQ(first.run(first.start()).kind, ClientNext::Kind::kDone);
  ASSERT_EQ(first.body.bytes, "01234");
  BodyResume kept;
  kept.offset = first.client->delivered();
  kept.validator = first.client->validator();
  kept.validator_is_etag = first.client->validator_is_etag();
  kept.generation = first.client->generation();
  kept.total = first.client->expected_size();
  kept.integrity = first.client->integrity_state();
  EXPECT_EQ(kept.validator, "\"v1\"");
  EXPECT_EQ(kept.generation, "42");

  Harness second;
  second.body.bytes = first.body.bytes;
  second.resume = kept;
  second.connector.add().recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                                   "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(second.run(second.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(second.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(second.body.bytes, "0123456789");
  const std::string sent = second.connector.connection(0).sent();
  EXPECT_EQ(sent.rfind("GET /x HTTP/1.1\r\n", 0), 0U) << sent;
  EXPECT_NE(sent.find("Range: bytes=5-\r\nIf-Range: \"v1\"\r\nx-goog-if-generation-match: 42\r\n"),
            std::string::npos)
      << sent;
  int verified = 0;
  for (const ClientEvent& e : second.events)
    verified += e.kind == ClientEvent::Kind::kIntegrity && e.verified;
  EXPECT_EQ(verified, 1);
}

// The same, with a wrong byte in the kept half: the check over the whole body fails although
// the second client never saw that byte.
TEST(ClientIntegrity, DamageInTheResumedFromPartIsStillFound) {
  const std::string hash = goog_crc32c("0123456789");
  IntegrityCheck check;
  ASSERT_TRUE(check.add_header("x-goog-hash", hash.substr(13, hash.size() - 15)));
  const char kept_bytes[] = "01x34";
  check.update(ConstBytes{reinterpret_cast<const std::uint8_t*>(kept_bytes), 5});
  Harness h;
  h.body.bytes = kept_bytes;
  BodyResume kept;
  kept.offset = 5;
  kept.validator = "\"v1\"";
  kept.total = 10;
  kept.integrity = check.state();
  h.resume = kept;
  h.connector.add().recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                              "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kIntegrity);
}

// A resume the server no longer honours (the object changed: a whole 200 with another ETag)
// starts the sink over, never splicing the kept part onto the new representation.
TEST(ClientResume, ResumeFromAnotherClientOfAChangedObjectStartsOver) {
  Harness h;
  h.body.bytes = "01234";
  BodyResume kept;
  kept.offset = 5;
  kept.validator = "\"v1\"";
  kept.integrity.size = 5;
  h.resume = kept;
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 4\r\n\r\nnew!");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "new!");
  EXPECT_EQ(h.body.restarts, 1U);
}

// A ranged download's pieces (BodyResume::until, continue_body): each request asks for its
// piece, even from byte 0, and a 206 that delivers it whole ends the request as a finished
// piece; the next continues on the kept connection, pinned by If-Range to the first piece's
// ETag, and the integrity check covers the whole representation once the last is in.
TEST(ClientPieces, EachPieceIsAFinished206AndTheNextContinuesOnTheKeptConnection) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  const std::string hash = goog_crc32c("0123456789");
  ScriptedTransport& c = h.connector.add();
  c.recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
              "Content-Range: bytes 0-3/10\r\nContent-Length: 4\r\n\r\n0123")
      .recv_would_block(IoInterest::kRead)
      .recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                 "Content-Range: bytes 4-7/10\r\nContent-Length: 4\r\n\r\n4567")
      .recv_would_block(IoInterest::kRead)
      .recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                 "Content-Range: bytes 8-9/10\r\nContent-Length: 2\r\n\r\n89");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 206);
  EXPECT_EQ(h.client->delivered(), 4U);
  EXPECT_EQ(h.client->expected_size(), std::optional<std::uint64_t>(10));
  EXPECT_EQ(h.client->validator(), "\"v1\"");
  EXPECT_EQ(h.client->continue_body(100), Status::kOk);  // Past the end: the rest.
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  // A server may send less than asked: a whole part is still a finished piece.
  EXPECT_EQ(h.client->result().status, 206);
  EXPECT_EQ(h.client->delivered(), 8U);
  EXPECT_EQ(h.client->continue_body(12), Status::kOk);
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.connector.opened(), 1U);
  // The last piece completed the representation: no piece follows it.
  EXPECT_EQ(h.client->continue_body(20), Status::kInvalidArgument);
  const std::string sent = c.sent();
  EXPECT_NE(sent.find("\r\nRange: bytes=0-3\r\n\r\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("\r\nRange: bytes=4-99\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << sent;
  EXPECT_NE(sent.find("\r\nRange: bytes=8-11\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << sent;
  bool verified = false;
  for (const ClientEvent& e : h.events) {
    if (e.kind == ClientEvent::Kind::kIntegrity) verified = e.verified;
  }
  EXPECT_TRUE(verified) << "the CRC-32C of the whole object, checked after the last piece";
}

// A piece cut in the middle is retried from where it stopped, up to the same end.
TEST(ClientPieces, ACutPieceResumesUpToTheSameEnd) {
  Harness h;
  BodyResume first;
  first.until = 6;
  h.resume = first;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 0-5/10\r\n"
          "Content-Length: 6\r\n\r\n012")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 3-5/10\r\n"
      "Content-Length: 3\r\n\r\n345");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 206);
  EXPECT_EQ(h.body.bytes, "012345");
  const std::string second = h.connector.connection(1).sent();
  EXPECT_NE(second.find("\r\nRange: bytes=3-5\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << second;
}

// A server that ignores ranges answers a piece with the whole representation: it is taken
// whole, and the request is complete (no piece follows).
TEST(ClientPieces, AServerThatIgnoresRangesSendsTheWholeBodyInOne) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 200);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.client->continue_body(8), Status::kInvalidArgument);
}

// A piece asked of an empty object is not satisfiable (416): the object is fetched whole.
TEST(ClientPieces, APieceOfAnEmptyObjectFetchesItWhole) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  h.connector.add().recv_data(
      "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */0\r\n"
      "Content-Length: 0\r\n\r\n");
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 200);
  EXPECT_EQ(h.body.bytes, "");
  EXPECT_EQ(h.connector.connection(1).sent().find("Range:"), std::string::npos);
}

// A piece whose range does not start where the sink stands is never spliced: the body is
// fetched whole.
TEST(ClientPieces, APartAtAnotherOffsetIsFetchedWhole) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-5/10\r\n"
      "Content-Length: 4\r\n\r\n2345");
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.connector.connection(1).sent().find("Range:"), std::string::npos);
}

TEST(ClientResume, ResumeThatCannotBeTrueIsRefused) {
  Harness h;
  ClientOptions options;
  options.wall_now = [] { return Millis(0); };
  Client client(h.connector, h.context, options);
  BodyResume r;
  r.offset = 5;
  r.integrity.size = 4;  // Covers fewer bytes than the sink holds.
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.integrity.size = 5;
  r.validator = "\"v1\"\r\nX-Evil: 1";
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.validator = "\"v1\"";
  r.generation = "12a";
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.generation = "";
  r.until = 5;  // A piece that ends where the sink already stands.
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.until = UINT64_MAX;
  RequestSpec post = h.spec;
  post.head.method = "POST";
  EXPECT_EQ(client.start(post, r), Status::kInvalidArgument);
}

TEST(ClientIntegrity, MismatchFailsWithItsOwnStatusAndNamesBothValues) {
  Harness h;
  const std::string hash = goog_crc32c("0123456789");
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\n" + hash +
                              "Content-Length: 10\r\n\r\n0123456780");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kIntegrity);
  const std::string message = h.client->result().message;
  EXPECT_NE(message.find("crc32c mismatch: expected "), std::string::npos) << message;
  EXPECT_NE(message.find(", got "), std::string::npos) << message;
}

TEST(ClientIntegrity, TranscodedObjectsAreNotCheckedAgainstStoredHashes) {
  Harness h;
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nx-goog-stored-content-encoding: gzip\r\n" +
                              goog_crc32c("compressed bytes") + "Content-Length: 5\r\n\r\nhello");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "hello");
}

}  // namespace
}  // namespace stepback::https

namespace stepback::https {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

constexpr char k401Expired[] =
    "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"https://accounts.google.com/\", "
    "error=\"invalid_token\"\r\nContent-Length: 6\r\n\r\nexpird";

TEST(ClientCredentials, EveryAttemptAsksForTheAuthorization) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(tokens.asked, 2);
  EXPECT_EQ(tokens.refreshed, 0);
  const std::string sent = h.connector.connection(0).sent();
  EXPECT_EQ(count(sent, "\r\nAuthorization: Bearer t1\r\n\r\n"), 2U) << sent;
}

TEST(ClientCredentials, ExpiredTokenGetsOneRefreshAndAnImmediateAttempt) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data(k401Expired).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(tokens.refreshed, 1);
  EXPECT_TRUE(h.waits.empty());      // No backoff.
  EXPECT_EQ(h.body.bytes, "hello");  // The 401's body went nowhere.
  const std::string sent = h.connector.connection(0).sent();
  EXPECT_NE(sent.find("Authorization: Bearer t2\r\n"), std::string::npos) << sent;
  for (const ClientEvent& e : h.events) {
    EXPECT_EQ(std::string(e.message).find("Bearer"), std::string::npos);
  }
}

TEST(ClientCredentials, SecondRejectionInARowIsTerminal) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data(k401Expired).recv_would_block().recv_data(k401Expired);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(h.client->result().status, 401);
  EXPECT_EQ(tokens.refreshed, 1);
}

TEST(ClientCredentials, A401WithoutAnInvalidTokenChallengeIsNotRefreshed) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(tokens.refreshed, 0);
}

// ---- Redirects ------------------------------------------------------------------------------

std::string redirect(int status, const std::string& location, const std::string& body = "") {
  return "HTTP/1.1 " + std::to_string(status) + " Moved\r\nLocation: " + location +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

int count_of(const std::vector<ClientEvent>& events, ClientEvent::Kind kind) {
  int n = 0;
  for (const ClientEvent& e : events) n += e.kind == kind;
  return n;
}

TEST(ClientRedirect, ARelativeLocationIsFollowedOnTheSameConnectionAsNoRetry) {
  Harness h("https://example.test/releases/latest");
  h.max_redirects = 5;
  h.policy.max_retries = 0;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "../files/fw-1.2.bin", "<a href=...>moved</a>"))
      .recv_would_block()
      .recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.client->redirects(), 1U);
  EXPECT_EQ(h.body.bytes, "hello");  // Not the 302's body.
  EXPECT_EQ(h.client->redirected_url(), "https://example.test/files/fw-1.2.bin");
  EXPECT_EQ(h.connector.opened(), 1U);
  const std::string sent = h.connector.connection(0).sent();
  EXPECT_NE(sent.find("GET /files/fw-1.2.bin HTTP/1.1\r\n"), std::string::npos) << sent;
  EXPECT_EQ(count_of(h.events, ClientEvent::Kind::kRedirect), 1);
}

TEST(ClientRedirect, WithoutARedirectLimitA3xxIsTheFinalResponse) {
  Harness h;
  h.connector.add().recv_data(redirect(302, "/elsewhere", "moved"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 302);
  EXPECT_EQ(h.body.bytes, "moved");
}

TEST(ClientRedirect, SeeOtherTurnsAPostIntoAGetWithoutBodyOrContentFields) {
  Harness h("https://example.test/jobs", "POST");
  h.max_redirects = 5;
  const std::string payload = "{\"a\":1}";
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
  h.spec.body = BodySource::of(&bytes);
  const Header headers[] = {{"Content-Type", "application/json"}, {"X-Trace", "1"}};
  h.spec.head.headers = headers;
  h.spec.head.header_count = 2;
  h.connector.add().recv_data(redirect(303, "/jobs/7")).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  const std::string sent = h.connector.connection(0).sent();
  const std::size_t second = sent.find("GET /jobs/7 HTTP/1.1\r\n");
  ASSERT_NE(second, std::string::npos) << sent;
  const std::string get = sent.substr(second);
  EXPECT_EQ(get.find("Content-Type"), std::string::npos) << get;
  EXPECT_EQ(get.find("Content-Length"), std::string::npos) << get;
  EXPECT_NE(get.find("X-Trace: 1\r\n"), std::string::npos) << get;
  EXPECT_EQ(get.find(payload), std::string::npos) << get;
}

TEST(ClientRedirect, TemporaryRedirectKeepsMethodAndBody) {
  Harness h("https://example.test/upload", "PUT");
  h.max_redirects = 5;
  const std::string payload = "0123456789";
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
  h.spec.body = BodySource::of(&bytes);
  h.connector.add().recv_data(redirect(307, "/upload2")).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  const std::string sent = h.connector.connection(0).sent();
  const std::size_t second = sent.find("PUT /upload2 HTTP/1.1\r\n");
  ASSERT_NE(second, std::string::npos) << sent;
  EXPECT_NE(sent.substr(second).find("Content-Length: 10\r\n\r\n0123456789"), std::string::npos);
}

TEST(ClientRedirect, CredentialsNeverGoToAnotherOrigin) {
  Harness h("https://api.example.test/file");
  h.max_redirects = 5;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  const Header headers[] = {{"Authorization", "Bearer caller"}, {"Cookie", "s=1"}, {"X-Keep", "k"}};
  h.spec.head.headers = headers;
  h.spec.head.header_count = 3;
  h.connector.add().recv_data(redirect(302, "https://cdn.example.test/blob"));
  h.connector.add().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  ASSERT_EQ(h.connector.opened(), 2U);
  EXPECT_NE(h.connector.connection(0).sent().find("Authorization"), std::string::npos);
  const std::string other = h.connector.connection(1).sent();
  EXPECT_NE(other.find("Host: cdn.example.test\r\n"), std::string::npos) << other;
  EXPECT_EQ(other.find("Authorization"), std::string::npos) << other;
  EXPECT_EQ(other.find("Cookie"), std::string::npos) << other;
  EXPECT_NE(other.find("X-Keep: k\r\n"), std::string::npos) << other;
  EXPECT_EQ(tokens.asked, 1);
}

TEST(ClientRedirect, HttpsToHttpIsRefused) {
  Harness h;
  h.max_redirects = 5;
  h.connector.add().recv_data(redirect(301, "http://example.test/x"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_STREQ(h.client->result().message,
               "refused a redirect from https to http (301 to 'http://example.test/x')");
  EXPECT_EQ(h.connector.opened(), 1U);
}

TEST(ClientRedirect, ALoopEndsTheRequestWithItsOwnWords) {
  Harness h("https://example.test/a");
  h.max_redirects = 10;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "/b"))
      .recv_would_block()
      .recv_data(redirect(302, "https://EXAMPLE.test:443/c"))
      .recv_would_block()
      .recv_data(redirect(302, "/a"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_EQ(std::string(h.client->result().message).rfind("the redirects loop back", 0), 0U)
      << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 1U);
}

TEST(ClientRedirect, OneRedirectMoreThanTheLimitEndsTheRequest) {
  Harness h("https://example.test/0");
  h.max_redirects = 2;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "/1"))
      .recv_would_block()
      .recv_data(redirect(302, "/2"))
      .recv_would_block()
      .recv_data(redirect(302, "/3"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_STREQ(h.client->result().message, "more than 2 redirects (the last: 302 to '/3')");
  EXPECT_EQ(h.client->redirects(), 2U);
}

TEST(ClientRedirect, ALocationThatIsNoHttpUrlIsRefused) {
  Harness h;
  h.max_redirects = 5;
  h.connector.add().recv_data(redirect(302, "ftp://example.test/x"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_STREQ(h.client->result().message,
               "the redirect's Location is not an http(s) URL (302 to 'ftp://example.test/x')");
}

// A body cut after a redirect is resumed from the URL the redirect led to.
TEST(ClientRedirect, ACutBodyResumesAtTheRedirectedUrl) {
  Harness h("https://example.test/latest");
  h.max_redirects = 5;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "/v2.bin"))
      .recv_would_block()
      .recv_data(std::string(kHead10) + "01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  const std::string second = h.connector.connection(1).sent();
  EXPECT_EQ(second.rfind("GET /v2.bin HTTP/1.1\r\n", 0), 0U) << second;
  EXPECT_NE(second.find("Range: bytes=5-\r\n"), std::string::npos) << second;
}

}  // namespace
}  // namespace stepback::https

// Slow servers: a head that trickles, a body below the throughput floor, a reader that takes
// a byte now and then. The scripted connection hands over one byte per recv() (or accepts one
// per send()) with a would-block after each, and drive() lets `gap` pass on the fake clock
// before every step that waits for I/O: a peer moving one byte per `gap`.
namespace stepback::https {
namespace {

// Queues `text` one byte per recv(), each followed by a would-block.
void trickle(ScriptedTransport& c, const std::string& text) {
  for (const char ch : text) c.recv_data(std::string(1, ch)).recv_would_block();
}

// Steps `h` until done (at most `limit` steps): an I/O wait ends after `gap` (a byte arrives)
// unless its deadline comes first; a timed wait ends at its time. Returns when the clock
// stood at the request's end.
Millis drive(Harness& h, ClientNext next, Millis gap, int limit = 20000) {
  for (int i = 0; i < limit && next.kind != ClientNext::Kind::kDone; ++i) {
    h.nexts.push_back(next);
    if (next.kind == ClientNext::Kind::kWaitIo) {
      h.now = min(next.at, h.now + gap);
    } else if (next.at > h.now) {
      h.waits.push_back((next.at - h.now).count());
      h.now = next.at;
    }
    next = h.client->step(h.now);
  }
  EXPECT_EQ(next.kind, ClientNext::Kind::kDone);
  return h.now;
}

// The kError events' messages, in order.
std::vector<std::string> error_messages(const Harness& h) {
  std::vector<std::string> out;
  for (const ClientEvent& e : h.events) {
    if (e.kind == ClientEvent::Kind::kError) out.emplace_back(e.message);
  }
  return out;
}

const std::string kHead1000 = "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 1000\r\n\r\n";

// Regression (slowloris head): a server sending its head a byte a second kept the client
// forever, since every byte reset the read timeout. The head must now be complete within the
// read timeout of the request; the attempt fails as a timeout and the retry goes on.
TEST(ClientSlowServers, SlowlorisHeadEndsAtTheReadTimeout) {
  Harness h;
  h.timeouts.read = Millis(5000);
  trickle(h.connector.add(), "HTTP/1.1 200 OK\r\nX-Slow: " + std::string(200, 's') + "\r\n\r\n");
  h.connector.add().recv_data(kOk);
  const Millis sent = h.now;  // The request leaves in the first step.
  drive(h, h.start(), Millis(700));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.body.bytes, "hello");
  EXPECT_EQ(error_messages(h),
            std::vector<std::string>{"the response head did not arrive within the read timeout "
                                     "(5000 ms)"});
  for (const ClientEvent& e : h.events) {
    if (e.kind != ClientEvent::Kind::kError) continue;
    EXPECT_EQ(e.failure, Failure::kTimeout);
    // The client asked to wake at the head's deadline (bytes came every 700 ms).
    EXPECT_EQ(e.at, sent + Millis(5000));
  }
}

// A head that arrives in pieces but whole within the read timeout is not cut.
TEST(ClientSlowServers, AHeadCompleteWithinTheReadTimeoutIsKept) {
  Harness h;
  h.timeouts.read = Millis(5000);
  ScriptedTransport& c = h.connector.add();
  trickle(c, "HTTP/1.1 200 OK\r\n");  // 17 bytes, 100 ms apart.
  c.recv_data("Content-Length: 5\r\n\r\nhello");
  drive(h, h.start(), Millis(100));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_TRUE(error_messages(h).empty());
}

// Regression (trickling body never cut): a body arriving a byte a second was never cut, the
// read timeout counting silence only. Below the floor over a window, the attempt now ends as
// a timeout with a message naming the floor; the wait asked for while receiving ends with the
// window, so the client wakes to check it.
TEST(ClientSlowServers, TricklingBodyIsCutByTheThroughputFloor) {
  Harness h;
  h.policy.max_retries = 0;
  h.timeouts.read = Millis(5000);
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, std::string(1000, 'b'));
  const ClientNext first = h.start();
  ASSERT_EQ(first.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(first.at, h.now + Millis(2000));  // The window's end, before the read timeout.
  drive(h, first, Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(h.client->result().error, Status::kTimeout);
  EXPECT_STREQ(h.client->result().message,
               "the response body arrived at 1 B/s over 2000 ms, below the speed limit of 100 B/s");
  EXPECT_EQ(h.body.bytes, "bb");
}

// A GET cut by the floor resumes by Range on the next attempt, byte-exact.
TEST(ClientSlowServers, AGetCutByTheFloorResumesByRange) {
  Harness h;
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  const std::string body(1000, 'b');
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, body);
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-999/1000\r\n"
      "Content-Length: 998\r\n\r\n" +
      body.substr(2));
  drive(h, h.start(), Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.body.offset_violations, 0U);
  EXPECT_NE(h.connector.connection(1).sent().find("\r\nRange: bytes=2-\r\nIf-Range: \"v1\"\r\n"),
            std::string::npos)
      << h.connector.connection(1).sent();
}

// A slow body that keeps above the floor is never cut, over many windows.
TEST(ClientSlowServers, ABodyAboveTheFloorIsNeverCut) {
  Harness h;
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, std::string(1000, 'b'));
  const Millis began = h.now;
  const Millis ended = drive(h, h.start(), Millis(9));  // 111 B/s, for 9 s: four windows.
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes.size(), 1000U);
  EXPECT_GE((ended - began).count(), 8000U);
}

// The floor is judged once what has arrived is read: a loop that stepped 3 s late finds the
// whole body waiting (1000 bytes, 333 B/s over the window, above 300) and keeps it, though
// its first 64-byte read alone would make 21 B/s.
TEST(ClientSlowServers, ALoopThatStepsLateIsNotTakenForASlowServer) {
  Harness h;
  h.timeouts.speed_limit = 300;
  h.timeouts.speed_time = Millis(2000);
  h.connector.add().recv_data(kHead1000).recv_would_block().recv_data(std::string(1000, 'b'));
  ASSERT_EQ(h.start().kind, ClientNext::Kind::kWaitIo);
  h.now = h.now + Millis(3000);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes.size(), 1000U);
}

// speed_limit 0: no floor; the trickle goes on as long as no silence reaches the read timeout.
TEST(ClientSlowServers, FloorZeroIsDisabled) {
  Harness h;
  h.timeouts.read = Millis(5000);
  h.timeouts.speed_limit = 0;
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, std::string(1000, 'b'));
  const ClientNext first = h.start();
  ASSERT_EQ(first.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(first.at, h.now + Millis(5000));  // The read timeout alone.
  drive(h, first, Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes.size(), 1000U);
}

// A server that reads the request body a byte a second holds no upload: the floor counts the
// bytes sent too, and the (idempotent) PUT goes again.
TEST(ClientSlowServers, AReaderBelowTheFloorEndsTheSend) {
  Harness h("https://example.test/upload", "PUT");
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  const std::string payload(300, 'p');
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
  h.spec.body = BodySource::of(&bytes);
  ScriptedTransport& slow = h.connector.add();
  slow.send_accept(40);  // 40 bytes of the head; then one byte per would-block.
  for (int i = 0; i < 500; ++i) slow.send_would_block().send_accept(1);
  h.connector.add().recv_data(kOk);
  drive(h, h.start(), Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(error_messages(h),
            std::vector<std::string>{"the request went out at 21 B/s over 2000 ms, below the "
                                     "speed limit of 100 B/s"});
}

// "A hostile server cannot hold a client forever with the profile's defaults": under each
// profile's Timeouts, a head trickling a byte a second ends at the read timeout, and a body
// trickling a byte a second ends at the first window's end.
TEST(ClientSlowServers, TheProfilesDefaultsEndBothTrickles) {
  for (const profiles::DeviceProfile* p : {&profiles::desktop, &profiles::mobile}) {
    SCOPED_TRACE(p->name);
    ASSERT_GT(p->timeouts.speed_limit, 1U);  // A byte a second is below it.
    Harness head;
    head.policy.max_retries = 0;
    head.timeouts = p->timeouts;
    trickle(head.connector.add(),
            "HTTP/1.1 200 OK\r\nX-Slow: " + std::string(1000, 's') + "\r\n\r\n");
    const Millis head_began = head.now;
    const Millis head_ended = drive(head, head.start(), Millis(1000));
    EXPECT_EQ(head.client->result().error, Status::kTimeout);
    EXPECT_EQ(head_ended - head_began, p->timeouts.read);

    Harness body;
    body.policy.max_retries = 0;
    body.timeouts = p->timeouts;
    ScriptedTransport& c = body.connector.add();
    c.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n").recv_would_block();
    trickle(c, std::string(10000, 'b'));
    const Millis body_began = body.now;
    const Millis body_ended = drive(body, body.start(), Millis(1000));
    EXPECT_EQ(body.client->result().error, Status::kTimeout);
    EXPECT_EQ(body_ended - body_began, p->timeouts.speed_time);
  }
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
    EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{20000})) << wall.count();
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
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{30000}));
}

// Pre-signed URLs that expire (ClientOptions::url_refresh): fresh URLs handed out in turn.
struct FreshUrls {
  std::vector<std::string> urls;
  std::size_t asked = 0;
  static std::size_t next(void* self, MutableBytes out) {
    auto* f = static_cast<FreshUrls*>(self);
    const std::size_t i = f->asked++;
    if (i >= f->urls.size() || f->urls[i].size() > out.size) return 0;
    std::memcpy(out.data, f->urls[i].data(), f->urls[i].size());
    return f->urls[i].size();
  }
};

constexpr const char* kS3Expired =
    "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: 85\r\n\r\n"
    "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>\n\n\n\n\n\n\n";

// Cut after "hel", the next attempt meets the expiry answer; the fresh URL goes on at once
// from byte 3 (Range and If-Range on the ETag), as neither a retry nor a failure.
TEST(ClientUrlRefresh, AnExpiredUrlIsReplacedAndTheBodyGoesOnFromItsOffset) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"https://bucket.test/o?sig=2"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  h.connector.add()
      .recv_data("HTTP/1.1 200 OK\r\nETag: \"e1\"\r\nContent-Length: 5\r\n\r\nhel")
      .recv_closed();
  h.connector.add()
      .recv_data(kS3Expired)
      .recv_would_block()
      .recv_data(
          "HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes 3-4/5\r\n"
          "Content-Length: 2\r\n\r\nlo");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "hello");
  EXPECT_EQ(fresh.asked, 1U);
  EXPECT_EQ(h.client->url_refreshes(), 1U);
  EXPECT_FALSE(h.client->url_expired());
  EXPECT_EQ(h.client->result().attempts, 2U);  // The cut's retry; the refresh is no attempt.
  const std::string sent = h.connector.connection(1).sent();
  const std::size_t second = sent.find("GET /o?sig=2 HTTP/1.1\r\n");
  ASSERT_NE(second, std::string::npos) << sent;
  EXPECT_NE(sent.find("Range: bytes=3-\r\n", second), std::string::npos) << sent;
  EXPECT_NE(sent.find("If-Range: \"e1\"\r\n", second), std::string::npos) << sent;
  ASSERT_EQ(count_of(h.events, ClientEvent::Kind::kUrlRefresh), 1);
  for (const ClientEvent& e : h.events) {
    if (e.kind != ClientEvent::Kind::kUrlRefresh) continue;
    EXPECT_EQ(e.status, 403);
    EXPECT_EQ(e.offset, 3U);
    EXPECT_EQ(e.url, "https://bucket.test/o?sig=2");
  }
}

// Fresh URLs that expire at once: at most max_url_refreshes (3) are taken, then the expiry
// answer is the final response and url_expired() says why.
TEST(ClientUrlRefresh, RefreshesAreBounded) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"https://bucket.test/o?sig=2", "https://bucket.test/o?sig=3",
                   "https://bucket.test/o?sig=4", "https://bucket.test/o?sig=5"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  ScriptedTransport& t = h.connector.add();
  for (int i = 0; i < 4; ++i) t.recv_data(kS3Expired).recv_would_block();
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(h.client->result().status, 403);
  EXPECT_EQ(h.client->url_refreshes(), 3U);
  EXPECT_EQ(fresh.asked, 3U);
  EXPECT_TRUE(h.client->url_expired());
  EXPECT_EQ(h.body.bytes, "");  // Expiry answers are read to be checked, not delivered.
}

// A fresh URL may not leave https for http.
TEST(ClientUrlRefresh, AFreshUrlFromHttpsToHttpIsRefused) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"http://bucket.test/o?sig=2"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  h.connector.add().recv_data(kS3Expired);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_STREQ(h.client->result().message, "refused a fresh URL from https to http");
  EXPECT_EQ(h.connector.opened(), 1U);
}

// A 403 for another reason is the final response, its body the caller's as without
// url_refresh (read first, to be checked); the app is not asked.
TEST(ClientUrlRefresh, AnotherRefusalIsTheFinalResponseWithItsBody) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"https://bucket.test/o?sig=2"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  h.connector.add().recv_data(
      "HTTP/1.1 403 Forbidden\r\nContent-Length: 55\r\n\r\n"
      "<Error><Code>SignatureDoesNotMatch</Code></Error>\n\n\n\n\n\n");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(fresh.asked, 0U);
  EXPECT_FALSE(h.client->url_expired());
  EXPECT_EQ(h.body.bytes, "<Error><Code>SignatureDoesNotMatch</Code></Error>\n\n\n\n\n\n");
}

// Without url_refresh an expiry answer is an ordinary final 403.
TEST(ClientUrlRefresh, WithoutARefreshAnExpiryIsAnOrdinaryFinalResponse) {
  Harness h("https://bucket.test/o?sig=1");
  h.connector.add().recv_data(kS3Expired);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().status, 403);
  EXPECT_FALSE(h.client->url_expired());
  EXPECT_EQ(h.body.bytes.rfind("<Error><Code>AccessDenied</Code>", 0), 0U);
}

}  // namespace
}  // namespace stepback::https
