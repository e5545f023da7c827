// TcpConnector driven by a scripted Resolver: numeric hosts never looked up, the resolver's
// socket exposed while resolving, definite answers terminal and the rest retryable, the
// lookup bounded by the connect timeout, the Client's verdicts, and what it refuses.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "stepback/core/random.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "tests/support/settle.hpp"

namespace stepback::https {
namespace {

SocketAddress v4(const char* ip, std::uint16_t port) {
  SocketAddress a;
  EXPECT_EQ(parse_numeric_address(ip, port, &a), Status::kOk);
  return a;
}

class ScriptedResolver final : public Resolver {
 public:
  void start(const char* host, std::uint16_t port, Millis now) override {
    ++starts;
    host_ = host;
    port_ = port;
    started_at = now;
    done_ = false;
  }
  ResolverNext step(Millis now) override {
    ++steps;
    if (!done_ && now >= answer_at) {
      done_ = true;
      result_ = ResolveResult{};
      result_.error = error;
      message_ = "resolver says: " + host_ + " " + to_string(error);
      result_.message = error == ResolveError::kNone ? "" : message_.c_str();
      if (error == ResolveError::kNone) {
        for (SocketAddress& a : addresses) (void)set_address_port(&a, port_);
        result_.addresses = addresses.data();
        result_.count = addresses.size();
      }
    }
    if (done_) return ResolverNext{};
    return ResolverNext{ResolverNext::Kind::kWaitIo, fd, IoInterest::kRead, wait_until};
  }
  const ResolveResult& result() const override { return result_; }
  void cancel() override { ++cancels; }
  void network_changed() override { ++network_changes; }

  int fd = 0;  // stdin: any real descriptor will do, nobody polls it here.
  Millis answer_at = Millis(0);
  Millis wait_until = Millis::max();
  ResolveError error = ResolveError::kNone;
  std::vector<SocketAddress> addresses;
  int starts = 0;
  int steps = 0;
  int cancels = 0;
  int network_changes = 0;
  Millis started_at{};

