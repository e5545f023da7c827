// Happy Eyeballs (RFC 8305) end to end, inside a network namespace each test makes itself
// (unshare(CLONE_NEWNET), lo up, nft rules dropping one family's SYNs: a black hole, as on a
// mobile network with broken IPv6). The Client resolves names through a CaresResolver
// pointed at dns_server.py ("ok-*" is AAAA ::1 and A 127.0.0.1) and connects to
// dual_stack_server.py, which listens on both with the same port and answers "v6" or "v4".
// Needs root (CAP_NET_ADMIN in the initial user namespace) and nft; skipped with a message
// elsewhere.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "integration_support.hpp"
#include "resolver_support.hpp"
#include "stepback/core/random.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::integration {
namespace {

// dual_stack_server.py.
class DualStackServer {
 public:
  ::testing::AssertionResult start() {
    const std::vector<std::string> argv = {
        python_path(), std::string(source_dir()) + "/dual_stack_server.py",
        "--port-file", dir_.file("port"),
        "--lifetime",  "120"};
    if (!process_.start(argv, dir_.file("output.txt"))) {
      return ::testing::AssertionFailure() << "could not start " << python_path();
    }
    const bool ready =
        wait_for([this] { return !read_file(dir_.file("port")).empty() || !process_.running(); },
                 kStartTimeoutMs);
    port_ = static_cast<std::uint16_t>(std::atoi(read_file(dir_.file("port")).c_str()));
    if (!ready || port_ == 0) {
      return ::testing::AssertionFailure()
             << "dual_stack_server.py did not start: " << read_file(dir_.file("output.txt"));
    }
    return ::testing::AssertionSuccess();
  }
  std::uint16_t port() const { return port_; }

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
};

// How one request went.
struct RequestRun {
  https::ClientResult result;
  std::string message;
  std::string body;
  Millis elapsed{};
  Millis first_byte{};  // From start to the first body byte; 0 if none came.
  Millis longest_step{};
};

struct Sink {
  std::string body;
  Millis begin{};
  Millis first_byte{};
};

bool append(void* context, std::uint64_t /*offset*/, https::ConstBytes data) {
  auto* sink = static_cast<Sink*>(context);
  if (sink->body.empty() && data.size > 0)
    sink->first_byte = platform::monotonic_now() - sink->begin;
  sink->body.append(reinterpret_cast<const char*>(data.data), data.size);
  return true;
}

class HappyEyeballsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root to make a network namespace with nft rules (run as root)";
    }
    if (std::system("command -v nft >/dev/null 2>&1 && command -v ip >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "needs the nft and ip programs (nftables, iproute2)";
    }
    if (::unshare(CLONE_NEWNET) != 0) {
      GTEST_SKIP() << "unshare(CLONE_NEWNET) failed: " << std::strerror(errno);
    }
    // This process (and every child it starts from now on) is alone in a fresh namespace.
    ASSERT_EQ(std::system("ip link set lo up"), 0);
    ASSERT_EQ(std::system("nft add table inet stepback_he && nft add chain inet stepback_he out "
                          "'{ type filter hook output priority 0; }'"),
              0);
    STEPBACK_REQUIRE_TOOL(python_path(), "python3");
    ASSERT_TRUE(dns_.start());
    ASSERT_TRUE(http_.start());
    ASSERT_EQ(resolver_.init(test_resolver_options(dns_.servers())), https::Status::kOk)
        << resolver_.message();
  }

  // Drops every TCP packet to the server's port over `family` ("ip6" or "ip").
  void black_hole(const char* family) {
    const std::string rule = std::string("nft add rule inet stepback_he out ") + family +
                             " daddr " + (std::string(family) == "ip6" ? "::1" : "127.0.0.1") +
                             " tcp dport " + std::to_string(http_.port()) + " drop";
    ASSERT_EQ(std::system(rule.c_str()), 0) << rule;
  }

  // One request to http://host:port/ (port 0: the dual-stack server's).
  RequestRun run(const std::string& host, const Policy& policy, const profiles::Timeouts& timeouts,
                 std::uint16_t port = 0) {
    RequestRun out;
    https::Url url;
    const std::string text =
        "http://" + host + ":" + std::to_string(port != 0 ? port : http_.port()) + "/";
    EXPECT_EQ(https::parse_url(text, &url), https::Status::kOk) << text;
    https::RequestSpec spec;
    spec.head.url = url;
    spec.head.user_agent = "stepback-happy-eyeballs-test";
    static std::uint8_t request[2048], head[8192], io[16384], error_body[1024];
    Xoshiro128 random(5);
    const RetryContext context{policy, random, nullptr};
    https::TcpConnector connector(resolver_);
    Sink sink;
    https::ClientOptions options;
    options.timeouts = timeouts;
    options.buffers = {{request, sizeof request},
                       {head, sizeof head},
                       {io, sizeof io},
                       {error_body, sizeof error_body}};
    options.body = https::ResponseSink{&append, nullptr, &sink};
    options.wall_now = &platform::wall_now;
    https::Client client(connector, context, options);
    EXPECT_EQ(client.start(spec), https::Status::kOk);
    const Millis begin = platform::monotonic_now();
    sink.begin = begin;
    for (;;) {
      const Millis before = platform::monotonic_now();
      if (before - begin >= Millis(kRunWallLimitMs)) {
        client.cancel();
        ADD_FAILURE() << "the request outlived the wall limit";
        break;
      }
      const https::ClientNext next = client.step(before);
      const Millis took = platform::monotonic_now() - before;
      if (took > out.longest_step) out.longest_step = took;
      if (next.kind == https::ClientNext::Kind::kDone) break;
      wait_io(next.kind == https::ClientNext::Kind::kWaitIo ? next.fd : -1, next.interest, next.at);
    }
    out.elapsed = platform::monotonic_now() - begin;
    out.result = client.result();
    out.message = client.result().message;
    out.body = sink.body;
    out.first_byte = sink.first_byte;
    return out;
  }

  // A connect timeout far above the attempt delay: reaching it would show at once.
  static profiles::Timeouts long_connect() {
    profiles::Timeouts t = test_timeouts();
    t.connect = Millis(10000);
    return t;
  }

  // Makes `hosts` this process's /etc/hosts, bind-mounted in a mount namespace of its own so
  // that the file is replaced for it alone. The caller returns when the test skipped or failed.
  void use_hosts_file(const char* hosts) {
    if (::unshare(CLONE_NEWNS) != 0) {
      GTEST_SKIP() << "unshare(CLONE_NEWNS) failed: " << std::strerror(errno);
    }
    ASSERT_EQ(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0)
        << std::strerror(errno);
    write_file(hosts_dir_.file("hosts"), hosts);
    ASSERT_EQ(::mount(hosts_dir_.file("hosts").c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr), 0)
        << std::strerror(errno);
    https::CaresOptions options = test_resolver_options(dns_.servers());
    options.hosts_file = true;
    ASSERT_EQ(resolver_.init(options), https::Status::kOk) << resolver_.message();
  }

  // With `hosts` as /etc/hosts, a request to dual.test reaches a plain HTTP server listening
  // on 127.0.0.1 only, in the first attempt.
  void expect_hosts_file_reaches_an_ipv4_only_server(const char* hosts) {
    use_hosts_file(hosts);
    if (IsSkipped() || HasFatalFailure()) return;
    ScriptedServer v4_only;
    ScriptedServer::Options server;
    server.script = R"([{"status": 200, "body": "v4 only"}])";
    server.tls = false;
    ASSERT_TRUE(v4_only.start(server));
    Policy policy = test_policy();
    policy.max_retries = 0;
    const RequestRun r = run("dual.test", policy, long_connect(), v4_only.port());
    EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.message;
    EXPECT_EQ(r.body, "v4 only");
    EXPECT_EQ(r.result.attempts, 1U);
  }

  // The addresses resolver_ gives `host` at once, as "[::1]:80" or "127.0.0.1:80"; the error's
  // name if the lookup failed, "pending" if it did not end in start().
  std::vector<std::string> resolve_at_once(const char* host) {
    resolver_.start(host, 80, platform::monotonic_now());
    const https::ResolverNext next = resolver_.step(platform::monotonic_now());
    if (next.kind != https::ResolverNext::Kind::kDone) {
      resolver_.cancel();
      return {"pending"};
    }
    const https::ResolveResult& r = resolver_.result();
    if (r.error != https::ResolveError::kNone) return {https::to_string(r.error)};
    std::vector<std::string> out;
    for (std::size_t i = 0; i < r.count; ++i) out.push_back(address_text(r.addresses[i]));
    return out;
  }

  DnsServer dns_;
  DualStackServer http_;
  https::CaresResolver resolver_;
  TempDir hosts_dir_;
};

