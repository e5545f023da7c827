// "No heap after set-up" through the C API: a stepback_download to a file (stack, options,
// download all in static storage), against the scripted TLS server, with malloc/free and
// operator new/delete trapped from the first step to DONE: a 503 retried, a body cut and
// resumed by Range, the checkpoint record written, the part file renamed. The set-up
// (stack_init reads the CA file and resolv.conf, start_file opens the files) is outside the
// trap, as it is outside an app's loop.
#include <execinfo.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>

#include "integration_support.hpp"
#include "stepback/stepback.h"
#include "tests/support/heap_trap.hpp"

namespace stepback::integration {
namespace {

using testing::HeapTrap;

// Static, as the header says an app keeps them: the stack holds the TLS arena.
stepback_stack g_stack;
stepback_download g_download;

TEST(CapiHeapFreeTest, ADownloadToAFileWithARetryAndAResumeMakesNoHeapCalls) {
  if (!testing::heap_trap_available()) GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  STEPBACK_REQUIRE_TOOL(python_path(), "python3");
  STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
  STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
  ASSERT_NE(pki(), nullptr);
  ScriptedServer server;
  ScriptedServer::Options server_options;
  server_options.script = R"([{"status": 503, "body": "busy"},
      {"status": 200, "pattern": 65536, "ranges": true, "reset_after": 20000,
       "headers": [["ETag", "\"v1\""]]},
      {"status": 200, "pattern": 65536, "ranges": true, "headers": [["ETag", "\"v1\""]]}])";
  ASSERT_TRUE(server.start(server_options));

  ASSERT_EQ(stepback_stack_init(&g_stack, sizeof g_stack, pki()->ca.c_str()), STEPBACK_OK)
      << stepback_stack_message(&g_stack);
  stepback_policy policy;
  stepback_policy_default(&policy);
  policy.initial_delay_ms = 20;  // Short waits: the trap sees the retries, not the clock.
  policy.jitter_range_ms = 20;
  policy.max_backoff_ms = 100;
  stepback_options options;
  stepback_options_default(&options);
  options.policy = &policy;
  ASSERT_EQ(stepback_download_init(&g_download, sizeof g_download, &g_stack, &options),
            STEPBACK_OK);
  char dir[] = "/tmp/capi_heap_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/data.bin";
  const std::string url = server.url("/data");
  ASSERT_EQ(stepback_download_start_file(&g_download, url.c_str(), path.c_str(), nullptr),
            STEPBACK_OK)
      << stepback_download_message(&g_download);

  // Warm up what the loop and the trap call, so first-use set-up is not counted: the
  // backtrace machinery, the clocks, and glibc's time-zone state (mbedTLS's gmtime_r).
  void* warm[4];
  (void)backtrace(warm, 4);
  (void)stepback_monotonic_ms();
  (void)stepback_wall_ms();
  const std::time_t epoch = 0;
  std::tm tm{};
  (void)gmtime_r(&epoch, &tm);

  long calls = -1;
  bool timed_out = false;
  {
    HeapTrap trap;
    const std::int64_t limit = stepback_monotonic_ms() + kRunWallLimitMs;
    stepback_next next;
    std::int64_t now = stepback_monotonic_ms();
    while (stepback_download_step(&g_download, now, &next) != STEPBACK_NEXT_DONE) {
      if (now >= limit) {
        stepback_download_cancel(&g_download, now);
        timed_out = true;
        break;
      }
      (void)stepback_poll_wait(&next, now);
      now = stepback_monotonic_ms();
    }
    calls = trap.calls();
  }
  stepback_result result;
  stepback_download_result(&g_download, &result);
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(result.outcome, STEPBACK_OUTCOME_SUCCESS) << result.message;
  EXPECT_EQ(result.attempts, 3U);
  EXPECT_EQ(calls, 0) << calls << " heap calls during the download; the first "
                      << HeapTrap::traces() << ":\n"
                      << HeapTrap::describe();
  std::ifstream file(path, std::ios::binary);
  const std::string body((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(body.size(), 65536U);
  EXPECT_EQ(fnv1a(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()),
            pattern_fnv1a(65536));
  stepback_download_destroy(&g_download);
  stepback_stack_destroy(&g_stack);
  (void)std::remove(path.c_str());
  (void)rmdir(dir);
}

}  // namespace
}  // namespace stepback::integration
