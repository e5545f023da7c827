// TLS record sizes against real servers: the max_fragment_length extension (RFC 6066) that a
// small-RAM client asks for (TlsClientConfig::set_max_fragment_length), what openssl s_server
// and nginx then send, and how a record larger than the TLS input buffer ends a request. The
// same tests run in every build: in the small-RAM one (preset small-ram, a 4 KiB input
// buffer) a large file only arrives when the server honours the extension, and full 16 KiB
// records are refused, naming the buffer.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "integration_support.hpp"

namespace stepback::integration {
namespace {

using https::Status;
using https::TlsVersion;

// The ApplicationData records s_server -trace says it sent, by length.
std::vector<int> sent_application_records(const std::string& trace) {
  std::vector<int> lengths;
  std::istringstream in(trace);
  std::string line;
  bool sent = false;
  bool application = false;
  while (std::getline(in, line)) {
    if (line.rfind("Sent Record", 0) == 0 || line.rfind("Received Record", 0) == 0) {
      sent = line.rfind("Sent Record", 0) == 0;
      application = false;
    } else if (line.find("Content Type = ApplicationData") != std::string::npos) {
      application = true;
    } else if (sent && application && line.find("Length = ") != std::string::npos) {
      lengths.push_back(std::stoi(line.substr(line.find("Length = ") + 9)));
      application = false;
    }
  }
  return lengths;
}

// A file of `size` pattern bytes.
std::string pattern_file(std::size_t size) {
  std::string file(size, '\0');
  for (std::size_t i = 0; i < size; ++i) file[i] = static_cast<char>(pattern_byte(i));
  return file;
}

bool is_pattern(const std::string& body, std::size_t size) {
  return body.size() == size && fnv1a(reinterpret_cast<const std::uint8_t*>(body.data()),
                                      body.size()) == pattern_fnv1a(size);
}

class RecordSizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    tls_ = make_tls(pki()->ca);
    ASSERT_NE(tls_, nullptr);
  }

  std::unique_ptr<https::TlsClientConfig> tls_;
};

// s_server honours the extension (OpenSSL does from 1.1.1): its ServerHello echoes it, and
// every record of its page is at most 512 bytes of plaintext (536 with AES-GCM's explicit
// nonce and tag). The server speaks TLS 1.3 too, which mbedTLS 3.6 cannot negotiate the
// extension in: the client offers TLS 1.2 only, so the handshake does not fail.
TEST_F(RecordSizeTest, OpensslKeepsItsRecordsToTheMaxFragmentLengthAskedFor) {
  OpensslServer server;
  ASSERT_TRUE(server.start("", {"-trace"}));
  ASSERT_EQ(tls_->set_max_fragment_length(512), Status::kOk);
  ClientSetup setup;
  setup.url = server.url("/");
  setup.tls = tls_.get();
  const RunResult run = run_client(setup);
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server.output();
  EXPECT_NE(run.body.find("New, TLSv1.2, Cipher is"), std::string::npos) << run.body;
  const std::string trace = server.output();
  EXPECT_NE(trace.find("max_fragment_length := 2^9 (512 bytes)"), std::string::npos) << trace;
  const std::vector<int> records = sent_application_records(trace);
  EXPECT_GE(records.size(), 2U) << trace;  // The page is a few KiB.
  for (const int length : records) EXPECT_LE(length, 512 + 24) << trace;
}

// nginx (OpenSSL) serves a large file in records of the asked length, so a client whose
// input buffer holds 4 KiB gets all of it.
TEST_F(RecordSizeTest, NginxServesALargeFileInRecordsOfTheAskedLength) {
  STEPBACK_REQUIRE_TOOL(nginx_path(), "nginx");
  NginxServer server;
  ASSERT_TRUE(server.start());
  constexpr std::size_t kSize = 300 * 1024 + 5;
  write_file(server.www() + "/large.bin", pattern_file(kSize));
  ASSERT_EQ(tls_->set_max_fragment_length(4096), Status::kOk);
  ClientSetup setup;
  setup.url = server.url("/large.bin");
  setup.tls = tls_.get();
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server.error_log();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_TRUE(is_pattern(run.body, kSize)) << run.body.size();
}

