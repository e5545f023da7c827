#include "tools/client_loop.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "stepback/core/attempt.hpp"
#include "stepback/https/types.hpp"

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

// The exit-code table of --help and the README, row by row.
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

}  // namespace
}  // namespace stepback::tools
