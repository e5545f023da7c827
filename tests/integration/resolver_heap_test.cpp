// "No heap after set-up" with a name lookup in the request: c-ares runs on the pool the test
// installs with dns_pool_init(), the resolver is initialized before the trap (that reads no
// file here: the servers are given), and then a whole request to a name (lookup through
// dns_server.py, connect, GET to the scripted HTTP server) runs under the heap trap, twice,
// with zero heap calls. Also: the pool's figures, and an exhausted pool as a resolver failure.
#include <execinfo.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "integration_support.hpp"
#include "resolver_support.hpp"
#include "stepback/core/random.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/support/counting_sink.hpp"
#include "tests/support/heap_trap.hpp"

namespace stepback::integration {
namespace {

using testing::CountingSink;
using testing::HeapTrap;

alignas(16) std::uint8_t pool_buffer[320 * 1024];

// Installs the test's pool once per process (it is process-wide).
void ensure_pool() {
  static const https::Status installed =
      https::dns_pool_init(https::MutableBytes{pool_buffer, sizeof pool_buffer});
  ASSERT_EQ(installed, https::Status::kOk);
}

class ResolverHeapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::heap_trap_available())
      GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
    STEPBACK_REQUIRE_TOOL(python_path(), "python3");
    ensure_pool();
    ASSERT_TRUE(dns_.start());
  }
  DnsServer dns_;
};

TEST_F(ResolverHeapTest, ALookupAndARequestMakeNoHeapCalls) {
  ScriptedServer http;
  ScriptedServer::Options server_options;
  server_options.script = R"([{"status": 503}, {"status": 200, "pattern": 4096}])";
  server_options.tls = false;
  ASSERT_TRUE(http.start(server_options));

  https::CaresResolver resolver;
  ASSERT_EQ(resolver.init(test_resolver_options(dns_.servers())), https::Status::kOk)
      << resolver.message();
  const std::string url_text = "http://ok.test:" + std::to_string(http.port()) + "/data";
  https::Url url;
  ASSERT_EQ(https::parse_url(url_text, &url), https::Status::kOk);
  https::RequestSpec spec;
  spec.head.url = url;
  spec.head.user_agent = "stepback-resolver-heap-test";
  static std::uint8_t request[2048], head[8192], io[16384], error_body[1024];
  Xoshiro128 random(3);
  const Policy policy = test_policy();
  const RetryContext context{policy, random, nullptr};
  CountingSink body;
  https::TcpConnector connector(resolver);
  https::ClientOptions options;
  options.timeouts = test_timeouts();
  options.buffers = {{request, sizeof request},
                     {head, sizeof head},
                     {io, sizeof io},
                     {error_body, sizeof error_body}};
  options.body = body.sink();
  options.wall_now = &platform::wall_now;

  void* warm[4];
  (void)backtrace(warm, 4);
  (void)platform::monotonic_now();
  (void)platform::wall_now();

  for (int round = 0; round < 2; ++round) {
    https::Client client(connector, context, options);
    ASSERT_EQ(client.start(spec), https::Status::kOk);
    body = CountingSink{};
    long calls = -1;
    {
      HeapTrap trap;
      const Millis begin = platform::monotonic_now();
      https::ClientNext next = client.step(begin);
      while (next.kind != https::ClientNext::Kind::kDone &&
             platform::monotonic_now() - begin < Millis(kRunWallLimitMs)) {
        wait_io(next.kind == https::ClientNext::Kind::kWaitIo ? next.fd : -1, next.interest,
                next.at);
        next = client.step(platform::monotonic_now());
      }
      if (next.kind != https::ClientNext::Kind::kDone) client.cancel();
      calls = trap.calls();
    }
    EXPECT_EQ(client.result().outcome, Outcome::kSuccess)
        << "round " << round << ": " << client.result().message;
    EXPECT_EQ(body.size, 4096U);
    EXPECT_EQ(calls, 0) << "round " << round << ": " << calls << " heap calls; the first "
                        << HeapTrap::traces() << ":\n"
                        << HeapTrap::describe();
  }
  EXPECT_GE(count_of(dns_.log(), "name=ok.test type=A from="), 2) << dns_.log();
  const https::DnsPoolStats stats = https::dns_pool_stats();
  EXPECT_EQ(stats.refused, 0U);
  EXPECT_GT(stats.peak, 0U);
  RecordProperty("dns_pool_peak_bytes", std::to_string(stats.peak));
  RecordProperty("dns_pool_carved_bytes", std::to_string(stats.carved));
  std::printf("dns pool: capacity %zu, in use %zu, peak %zu, carved %zu\n", stats.capacity,
              stats.in_use, stats.peak, stats.carved);
}

TEST_F(ResolverHeapTest, RepeatedLookupsNeitherLeakNorKeepGrowingThePool) {
  https::CaresResolver resolver;
  ASSERT_EQ(resolver.init(test_resolver_options(dns_.servers())), https::Status::kOk);
  // Warm-up: the sizes this pattern asks for get their blocks.
  for (int i = 0; i < 6; ++i) (void)resolve(resolver, i % 2 == 0 ? "ok.test" : "nx.test", 443);
  const https::DnsPoolStats before = https::dns_pool_stats();
  for (int i = 0; i < 40; ++i) {
    const ResolveRun run = resolve(resolver, i % 2 == 0 ? "ok.test" : "nx.test", 443);
    ASSERT_NE(run.error, https::ResolveError::kOutOfMemory) << run.message;
  }
  const https::DnsPoolStats after = https::dns_pool_stats();
  // Nothing of a lookup is held once it is over (its 128 KiB connection buffer closes with
  // it); c-ares's own bookkeeping (skip-list levels, server state) varies by a few hundred bytes.
  EXPECT_LT(after.in_use, before.in_use + 1024);
  // c-ares's skip lists draw node heights at random, so a new block size can still appear
  // now and then; the pool carves little more after the warm-up.
  EXPECT_LT(after.carved - before.carved, 8192U);
  EXPECT_EQ(after.refused, 0U);
}

TEST_F(ResolverHeapTest, ASecondPoolIsRefused) {
  alignas(16) static std::uint8_t other[8192];
  EXPECT_EQ(https::dns_pool_init(https::MutableBytes{other, sizeof other}), https::Status::kError);
}

}  // namespace
}  // namespace stepback::integration
