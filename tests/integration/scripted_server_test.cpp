// The Client against the scripted Python ssl server (scripted_server.py): status sequences,
// server retry directions, keep-alive and Connection: close, body framing, and the faults a
// real network produces (slow answers, resets mid-body, garbage, oversized heads).
#include <gtest/gtest.h>

#include <string>

#include "integration_support.hpp"

namespace stepback::integration {
namespace {

using Kind = https::ClientEvent::Kind;

class ScriptedServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(python_path(), "python3");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    tls_ = make_tls(pki()->ca);
    ASSERT_NE(tls_, nullptr);
  }

  // Starts the server with `script` (a JSON list of actions) and returns a GET set-up of
  // `target` on it.
  ClientSetup serve(const std::string& script, const std::string& target = "/",
                    const std::string& tls_version = "any") {
    ScriptedServer::Options options;
    options.script = script;
    options.tls_version = tls_version;
    EXPECT_TRUE(server_.start(options));
    ClientSetup setup;
    setup.url = server_.url(target);
    setup.tls = tls_.get();
    return setup;
  }

  // Server log lines starting with `what` ("request", "handshake").
  int logged(const std::string& what) const { return count_of(server_.log(), what + " "); }

  std::unique_ptr<https::TlsClientConfig> tls_;
  ScriptedServer server_;
};

TEST_F(ScriptedServerTest, Two503sThenSuccessTakesThreeAttempts) {
  const RunResult run = run_client(serve(
      R"([{"status": 503, "body": "busy"}, {"status": 503, "body": "busy"},
          {"status": 200, "body": "hello"}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 3U) << run.summary();
  EXPECT_EQ(run.result.status, 200);
  // Error bodies of retried answers are kept for RetryInfo, not handed to the caller.
  EXPECT_EQ(run.body, "hello");
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 2U) << run.summary();
  for (const Event& w : waits) {
    EXPECT_EQ(w.wait_reason, WaitReason::kBackoff);
    EXPECT_GE(w.wait.count(), 100U);  // initial_delay * 2^n + U[0, 50], capped at 500.
    EXPECT_LE(w.wait.count(), 500U);
  }
  EXPECT_EQ(logged("request"), 3) << server_.log();
}