TEST_F(HappyEyeballsTest, BothFamiliesUpTheIPv6ConnectionWins) {
  const RequestRun r = run("ok-both.test", test_policy(), long_connect());
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.message;
  EXPECT_EQ(r.body, "v6");
  EXPECT_EQ(r.result.attempts, 1U);
}

TEST_F(HappyEyeballsTest, BlackHoledIPv6CostsTheAttemptDelayNotTheConnectTimeout) {
  black_hole("ip6");
  const RequestRun r = run("ok-v6-dropped.test", test_policy(), long_connect());
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.message;
  EXPECT_EQ(r.body, "v4");
  EXPECT_EQ(r.result.attempts, 1U);
  // IPv4 starts 250 ms after IPv6; a sequential connect would wait the 10 s timeout.
  EXPECT_GE(r.first_byte, https::TcpTransport::kConnectionAttemptDelay);
  EXPECT_LT(r.first_byte, Millis(5000)) << "waited for the connect timeout";
}

TEST_F(HappyEyeballsTest, BlackHoledIPv4DoesNotDelayIPv6) {
  black_hole("ip");
  const RequestRun r = run("ok-v4-dropped.test", test_policy(), long_connect());
  EXPECT_EQ(r.result.outcome, Outcome::kSuccess) << r.message;
  EXPECT_EQ(r.body, "v6");
}

