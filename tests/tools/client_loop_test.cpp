#include "tools/client_loop.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "stepback/core/attempt.hpp"
#include "stepback/https/types.hpp"
#include "tools/output.hpp"

namespace stepback::tools {
namespace {

https::ClientResult result(Outcome outcome, https::Status error = https::Status::kOk,
                           std::uint16_t status = 0) {
  https::ClientResult r;
  r.outcome = outcome;
  r.error = error;
  r.status = status;
  return r;
}

// The exit-code table of --help and docs/https.md, row by row.
TEST(ExitCode, EveryOutcomeMapsAsDocumented) {
  struct Row {
    const char* name;
    https::ClientResult result;
    bool output_failed;
    int code;
  };
  using S = https::Status;
  const Row rows[] = {
      {"success", result(Outcome::kSuccess, S::kOk, 200), false, kExitOk},
      {"retries exhausted", result(Outcome::kRetriesExhausted, S::kOk, 503), false, kExitGaveUp},
      {"deadline", result(Outcome::kDeadline, S::kTimeout), false, kExitGaveUp},
      {"budget", result(Outcome::kBudgetExhausted, S::kOk, 503), false, kExitGaveUp},
      {"server delay", result(Outcome::kServerDelayTooLong, S::kOk, 429), false, kExitGaveUp},
      {"terminal status", result(Outcome::kTerminalStatus, S::kOk, 404), false, kExitHttpStatus},
      {"no splice", result(Outcome::kTerminalFailure, S::kRestartRefused), false, kExitNoSplice},
      {"time limit", result(Outcome::kTerminalFailure, S::kTimeLimit), false, kExitTimeLimit},
      {"integrity", result(Outcome::kTerminalFailure, S::kIntegrity), false, kExitIntegrity},
      {"tls verify", result(Outcome::kTerminalFailure, S::kTlsVerify), false, kExitTlsVerify},
      {"proxy auth", result(Outcome::kTerminalFailure, S::kProxyAuth), false, kExitProxyAuth},
      {"redirect", result(Outcome::kTerminalFailure, S::kRedirect), false, kExitRedirect},
      {"other transport", result(Outcome::kTerminalFailure, S::kProtocol), false, kExitTransport},
      {"not idempotent, answered", result(Outcome::kNotIdempotent, S::kOk, 503), false,
       kExitHttpStatus},
      {"not idempotent, transport", result(Outcome::kNotIdempotent, S::kTimeout), false,
       kExitTransport},
      {"cancelled", result(Outcome::kCancelled), false, kExitInternal},
      // A failed write of the output wins over whatever the request did.
      {"output failed", result(Outcome::kSuccess, S::kOk, 200), true, kExitLocalIo},
      {"output failed, gave up", result(Outcome::kRetriesExhausted, S::kOk, 503), true,
       kExitLocalIo},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(exit_code(row.result, row.output_failed), row.code) << row.name;
  }
}

// The process's buffers: every one non-empty, and the arena installs once and stays.
TEST(ClientLoop, BuffersAndArenaAreUsable) {
  const https::ClientBuffers b = client_buffers();
  EXPECT_GE(b.request.size, 4096u);
  EXPECT_GE(b.response_head.size, 16384u);
  EXPECT_GE(b.io.size, 16384u);
  EXPECT_GT(b.error_body.size, 0u);
  EXPECT_GE(tls_arena_bytes(), 64u * 1024);
  EXPECT_EQ(install_tls_arena(), https::Status::kOk);
  EXPECT_EQ(install_tls_arena(), https::Status::kOk);  // Already installed: still kOk.
}

// The longest one wait sleeps: a tick while something on screen counts down, else a minute.
TEST(ClientLoop, LongestWaitFollowsTheTicks) {
  EXPECT_EQ(longest_wait(true), kTick);
  EXPECT_EQ(longest_wait(false), https::kLongestPollWait);
  EXPECT_LT(kTick, https::kLongestPollWait);
}

// The handler of `signal` now.
void (*handler_of(int signal))(int) {
  struct sigaction now {};
  (void)::sigaction(signal, nullptr, &now);
  return now.sa_handler;
}

// SIGINT and SIGTERM set stop_requested() while a StopSignals is in place; the handlers
// before it are back after, and the next one starts unset.
TEST(StopSignals, CatchTheStopSignalsWhileInPlace) {
  const auto int_before = handler_of(SIGINT);
  const auto term_before = handler_of(SIGTERM);
  {
    const StopSignals signals;
    EXPECT_FALSE(stop_requested());
    EXPECT_NE(handler_of(SIGINT), int_before);
    ASSERT_EQ(std::raise(SIGTERM), 0);
    EXPECT_TRUE(stop_requested());
  }
  EXPECT_EQ(handler_of(SIGINT), int_before);
  EXPECT_EQ(handler_of(SIGTERM), term_before);
  const StopSignals again;
  EXPECT_FALSE(stop_requested());
  ASSERT_EQ(std::raise(SIGINT), 0);
  EXPECT_TRUE(stop_requested());
}

// -o FILE goes through FILE.part when FILE is new or a regular file, renamed over it on
// commit; anything else is written in place; the messages name what is written.
TEST(OutputPath, APartForANewOrRegularFileOnly) {
  const OutputPath stdout_path(nullptr);
  EXPECT_FALSE(stdout_path.via_part());
  EXPECT_STREQ(stdout_path.name(), "stdout");
  const OutputPath device("/dev/null");
  EXPECT_FALSE(device.via_part());
  EXPECT_STREQ(device.name(), "/dev/null");

  char dir[] = "/tmp/stepback_output_XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/body";
  const OutputPath fresh(file.c_str());
  EXPECT_TRUE(fresh.via_part());
  EXPECT_EQ(std::string(fresh.name()), file + ".part");
  BodyOutput out;
  ASSERT_TRUE(fresh.create(&out, "test: "));
  EXPECT_GE(std::fputs("bytes", out.file), 0);
  fresh.finish(&out, "test: ");
  EXPECT_FALSE(out.failed);
  ASSERT_TRUE(fresh.commit("test: "));
  std::FILE* in = std::fopen(file.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  char text[16] = {};
  EXPECT_EQ(std::fread(text, 1, sizeof text, in), 5u);
  std::fclose(in);
  EXPECT_STREQ(text, "bytes");
  EXPECT_TRUE(OutputPath(file.c_str()).via_part());  // A regular file now.
  EXPECT_EQ(::unlink(file.c_str()), 0);
  EXPECT_EQ(::rmdir(dir), 0);
}

}  // namespace
}  // namespace stepback::tools