 private:
  std::string host_;
  std::string message_;
  std::uint16_t port_ = 0;
  bool done_ = false;
  ResolveResult result_;
};

Url http_url(const char* host, std::uint16_t port) {
  Url u;
  u.tls = false;
  u.host = host;
  u.port = port;
  u.target = "/";
  return u;
}

Timeouts timeouts(std::uint64_t connect_ms) {
  Timeouts t;
  t.connect = Millis(connect_ms);
  t.tls_handshake = Millis(1000);
  t.read = Millis(1000);
  return t;
}

TEST(TcpConnectorNames, NumericHostsAreNeverLookedUp) {
  ScriptedResolver resolver;
  TcpConnector connector(resolver);
  // Port 1 on loopback: refused at once or soon; the point is that no lookup starts.
  (void)connector.open(http_url("127.0.0.1", 1), "127.0.0.1", Millis(0), timeouts(1000));
  (void)connector.open(http_url("::1", 1), "::1", Millis(0), timeouts(1000));
  EXPECT_EQ(resolver.starts, 0);
  EXPECT_EQ(connector.open(http_url("999.1.2.3", 1), "999.1.2.3", Millis(0), timeouts(1000)),
            Status::kInvalidArgument);
  EXPECT_NE(std::string(connector.failure_message()).find("999.1.2.3"), std::string::npos);
  EXPECT_EQ(resolver.starts, 0);
  connector.close();
}

TEST(TcpConnectorNames, WhileResolvingTheResolverSocketIsExposed) {
  ScriptedResolver resolver;
  resolver.fd = 0;
  resolver.answer_at = Millis(500);
  resolver.wait_until = Millis(300);
  TcpConnector connector(resolver);
  ASSERT_EQ(connector.open(http_url("name.test", 80), "name.test", Millis(100), timeouts(2000)),
            Status::kOk);
  EXPECT_EQ(resolver.starts, 1);
  EXPECT_EQ(connector.step(Millis(100)), Status::kWouldBlock);
  EXPECT_EQ(connector.fd(), 0);
  EXPECT_EQ(connector.wants(), IoInterest::kRead);
  EXPECT_EQ(connector.deadline(), Millis(300));
  connector.close();
  EXPECT_GE(resolver.cancels, 1);
}

TEST(TcpConnectorNames, TheLookupIsBoundedByTheConnectTimeout) {
  ScriptedResolver resolver;
  resolver.answer_at = Millis::max();
  TcpConnector connector(resolver);
  ASSERT_EQ(connector.open(http_url("slow.test", 80), "slow.test", Millis(0), timeouts(2000)),
            Status::kOk);
  EXPECT_EQ(connector.step(Millis(10)), Status::kWouldBlock);
  EXPECT_EQ(connector.deadline(), Millis(2000));
  EXPECT_EQ(connector.step(Millis(2000)), Status::kDnsFailed);
  EXPECT_NE(std::string(connector.failure_message()).find("slow.test"), std::string::npos)
      << connector.failure_message();
  EXPECT_NE(std::string(connector.failure_message()).find("connect timeout"), std::string::npos);
  EXPECT_GE(resolver.cancels, 1);
}

TEST(TcpConnectorNames, DefiniteAnswersAreInvalidArgumentsTheRestDnsFailures) {
  const struct {
    ResolveError error;
    Status status;
  } cases[] = {
      {ResolveError::kNxDomain, Status::kInvalidArgument},
      {ResolveError::kNoData, Status::kInvalidArgument},
      {ResolveError::kInvalidName, Status::kInvalidArgument},
      {ResolveError::kTimeout, Status::kDnsFailed},
      {ResolveError::kServerFailure, Status::kDnsFailed},
      {ResolveError::kBadResponse, Status::kDnsFailed},
      {ResolveError::kNoNetwork, Status::kDnsFailed},
      {ResolveError::kOutOfMemory, Status::kDnsFailed},
      {ResolveError::kInternal, Status::kDnsFailed},
  };
  for (const auto& c : cases) {
    ScriptedResolver resolver;
    resolver.error = c.error;
    TcpConnector connector(resolver);
    ASSERT_EQ(connector.open(http_url("x.test", 80), "x.test", Millis(0), timeouts(1000)),
              Status::kOk);
    EXPECT_EQ(connector.step(Millis(0)), c.status) << to_string(c.error);
    EXPECT_EQ(std::string(connector.failure_message()),
              std::string("resolver says: x.test ") + to_string(c.error));
  }
}

TEST(TcpConnectorNames, AddressesGoToTheConnectInTheSameStep) {
  // A listening socket on loopback, so the connect can succeed.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t len = sizeof sin;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&sin), &len), 0);
  const std::uint16_t port = ntohs(sin.sin_port);

  ScriptedResolver resolver;
  resolver.addresses = {v4("127.0.0.1", 9)};
  TcpConnector connector(resolver);
  ASSERT_EQ(connector.open(http_url("ok.test", port), "ok.test", Millis(0), timeouts(1000)),
            Status::kOk);
  const Status s = testing::settle(connector, Millis(0));
  EXPECT_EQ(s, Status::kOk) << connector.failure_message();
  EXPECT_GE(connector.fd(), 0);
  connector.close();
  close(listener);
}

SocketAddress v6(const char* ip, std::uint16_t port) {
  SocketAddress a;
  EXPECT_EQ(parse_numeric_address(ip, port, &a), Status::kOk);
  return a;
}

// A port on `family`'s loopback that refuses connections (bound, never listening); the
// socket is returned so the port stays taken. -1 when the family is unavailable.
int refusing_socket(int family, std::uint16_t* port) {
  const int fd = socket(family, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::memcpy(&ss, &sin, sizeof sin);
    len = sizeof sin;
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_addr = in6addr_loopback;
    std::memcpy(&ss, &sin6, sizeof sin6);
    len = sizeof sin6;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    close(fd);
    return -1;
  }
  sockaddr_in6 any{};
  std::memcpy(&any, &ss, sizeof(sockaddr_in));  // The port sits at the same offset in both.
  *port = ntohs(any.sin6_port);
  return fd;
}

TEST(TcpConnectorNames, EveryAddressFailedIsOneConnectFailureNamingThemAll) {
  std::uint16_t port = 0;
  const int v4_fd = refusing_socket(AF_INET, &port);
  ASSERT_GE(v4_fd, 0);
  const int v6_fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (v6_fd < 0) GTEST_SKIP() << "no IPv6 here";
  close(v6_fd);
  ScriptedResolver resolver;
  // Both refuse: nothing listens on `port` on ::1 either (the v4 socket only binds it).
  resolver.addresses = {v4("127.0.0.1", 9), v6("::1", 9)};
  TcpConnector connector(resolver);
  ASSERT_EQ(connector.open(http_url("both.test", port), "both.test", Millis(0), timeouts(1000)),
            Status::kOk);
  EXPECT_EQ(testing::settle(connector, Millis(0)), Status::kConnectFailed);
  const std::string p = std::to_string(port);
  const std::string refused = std::string(" (") + std::strerror(ECONNREFUSED) + ")";
  EXPECT_EQ(std::string(connector.failure_message()),
            "could not connect to 'both.test' (2 addresses): [::1]:" + p + refused +
                ", 127.0.0.1:" + p + refused);
  close(v4_fd);
}

TEST(TcpConnectorNames, TheClientDoesNotRetryANonexistentHost) {
  ScriptedResolver resolver;
  resolver.error = ResolveError::kNxDomain;
  TcpConnector connector(resolver);
  Policy policy;
  policy.initial_delay = Millis(1000);
  policy.max_retries = 5;
  Xoshiro128 random(1);
  const RetryContext context{policy, random, nullptr};
  static std::uint8_t request[1024], head[1024], io[1024], error_body[256];
  ClientOptions options;
  options.timeouts = timeouts(1000);
  options.buffers = {{request, sizeof request},
                     {head, sizeof head},
                     {io, sizeof io},
                     {error_body, sizeof error_body}};
  options.wall_now = [] { return Millis(0); };
  Client client(connector, context, options);
  RequestSpec spec;
  spec.head.url = http_url("exampel.test", 80);
  ASSERT_EQ(client.start(spec), Status::kOk);
  ClientNext next = client.step(Millis(0));
  for (int i = 0; i < 10 && next.kind != ClientNext::Kind::kDone; ++i) next = client.step(next.at);
  ASSERT_EQ(next.kind, ClientNext::Kind::kDone);
  EXPECT_EQ(client.result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(client.result().attempts, 1U);
  EXPECT_EQ(resolver.starts, 1);
  EXPECT_NE(std::string(client.result().message).find("exampel.test"), std::string::npos)
      << client.result().message;
}

TEST(TcpConnectorNames, TheClientRetriesAResolverTimeout) {
  ScriptedResolver resolver;
  resolver.error = ResolveError::kTimeout;
  TcpConnector connector(resolver);
  Policy policy;
  policy.initial_delay = Millis(10);
  policy.max_backoff = Millis(10);
  policy.jitter = Jitter::kNone;
  policy.max_retries = 2;
  Xoshiro128 random(1);
  const RetryContext context{policy, random, nullptr};
  static std::uint8_t request[1024], head[1024], io[1024], error_body[256];
  ClientOptions options;
  options.timeouts = timeouts(1000);
  options.buffers = {{request, sizeof request},
                     {head, sizeof head},
                     {io, sizeof io},
                     {error_body, sizeof error_body}};
  options.wall_now = [] { return Millis(0); };
  Client client(connector, context, options);
  RequestSpec spec;
  spec.head.url = http_url("flaky.test", 80);
  ASSERT_EQ(client.start(spec), Status::kOk);
  ClientNext next = client.step(Millis(0));
  Millis now(0);
  for (int i = 0; i < 50 && next.kind != ClientNext::Kind::kDone; ++i) {
    now = next.at > now ? next.at : now;
    next = client.step(now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kDone);
  EXPECT_EQ(client.result().outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(client.result().attempts, 3U);
  EXPECT_EQ(resolver.starts, 3);
}

TEST(TcpConnector, AnHttpsUrlIsRefusedNamingTheConnectorThatServesIt) {
  ScriptedResolver resolver;
  TcpConnector connector(resolver);
  Url url = http_url("example.test", 443);
  url.tls = true;
  EXPECT_EQ(connector.open(url, "example.test", Millis(0), timeouts(1000)),
            Status::kInvalidArgument);
  EXPECT_NE(std::string(connector.failure_message()).find("TcpTlsConnector"), std::string::npos)
      << connector.failure_message();
  EXPECT_EQ(resolver.starts, 0);
  EXPECT_EQ(connector.fd(), -1);
}

TEST(TcpConnector, ANetworkChangeEndsTheLookupAndReachesTheResolver) {
  ScriptedResolver resolver;
  resolver.answer_at = Millis::max();
  TcpConnector connector(resolver);
  ASSERT_EQ(connector.open(http_url("example.test", 80), "example.test", Millis(0), timeouts(1000)),
            Status::kOk);
  EXPECT_EQ(connector.step(Millis(1)), Status::kWouldBlock);
  connector.network_changed();
  EXPECT_EQ(resolver.cancels, 1);
  EXPECT_EQ(resolver.network_changes, 1);
  EXPECT_EQ(connector.fd(), -1);
}

}  // namespace
}  // namespace stepback::https
