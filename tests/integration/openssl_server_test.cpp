// The Client and the TLS transport against openssl s_server -www (one HTTP/1.0 page per
// connection, then close_notify): the handshake at each forced version, and session
// resumption on a second connection. s_server's page starts with "New, TLSv1.x" or
// "Reused, TLSv1.x", so the server's view of resumption is checked too.
#include <gtest/gtest.h>
#include <poll.h>

#include <string>

#include "integration_support.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::integration {
namespace {

using https::Status;
using https::TlsVersion;

class OpensslServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
  }

  // A GET of / with the Client limited to [min, max] against s_server with `flag`.
  RunResult get(const std::string& flag, TlsVersion min, TlsVersion max) {
    EXPECT_TRUE(server_.start(flag));
    auto tls = make_tls(pki()->ca, min, max);
    if (tls == nullptr) return RunResult{};
    ClientSetup setup;
    setup.url = server_.url("/");
    setup.tls = tls.get();
    return run_client(setup);
  }

  OpensslServer server_;
};

TEST_F(OpensslServerTest, HandshakeAtTls12) {
  const RunResult run = get("-tls1_2", TlsVersion::kTls12, TlsVersion::kTls12);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.output();
  EXPECT_EQ(run.result.status, 200);
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_NE(run.body.find("New, TLSv1.2, Cipher is"), std::string::npos) << run.body;
}

TEST_F(OpensslServerTest, HandshakeAtTls13) {
  const RunResult run = get("-tls1_3", TlsVersion::kTls13, TlsVersion::kTls13);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.output();
  EXPECT_EQ(run.result.status, 200);
  EXPECT_NE(run.body.find("New, TLSv1.3, Cipher is"), std::string::npos) << run.body;
}

TEST_F(OpensslServerTest, DefaultVersionsNegotiateTls13) {
  const RunResult run = get("", TlsVersion::kTls12, TlsVersion::kTls13);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.output();
  EXPECT_NE(run.body.find("TLSv1.3, Cipher is"), std::string::npos) << run.body;
}

// Regression: a handshake the server refuses (here a protocol_version alert) was
// retried through the whole backoff, although it cannot heal; it is now terminal at once.
TEST_F(OpensslServerTest, VersionMismatchFailsTheHandshakeAtOnce) {
  ASSERT_TRUE(server_.start("-tls1_2"));
  auto tls = make_tls(pki()->ca, TlsVersion::kTls13, TlsVersion::kTls13);
  ASSERT_NE(tls, nullptr);
  ClientSetup setup;
  setup.url = server_.url("/");
  setup.tls = tls.get();
  setup.policy.max_retries = 3;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.error, Status::kTlsRefused) << run.summary();
  EXPECT_NE(run.message.find("refused"), std::string::npos) << run.message;
}

// Regression: a server whose certificate chain exceeds mbedTLS's 16 KiB input buffer failed
// with "Bad input parameters to function" and was retried through the whole backoff; it
// cannot heal, so it now fails once, naming the buffer.
TEST_F(OpensslServerTest, AChainBeyondTheTlsInputBufferFailsOnceSayingWhy) {
  TempDir dir;
  std::string names = "subjectAltName=";
  for (int i = 0; i < 600; ++i) {  // About 19.7 KB of certificate.
    names += "DNS:padding-name-" + std::to_string(1000 + i) + ".example.test,";
  }
  names.pop_back();
  ASSERT_EQ(
      run_command({openssl_path(), "req", "-x509", "-newkey", "ec", "-pkeyopt",
                   "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=padding", "-days", "2",
                   "-addext", names, "-keyout", dir.file("pad.key"), "-out", dir.file("pad.pem")},
                  dir.file("req.txt"), 30000),
      0)
      << read_file(dir.file("req.txt"));
  ASSERT_TRUE(server_.start("-tls1_3", {"-cert_chain", dir.file("pad.pem")}));
  auto tls = make_tls(pki()->ca, TlsVersion::kTls12, TlsVersion::kTls13);
  ASSERT_NE(tls, nullptr);
  ClientSetup setup;
  setup.url = server_.url("/");
  setup.tls = tls.get();
  setup.policy.max_retries = 3;
  const RunResult run = run_client(setup);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.error, Status::kTlsRefused) << run.summary();
  EXPECT_NE(run.message.find("exceeds the TLS input buffer of 16384 bytes"), std::string::npos)
      << run.message;
}

// One request over a TlsTransport on a TcpTransport, driven by poll() with a 5 s bound.
struct Exchange {
  bool ok = false;
  bool resumed = false;
  std::string version;
  std::string response;
  std::string error;
};

// Polls the transport's descriptor for what it wants; false once `deadline` has passed.
bool wait_io(const https::Transport& t, https::IoInterest interest, Millis deadline) {
  const Millis now = platform::monotonic_now();
  if (now >= deadline) return false;
  pollfd p{t.fd(), 0, 0};
  if (interest == https::IoInterest::kRead || interest == https::IoInterest::kReadWrite) {
    p.events = static_cast<short>(p.events | POLLIN);
  }
  if (interest == https::IoInterest::kWrite || interest == https::IoInterest::kReadWrite) {
    p.events = static_cast<short>(p.events | POLLOUT);
  }
  (void)::poll(&p, 1, static_cast<int>((deadline - now).count()));
  return true;
}

