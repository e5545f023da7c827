// Proves "no heap after set-up" end to end: traps malloc/calloc/realloc/free and every
// operator new (the technique of tests/core/alloc_free_test.cpp), sets up the TLS arena on a
// static buffer, the TLS configuration with its CA and a started Client, then runs a whole
// request with retries (503, 503, 200 over TLS to the scripted Python server, which runs in
// another process) and expects zero heap calls during the step loop. Each trapped call keeps
// a backtrace, printed on failure, so a regression names its allocation site.
#include <dlfcn.h>
#include <execinfo.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "integration_support.hpp"
#include "tests/support/heap_trap.hpp"
#include "stepback/core/random.hpp"
#include "stepback/https/integrity/integrity.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::integration {
namespace {

using testing::HeapTrap;

// A label for the known allocation sites of recorded call `i`.
const char* known_site(int i) {
  if (HeapTrap::passes_through(i, "addrinfo")) return " (in getaddrinfo/freeaddrinfo)";
  if (HeapTrap::passes_through(i, "x509_time_gmtime")) {
    return " (glibc loads its time-zone data on the first gmtime_r(), called by mbedTLS to "
           "check certificate validity)";
  }
  return "";
}

// The recorded traces, labelled and symbolized, for the failure message.
std::string describe_traces() {
  std::string out;
  for (int i = 0; i < HeapTrap::traces(); ++i) {
    out += "recorded call " + std::to_string(i + 1) + known_site(i) + "\n";
  }
  return out + HeapTrap::describe();
}

// The body's size and checksum, kept without allocating.
struct BodyTally {
  std::size_t size = 0;
  std::uint32_t hash = 2166136261U;
};

bool tally(void* context, std::uint64_t /*offset*/, https::ConstBytes data) {
  auto* t = static_cast<BodyTally*>(context);
  t->size += data.size;
  t->hash = fnv1a(data.data, data.size, t->hash);
  return true;
}

class HeapFreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::heap_trap_available()) {
      GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
    }
    STEPBACK_REQUIRE_TOOL(python_path(), "python3");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
  }

  // Serves `script`, then runs one GET of 127.0.0.1 (numeric: no DNS) with the heap trapped
  // from the first step to kDone. Everything is set up before the trap is armed; with
  // `warm_libc_time`, so is glibc's time-zone state (see WithLibcTimeWarmedUp below).
  // `tls_version` is the server's (ScriptedServer::Options::tls_version).
  void run_trapped(const std::string& script, std::uint32_t expected_attempts,
                   std::uint32_t expected_connections, bool warm_libc_time = false,
                   const https::ProxyConfig* proxy = nullptr,
                   const std::string& tls_version = "any") {
    ScriptedServer server;
    ScriptedServer::Options options;
    options.script = script;
    options.tls_version = tls_version;
    ASSERT_TRUE(server.start(options));
    auto tls = make_tls(pki()->ca);  // Installs the static arena first.
    ASSERT_NE(tls, nullptr);

    const std::string url_text = server.url("/data");
    https::Url url;
    ASSERT_EQ(https::parse_url(url_text, &url), https::Status::kOk);
    https::RequestSpec spec;
    spec.head.url = url;
    spec.head.user_agent = "stepback-heap-test";
    static std::uint8_t request[2048], head[8192], io[16384], error_body[1024];
    const https::ClientBuffers buffers{{request, sizeof request},
                                       {head, sizeof head},
                                       {io, sizeof io},
                                       {error_body, sizeof error_body}};
    Xoshiro128 random(7);
    const Policy policy = test_policy();
    const RetryContext context{policy, random, nullptr};
    BodyTally body;
    https::FixedResolver no_names;  // The server is on 127.0.0.1.
    https::TcpTlsConnector connector(*tls, no_names);
    https::ProxyRoom room;
    ASSERT_EQ(connector.set_proxy(proxy, &room), https::Status::kOk);
    https::ClientOptions client_options;
    client_options.timeouts = test_timeouts();
    client_options.buffers = buffers;
    client_options.body = https::ResponseSink{&tally, nullptr, &body};
    client_options.body_limit = 1 << 20;
    client_options.wall_now = &platform::wall_now;
    https::Client client(connector, context, client_options);
    ASSERT_EQ(client.start(spec), https::Status::kOk);

    // Warm up what the loop and the trap call, so first-use set-up is not counted.
    void* warm[4];
    (void)backtrace(warm, 4);
    (void)platform::monotonic_now();
    (void)platform::wall_now();
    if (warm_libc_time) {
      const std::time_t epoch = 0;
      std::tm tm{};
      (void)gmtime_r(&epoch, &tm);
    }
    https::tls_arena_reset_peak();

    long calls = -1;
    bool hit_wall_limit = false;
    {
      HeapTrap trap;
      const Millis begin = platform::monotonic_now();
      const Millis wall_limit = begin + Millis(kRunWallLimitMs);
      https::ClientNext next = client.step(begin);
      while (next.kind != https::ClientNext::Kind::kDone) {
        const Millis now = platform::monotonic_now();
        if (now >= wall_limit) {
          client.cancel();
          hit_wall_limit = true;
          break;
        }
        (void)https::poll_wait(next, now, wall_limit - now);
        next = client.step(platform::monotonic_now());
      }
      calls = trap.calls();
    }

    const https::ClientResult& result = client.result();
    EXPECT_FALSE(hit_wall_limit);
    EXPECT_EQ(result.outcome, Outcome::kSuccess)
        << to_string(result.outcome) << " " << https::to_string(result.error) << " "
        << result.message;
    EXPECT_EQ(result.attempts, expected_attempts);
    EXPECT_EQ(client.connections(), expected_connections);
    EXPECT_EQ(body.size, 4096U);
    EXPECT_EQ(body.hash, pattern_fnv1a(4096));

    EXPECT_EQ(calls, 0) << calls << " heap calls during the request; the first "
                        << HeapTrap::traces() << ":\n"
                        << describe_traces();
    const https::TlsArenaUsage usage = https::tls_arena_usage();
    RecordProperty("arena_peak_footprint_bytes", std::to_string(usage.peak_footprint_bytes()));
    std::printf("arena peak footprint during the request: %zu bytes\n",
                usage.peak_footprint_bytes());
  }
};