// The case as a user meets it: /etc/hosts names ::1 and 127.0.0.1, the server listens
// on 127.0.0.1 only, and CaresResolver reads the hosts file. The refused ::1 must hand over
// to 127.0.0.1 at once, in the first attempt (curl connects at once too).
TEST_F(HappyEyeballsTest, AHostsFileNameOnBothLoopbacksReachesAnIPv4OnlyServer) {
  expect_hosts_file_reaches_an_ipv4_only_server("::1 dual.test\n127.0.0.1 dual.test\n");
}

// The same name after a localhost line on 127.0.0.1. c-ares 1.34.5 merges
// the third line into localhost's entry by its address and drops dual.test from it, so its
// own hosts-file lookup answered ::1 alone; CaresResolver reads the file itself, as glibc
// does, and gets both.
TEST_F(HappyEyeballsTest, AHostsFileNameOnBothLoopbacksAfterLocalhostReachesAnIPv4OnlyServer) {
  expect_hosts_file_reaches_an_ipv4_only_server(
      "127.0.0.1 localhost\n::1 dual.test\n127.0.0.1 dual.test\n");
}

// RFC 6761 as c-ares applied it when it read the hosts file: a localhost name has the
// loopback address of each family the file gives it none of, and is never asked of DNS.
TEST_F(HappyEyeballsTest, LocalhostNamesHaveBothLoopbacksWhateverTheHostsFileSays) {
  use_hosts_file("::1 dual.test\n127.0.0.2 localhost\n");
  if (IsSkipped() || HasFatalFailure()) return;
  using Addresses = std::vector<std::string>;
  EXPECT_EQ(resolve_at_once("localhost"), (Addresses{"127.0.0.2:80", "[::1]:80"}));
  EXPECT_EQ(resolve_at_once("LocalHost"), (Addresses{"127.0.0.2:80", "[::1]:80"}));
  EXPECT_EQ(resolve_at_once("a.localhost"), (Addresses{"[::1]:80", "127.0.0.1:80"}));
  EXPECT_EQ(resolve_at_once("dual.test"), (Addresses{"[::1]:80"}));
}

TEST_F(HappyEyeballsTest, BothBlackHoledIsOneRetryableFailureNamingEveryAddress) {
  black_hole("ip6");
  black_hole("ip");
  Policy policy = test_policy();
  policy.max_retries = 1;
  profiles::Timeouts timeouts = test_timeouts();
  timeouts.connect = Millis(800);
  const RequestRun r = run("ok-none.test", policy, timeouts);
  EXPECT_EQ(r.result.outcome, Outcome::kRetriesExhausted) << r.message;
  EXPECT_EQ(r.result.attempts, 2U);  // Retried: nothing left.
  EXPECT_EQ(r.result.error, https::Status::kConnectTimeout);
  const std::string port = std::to_string(http_.port());
  EXPECT_EQ(r.message,
            "could not connect to 'ok-none.test' within the connect timeout (2 "
            "addresses): [::1]:" +
                port + " (no answer), 127.0.0.1:" + port + " (no answer)");
}

TEST_F(HappyEyeballsTest, TheLookupTimeCountsAgainstTheConnectTimeout) {
  // "slow" answers after the DNS server's delay; the connect then gets only what is left.
  DnsServer slow_dns;
  ASSERT_TRUE(slow_dns.start(1.0));
  https::CaresOptions options = test_resolver_options(slow_dns.servers());
  options.try_timeout = Millis(3000);
  options.max_try = Millis(3000);
  options.tries = 1;
  ASSERT_EQ(resolver_.init(options), https::Status::kOk) << resolver_.message();
  black_hole("ip6");
  black_hole("ip");
  Policy policy = test_policy();
  policy.max_retries = 0;
  profiles::Timeouts timeouts = test_timeouts();
  timeouts.connect = Millis(1500);
  const RequestRun r = run("slow-lookup.test", policy, timeouts);
  EXPECT_EQ(r.result.error, https::Status::kConnectTimeout) << r.message;
  // 1.5 s in all (lookup 1 s + connect 0.5 s), not 2.5 s (lookup + a whole connect timeout).
  EXPECT_GE(r.elapsed, Millis(1500));
  EXPECT_LT(r.elapsed, Millis(2200));
}

}  // namespace
}  // namespace stepback::integration