TEST_F(ScriptedServerTest, KeepAliveServesEveryRetryOnOneConnection) {
  const RunResult run = run_client(serve(R"([{"status": 503}, {"status": 503}, {"status": 200}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 3U);
  EXPECT_EQ(run.connections, 1U) << run.summary();
  EXPECT_EQ(logged("handshake"), 1) << server_.log();
  EXPECT_EQ(count_of(server_.log(), "request conn=1 "), 3) << server_.log();
}

TEST_F(ScriptedServerTest, ConnectionCloseMakesEachRetryReconnect) {
  const RunResult run = run_client(serve(
      R"([{"status": 503, "close": true}, {"status": 503, "close": true},
          {"status": 200, "body": "ok", "close": true}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 3U);
  EXPECT_EQ(run.connections, 3U) << run.summary();
  EXPECT_EQ(run.body, "ok");
  EXPECT_EQ(logged("handshake"), 3) << server_.log();
}

// A reconnect offers the session saved on the previous connection; the server confirms
// resumption in its log (SSLSocket.session_reused) and the client in resumed().
TEST_F(ScriptedServerTest, ReconnectResumesTheTls12Session) {
  const RunResult run = run_client(
      serve(R"([{"status": 503, "close": true}, {"status": 200, "body": "ok"}])", "/", "1.2"));
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  ASSERT_EQ(run.connections, 2U);
  EXPECT_EQ(count_of(server_.log(), "version=TLSv1.2"), 2) << server_.log();
  EXPECT_EQ(count_of(server_.log(), "handshake conn=2 version=TLSv1.2 reused=1"), 1)
      << server_.log();
  EXPECT_TRUE(run.resumed) << run.summary();
}

TEST_F(ScriptedServerTest, ReconnectResumesTheTls13Session) {
  const RunResult run = run_client(
      serve(R"([{"status": 503, "close": true}, {"status": 200, "body": "ok"}])", "/", "1.3"));
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  ASSERT_EQ(run.connections, 2U);
  EXPECT_EQ(count_of(server_.log(), "version=TLSv1.3"), 2) << server_.log();
  EXPECT_EQ(count_of(server_.log(), "handshake conn=2 version=TLSv1.3 reused=1"), 1)
      << server_.log();
  EXPECT_TRUE(run.resumed) << run.summary();
}

TEST_F(ScriptedServerTest, RetryAfterSecondsIsHonoured) {
  const RunResult run = run_client(serve(
      R"([{"status": 429, "headers": [["Retry-After", "1"]]}, {"status": 200, "body": "ok"}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 1U) << run.summary();
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kRetryAfter);
  EXPECT_GE(waits[0].wait.count(), 1000U);
  // And the second attempt really started a second later.
  const auto attempts = run.of(Kind::kAttempt);
  ASSERT_EQ(attempts.size(), 2U);
  EXPECT_GE((attempts[1].at - attempts[0].at).count(), 1000U) << run.summary();
}

TEST_F(ScriptedServerTest, RetryInfoInAProtobufStatusIsHonoured) {
  // 0.8 s, then the first backoff of the test policy (100 ms + U[0, 50 ms]): the server's
  // delay comes first, and the loop's own jittered wait spreads the retries after it.
  const RunResult run = run_client(
      serve(R"([{"status": 503, "retry_info_proto": 0.8}, {"status": 200, "body": "ok"}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 1U) << run.summary();
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kRetryInfo) << run.summary();
  EXPECT_GE(waits[0].wait.count(), 800U + 100U);
  EXPECT_LE(waits[0].wait.count(), 800U + 150U);
}

TEST_F(ScriptedServerTest, RetryInfoInAJsonStatusIsHonoured) {
  const RunResult run = run_client(
      serve(R"([{"status": 503, "retry_info_json": 0.8}, {"status": 200, "body": "ok"}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 1U) << run.summary();
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kRetryInfo) << run.summary();
  EXPECT_GE(waits[0].wait.count(), 800U + 100U);
  EXPECT_LE(waits[0].wait.count(), 800U + 150U);
}

TEST_F(ScriptedServerTest, ContentLengthBodyOf200KiBArrivesIntact) {
  constexpr std::size_t kSize = 200 * 1024;
  const RunResult run = run_client(serve(R"([{"status": 200, "pattern": 204800}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  ASSERT_EQ(run.body.size(), kSize);
  EXPECT_EQ(fnv1a(reinterpret_cast<const std::uint8_t*>(run.body.data()), run.body.size()),
            pattern_fnv1a(kSize));
}

TEST_F(ScriptedServerTest, ChunkedBodyOf200KiBArrivesIntact) {
  constexpr std::size_t kSize = 200 * 1024;
  // Odd chunk sizes, so chunk boundaries fall anywhere within TLS records.
  const RunResult run = run_client(serve(R"([{"status": 200, "pattern": 204800, "chunked": true,
                                        "chunk": 7001}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  ASSERT_EQ(run.body.size(), kSize);
  EXPECT_EQ(fnv1a(reinterpret_cast<const std::uint8_t*>(run.body.data()), run.body.size()),
            pattern_fnv1a(kSize));
}

TEST_F(ScriptedServerTest, ChunkedRetryThenChunkedSuccessOnOneConnection) {
  const RunResult run = run_client(serve(
      R"([{"status": 503, "body": "busy busy", "chunked": true, "chunk": 4},
          {"status": 200, "body": "chunked hello", "chunked": true, "chunk": 5}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.connections, 1U) << run.summary();
  EXPECT_EQ(run.body, "chunked hello");
}

TEST_F(ScriptedServerTest, SlowResponseTimesOutThenTheRetrySucceeds) {
  ClientSetup setup =
      serve(R"([{"delay": 2.0, "status": 200, "body": "late"}, {"status": 200, "body": "ok"}])");
  setup.timeouts.read = Millis(500);
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.body, "ok");
  const auto errors = run.of(Kind::kError);
  ASSERT_EQ(errors.size(), 1U) << run.summary();
  EXPECT_EQ(errors[0].failure, Failure::kTimeout);
  // The retry did not sit out the server's delay.
  EXPECT_LT(run.elapsed.count(), 2000U) << run.summary();
  EXPECT_EQ(run.connections, 2U);
}

TEST_F(ScriptedServerTest, ResetMidBodyIsRetriedForGet) {
  const RunResult run = run_client(serve(
      R"([{"status": 200, "pattern": 100000, "reset_after": 3000},
          {"status": 200, "body": "whole"}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  const auto errors = run.of(Kind::kError);
  ASSERT_EQ(errors.size(), 1U) << run.summary();
  EXPECT_EQ(errors[0].failure, Failure::kReset);
  // No validator to resume with: the sink was told to start over, so it holds the second
  // body alone (it used to hold the first attempt's 3000 bytes followed by "whole").
  EXPECT_EQ(run.body, "whole");
  EXPECT_EQ(run.restarts, 1U);
  EXPECT_EQ(run.offset_violations, 0U);
}

TEST_F(ScriptedServerTest, ResetMidBodyIsNotRetriedForPost) {
  ClientSetup setup = serve(
      R"([{"status": 200, "pattern": 100000, "reset_after": 3000},
          {"status": 200, "body": "must not be reached"}])");
  setup.method = "POST";
  setup.body = "order=1";
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kNotIdempotent) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.error, https::Status::kReset);
  EXPECT_EQ(count_of(server_.log(), "request conn=1 method=POST target=/ body=7"), 1)
      << server_.log();
  EXPECT_EQ(logged("request"), 1) << server_.log();
}

TEST_F(ScriptedServerTest, PostIsRetriedOn503BecauseItWasNotProcessed) {
  ClientSetup setup = serve(R"([{"status": 503}, {"status": 201, "body": "created"}])");
  setup.method = "POST";
  setup.body = "order=1";
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.result.status, 201);
  EXPECT_EQ(run.body, "created");
  EXPECT_EQ(count_of(server_.log(), "method=POST target=/ body=7"), 2) << server_.log();
}

TEST_F(ScriptedServerTest, PostIsNotRetriedOn500) {
  ClientSetup setup = serve(R"([{"status": 500}, {"status": 201}])");
  setup.method = "POST";
  setup.body = "order=1";
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kNotIdempotent) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.status, 500);
}

// A server that refuses an upload from its head alone answers before reading the body and
// closes; the client's send then fails (the unread bytes make the close a reset), but the
// answer is in the receive queue: it must be read and reported, not lost as "failed while
// sending". (Under TLS 1.3, mbedTLS flushes pending output while it reads the server's
// session tickets; that flush must not end the read.)
TEST_F(ScriptedServerTest, AnEarly413BeforeAnUnreadBodyIsTheAnswer) {
  ClientSetup setup = serve(
      R"([{"status": 413, "body": "the object is too large", "early": 0.3},
          {"status": 201, "body": "must not be reached"}])");
  setup.method = "POST";
  setup.body.assign(8u << 20, 'x');
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalStatus) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.status, 413);
  EXPECT_EQ(run.body, "the object is too large");
  EXPECT_EQ(logged("request"), 1) << server_.log();
}

// The same with an early 503: the server has not processed the POST, so it is retried, on a
// new connection (the old one is unusable, its body half sent).
TEST_F(ScriptedServerTest, AnEarly503BeforeAnUnreadBodyIsRetried) {
  ClientSetup setup =
      serve(R"([{"status": 503, "early": 0.3}, {"status": 201, "body": "created"}])");
  setup.method = "POST";
  setup.body.assign(8u << 20, 'x');
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.result.status, 201);
  EXPECT_EQ(run.body, "created");
  EXPECT_EQ(run.connections, 2U);
  EXPECT_EQ(count_of(server_.log(), "body=unread"), 1) << server_.log();
  EXPECT_EQ(count_of(server_.log(), "body=8388608"), 1) << server_.log();
}

TEST_F(ScriptedServerTest, GarbageResponseIsATerminalProtocolFailure) {
  const RunResult run =
      run_client(serve(R"([{"raw": "SSH-2.0-OpenSSH_9.2\r\n\r\n"}, {"status": 200}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.error, https::Status::kProtocol);
  EXPECT_EQ(logged("request"), 1) << server_.log();
}

TEST_F(ScriptedServerTest, OversizedHeadersAreTerminal) {
  ClientSetup setup = serve(R"([{"status": 200, "header_bytes": 16000}, {"status": 200}])");
  setup.head_buffer = 4096;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.error, https::Status::kHeadersTooLarge);
  EXPECT_EQ(logged("request"), 1) << server_.log();
}

TEST_F(ScriptedServerTest, NotFoundIsATerminalStatus) {
  const RunResult run =
      run_client(serve(R"([{"status": 404, "body": "no such thing"}])", "/missing"));
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalStatus) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.status, 404);
  EXPECT_EQ(run.body, "no such thing");  // A terminal answer's body goes to the caller.
  EXPECT_EQ(count_of(server_.log(), "target=/missing"), 1) << server_.log();
}

