// The Client offers the TLS session of its last connection to an origin on the next one, and
// mbedTLS offers only the saved session's version when it does. Behind one address the next
// connection may reach a server that speaks another version (mixed backends behind a load
// balancer, a server rolled back): the scripted Python ssl server (scripted_server.py) plays
// that with one version range per connection. A resumption the server cannot take must not
// fail a request that a full handshake completes.
#include <gtest/gtest.h>

#include <string>

#include "integration_support.hpp"

namespace stepback::integration {
namespace {

using https::TlsVersion;

class ResumptionRefusedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(python_path(), "python3");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
  }

  // A GET of / on a server whose connections get the TLS versions of `versions` in turn
  // ("1.3,1.2": the first TLS 1.3 only, later ones TLS 1.2 only): a 503 that closes the
  // connection, then "ok". The client offers [min, max].
  RunResult get(const std::string& versions, TlsVersion min = TlsVersion::kTls12,
                TlsVersion max = TlsVersion::kTls13) {
    tls_ = make_tls(pki()->ca, min, max);
    if (tls_ == nullptr) return RunResult{};
    ScriptedServer::Options options;
    options.script = R"([{"status": 503, "close": true}, {"status": 200, "body": "ok"}])";
    options.tls_version = versions;
    EXPECT_TRUE(server_.start(options));
    ClientSetup setup;
    setup.url = server_.url("/");
    setup.tls = tls_.get();
    return run_client(setup);
  }

  std::unique_ptr<https::TlsClientConfig> tls_;
  ScriptedServer server_;
};

// The retry after the 503 offers the TLS 1.3 session, so only TLS 1.3; the TLS 1.2-only server
// answers protocol_version. The connector forgets the session and shakes hands again in full
// at once, within the same attempt.
TEST_F(ResumptionRefusedTest,
       ResumedTls13SessionRefusedByATls12OnlyServerIsRetriedWithAFullHandshake) {
  const RunResult run = get("1.3,1.2");
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.log();
  EXPECT_EQ(run.result.status, 200);
  EXPECT_EQ(run.body, "ok");
  EXPECT_EQ(run.result.attempts, 2U) << run.summary();  // The redo spends no retry.
  EXPECT_FALSE(run.resumed) << run.summary();
  EXPECT_TRUE(wait_for([&] { return count_of(server_.log(), "error conn=2 ") == 1; }, 5000))
      << server_.log();  // The resumption it refused.
  const std::string log = server_.log();
  EXPECT_EQ(count_of(log, "handshake conn=1 version=TLSv1.3 reused=0"), 1) << log;
  EXPECT_EQ(count_of(log, "handshake conn=3 version=TLSv1.2 reused=0"), 1) << log;
  EXPECT_EQ(count_of(log, "request "), 2) << log;
}

// The other way round: a TLS 1.2 session makes mbedTLS offer TLS 1.2 only, which a TLS
// 1.3-only server refuses the same way.
TEST_F(ResumptionRefusedTest,
       ResumedTls12SessionRefusedByATls13OnlyServerIsRetriedWithAFullHandshake) {
  const RunResult run = get("1.2,1.3");
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.log();
  EXPECT_EQ(run.body, "ok");
  EXPECT_EQ(run.result.attempts, 2U) << run.summary();
  const std::string log = server_.log();
  EXPECT_EQ(count_of(log, "handshake conn=1 version=TLSv1.2 reused=0"), 1) << log;
  EXPECT_EQ(count_of(log, "handshake conn=3 version=TLSv1.3 reused=0"), 1) << log;
}

// When the full handshake fails too (this client speaks TLS 1.3 only), that failure ends the
// request as before, and its message says that the resumed session was refused first.
TEST_F(ResumptionRefusedTest, AFullHandshakeThatFailsAfterARefusedResumptionSaysBoth) {
  const RunResult run = get("1.3,1.2", TlsVersion::kTls13, TlsVersion::kTls13);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary() << server_.log();
  EXPECT_EQ(run.result.attempts, 2U) << run.summary();
  EXPECT_NE(run.message.find("resumed TLS session"), std::string::npos) << run.message;
  EXPECT_NE(run.message.find("not retried"), std::string::npos) << run.message;
  // The server logs a refused handshake after its alert went out: the client may be done first.
  EXPECT_TRUE(wait_for([&] { return count_of(server_.log(), "error conn=") == 2; }, 5000))
      << server_.log();
}

}  // namespace
}  // namespace stepback::integration
