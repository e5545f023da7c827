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

  // Serves 200 with `cert`/`key` and runs a GET that trusts `ca`, checking certificate dates
  // against `wall_now` (nullptr: the system's clock).
  RunResult run_against(const std::string& cert, const std::string& key, const std::string& ca,
                        Millis (*wall_now)() = nullptr) {
    ScriptedServer::Options options;
    options.script = R"([{"status": 200, "body": "should not be read"}])";
    options.cert = cert;
    options.key = key;
    EXPECT_TRUE(server_.start(options));
    auto tls = make_tls(ca);
    if (tls == nullptr) return RunResult{};
    tls->set_wall_clock(wall_now);
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

// 2099-01-01 and 2020-06-01 (Millis since the Unix epoch): after the test certificates' three
// days, and inside the expired leaf's 2020 validity.
Millis in_2099() { return Millis(std::uint64_t{4070908800} * 1000); }
Millis in_june_2020() { return Millis(std::uint64_t{1590969600} * 1000); }

// Regression test: certificate validity was read from time() inside mbedTLS, whatever clock
// the app had given. A valid certificate checked against the configuration's clock, set to
// 2099, has expired. (Also where time_t has 32 bits: the first run on armhf wrapped 2099 to
// 1901, "validity starts in the future"; the clock now saturates at January 2038.)
TEST_F(TlsVerifyTest, CertificateDatesAreReadFromTheConfiguredWallClock) {
  const RunResult run = run_against(pki()->server_cert, pki()->server_key, pki()->ca, &in_2099);
  expect_terminal_verify_failure(run, "validity has expired");
}

// The other way: in June 2020 the expired leaf is within its dates; what fails is the CA, made
// for this test run, whose validity starts in the future.
TEST_F(TlsVerifyTest, AClockInsideTheLeafsDatesNoLongerCallsItExpired) {
  const RunResult run =
      run_against(pki()->expired_cert, pki()->expired_key, pki()->ca, &in_june_2020);
  expect_terminal_verify_failure(run, "validity starts in the future");
  EXPECT_EQ(run.message.find("validity has expired"), std::string::npos) << run.summary();
}

// Without a clock the system's time() is used: the test server's certificate is valid now.
TEST_F(TlsVerifyTest, WithoutAConfiguredClockTheSystemTimeIsUsed) {
  const RunResult run = run_against(pki()->server_cert, pki()->server_key, pki()->ca);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
}

}  // namespace
}  // namespace stepback::integration
