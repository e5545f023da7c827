// A minimal firmware-style user of the core, linked for Cortex-M4 with --gc-sections by
// bench/footprint_core.sh: the stepback code an image really carries (machine, jitter, budget,
// generator, network_available). The board_* functions stand in for the firmware's own.
#include "stepback/core/retry_machine.hpp"
extern "C" unsigned long long board_now_ms();
extern "C" int board_attempt();

int main() {
  static const stepback::Policy policy{};
  static stepback::Xoshiro128 random(board_now_ms());
  static stepback::RetryBudget budget(stepback::BudgetConfig{});
  static const stepback::RetryContext ctx{policy, random, &budget};
  stepback::RetryMachine m(ctx);
  for (;;) {
    stepback::Next n = m.step(stepback::Millis(board_now_ms()));
    if (n.kind == stepback::Next::Kind::kDone) return static_cast<int>(n.outcome);
    if (n.kind == stepback::Next::Kind::kSend) {
      (void)m.report(stepback::Millis(board_now_ms()),
                     stepback::AttemptResult::http(static_cast<std::uint16_t>(board_attempt())));
    }
    if (board_attempt() < 0) m.network_available(stepback::Millis(board_now_ms()));
  }
}
extern "C" unsigned long long board_now_ms() {
  static unsigned long long t;
  return t += 500;
}
extern "C" int board_attempt() {
  static int n;
  return ++n < 3 ? 503 : 200;
}
