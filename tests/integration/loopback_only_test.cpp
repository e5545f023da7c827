// Reachability learned from attempts, through the library on real sockets: each test
// runs in a network namespace of its process's own with only loopback up, as an offline
// sandbox or a container without a network has, and the Client is told there is no network.
// A server on 127.0.0.1 is reached at once; a destination with no route fails its connect
// for lack of a path (Connector::unreachable()), and the request waits for a network.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/integration/integration_support.hpp"

#if defined(STEPBACK_HAVE_CARES)
#include "stepback/https/dns/cares_resolver.hpp"
#include "tests/integration/resolver_support.hpp"
#endif

namespace stepback::integration {
namespace {

class LoopbackOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Only this test's process moves: ctest runs each test in a process of its own.
    if (::unshare(CLONE_NEWNET) != 0) {
      GTEST_SKIP() << "unshare(CLONE_NEWNET) failed (needs root): " << std::strerror(errno);
    }
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    ASSERT_EQ(::ioctl(fd, SIOCGIFFLAGS, &ifr), 0) << std::strerror(errno);
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    ASSERT_EQ(::ioctl(fd, SIOCSIFFLAGS, &ifr), 0) << std::strerror(errno);
    ::close(fd);
  }

  static https::NetworkInfo none() {
    https::NetworkInfo n;
    n.connected = false;
    return n;
  }

  // A port on 127.0.0.1 nobody listens on (for `type`: SOCK_STREAM or SOCK_DGRAM): bound to
  // learn a free one, then released. Nothing else runs in this namespace to take it.
  static std::uint16_t closed_loopback_port(int type) {
    const int probe = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    const bool bound = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&sin), len) == 0 &&
                       ::getsockname(probe, reinterpret_cast<sockaddr*>(&sin), &len) == 0;
    if (probe >= 0) ::close(probe);
    return bound ? ntohs(sin.sin_port) : 0;
  }

  // Opens `connector` to `url` and steps it until it connects or fails (at most about 1 s).
  static https::Status dial(https::TcpConnector& connector, const std::string& url,
                            const char* host) {
    https::Url parsed;
    if (https::parse_url(url.c_str(), &parsed) != https::Status::kOk) {
      return https::Status::kInvalidArgument;
    }
    Timeouts timeouts;
    timeouts.connect = Millis(2000);
    https::Status s = connector.open(parsed, host, platform::monotonic_now(), timeouts);
    for (int i = 0; i < 100 && s == https::Status::kOk; ++i) {
      s = connector.step(platform::monotonic_now());
      if (s == https::Status::kWouldBlock) {
        ::usleep(10000);
        s = https::Status::kOk;
      }
    }
    return s;
  }
};

// Before, the request waited up to Timeouts::offline for a network it did not need.
TEST_F(LoopbackOnlyTest, AServerOnLoopbackIsReachedWithoutANetwork) {
  ScriptedServer server;
  ScriptedServer::Options options;
  options.script = R"([{"status": 200, "body": "on loopback"}])";
  options.tls = false;
  ASSERT_TRUE(server.start(options));
  ClientSetup setup;
  setup.url = server.url("/");
  setup.network = none();
  setup.policy.max_retries = 0;
  const RunResult r = run_client(setup);
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.summary();
  EXPECT_EQ(r.body, "on loopback");
  EXPECT_TRUE(r.of(https::ClientEvent::Kind::kWait).empty()) << r.summary();
}

// The connect itself tells a missing path from a refusal.
TEST_F(LoopbackOnlyTest, AConnectWithoutARouteIsUnreachableAndARefusalIsNot) {
  https::FixedResolver no_names;
  https::TcpConnector connector(no_names);
  EXPECT_EQ(dial(connector, "http://10.83.9.1:8080/", "10.83.9.1"), https::Status::kConnectFailed)
      << connector.failure_message();
  EXPECT_TRUE(connector.unreachable()) << connector.failure_message();
  // A port on 127.0.0.1 nobody listens on: reached, and refused.
  const std::uint16_t closed = closed_loopback_port(SOCK_STREAM);
  ASSERT_NE(closed, 0);
  EXPECT_EQ(dial(connector, "http://127.0.0.1:" + std::to_string(closed) + "/", "127.0.0.1"),
            https::Status::kConnectFailed)
      << connector.failure_message();
  EXPECT_FALSE(connector.unreachable()) << connector.failure_message();
}

// No route and no network: one attempt, then a wait for a network (no retry spent) that the
// offline limit ends.
TEST_F(LoopbackOnlyTest, ADestinationWithoutARouteWaitsForANetwork) {
  ClientSetup setup;
  setup.url = "http://10.83.9.1:8080/";
  setup.network = none();
  setup.policy.max_retries = 5;
  setup.timeouts.offline = Millis(300);
  const RunResult r = run_client(setup);
  EXPECT_EQ(r.result.outcome, Outcome::kOffline) << r.summary();
  EXPECT_EQ(r.result.attempts, 1U) << r.summary();
  const auto waits = r.of(https::ClientEvent::Kind::kWait);
  ASSERT_EQ(waits.size(), 1U) << r.summary();
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kOffline);
  EXPECT_EQ(waits[0].message, "there is no network");
}

#if defined(STEPBACK_HAVE_CARES)
// A lookup tells a DNS server with no route (a network coming back can heal that) from one
// reached that refused (it cannot); only the first may make a request wait for a network.
TEST_F(LoopbackOnlyTest, ALookupTellsADnsServerWithoutARouteFromARefusingOne) {
  https::CaresResolver far;
  ASSERT_EQ(far.init(test_resolver_options("10.83.53.1:53")), https::Status::kOk) << far.message();
  const ResolveRun unreachable = resolve(far, "ok.test", 443);
  EXPECT_EQ(unreachable.error, https::ResolveError::kNoNetwork) << unreachable.message;
  EXPECT_TRUE(unreachable.unreachable) << unreachable.message;
  // A port on 127.0.0.1 nobody listens on: each query is refused (ICMP port unreachable).
  const std::uint16_t closed = closed_loopback_port(SOCK_DGRAM);
  ASSERT_NE(closed, 0);
  https::CaresResolver near;
  ASSERT_EQ(near.init(test_resolver_options("127.0.0.1:" + std::to_string(closed))),
            https::Status::kOk)
      << near.message();
  const ResolveRun refused = resolve(near, "ok.test", 443);
  EXPECT_NE(refused.error, https::ResolveError::kNone) << refused.message;
  EXPECT_FALSE(refused.unreachable) << refused.message;
}
#endif

}  // namespace
}  // namespace stepback::integration