// Without the extension nginx sends full 16 KiB records: the default input buffer takes
// them; the small-RAM build's 4 KiB one cannot, and the request ends at once (the same
// server would send the same records again) with words that name the buffer.
TEST_F(RecordSizeTest, FullRecordsFitTheInputBufferOrEndTheRequestNamingIt) {
  STEPBACK_REQUIRE_TOOL(nginx_path(), "nginx");
  NginxServer server;
  ASSERT_TRUE(server.start());
  constexpr std::size_t kSize = 300 * 1024 + 5;
  write_file(server.www() + "/large.bin", pattern_file(kSize));
  ClientSetup setup;
  setup.url = server.url("/large.bin");
  setup.tls = tls_.get();
  setup.policy.max_retries = 3;
  const RunResult run = run_client(setup);
  if (https::kTlsInputBufferBytes >= 16384) {
    EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
    EXPECT_TRUE(is_pattern(run.body, kSize)) << run.body.size();
    return;
  }
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U) << run.summary();
  EXPECT_EQ(run.result.error, Status::kBufferTooSmall) << run.summary();
  EXPECT_NE(run.message.find("more than the TLS input buffer takes (" +
                             std::to_string(https::kTlsInputBufferBytes) +
                             " bytes: STEPBACK_TLS_IN_CONTENT_LEN)"),
            std::string::npos)
      << run.message;
  EXPECT_NE(run.message.find("max_fragment_length was not asked for"), std::string::npos)
      << run.message;
}

// Regression: a record longer than the TLS input buffer (here one of 256 bytes more: TLS
// allows up to 2^14 + 256, and a TLS 1.3 server may pad) failed as
// "the connection failed while receiving the response" (kProtocol); it now fails once,
// saying how long the record was and which buffer it did not fit.
TEST_F(RecordSizeTest, ARecordBeyondTheInputBufferFailsOnceNamingTheLimit) {
  STEPBACK_REQUIRE_TOOL(python_path(), "python3");
  const std::size_t length = https::kTlsInputBufferBytes + 256;
  ScriptedServer server;
  ScriptedServer::Options options;
  options.script = R"([{"status": 200, "pattern": 5000, "record_after": 100, "record_length": )" +
                   std::to_string(length) + "}]";
  ASSERT_TRUE(server.start(options));
  ClientSetup setup;
  setup.url = server.url("/");
  setup.tls = tls_.get();
  setup.policy.max_retries = 3;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U) << run.summary();
  EXPECT_EQ(run.result.error, Status::kBufferTooSmall) << run.summary();
  EXPECT_EQ(run.message, "the server sent a TLS record of " + std::to_string(length) +
                             " bytes, more than the TLS input buffer takes (" +
                             std::to_string(https::kTlsInputBufferBytes) +
                             " bytes: STEPBACK_TLS_IN_CONTENT_LEN); max_fragment_length was "
                             "not asked for")
      << run.summary();
  EXPECT_EQ(run.body.size(), 100U);  // What came before the record was delivered.
}

// The other side of TLS 1.2 only: a server that speaks nothing but TLS 1.3 refuses the
// handshake, once, as for any version it does not speak.
TEST_F(RecordSizeTest, ATls13OnlyServerRefusesTheTls12ThatTheExtensionNeeds) {
  OpensslServer server;
  ASSERT_TRUE(server.start("-tls1_3"));
  ASSERT_EQ(tls_->set_max_fragment_length(4096), Status::kOk);
  ClientSetup setup;
  setup.url = server.url("/");
  setup.tls = tls_.get();
  setup.policy.max_retries = 3;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.error, Status::kTlsRefused) << run.summary();
}

}  // namespace
}  // namespace stepback::integration