TEST_F(ScriptedServerTest, PersistentFailureExhaustsTheRetries) {
  ClientSetup setup = serve(R"([{"status": 503}])");
  setup.policy.max_retries = 2;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kRetriesExhausted) << run.summary();
  EXPECT_EQ(run.result.attempts, 3U);
  EXPECT_EQ(run.result.status, 503);
  EXPECT_EQ(logged("request"), 3) << server_.log();
}

TEST_F(ScriptedServerTest, PlainHttpWorksWithoutTls) {
  ScriptedServer::Options options;
  options.script = R"([{"status": 503}, {"status": 200, "body": "plain"}])";
  options.tls = false;
  ScriptedServer plain;
  ASSERT_TRUE(plain.start(options));
  ClientSetup setup;
  setup.url = plain.url("/");
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.body, "plain");
}

}  // namespace
}  // namespace stepback::integration

namespace stepback::integration {
namespace {

// Regression: while TCP connected, the Client asked its loop to wait for I/O on
// fd -1 (the TLS stream had no socket yet), so every connect that did not complete at once
// waited out the whole connect timeout. Here the server's accept queue is full for 0.3 s,
// the client's SYN is dropped and retransmitted after about a second: the request must
// finish on its first connection, long before the 20 s connect timeout, and no wait may lack
// a descriptor.
TEST_F(ScriptedServerTest, SlowConnectIsFollowedNotWaitedOut) {
  ScriptedServer::Options options;
  options.script = R"([{"status": 200, "body": "hello"}])";
  options.full_queue_seconds = 0.3;
  ASSERT_TRUE(server_.start(options));
  ClientSetup setup;
  setup.url = server_.url("/");
  setup.tls = tls_.get();
  setup.timeouts.connect = Millis(20000);
  setup.timeouts.tls_handshake = Millis(20000);
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U) << run.summary();
  EXPECT_EQ(run.connections, 1U);
  EXPECT_EQ(run.body, "hello");
  EXPECT_EQ(run.io_waits_without_fd, 0U);
  // A SYN retransmission takes about 1 s (3 s for a second one); waiting out the timeout
  // takes 20 s. The bound separates the two by far more than any machine's noise.
  EXPECT_LT(run.elapsed, Millis(10000)) << run.summary();
}

}  // namespace
}  // namespace stepback::integration

