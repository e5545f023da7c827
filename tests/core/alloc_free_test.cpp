// Proves "allocation-free": traps malloc/calloc/realloc/free and every operator new,
// then runs whole retry sequences of every strategy and expects zero heap calls.
#include <gtest/gtest.h>

#include "stepback/core/retry_machine.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "tests/support/heap_trap.hpp"

namespace stepback {
namespace {

class AllocFree : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::heap_trap_available())
      GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  }
};

TEST_F(AllocFree, WholeRetrySequencesOfEveryStrategyMakeNoHeapCalls) {
  long calls = -1;
  Outcome outcomes[6] = {};
  {
    testing::HeapTrap trap;
    platform::Status status = platform::Status::kEntropyUnavailable;
    Xoshiro128 random = platform::make_os_random(&status);
    RetryBudget budget(BudgetConfig{1000, 100});
    int i = 0;
    for (Jitter j :
         {Jitter::kSeed, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated, Jitter::kNone}) {
      Policy p;
      p.jitter = j;
      p.max_retries = 12;
      p.total_deadline = Millis::seconds(600);
      const RetryContext ctx{p, random, &budget};
      RetryMachine m(ctx, Idempotent::kNo);
      Millis now = platform::monotonic_now();
      Next next = m.step(now);
      int attempts = 0;
      while (next.kind != Next::Kind::kDone) {
        if (next.kind == Next::Kind::kSend) {
          ++attempts;
          const AttemptResult r =
              attempts % 3 == 0 ? AttemptResult::http(429, Millis(1500), DelaySource::kRetryAfter)
                                : AttemptResult::http(503);
          next = m.report(now, r);
          if (attempts == 4) m.network_available(now + Millis(10));
        } else {
          now = next.at;
          next = m.step(now);
        }
      }
      outcomes[i++] = next.outcome;
      budget.record_success();
    }
    const Policy defaults;
    const RetryContext plain{defaults, random, nullptr};
    RetryMachine cancelled(plain);
    (void)cancelled.step(Millis(0));
    cancelled.cancel();
    outcomes[i] = cancelled.step(Millis(0)).outcome;
    (void)platform::wall_now();
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
  for (int k = 0; k < 5; ++k) EXPECT_EQ(outcomes[k], Outcome::kRetriesExhausted) << k;
  EXPECT_EQ(outcomes[5], Outcome::kCancelled);
}

}  // namespace
}  // namespace stepback
