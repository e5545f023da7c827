// The Client against nginx (nginx.conf.in): a static file over TLS, a chunked response,
// Retry-After on 503 and 429 (added with `always`), and keep-alive across a retry.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration_support.hpp"

namespace stepback::integration {
namespace {

using Kind = https::ClientEvent::Kind;

class NginxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(nginx_path(), "nginx");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    ASSERT_TRUE(server_.start());
    tls_ = make_tls(pki()->ca);
    ASSERT_NE(tls_, nullptr);
  }

  ClientSetup setup_for(const std::string& target) const {
    ClientSetup setup;
    setup.url = server_.url(target);
    setup.tls = tls_.get();
    return setup;
  }

  NginxServer server_;
  std::unique_ptr<https::TlsClientConfig> tls_;
};

TEST_F(NginxTest, StaticFileOverTls) {
  constexpr std::size_t kSize = 150 * 1024 + 17;
  std::string file(kSize, '\0');
  for (std::size_t i = 0; i < kSize; ++i) file[i] = static_cast<char>(pattern_byte(i));
  write_file(server_.www() + "/static.bin", file);
  const RunResult run = run_client(setup_for("/static.bin"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.error_log();
  EXPECT_EQ(run.result.status, 200);
  ASSERT_EQ(run.body.size(), kSize);
  EXPECT_EQ(fnv1a(reinterpret_cast<const std::uint8_t*>(run.body.data()), run.body.size()),
            pattern_fnv1a(kSize));
}

TEST_F(NginxTest, ChunkedResponse) {
  const RunResult run = run_client(setup_for("/chunked.html"));
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.error_log();
  EXPECT_EQ(run.body, "<p>start</p>/chunked.html<p>end</p>\n");
}

// /appears/ answers 503 with Retry-After: 1 until the file exists; the test creates it
// during the wait, so the retry (on the same kept-alive connection) gets it.
TEST_F(NginxTest, RetryAfterIsHonouredAndTheRetryReusesTheConnection) {
  ClientSetup setup = setup_for("/appears/late.txt");
  const std::string path = server_.www() + "/appears/late.txt";
  setup.on_event = [&path](const Event& e) {
    if (e.kind == Kind::kWait) write_file(path, "here now\n");
  };
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.error_log();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.body, "here now\n");
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 1U) << run.summary();
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kRetryAfter);
  EXPECT_GE(waits[0].wait.count(), 1000U);
  EXPECT_EQ(run.connections, 1U) << run.summary();
  // nginx logs a request after answering it, so the second line may lag the client a little.
  EXPECT_TRUE(
      wait_for([&] { return count_of(server_.access_log(), "GET /appears/late.txt") == 2; }, 2000))
      << server_.access_log();
}

TEST_F(NginxTest, RetryAfterTwoSecondsOn503) {
  ClientSetup setup = setup_for("/503");
  setup.policy.max_retries = 1;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kRetriesExhausted) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.result.status, 503);
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 1U) << run.summary();
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kRetryAfter);
  EXPECT_GE(waits[0].wait.count(), 2000U);
  EXPECT_GE(run.elapsed.count(), 2000U);
  EXPECT_EQ(run.connections, 1U) << run.summary();
}

TEST_F(NginxTest, RetryAfterOneSecondOn429) {
  ClientSetup setup = setup_for("/429");
  setup.policy.max_retries = 1;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kRetriesExhausted) << run.summary();
  EXPECT_EQ(run.result.attempts, 2U);
  EXPECT_EQ(run.result.status, 429);
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 1U) << run.summary();
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kRetryAfter);
  EXPECT_GE(waits[0].wait.count(), 1000U);
}

TEST_F(NginxTest, MissingFileIsATerminalStatus) {
  const RunResult run = run_client(setup_for("/no/such/file"));
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalStatus) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.status, 404);
}

}  // namespace
}  // namespace stepback::integration
