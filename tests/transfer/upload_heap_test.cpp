// "No heap after set-up" over a whole resumable upload with faults: the heap trap
// (tests/support/heap_trap.hpp) counts every malloc/free/new/delete from the first step to
// the end of an upload over TLS to upload_server.py that meets a reset mid-chunk, a 503, a
// 308 without progress and a stall, each followed by a status query or a resend on a new
// connection (TLS session resumed), with the transfer state saved and encoded after every
// step. Set-up (the TLS configuration, the server, glibc's
// time-zone state, the first backtrace) happens before the trap is armed.
#include <execinfo.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/support/heap_trap.hpp"
#include "upload_fixture.hpp"

namespace stepback::transfer_test {
namespace {

using testing::HeapTrap;

constexpr std::uint64_t kChunk = transfer::kChunkGranularity;

// Arms a HeapTrap for the step loop and keeps its count.
class TrapHooks final : public Hooks {
 public:
  void arm() override { trap_ = std::make_unique<HeapTrap>(); }  // Allocated before it counts.
  void disarm() override {
    calls_ = trap_->calls();
    trap_.reset();
  }
  long calls() const { return calls_; }

 private:
  std::unique_ptr<HeapTrap> trap_;
  long calls_ = -1;
};

TEST(UploadHeapTest, AWholeUploadWithFaultsMakesNoHeapCalls) {
  if (!testing::heap_trap_available()) GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  STEPBACK_REQUIRE_TOOL(integration::python_path(), "python3");
  STEPBACK_REQUIRE_TOOL(integration::openssl_path(), "openssl");
  STEPBACK_REQUIRE_TOOL(integration::bash_path(), "bash");
  ASSERT_NE(integration::pki(), nullptr);
  auto tls = integration::make_tls(integration::pki()->ca);
  ASSERT_NE(tls, nullptr);
  UploadServer server;
  UploadServer::Options options;
  options.script = R"([
      {"on": "chunk", "nth": 2, "do": "reset", "after": 100000, "commit": 60000},
      {"on": "chunk", "nth": 4, "do": "status", "status": 503},
      {"on": "chunk", "nth": 6, "do": "drop"},
      {"on": "chunk", "nth": 8, "do": "stall", "commit": 131072, "seconds": 3}])";
  ASSERT_TRUE(server.start(options));

  // Warm up what the loop and the trap call, so first-use set-up is not counted.
  void* warm[4];
  (void)backtrace(warm, 4);
  (void)platform::monotonic_now();
  (void)platform::wall_now();
  const std::time_t epoch = 0;
  std::tm tm{};
  (void)gmtime_r(&epoch, &tm);
  https::tls_arena_reset_peak();

  UploadSetup setup;
  setup.url = server.initiation_url("object");
  setup.size = 6 * kChunk + 1234;
  setup.tls = tls.get();
  setup.timeouts.read = Millis(1000);
  setup.save_state = true;  // The transfer state saved and encoded after every step too.
  TrapHooks hooks;
  const UploadRun run = run_upload(setup, &hooks);

  EXPECT_FALSE(run.hit_wall_limit);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_TRUE(server.object("object") == body(setup.size)) << "the stored object differs";
  EXPECT_EQ(server.sum("overlap", "chunk"), 0U);
  EXPECT_EQ(run.of(transfer::UploadEvent::Kind::kWait).size(), 4U) << run.summary();
  EXPECT_GT(run.state_saves, 10U);
  EXPECT_EQ(hooks.calls(), 0) << hooks.calls() << " heap calls during the upload; the first "
                              << HeapTrap::traces() << ":\n"
                              << HeapTrap::describe();
  std::printf(
      "heap calls during the upload: %ld; bytes sent %llu for %llu; %u connections; "
      "arena peak footprint %zu bytes\n",
      hooks.calls(), static_cast<unsigned long long>(run.bytes_sent),
      static_cast<unsigned long long>(setup.size), run.connections,
      https::tls_arena_usage().peak_footprint_bytes());
}

}  // namespace
}  // namespace stepback::transfer_test
