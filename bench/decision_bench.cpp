// Wall-clock cost of the retry hot path, per jitter strategy: one retry decision
// (report() of a 503, then the step() that starts the next attempt), the bare jitter draw,
// and the generator under both. bench/callgrind_decision.sh counts the same decision in
// instructions, which is the figure the target is stated in.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <limits>

#include "stepback/core/attempt.hpp"
#include "stepback/core/backoff.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"

namespace stepback {
namespace {

constexpr std::uint64_t kSeed = 0x5eedba5eULL;

// The default policy with `jitter`, no deadline and ~4e9 retries, so a machine never
// finishes within a benchmark run.
constexpr Policy EndlessPolicy(Jitter jitter) {
  Policy p;
  p.jitter = jitter;
  p.max_retries = std::numeric_limits<std::uint32_t>::max();
  p.total_deadline = Millis(0);
  return p;
}

static_assert(valid(EndlessPolicy(Jitter::kSeed)));

// One iteration is one retry decision on a machine that is attempting: report(503)
// answers kWaitUntil(at), and step(at) answers kSend. Time jumps straight to `at`.
void BM_RetryDecision(benchmark::State& state, Jitter jitter) {
  const Policy policy = EndlessPolicy(jitter);
  Xoshiro128 random(kSeed);
  const RetryContext context{policy, random, nullptr};
  const AttemptResult unavailable = AttemptResult::http(503);
  RetryMachine machine(context);
  Millis now(0);
  (void)machine.step(now);  // kIdle -> kAttempting.
  std::int64_t restarts = 0;
  for (auto _ : state) {
    Next wait = machine.report(now, unavailable);
    Next send = machine.step(wait.at);
    benchmark::DoNotOptimize(wait);
    benchmark::DoNotOptimize(send);
    now = wait.at;
    if (send.kind != Next::Kind::kSend) {
      // Not reached with the endless policy; if a policy change ever ends the loop, the
      // restart is counted (and amortized) rather than timing kDone answers.
      machine = RetryMachine(context);
      (void)machine.step(now);
      ++restarts;
    }
  }
  state.counters["restarts"] = static_cast<double>(restarts);
  state.SetItemsProcessed(state.iterations());
}

// One iteration is backoff_wait() for retries 0..7 in turn (growth to the 32 s cap,
// then capped), feeding each wait back as `previous` as the machine does.
void BM_JitterDraw(benchmark::State& state, Jitter jitter) {
  const Policy policy = EndlessPolicy(jitter);
  Xoshiro128 random(kSeed);
  Millis previous = policy.initial_delay;
  std::uint32_t n = 0;
  for (auto _ : state) {
    previous = backoff_wait(policy, n, previous, random);
    benchmark::DoNotOptimize(previous);
    n = (n + 1) & 7U;
  }
  state.SetItemsProcessed(state.iterations());
}

// A direct (devirtualized, since Xoshiro128 is final) call to the generator.
void BM_Xoshiro128NextU32(benchmark::State& state) {
  Xoshiro128 random(kSeed);
  for (auto _ : state) {
    std::uint32_t x = random.next_u32();
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations());
}

// The generator through RandomSource&, the virtual call the core makes.
void BM_RandomSourceNextU32(benchmark::State& state) {
  Xoshiro128 xoshiro(kSeed);
  RandomSource* random = &xoshiro;
  benchmark::DoNotOptimize(random);  // Hides the dynamic type from the optimizer.
  for (auto _ : state) {
    std::uint32_t x = random->next_u32();
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations());
}

// The bounded draw of kSeed's random_ms: uniform(random, 1000).
void BM_Uniform1000(benchmark::State& state) {
  Xoshiro128 random(kSeed);
  for (auto _ : state) {
    std::uint32_t x = uniform(random, 1000);
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_RetryDecision, seed, Jitter::kSeed);
BENCHMARK_CAPTURE(BM_RetryDecision, full, Jitter::kFull);
BENCHMARK_CAPTURE(BM_RetryDecision, equal, Jitter::kEqual);
BENCHMARK_CAPTURE(BM_RetryDecision, decorrelated, Jitter::kDecorrelated);
BENCHMARK_CAPTURE(BM_RetryDecision, none, Jitter::kNone);

BENCHMARK_CAPTURE(BM_JitterDraw, seed, Jitter::kSeed);
BENCHMARK_CAPTURE(BM_JitterDraw, full, Jitter::kFull);
BENCHMARK_CAPTURE(BM_JitterDraw, equal, Jitter::kEqual);
BENCHMARK_CAPTURE(BM_JitterDraw, decorrelated, Jitter::kDecorrelated);
BENCHMARK_CAPTURE(BM_JitterDraw, none, Jitter::kNone);

BENCHMARK(BM_Xoshiro128NextU32);
BENCHMARK(BM_RandomSourceNextU32);
BENCHMARK(BM_Uniform1000);

}  // namespace
}  // namespace stepback
