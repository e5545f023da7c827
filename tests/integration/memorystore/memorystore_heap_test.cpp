// "No heap after set-up" for a whole long-running operation over TLS: the create, its
// Operation, a poll answered 503 with RetryInfo and retried, and the polls until done, with
// a bearer token asked for before every attempt; malloc and operator new trapped from the
// first step to kDone (the technique of tests/integration/heap_test.cpp).
#include <execinfo.h>
#include <gtest/gtest.h>

#include <cstring>
#include <ctime>
#include <string>

#include "stepback/core/random.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/integration/memorystore/memorystore_fixture.hpp"
#include "tests/support/heap_trap.hpp"

namespace stepback::memorystore {
namespace {

using testing::HeapTrap;

constexpr char kToken[] = "Bearer ya29.heap-test-token";

std::size_t authorization(void* context, bool, https::MutableBytes out) {
  ++*static_cast<int*>(context);
  const std::size_t n = sizeof kToken - 1;
  if (n <= out.size) std::memcpy(out.data, kToken, n);
  return n;
}

// What the response sink and the events saw, kept without allocating.
struct Tally {
  std::size_t response_bytes = 0;
  bool saw_ready = false;
  int polls = 0;
  int waits = 0;
};

bool keep(void* context, std::uint64_t, https::ConstBytes data) {
  auto* t = static_cast<Tally*>(context);
  t->response_bytes += data.size;
  const std::string_view text(reinterpret_cast<const char*>(data.data), data.size);
  t->saw_ready = t->saw_ready || text.find("\"READY\"") != std::string_view::npos;
  return true;
}

void on_event(void* context, const transfer::OperationEvent& e) {
  auto* t = static_cast<Tally*>(context);
  if (e.kind == transfer::OperationEvent::Kind::kPoll) ++t->polls;
}

void on_client_event(void* context, const https::ClientEvent& e) {
  if (e.kind == https::ClientEvent::Kind::kWait) ++static_cast<Tally*>(context)->waits;
}

TEST(MemorystoreHeap, ACreateAndItsPollsMakeNoHeapCalls) {
  if (!stepback::testing::heap_trap_available())
    GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  STEPBACK_REQUIRE_TOOL(integration::python_path(), "python3");
  STEPBACK_REQUIRE_TOOL(integration::openssl_path(), "openssl");
  STEPBACK_REQUIRE_TOOL(integration::bash_path(), "bash");
  ASSERT_NE(integration::pki(), nullptr);
  MemorystoreServer server;
  MemorystoreServer::Options options;
  options.tokens = {"ya29.heap-test-token"};
  options.op_polls = 3;
  options.faults = R"([{"match":{"kind":"operation","nth":2},"status":503,"retry_delay":0.1}])";
  ASSERT_TRUE(server.start(options));
  auto tls = integration::make_tls(integration::pki()->ca);
  ASSERT_NE(tls, nullptr);

  const std::string url_text = server.instances("?instanceId=heap");
  transfer::OperationSpec spec;
  ASSERT_EQ(https::parse_url(url_text, &spec.mutation.head.url), https::Status::kOk);
  static const char kBody[] = R"({"tier":"BASIC","memorySizeGb":1})";
  const https::ConstBytes body{reinterpret_cast<const std::uint8_t*>(kBody), sizeof kBody - 1};
  const https::Header headers[] = {{"Content-Type", "application/json"}};
  spec.mutation.head.method = "POST";
  spec.mutation.head.user_agent = "stepback-heap-test";
  spec.mutation.head.headers = headers;
  spec.mutation.head.header_count = 1;
  spec.mutation.body = https::BodySource::of(&body);
  spec.mutation.idempotency = https::RequestSpec::Idempotency::kYes;

  static std::uint8_t request[2048], head[8192], io[16384], error_body[2048], answer[16384];
  Xoshiro128 random(7);
  const Policy policy = integration::test_policy();
  const RetryContext context{policy, random, nullptr};
  Tally tally;
  int asked = 0;
  https::FixedResolver no_names;  // The server is on 127.0.0.1.
  https::TcpTlsConnector connector(*tls, no_names);
  transfer::OperationOptions op_options;
  op_options.client.timeouts = integration::test_timeouts();
  op_options.client.buffers = https::ClientBuffers{{request, sizeof request},
                                                   {head, sizeof head},
                                                   {io, sizeof io},
                                                   {error_body, sizeof error_body}};
  op_options.client.wall_now = &platform::wall_now;
  op_options.client.credentials = https::Credentials{&authorization, &asked};
  op_options.client.events = https::EventSink{&on_client_event, &tally};
  op_options.operation_buffer = https::MutableBytes{answer, sizeof answer};
  op_options.response = https::ResponseSink{&keep, nullptr, &tally};
  op_options.polling = OperationSetup::fast_polling();
  op_options.events = transfer::OperationEventSink{&on_event, &tally};
  transfer::Operation op(connector, context, op_options);
  ASSERT_EQ(op.start(spec), https::Status::kOk);

  // Warm up what the loop and the trap call, so first-use set-up is not counted; glibc's
  // time-zone state (the first gmtime_r, called by mbedTLS's certificate check) included.
  void* warm[4];
  (void)backtrace(warm, 4);
  (void)platform::monotonic_now();
  (void)platform::wall_now();
  const std::time_t epoch = 0;
  std::tm tm{};
  (void)gmtime_r(&epoch, &tm);

  long calls = -1;
  bool hit_wall_limit = false;
  {
    HeapTrap trap;
    const Millis begin = platform::monotonic_now();
    const Millis wall_limit = begin + Millis(integration::kRunWallLimitMs);
    https::ClientNext next = op.step(begin);
    while (next.kind != https::ClientNext::Kind::kDone) {
      const Millis now = platform::monotonic_now();
      if (now >= wall_limit) {
        op.cancel();
        hit_wall_limit = true;
        break;
      }
      (void)https::poll_wait(next, now, wall_limit - now);
      next = op.step(platform::monotonic_now());
    }
    calls = trap.calls();
  }

  EXPECT_FALSE(hit_wall_limit);
  const transfer::OperationResult& r = op.result();
  EXPECT_EQ(r.outcome, transfer::OperationOutcome::kSucceeded) << r.message << " " << server.log();
  EXPECT_EQ(r.polls, 3U);
  EXPECT_EQ(tally.polls, 3);
  EXPECT_EQ(tally.waits, 1);  // The 503's retry.
  EXPECT_EQ(asked, 5);        // The mutation, three polls, one retry.
  EXPECT_TRUE(tally.saw_ready);
  EXPECT_EQ(calls, 0) << calls << " heap calls during the operation; the first "
                      << HeapTrap::traces() << ":\n"
                      << HeapTrap::describe();
}

}  // namespace
}  // namespace stepback::memorystore
