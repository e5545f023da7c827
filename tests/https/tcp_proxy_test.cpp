// TcpConnector's CONNECT tunnel against a proxy played by this test on a loopback socket: the
// request it sends (with and without Basic credentials), and how each answer ends (2xx, 407,
// 502/503/504, another status, garbage, a cut answer, none); no_proxy and forwards().
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "tests/support/settle.hpp"

namespace stepback::https {
namespace {

// Numeric proxy and origin hosts: nothing is looked up.
class NoResolver final : public Resolver {
 public:
  void start(const char*, std::uint16_t, Millis) override { ADD_FAILURE() << "looked up"; }
  ResolverNext step(Millis) override { return ResolverNext{}; }
  const ResolveResult& result() const override { return result_; }
  void cancel() override {}

 private:
  ResolveResult result_;
};

class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
    EXPECT_EQ(listen(fd_, 4), 0);
    socklen_t len = sizeof sin;
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&sin), &len), 0);
    port_ = ntohs(sin.sin_port);
  }
  ~Listener() {
    if (peer_ >= 0) close(peer_);
    close(fd_);
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  std::uint16_t port() const { return port_; }
  // Accepts the connector's connection (bounded wait).
  bool accept_one() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1) return false;
    peer_ = accept(fd_, nullptr, nullptr);
    return peer_ >= 0;
  }
  // Reads until the blank line that ends a request head.
  std::string read_head() {
    std::string got;
    char c;
    for (int i = 0; i < 4096 && got.find("\r\n\r\n") == std::string::npos; ++i) {
      pollfd p{peer_, POLLIN, 0};
      if (poll(&p, 1, 5000) != 1 || read(peer_, &c, 1) != 1) break;
      got += c;
    }
    return got;
  }
  void write_all(const std::string& s) {
    EXPECT_EQ(write(peer_, s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  void close_peer() {
    close(peer_);
    peer_ = -1;
  }

 private:
  int fd_ = -1;
  int peer_ = -1;
  std::uint16_t port_ = 0;
};

using testing::settle;

struct Tunnel {
  Listener proxy;
  NoResolver resolver;
  TcpConnector connector{resolver};
  ProxyConfig config;
  ProxyRoom room;
  std::string request;

  explicit Tunnel(const char* user = "", const char* password = "") {
    config.host = "127.0.0.1";
    config.port = proxy.port();
    config.user = user;
    config.password = password;
    EXPECT_EQ(connector.set_proxy(&config, &room), Status::kOk);
  }
  // Opens the tunnel to 192.0.2.1:443 and reads the CONNECT request at the proxy.
  void open() {
    ASSERT_EQ(connector.tunnel("192.0.2.1", 443, Millis(0), Millis(1000)), Status::kOk);
    (void)connector.step(Millis(0));
    ASSERT_TRUE(proxy.accept_one());
    (void)connector.step(Millis(0));
    request = proxy.read_head();
  }
  Status answer(const std::string& text) {
    proxy.write_all(text);
    return settle(connector, Millis(0));
  }
  std::string message() const { return connector.failure_message(); }
};

TEST(TcpConnectorProxy, ATwoHundredAnswerHandsOverTheTunnel) {
  Tunnel t;
  t.open();
  EXPECT_EQ(t.request, "CONNECT 192.0.2.1:443 HTTP/1.1\r\nHost: 192.0.2.1:443\r\n\r\n");
  EXPECT_EQ(t.answer("HTTP/1.1 200 Connection established\r\n\r\n"), Status::kOk) << t.message();
  // The stream is the tunnel: what the proxy sends now is the origin's.
  t.proxy.write_all("hello");
  std::uint8_t buf[8];
  std::size_t n = 0;
  Status s = Status::kWouldBlock;
  for (int i = 0; i < testing::kSettleWaits && s == Status::kWouldBlock; ++i) {
    s = t.connector.stream().recv(MutableBytes{buf, sizeof buf}, &n);
    if (s == Status::kWouldBlock) {
      (void)poll_wait(t.connector.fd(), IoInterest::kRead, testing::kSettleWait, Millis(0));
    }
  }
  EXPECT_EQ(s, Status::kOk);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), n), "hello");
}

TEST(TcpConnectorProxy, CredentialsGoAsBasicAndNeverIntoMessages) {
  Tunnel t("user", "s3cret");
  t.open();
  EXPECT_NE(t.request.find("\r\nProxy-Authorization: Basic dXNlcjpzM2NyZXQ=\r\n"),
            std::string::npos)
      << t.request;
  EXPECT_EQ(t.answer("HTTP/1.1 407 Proxy Authentication Required\r\n"
                     "Proxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n"),
            Status::kProxyAuth);
  EXPECT_NE(t.message().find("407"), std::string::npos) << t.message();
  EXPECT_NE(t.message().find("refused the credentials"), std::string::npos) << t.message();
  EXPECT_EQ(t.message().find("s3cret"), std::string::npos);
  EXPECT_EQ(t.message().find("dXNlcjpzM2NyZXQ"), std::string::npos);
}

TEST(TcpConnectorProxy, A407WithoutCredentialsSaysTheyAreRequired) {
  Tunnel t;
  t.open();
  EXPECT_EQ(t.answer("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"), Status::kProxyAuth);
  EXPECT_NE(t.message().find("proxy authentication required"), std::string::npos) << t.message();
}