TEST_F(HeapFreeTest, RetriesOnAKeptConnectionMakeNoHeapCalls) {
  run_trapped(R"([{"status": 503, "body": "busy"}, {"status": 503, "retry_info_proto": 0.2},
                  {"status": 200, "pattern": 4096}])",
              3, 1);
}

TEST_F(HeapFreeTest, RetriesWithReconnectsAndResumptionMakeNoHeapCalls) {
  run_trapped(R"([{"status": 503, "close": true}, {"status": 503, "close": true},
                  {"status": 200, "pattern": 4096, "close": true}])",
              3, 3);
}

// The two tests above each run in a fresh process (one CTest test each), so their first
// handshake is the process's first gmtime_r(), where glibc allocates its time-zone state.
// This one does that first gmtime_r() during set-up, to show that nothing else in the
// request allocates.
TEST_F(HeapFreeTest, WithLibcTimeWarmedUpRetriesWithReconnectsMakeNoHeapCalls) {
  run_trapped(R"([{"status": 503, "close": true}, {"status": 503},
                  {"status": 200, "pattern": 4096}])",
              3, 2, /*warm_libc_time=*/true);
}

// Through a proxy's CONNECT tunnel, with Basic credentials, a cut CONNECT retried and a
// reconnection that resumes the TLS session: no heap call either.
TEST_F(HeapFreeTest, ThroughAProxyTunnelMakeNoHeapCalls) {
  ScriptedProxy proxy;
  ASSERT_TRUE(proxy.start("cut,ok", "user:secret"));
  https::ProxyConfig config;
  config.host = "127.0.0.1";
  config.port = proxy.port();
  config.user = "user";
  config.password = "secret";
  run_trapped(R"([{"status": 503, "close": true}, {"status": 200, "pattern": 4096}])", 3, 3, false,
              &config);
  EXPECT_EQ(count_of(proxy.log(), "\"method\": \"CONNECT\""), 3) << proxy.log();
}

// The reconnection offers the TLS 1.3 session to a server that now speaks TLS 1.2 only, which
// refuses it; the connector forgets the session and connects again for a full handshake,
// within the attempt (so the Client counts two connections): no heap call either.
TEST_F(HeapFreeTest, AResumptionTheServerRefusesIsRedoneInFullWithoutHeapCalls) {
  run_trapped(R"([{"status": 503, "close": true}, {"status": 200, "pattern": 4096}])", 2, 2, false,
              nullptr, "1.3,1.2");
}

// A download cut mid-body and resumed with Range + If-Range, its x-goog-hash (crc32c and md5
// of the whole object) checked over both parts: no heap call either.
TEST_F(HeapFreeTest, ResumedDownloadWithIntegrityCheckMakesNoHeapCalls) {
  std::vector<std::uint8_t> object(4096);
  for (std::size_t i = 0; i < object.size(); ++i) object[i] = pattern_byte(i);
  const std::uint32_t crc = https::crc32c(https::ConstBytes{object.data(), object.size()});
  const std::uint8_t be[4] = {static_cast<std::uint8_t>(crc >> 24),
                              static_cast<std::uint8_t>(crc >> 16),
                              static_cast<std::uint8_t>(crc >> 8), static_cast<std::uint8_t>(crc)};
  char b64[16] = {};
  const std::size_t n = https::base64_encode(https::ConstBytes{be, 4}, b64, sizeof b64);
  const std::string headers =
      R"([["ETag", "\"h1\""], ["x-goog-hash", "crc32c=)" + std::string(b64, n) + R"("]])";
  run_trapped(R"([{"status": 200, "pattern": 4096, "ranges": true, "reset_after": 1500,
                   "headers": )" +
                  headers + R"(},
                  {"status": 200, "pattern": 4096, "ranges": true, "headers": )" +
                  headers + "}]",
              2, 2);
}

}  // namespace
}  // namespace stepback::integration
