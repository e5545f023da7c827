// Certificate verification failures against a real TLS server: each is terminal (one
// attempt, never retried), reported as tls_verify with words naming the check that failed,
// and no request byte reaches the server.
#include <gtest/gtest.h>

#include <string>

#include "integration_support.hpp"

namespace stepback::integration {
namespace {

class TlsVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(python_path(), "python3");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
  }

  // Serves 200 with `cert`/`key` and runs a GET that trusts `ca`.
  RunResult run_against(const std::string& cert, const std::string& key, const std::string& ca) {
    ScriptedServer::Options options;
    options.script = R"([{"status": 200, "body": "should not be read"}])";
    options.cert = cert;
    options.key = key;
    EXPECT_TRUE(server_.start(options));
    auto tls = make_tls(ca);
    if (tls == nullptr) return RunResult{};
    ClientSetup setup;
    setup.url = server_.url("/");
    setup.tls = tls.get();
    return run_client(setup);
  }

  // The common expectations of a verification failure.
  void expect_terminal_verify_failure(const RunResult& run, const std::string& words) {
    EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
    EXPECT_EQ(run.result.attempts, 1U) << run.summary();
    EXPECT_EQ(run.result.error, https::Status::kTlsVerify) << run.summary();
    EXPECT_NE(run.message.find(words), std::string::npos) << run.summary();
    EXPECT_EQ(count_of(server_.log(), "request "), 0) << server_.log();
    EXPECT_TRUE(run.body.empty());
  }

  ScriptedServer server_;
};

TEST_F(TlsVerifyTest, WrongHostNameIsTerminal) {
  // The certificate names other.example only; the client asked for 127.0.0.1.
  const RunResult run = run_against(pki()->wrong_host_cert, pki()->wrong_host_key, pki()->ca);
  expect_terminal_verify_failure(run, "Common Name (CN) does not match");
}

TEST_F(TlsVerifyTest, UntrustedCaIsTerminal) {
  // A good certificate, but the client trusts only another CA.
  const RunResult run = run_against(pki()->server_cert, pki()->server_key, pki()->other_ca);
  expect_terminal_verify_failure(run, "not correctly signed by the trusted CA");
}

TEST_F(TlsVerifyTest, ExpiredCertificateIsTerminal) {
  const RunResult run = run_against(pki()->expired_cert, pki()->expired_key, pki()->ca);
  expect_terminal_verify_failure(run, "validity has expired");
}

}  // namespace
}  // namespace stepback::integration