TEST(TcpConnectorProxy, GatewayAnswersAreConnectFailures) {
  for (const char* answer : {"HTTP/1.1 502 Bad Gateway\r\n\r\n",
                             "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 3\r\n\r\nabc",
                             "HTTP/1.0 504 Gateway Timeout\r\n\r\n"}) {
    Tunnel t;
    t.open();
    EXPECT_EQ(t.answer(answer), Status::kConnectFailed) << answer;
    EXPECT_NE(t.message().find(std::string(answer).substr(9, 3)), std::string::npos) << t.message();
    EXPECT_NE(t.message().find("127.0.0.1"), std::string::npos) << t.message();
  }
}

TEST(TcpConnectorProxy, AnotherStatusOrGarbageIsAProtocolFailureNamingIt) {
  {
    Tunnel t;
    t.open();
    EXPECT_EQ(t.answer("HTTP/1.1 403 Forbidden\r\n\r\n"), Status::kProtocol);
    EXPECT_NE(t.message().find("403 Forbidden"), std::string::npos) << t.message();
  }
  {
    Tunnel t;
    t.open();
    EXPECT_EQ(t.answer("SSH-2.0-OpenSSH_9.2\r\n\r\n"), Status::kProtocol);
    EXPECT_NE(t.message().find("did not answer CONNECT in HTTP"), std::string::npos) << t.message();
  }
}

TEST(TcpConnectorProxy, ACutOrMissingAnswerIsRetryableOrATimeout) {
  {
    Tunnel t;
    t.open();
    t.proxy.close_peer();
    EXPECT_EQ(settle(t.connector, Millis(0)), Status::kConnectFailed);
    EXPECT_NE(t.message().find("closed the connection before answering"), std::string::npos)
        << t.message();
  }
  {
    Tunnel t;
    t.open();
    t.proxy.write_all("HTTP/1.1 200 Conn");
    t.proxy.close_peer();
    EXPECT_EQ(settle(t.connector, Millis(0)), Status::kConnectFailed);
    EXPECT_NE(t.message().find("cut its answer short"), std::string::npos) << t.message();
  }
  {
    Tunnel t;
    t.open();
    EXPECT_EQ(t.connector.step(Millis(999)), Status::kWouldBlock);
    EXPECT_EQ(t.connector.deadline(), Millis(1000));
    EXPECT_EQ(t.connector.wants(), IoInterest::kRead);
    EXPECT_EQ(t.connector.step(Millis(1000)), Status::kConnectTimeout);
    EXPECT_NE(t.message().find("did not answer CONNECT within the connect timeout"),
              std::string::npos)
        << t.message();
  }
}

// A proxy that refuses the connection is named as the proxy, whether the refusal comes at
// once (inside tunnel()/open()) or in a later step.
TEST(TcpConnectorProxy, AProxyThatRefusesIsNamedAsTheProxy) {
  NoResolver resolver;
  ProxyConfig config;
  config.host = "127.0.0.1";
  config.port = 1;  // Nothing listens there.
  for (const bool tls : {true, false}) {
    TcpConnector connector(resolver);
    ProxyRoom room;
    ASSERT_EQ(connector.set_proxy(&config, &room), Status::kOk);
    Url url;
    url.tls = false;
    url.host = "192.0.2.1";
    url.port = 80;
    Timeouts t;
    t.connect = Millis(1000);
    Status s = tls ? connector.tunnel("192.0.2.1", 443, Millis(0), Millis(1000))
                   : connector.open(url, "192.0.2.1", Millis(0), t);
    if (s == Status::kOk) s = settle(connector, Millis(0));
    EXPECT_EQ(s, Status::kConnectFailed) << tls;
    EXPECT_NE(
        std::string(connector.failure_message()).find("could not connect to the proxy '127.0.0.1'"),
        std::string::npos)
        << connector.failure_message();
  }
}

TEST(TcpConnectorProxy, NoProxyGoesStraightToTheOrigin) {
  Listener origin;
  NoResolver resolver;
  TcpConnector connector(resolver);
  ProxyConfig config;
  ProxyRoom room;
  config.host = "127.0.0.1";
  config.port = 1;  // Nothing listens: a connection to the proxy would fail.
  config.no_proxy = "localhost,127.0.0.1";
  ASSERT_EQ(connector.set_proxy(&config, &room), Status::kOk);
  ASSERT_EQ(connector.tunnel("127.0.0.1", origin.port(), Millis(0), Millis(1000)), Status::kOk);
  EXPECT_EQ(settle(connector, Millis(0)), Status::kOk) << connector.failure_message();
}

TEST(TcpConnectorProxy, ForwardsPlainHttpOnlyThroughAProxyThatApplies) {
  NoResolver resolver;
  TcpConnector connector(resolver);
  Url url;
  url.tls = false;
  url.host = "origin.test";
  url.port = 80;
  std::string_view auth = "unset";
  EXPECT_FALSE(connector.forwards(url, &auth));
  ProxyConfig config;
  ProxyRoom room;
  config.host = "proxy.test";
  config.user = "u";
  config.password = "p";
  config.no_proxy = ".internal";
  EXPECT_EQ(connector.set_proxy(&config, nullptr), Status::kInvalidArgument) << "no room";
  EXPECT_FALSE(connector.forwards(url, &auth));
  ASSERT_EQ(connector.set_proxy(&config, &room), Status::kOk);
  EXPECT_TRUE(connector.forwards(url, &auth));
  EXPECT_EQ(auth, "Basic dTpw");
  url.host = "db.internal";
  EXPECT_FALSE(connector.forwards(url, &auth));
  url.host = "origin.test";
  url.tls = true;  // https goes through the tunnel, not as a forwarded request.
  EXPECT_FALSE(connector.forwards(url, &auth));
}

}  // namespace
}  // namespace stepback::https