// Connects, handshakes offering `offer` (may be null), saves the session right after the
// handshake into `after_handshake` and after the whole response into `after_response`
// (either may be null), and reads the page until the server closes.
Exchange exchange(https::TlsClientConfig& config, std::uint16_t port,
                  const https::TlsSession* offer, https::TlsSession* after_handshake,
                  https::TlsSession* after_response) {
  Exchange x;
  const Millis deadline = platform::monotonic_now() + Millis(5000);
  https::TcpTransport tcp;
  https::SocketAddress address;
  Status s = https::parse_numeric_address("127.0.0.1", port, &address);
  if (s == Status::kOk) s = tcp.start(&address, 1, platform::monotonic_now(), Millis(2000));
  while (s == Status::kOk || s == Status::kWouldBlock) {
    s = tcp.step_connect(platform::monotonic_now());
    if (s != Status::kWouldBlock) break;
    if (!wait_io(tcp, tcp.wants(), deadline)) break;
  }
  if (s != Status::kOk) {
    x.error = std::string("connect: ") + https::to_string(s);
    return x;
  }
  https::TlsTransport tls;
  s = tls.start(tcp, config, "127.0.0.1", offer);
  if (s == Status::kOk) {
    for (;;) {
      s = tls.handshake();
      if (s != Status::kWouldBlock || !wait_io(tls, tls.wants(), deadline)) break;
    }
  }
  if (s != Status::kOk) {
    x.error = std::string("handshake: ") + https::to_string(s) + " " + tls.failure_message();
    return x;
  }
  x.resumed = tls.resumed();
  x.version = tls.version();
  if (after_handshake != nullptr) (void)tls.save_session(after_handshake);
  const std::string request = "GET / HTTP/1.0\r\n\r\n";
  std::size_t sent = 0;
  while (sent < request.size()) {
    std::size_t n = 0;
    s = tls.send(
        {reinterpret_cast<const std::uint8_t*>(request.data()) + sent, request.size() - sent}, &n);
    if (s == Status::kOk) {
      sent += n;
    } else if (s != Status::kWouldBlock || !wait_io(tls, tls.wants(), deadline)) {
      x.error = std::string("send: ") + https::to_string(s);
      return x;
    }
  }
  std::uint8_t buf[4096];
  for (;;) {
    std::size_t n = 0;
    s = tls.recv({buf, sizeof buf}, &n);
    if (s == Status::kOk) {
      x.response.append(reinterpret_cast<const char*>(buf), n);
    } else if (s == Status::kClosed) {
      break;
    } else if (s != Status::kWouldBlock || !wait_io(tls, tls.wants(), deadline)) {
      x.error = std::string("recv: ") + https::to_string(s) + " " + tls.failure_message();
      return x;
    }
  }
  if (after_response != nullptr) (void)tls.save_session(after_response);
  tls.close();
  x.ok = true;
  return x;
}

// Resumption at the transport level: a first connection saves its session (after the
// handshake and again after the response, when TLS 1.3 tickets have arrived), a second one
// offers the newest valid one.
void expect_transport_resumes(OpensslServer& server, TlsVersion version, const char* name) {
  auto config = make_tls(pki()->ca, version, version);
  ASSERT_NE(config, nullptr);
  https::TlsSession after_handshake;
  https::TlsSession after_response;
  const Exchange first =
      exchange(*config, server.port(), nullptr, &after_handshake, &after_response);
  ASSERT_TRUE(first.ok) << first.error << server.output();
  EXPECT_EQ(first.version, name);
  EXPECT_FALSE(first.resumed);
  EXPECT_NE(first.response.find(std::string("New, ") + name), std::string::npos);
  const https::TlsSession* offer = after_response.valid() ? &after_response : &after_handshake;
  ASSERT_TRUE(offer->valid()) << "no session could be saved from the first connection";
  const Exchange second = exchange(*config, server.port(), offer, nullptr, nullptr);
  ASSERT_TRUE(second.ok) << second.error << server.output();
  EXPECT_NE(second.response.find(std::string("Reused, ") + name), std::string::npos)
      << "the server did not resume; saved after the response: " << after_response.valid()
      << ", after the handshake: " << after_handshake.valid() << "\n"
      << second.response.substr(0, 300);
  EXPECT_TRUE(second.resumed) << "TlsTransport::resumed() is false";
}

TEST_F(OpensslServerTest, TransportResumesTls12Session) {
  ASSERT_TRUE(server_.start("-tls1_2"));
  expect_transport_resumes(server_, TlsVersion::kTls12, "TLSv1.2");
}

TEST_F(OpensslServerTest, TransportResumesTls13Session) {
  ASSERT_TRUE(server_.start("-tls1_3"));
  expect_transport_resumes(server_, TlsVersion::kTls13, "TLSv1.3");
}

}  // namespace
}  // namespace stepback::integration