namespace stepback::integration {
namespace {

constexpr std::size_t kObject = 100000;

// Regression: a POST retried after a 503 failed (not idempotent) when the server had
// closed the kept-alive connection during the backoff wait: the client wrote on the dead
// socket, so a request byte had left. The kept connection is now checked before reuse.
TEST_F(ScriptedServerTest, PostRetriedAfter503OnAConnectionTheServerClosedMeanwhile) {
  ClientSetup setup = serve(
      R"([{"status": 503, "body": "busy", "close_idle_after": 0.02},
          {"status": 200, "body": "created"}])");
  setup.method = "POST";
  setup.body = "order=1";
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.connections, 2U);
  EXPECT_EQ(run.body, "created");
  EXPECT_EQ(logged("request"), 2);
}

// Regression: a download cut and retried came out as the cut attempt's bytes
// followed by the whole body. Cut at many offsets, it now resumes with Range and If-Range
// and ends byte-exact, fetching nothing twice.
TEST_F(ScriptedServerTest, CutDownloadResumesByteExactAtEveryCut) {
  for (const int cut : {1, 1000, 16383, 16384, 30000, 99999}) {
    SCOPED_TRACE(cut);
    ScriptedServer server;
    ScriptedServer::Options options;
    options.script = R"([{"status": 200, "pattern": 100000, "ranges": true, "reset_after": )" +
                     std::to_string(cut) + R"(, "headers": [["ETag", "\"g1\""]]},
                         {"status": 200, "pattern": 100000, "ranges": true,
                          "headers": [["ETag", "\"g1\""]]}])";
    ASSERT_TRUE(server.start(options));
    ClientSetup setup;
    setup.url = server.url("/object");
    setup.tls = tls_.get();
    const RunResult run = run_client(setup);
    EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
    ASSERT_EQ(run.body.size(), kObject) << run.summary();
    EXPECT_EQ(fnv1a(reinterpret_cast<const std::uint8_t*>(run.body.data()), run.body.size()),
              pattern_fnv1a(kObject));
    EXPECT_EQ(run.restarts, 0U);
    EXPECT_EQ(run.refetched, 0U);
    EXPECT_EQ(run.offset_violations, 0U);
    const auto resumes = run.of(Kind::kResume);
    ASSERT_EQ(resumes.size(), 1U) << run.summary();
    EXPECT_EQ(resumes[0].validator, "\"g1\"");
    // The server saw the same offset in the Range of the second request.
    EXPECT_EQ(
        count_of(server.log(), "range=" + std::to_string(resumes[0].offset) + " if_range=\"g1\""),
        1)
        << server.log();
  }
}

