// A poll() main loop that steps a RetryMachine. The "operation" is a stand-in for an
// HTTPS request that fails twice with 503 and then succeeds; the loop sleeps in poll()
// until the machine's deadline, as an app would while also watching its own fds.
#include <poll.h>

#include <cstdio>

#include "stepback/core/retry_machine.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

namespace {

// The app's operation: 503, 503, then 200.
stepback::AttemptResult perform_attempt(int attempt) {
  return stepback::AttemptResult::http(attempt < 3 ? 503 : 200);
}

}  // namespace

int main() {
  using stepback::Next;
  stepback::platform::Status status{};
  stepback::Xoshiro128 random = stepback::platform::make_os_random(&status);
  stepback::Policy policy = stepback::profiles::active.retry;
  policy.initial_delay = stepback::Millis(50);  // Short waits so the example ends quickly.
  policy.max_backoff = stepback::Millis(400);
  policy.jitter_range = stepback::Millis(50);
  stepback::RetryBudget budget(stepback::profiles::active.budget);
  const stepback::RetryContext context{policy, random, &budget};
  stepback::RetryMachine machine(context);

  int attempts = 0;
  for (;;) {
    const stepback::Millis now = stepback::platform::monotonic_now();
    const Next next = machine.step(now);
    if (next.kind == Next::Kind::kDone) {
      std::printf("done: %s after %d attempts\n", stepback::to_string(next.outcome), attempts);
      return next.outcome == stepback::Outcome::kSuccess ? 0 : 1;
    }
    if (next.kind == Next::Kind::kSend) {
      const stepback::AttemptResult result = perform_attempt(++attempts);
      std::printf("attempt %d: HTTP %u\n", attempts, static_cast<unsigned>(result.status));
      (void)machine.report(stepback::platform::monotonic_now(), result);
      continue;
    }
    // kWaitUntil: sleep in poll() (no fds here; a real app passes its own).
    const stepback::Millis left = next.at - now;
    std::printf("waiting %llu ms\n", static_cast<unsigned long long>(left.count()));
    (void)poll(nullptr, 0, static_cast<int>(left.count()));
  }
}
