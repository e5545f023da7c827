// The Client through the scripted proxy (tests/support/scripted_proxy.py) to the scripted TLS
// server: a kept connection serves every retry through one tunnel, a reconnection opens a new
// tunnel and resumes the TLS session, the certificate is checked against the origin's name,
// and the proxy's faults end as classified (a cut CONNECT retried, a 407 once).
#include <gtest/gtest.h>

#include <string>

#include "integration_support.hpp"

namespace stepback::integration {
namespace {

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(python_path(), "python3");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    tls_ = make_tls(pki()->ca);
    ASSERT_NE(tls_, nullptr);
  }

  // Starts the server with `script` and the proxy with `proxy_script`; a GET of the server
  // through the proxy.
  ClientSetup serve(const std::string& script, const std::string& proxy_script = "ok",
                    const std::string& tls_version = "any", const std::string& auth = "") {
    ScriptedServer::Options options;
    options.script = script;
    options.tls_version = tls_version;
    EXPECT_TRUE(server_.start(options));
    EXPECT_TRUE(proxy_.start(proxy_script, auth));
    config_.host = "127.0.0.1";
    config_.port = proxy_.port();
    ClientSetup setup;
    setup.url = server_.url("/");
    setup.tls = tls_.get();
    setup.proxy = &config_;
    return setup;
  }

  int connects() const { return count_of(proxy_.log(), "\"method\": \"CONNECT\""); }

  std::unique_ptr<https::TlsClientConfig> tls_;
  ScriptedServer server_;
  ScriptedProxy proxy_;
  https::ProxyConfig config_;
};

TEST_F(ProxyTest, KeepAliveServesEveryRetryThroughOneTunnel) {
  const RunResult run =
      run_client(serve(R"([{"status": 503, "body": "busy"}, {"status": 200, "body": "hello"}])"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.connections, 1U) << run.summary();
  EXPECT_EQ(run.body, "hello");
  EXPECT_EQ(connects(), 1) << proxy_.log();
  EXPECT_EQ(count_of(server_.log(), "request conn=1 "), 2) << server_.log();
}

TEST_F(ProxyTest, AReconnectionOpensANewTunnelAndResumesTheTls13Session) {
  const RunResult run = run_client(
      serve(R"([{"status": 503, "close": true}, {"status": 200, "body": "ok"}])", "ok", "1.3"));
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(run.connections, 2U);
  EXPECT_EQ(connects(), 2) << proxy_.log();
  EXPECT_EQ(count_of(server_.log(), "handshake conn=2 version=TLSv1.3 reused=1"), 1)
      << server_.log();
  EXPECT_TRUE(run.resumed) << run.summary();
}

TEST_F(ProxyTest, AReconnectionResumesTheTls12Session) {
  const RunResult run = run_client(
      serve(R"([{"status": 503, "close": true}, {"status": 200, "body": "ok"}])", "ok", "1.2"));
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(connects(), 2) << proxy_.log();
  EXPECT_EQ(count_of(server_.log(), "handshake conn=2 version=TLSv1.2 reused=1"), 1)
      << server_.log();
  EXPECT_TRUE(run.resumed) << run.summary();
}

TEST_F(ProxyTest, TheCertificateIsCheckedAgainstTheOriginNotTheProxy) {
  ScriptedServer::Options options;
  options.script = R"([{"status": 200, "body": "ok"}])";
  options.cert = pki()->wrong_host_cert;  // For other.example: not the origin 127.0.0.1.
  options.key = pki()->wrong_host_key;
  ASSERT_TRUE(server_.start(options));
  ASSERT_TRUE(proxy_.start("ok"));
  config_.host = "127.0.0.1";
  config_.port = proxy_.port();
  ClientSetup setup;
  setup.url = server_.url("/");
  setup.tls = tls_.get();
  setup.proxy = &config_;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.error, https::Status::kTlsVerify) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(connects(), 1) << proxy_.log();
}

TEST_F(ProxyTest, ACutConnectIsRetriedAndA407EndsAtOnce) {
  {
    const RunResult run = run_client(serve(R"([{"status": 200, "body": "ok"}])", "cut,503,ok"));
    EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
    EXPECT_EQ(run.result.attempts, 3U) << run.summary();
    EXPECT_EQ(connects(), 3) << proxy_.log();
    EXPECT_EQ(count_of(server_.log(), "request "), 1) << server_.log();
  }
  server_.stop();
  proxy_.stop();
  ScriptedServer server;
  ScriptedProxy proxy;
  ScriptedServer::Options options;
  options.script = R"([{"status": 200, "body": "ok"}])";
  ASSERT_TRUE(server.start(options));
  ASSERT_TRUE(proxy.start("ok", "user:secret"));
  https::ProxyConfig config;
  config.host = "127.0.0.1";
  config.port = proxy.port();
  config.user = "user";
  config.password = "wrong";
  ClientSetup setup;
  setup.url = server.url("/");
  setup.tls = tls_.get();
  setup.proxy = &config;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.error, https::Status::kProxyAuth) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.message.find("wrong"), std::string::npos) << run.message;
  EXPECT_EQ(count_of(proxy.log(), "\"answer\": \"407\""), 1) << proxy.log();
  EXPECT_EQ(server.log(), "");
}

}  // namespace
}  // namespace stepback::integration
