// A firmware main loop around the retry core alone (stepback::core: no profiles, no platform,
// no heap, no OS). The four platform_* functions at the top are the port: a board replaces
// them with its tick counter, its seed, its radio or modem call and its low-power sleep. The
// versions here simulate one on the host: the clock moves only when the loop sleeps, and the
// send fails twice (the link drops, then the server is busy) before it goes through.
#include <cstdint>
#include <cstdio>

#include "stepback/core/attempt.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"

namespace {

// ---- The port ----------------------------------------------------------------------------

// Milliseconds since boot. On a board, SysTick_Handler (or a timer interrupt) adds one every
// millisecond; a 32-bit core reads this 64-bit counter with interrupts masked.
std::uint64_t g_millis = 0;

stepback::Millis platform_millis() { return stepback::Millis(g_millis); }

// 64 bits that differ between devices, so a fleet rebooted by one power cut does not retry in
// step: on a board, the unique ID (STM32 UID_BASE, nRF FICR->DEVICEID) mixed with a word of
// the hardware RNG (RNG->DR) or of ADC noise.
std::uint64_t platform_seed() { return 0x5eed0000c0ffeeULL; }

// One attempt of the firmware's request through its radio or modem (an HTTP PUT through the
// modem's AT commands, say), reported as the core classifies it.
stepback::AttemptResult platform_send(unsigned attempt) {
  if (attempt == 1) return stepback::AttemptResult::transport(stepback::Failure::kReset);
  if (attempt == 2) return stepback::AttemptResult::http(503);
  return stepback::AttemptResult::http(200);
}

// Sleeps until `at`. On a board: arm a timer or RTC wake-up for `at` and __WFI() until it
// (or another interrupt) comes. The simulation moves the clock instead.
void platform_sleep_until(stepback::Millis at) {
  if (at.count() > g_millis) g_millis = at.count();
}

// ---- The application ---------------------------------------------------------------------

// A cellular device's numbers: 1 s doubling to a 64 s cap, equal jitter, 10 retries, all
// within 10 minutes.
constexpr stepback::Policy make_policy() {
  stepback::Policy p;
  p.initial_delay = stepback::Millis(1000);
  p.multiplier = 2;
  p.jitter = stepback::Jitter::kEqual;
  p.max_backoff = stepback::Millis::seconds(64);
  p.max_retries = 10;
  p.total_deadline = stepback::Millis::seconds(600);
  return p;
}
constexpr stepback::Policy kPolicy = make_policy();
static_assert(stepback::valid(kPolicy), "the firmware's policy must be valid");

// Equal jitter waits between half of t and t, t = min(initial * 2^retry, cap).
bool within_policy(std::uint64_t wait, unsigned retry) {
  std::uint64_t t = static_cast<std::uint64_t>(kPolicy.initial_delay.count());
  for (unsigned i = 0; i < retry && t < kPolicy.max_backoff.count(); ++i) t *= kPolicy.multiplier;
  if (t > kPolicy.max_backoff.count()) t = kPolicy.max_backoff.count();
  return wait >= t / 2 && wait <= t;
}

}  // namespace

int main() {
  // Everything static: no heap, and the budget outlives every request of the device.
  static stepback::Xoshiro128 random(platform_seed());
  static stepback::RetryBudget budget(stepback::BudgetConfig{20, 100});
  static const stepback::RetryContext context{kPolicy, random, &budget};
  // The request may be sent twice (a reading PUT under its own sequence number), so a
  // dropped link after the bytes left is retried too.
  stepback::RetryMachine machine(context, stepback::Idempotent::kYes);

  unsigned attempts = 0;
  bool waits_ok = true;
  stepback::Next next = machine.step(platform_millis());
  while (next.kind != stepback::Next::Kind::kDone) {
    if (next.kind == stepback::Next::Kind::kSend) {
      const stepback::AttemptResult result = platform_send(++attempts);
      std::printf("attempt %u at %lu ms: ", attempts,
                  static_cast<unsigned long>(platform_millis().count()));
      if (result.failure != stepback::Failure::kNone) {
        std::printf("%s\n", stepback::to_string(result.failure));
      } else {
        std::printf("HTTP %u\n", static_cast<unsigned>(result.status));
      }
      next = machine.report(platform_millis(), result);
      continue;
    }
    const std::uint64_t wait = (next.at - platform_millis()).count();
    const bool ok = within_policy(wait, attempts - 1);
    waits_ok = waits_ok && ok;
    std::printf("waiting %lu ms%s\n", static_cast<unsigned long>(wait),
                ok ? "" : " (OUT OF BOUNDS)");
    platform_sleep_until(next.at);
    next = machine.step(platform_millis());
  }

  const bool ok = next.outcome == stepback::Outcome::kSuccess && attempts == 3 && waits_ok;
  std::printf("bare_metal: %s after %u attempts, %s\n", stepback::to_string(next.outcome), attempts,
              waits_ok ? "every wait within the policy" : "a wait outside the policy");
  // Firmware would go on to its next job (or sleep); the host run ends with the verdict.
  return ok ? 0 : 1;
}