TEST_F(ScriptedServerTest, ObjectChangedBetweenAttemptsStartsTheSinkOver) {
  const RunResult run = run_client(serve(
      R"([{"status": 200, "pattern": 100000, "ranges": true, "reset_after": 30000,
           "headers": [["ETag", "\"g1\""]]},
          {"status": 200, "body": "generation two", "ranges": true,
           "headers": [["ETag", "\"g2\""]]}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.body, "generation two");
  EXPECT_EQ(run.restarts, 1U);
  EXPECT_EQ(run.offset_violations, 0U);
}

TEST_F(ScriptedServerTest, CutBodyIntoASinkThatCannotRestartFailsWithoutSplicing) {
  ClientSetup setup = serve(
      R"([{"status": 200, "pattern": 100000, "reset_after": 30000},
          {"status": 200, "pattern": 100000}])");
  setup.sink_restartable = false;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.error, https::Status::kRestartRefused);
  ASSERT_LE(run.body.size(), 30000U);
  for (std::size_t i = 0; i < run.body.size(); ++i) {
    ASSERT_EQ(static_cast<std::uint8_t>(run.body[i]), pattern_byte(i)) << i;
  }
}

// Regression (slowloris head): a head sent a byte every 0.3 s never let the read timeout
// trip, so the client waited as long as the server liked (here about 50 s, longer than the
// run's wall limit). The head must be whole within the read timeout of the request.
TEST_F(ScriptedServerTest, SlowlorisHeadEndsAtTheReadTimeoutAndTheRetrySucceeds) {
  ClientSetup setup = serve(R"([{"trickle_head": 0.3, "header_bytes": 100, "body": "late"},
                                {"status": 200, "body": "ok"}])");
  setup.timeouts.read = Millis(2500);  // Far over a busy loopback's pauses, under the trickle.
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.body, "ok");
  const auto errors = run.of(Kind::kError);
  ASSERT_GE(errors.size(), 1U) << run.summary();
  EXPECT_EQ(errors[0].failure, Failure::kTimeout);
  EXPECT_EQ(errors[0].message,
            "the response head did not arrive within the read timeout (2500 ms)");
  const auto attempts = run.of(Kind::kAttempt);
  ASSERT_GE(attempts.size(), 2U) << run.summary();
  EXPECT_GE((errors[0].at - attempts[0].at).count(), 2500U);  // Never before the limit.
  EXPECT_GE(logged("request"), 2) << server_.log();
}

// Regression (trickling body never cut): after 20000 bytes the body came a byte every 50 ms,
// and the client took it for as long as it lasted (over an hour). Below the floor (2000 B/s
// over 1 s) the attempt ends, and the GET goes on by Range where it stopped, byte-exact.
TEST_F(ScriptedServerTest, TricklingBodyIsCutByTheFloorAndResumesByRange) {
  ClientSetup setup =
      serve(R"([{"status": 200, "pattern": 100000, "ranges": true, "trickle_after": 20000,
                 "trickle_gap": 0.05, "headers": [["ETag", "\"t1\""]]},
                {"status": 200, "pattern": 100000, "ranges": true,
                 "headers": [["ETag", "\"t1\""]]}])",
            "/object");
  setup.timeouts.read = Millis(2500);
  setup.timeouts.speed_limit = 2000;
  setup.timeouts.speed_time = Millis(1000);
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  ASSERT_EQ(run.body.size(), 100000U) << run.summary();
  EXPECT_EQ(fnv1a(reinterpret_cast<const std::uint8_t*>(run.body.data()), run.body.size()),
            pattern_fnv1a(100000));
  EXPECT_EQ(run.restarts, 0U);
  EXPECT_EQ(run.refetched, 0U);
  EXPECT_EQ(run.offset_violations, 0U);
  const auto errors = run.of(Kind::kError);
  ASSERT_GE(errors.size(), 1U) << run.summary();
  EXPECT_EQ(errors[0].failure, Failure::kTimeout);
  EXPECT_NE(errors[0].message.find("below the speed limit of 2000 B/s"), std::string::npos)
      << errors[0].message;
  const auto resumes = run.of(Kind::kResume);
  ASSERT_GE(resumes.size(), 1U) << run.summary();
  EXPECT_GE(resumes[0].offset, 20000U);
  EXPECT_EQ(
      count_of(server_.log(), "range=" + std::to_string(resumes[0].offset) + " if_range=\"t1\""), 1)
      << server_.log();
}

}  // namespace
}  // namespace stepback::integration
