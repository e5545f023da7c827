// The core-only consumer of tests/consumers: what a bare-metal application links, stepback::core
// and nothing else. It brings what the other targets would supply: its own Policy (no
// profile), its own clock (a counter it moves itself, as a tick counter would) and its own
// seed (a constant, as a device's unique ID or a hardware RNG would give). Two 503s, then a
// 200: the loop must end in success after 3 attempts, each wait within the policy's bounds.
#include <cstdint>
#include <cstdio>

#include "stepback/core/attempt.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"

namespace {

constexpr stepback::Policy make_policy() {
  stepback::Policy p;
  p.initial_delay = stepback::Millis(100);
  p.jitter_range = stepback::Millis(50);
  p.max_backoff = stepback::Millis(1000);
  p.max_retries = 3;
  return p;
}
constexpr stepback::Policy kPolicy = make_policy();
static_assert(stepback::valid(kPolicy), "the consumer's policy must be valid");

}  // namespace

int main() {
  stepback::Xoshiro128 random(0x5eed);
  stepback::RetryBudget budget(stepback::BudgetConfig{});
  const stepback::RetryContext context{kPolicy, random, &budget};
  stepback::RetryMachine machine(context, stepback::Idempotent::kYes);

  stepback::Millis now(1000);  // The application's clock.
  const std::uint16_t answers[] = {503, 503, 200};
  unsigned attempts = 0;
  int failures = 0;
  stepback::Next next = machine.step(now);
  while (next.kind != stepback::Next::Kind::kDone && attempts < 10) {
    if (next.kind == stepback::Next::Kind::kSend) {
      next = machine.report(now, stepback::AttemptResult::http(answers[attempts++]));
    } else {
      const std::uint64_t wait = (next.at - now).count();
      std::printf("attempt %u failed: waiting %llu ms\n", attempts,
                  static_cast<unsigned long long>(wait));
      if (wait > kPolicy.max_backoff.count()) ++failures;
      now = next.at;  // Slept until then.
      next = machine.step(now);
    }
  }
  std::printf("%s after %u attempts\n", stepback::to_string(next.outcome), attempts);
  if (next.kind != stepback::Next::Kind::kDone || next.outcome != stepback::Outcome::kSuccess ||
      attempts != 3) {
    ++failures;
  }
  std::printf("%s\n", failures == 0 ? "core_only: ok" : "core_only: FAILED");
  return failures == 0 ? 0 : 1;
}
