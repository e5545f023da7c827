// A fixed amount of hot-path work for callgrind: COUNT retry decisions (report() of a 503
// then step() to the next attempt) or COUNT bare jitter draws, with one strategy.
// bench/callgrind_decision.sh builds it, collects only inside sb_run_*, and divides the
// difference of two runs by the difference of their counts.
//
//   decision_driver decision|jitter seed|full|equal|decorrelated|none COUNT
//
// Exits 0 and prints a checksum (so no work can be optimized away), or 2 on bad usage,
// or 1 if a machine ended early.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "stepback/core/attempt.hpp"
#include "stepback/core/backoff.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"

// Runs `count` decisions on `machine`, which must be attempting at `now`; returns the
// number of decisions that did not end in kSend (0 when all went as expected).
// extern "C" and noinline so callgrind's --toggle-collect can name it.
extern "C" __attribute__((noinline)) std::uint64_t sb_run_decisions(stepback::RetryMachine& machine,
                                                                    stepback::Millis now,
                                                                    std::uint64_t count) {
  const stepback::AttemptResult unavailable = stepback::AttemptResult::http(503);
  std::uint64_t failures = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const stepback::Next wait = machine.report(now, unavailable);
    const stepback::Next send = machine.step(wait.at);
    failures += send.kind != stepback::Next::Kind::kSend ? 1U : 0U;
    now = wait.at;
  }
  return failures;
}

// Draws `count` waits with backoff_wait() for retries 0..7 in turn; returns their sum.
extern "C" __attribute__((noinline)) std::uint64_t sb_run_jitter(const stepback::Policy& policy,
                                                                 stepback::RandomSource& random,
                                                                 std::uint64_t count) {
  stepback::Millis previous = policy.initial_delay;
  std::uint64_t sum = 0;
  std::uint32_t n = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    previous = stepback::backoff_wait(policy, n, previous, random);
    sum += previous.count();
    n = (n + 1) & 7U;
  }
  return sum;
}

namespace {

bool parse_jitter(const char* name, stepback::Jitter& out) {
  for (std::uint8_t j = 0; j <= static_cast<std::uint8_t>(stepback::Jitter::kNone); ++j) {
    const auto candidate = static_cast<stepback::Jitter>(j);
    if (std::strcmp(name, stepback::to_string(candidate)) == 0) {
      out = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  stepback::Jitter jitter{};
  char* end = nullptr;
  const std::uint64_t count = argc == 4 ? std::strtoull(argv[3], &end, 10) : 0;
  const bool decisions = argc == 4 && std::strcmp(argv[1], "decision") == 0;
  const bool draws = argc == 4 && std::strcmp(argv[1], "jitter") == 0;
  if (!(decisions || draws) || !parse_jitter(argv[2], jitter) || end == argv[3] || *end != '\0') {
    std::fprintf(stderr, "usage: %s decision|jitter seed|full|equal|decorrelated|none COUNT\n",
                 argv[0]);
    return 2;
  }

  // The default policy with no deadline and ~4e9 retries, so no machine ends early.
  stepback::Policy policy;
  policy.jitter = jitter;
  policy.max_retries = std::numeric_limits<std::uint32_t>::max();
  policy.total_deadline = stepback::Millis(0);
  stepback::Xoshiro128 random(0x5eedba5eULL);

  if (draws) {
    std::printf("checksum %llu\n",
                static_cast<unsigned long long>(sb_run_jitter(policy, random, count)));
    return 0;
  }
  const stepback::RetryContext context{policy, random, nullptr};
  stepback::RetryMachine machine(context);
  const stepback::Millis start(0);
  if (machine.step(start).kind != stepback::Next::Kind::kSend) return 1;
  const std::uint64_t failures = sb_run_decisions(machine, start, count);
  std::printf("retries %u failures %llu\n", machine.retries(),
              static_cast<unsigned long long>(failures));
  return failures == 0 ? 0 : 1;
}
