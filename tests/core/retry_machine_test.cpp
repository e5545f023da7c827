#include "stepback/core/retry_machine.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "stepback/core/backoff.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/scripted_random.hpp"

namespace stepback {
namespace {

using testing::FakeClock;
using testing::ScriptedRandom;
using Kind = Next::Kind;

static_assert(std::is_trivially_copyable_v<RetryMachine>);
// 32 bytes of state besides the context pointer; where a 64-bit member is 8-aligned and the
// pointer is 4 bytes (32-bit ARM), the object rounds up to 40.
constexpr std::size_t kStateAndPointer = 32 + sizeof(void*);
static_assert(sizeof(RetryMachine) <= (kStateAndPointer + alignof(RetryMachine) - 1) /
                                          alignof(RetryMachine) * alignof(RetryMachine),
              "state <= 32 bytes besides the context reference");

// A machine under test and what it depends on. A test tweaks policy_ (the defaults: 1 s, x2,
// cap 32 s, 6 retries, seed jitter, no deadline) and clock_ (1000 s), if it needs them scripts
// the random source, reseeds the generator or adds a budget, then calls start() for the machine,
// or builds its own machines on context(). The context lives here, so it outlives them all;
// script(), seed() and use_budget() take effect when the context is built.
class RetryMachineTest : public ::testing::Test {
 protected:
  // Jitter draws `values` (then the last one, again and again) instead of Xoshiro128(1).
  void script(std::initializer_list<std::uint32_t> values) {
    scripted_.emplace(values);
    random_ = &*scripted_;
  }
  // Jitter draws from a fresh Xoshiro128(value).
  void seed(std::uint64_t value) {
    xoshiro_ = Xoshiro128(value);
    random_ = &xoshiro_;
  }
  // Machines share a budget sized by `config` (none otherwise).
  RetryBudget& use_budget(const BudgetConfig& config) { return budget_.emplace(config); }

  // The context of policy_, the random source and the budget; built on first use (or start()).
  const RetryContext& context() {
    if (!context_) context_.emplace(RetryContext{policy_, *random_, budget_ ? &*budget_ : nullptr});
    return *context_;
  }

  // A new machine on a context built afresh from the set-up as it is now.
  RetryMachine& start(Idempotent idempotent = Idempotent::kYes) {
    machine_.reset();
    context_.reset();
    return machine_.emplace(context(), idempotent);
  }

  // Runs `m` to the end on clock_, failing every attempt with `result`; returns the waits.
  std::vector<std::uint64_t> run_failing(RetryMachine& m, const AttemptResult& result,
                                         Outcome* outcome) {
    std::vector<std::uint64_t> waits;
    Next next = m.step(clock_.now());
    for (int guard = 0; guard < 10000; ++guard) {
      if (next.kind == Kind::kDone) break;
      if (next.kind == Kind::kSend) {
        next = m.report(clock_.now(), result);
      } else {
        waits.push_back((next.at - clock_.now()).count());
        clock_.set(next.at);
        next = m.step(clock_.now());
      }
    }
    EXPECT_EQ(next.kind, Kind::kDone);
    *outcome = next.outcome;
    return waits;
  }

  Policy policy_;
  FakeClock clock_;

 private:
  Xoshiro128 xoshiro_{1};
  std::optional<ScriptedRandom> scripted_;
  RandomSource* random_ = &xoshiro_;
  std::optional<RetryBudget> budget_;
  std::optional<RetryContext> context_;
  std::optional<RetryMachine> machine_;
};

TEST_F(RetryMachineTest, SuccessOnTheFirstAttempt) {
  RetryMachine& m = start();
  EXPECT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  EXPECT_EQ(m.step(clock_.now()).kind, Kind::kSend);  // Repeats until reported.
  const Next done = m.report(clock_.now(), AttemptResult::http(200));
  EXPECT_EQ(done.kind, Kind::kDone);
  EXPECT_EQ(done.outcome, Outcome::kSuccess);
  EXPECT_EQ(m.retries(), 0U);
  EXPECT_EQ(m.step(clock_.now()).outcome, Outcome::kSuccess);
}

TEST_F(RetryMachineTest, RetriesWithTheSameWaitsAsThePureFormula) {
  policy_.max_retries = 40;
  for (Jitter j :
       {Jitter::kSeed, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated, Jitter::kNone}) {
    policy_.jitter = j;
    seed(42);  // Each strategy from a fresh generator, clock and machine.
    clock_ = FakeClock();
    RetryMachine& m = start();
    Outcome outcome{};
    const std::vector<std::uint64_t> waits = run_failing(m, AttemptResult::http(503), &outcome);
    EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
    ASSERT_EQ(waits.size(), 40U) << to_string(j);
    Xoshiro128 ref(42);
    Millis previous = policy_.initial_delay;
    for (std::uint32_t n = 0; n < 40; ++n) {
      previous = backoff_wait(policy_, n, previous, ref);
      EXPECT_EQ(waits[n], previous.count()) << to_string(j) << " n=" << n;
    }
    EXPECT_EQ(m.retries(), 40U);
  }
}

TEST_F(RetryMachineTest, StopsAfterMaxRetries) {
  script({0xFFFFFFFFU});
  RetryMachine& m = start();
  Outcome outcome{};
  const auto waits = run_failing(m, AttemptResult::transport(Failure::kReset), &outcome);
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(waits, (std::vector<std::uint64_t>{2000, 3000, 5000, 9000, 17000, 32000}));
}

TEST_F(RetryMachineTest, ZeroRetriesMeansOneAttempt) {
  policy_.max_retries = 0;
  RetryMachine& m = start();
  Outcome outcome{};
  EXPECT_TRUE(run_failing(m, AttemptResult::http(500), &outcome).empty());
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
}

TEST_F(RetryMachineTest, GivesUpAtOnceWhenTheNextWaitWouldPassTheDeadline) {
  policy_.jitter = Jitter::kNone;
  policy_.max_retries = 100;
  policy_.total_deadline = Millis(10000);  // 1 + 2 + 4 = 7 s fit; the 8 s wait would not.
  RetryMachine& m = start();
  Outcome outcome{};
  const auto waits = run_failing(m, AttemptResult::http(503), &outcome);
  EXPECT_EQ(outcome, Outcome::kDeadline);
  EXPECT_EQ(waits, (std::vector<std::uint64_t>{1000, 2000, 4000}));
}

TEST_F(RetryMachineTest, AWaitEndingExactlyAtTheDeadlineStillRetries) {
  policy_.jitter = Jitter::kNone;
  policy_.total_deadline = Millis(3000);  // 1 s + 2 s == deadline.
  RetryMachine& m = start();
  Outcome outcome{};
  EXPECT_EQ(run_failing(m, AttemptResult::http(503), &outcome),
            (std::vector<std::uint64_t>{1000, 2000}));
  EXPECT_EQ(outcome, Outcome::kDeadline);
}

TEST_F(RetryMachineTest, DeadlineCountsTimeSpentInAttempts) {
  policy_.jitter = Jitter::kNone;
  policy_.total_deadline = Millis(5000);
  RetryMachine& m = start();
  EXPECT_EQ(m.deadline(), Millis::max());  // Not started.
  ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  EXPECT_EQ(m.deadline(), clock_.now() + Millis(5000));
  clock_.advance(Millis(4500));  // A slow attempt.
  const Next next = m.report(clock_.now(), AttemptResult::http(503));
  EXPECT_EQ(next.kind, Kind::kDone);
  EXPECT_EQ(next.outcome, Outcome::kDeadline);
}

// Time excluded (a request waiting for a network it may use) moves the deadline with it.
TEST_F(RetryMachineTest, ExcludedTimeMovesTheDeadline) {
  policy_.jitter = Jitter::kNone;
  policy_.total_deadline = Millis(5000);
  RetryMachine& m = start();
  ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  const Millis first = m.deadline();
  clock_.advance(Millis(60000));  // An hour of it offline would do the same.
  m.exclude(Millis(60000));
  EXPECT_EQ(m.deadline(), first + Millis(60000));
  const Next next = m.report(clock_.now(), AttemptResult::http(503));
  EXPECT_EQ(next.kind, Kind::kWaitUntil) << "the deadline has not passed: the retry waits";
}

TEST_F(RetryMachineTest, ClockJumpingPastTheDeadlineDuringAWaitEndsIt) {
  policy_.jitter = Jitter::kNone;
  policy_.total_deadline = Millis(60000);
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  ASSERT_EQ(m.report(clock_.now(), AttemptResult::http(503)).kind, Kind::kWaitUntil);
  clock_.advance(Millis(3600000));
  EXPECT_EQ(m.step(clock_.now()).outcome, Outcome::kDeadline);
}

TEST_F(RetryMachineTest, ClockGoingBackRestartsTheWaitWithoutExtendingIt) {
  policy_.jitter = Jitter::kNone;
  clock_.set(Millis(1000000));
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next wait = m.report(clock_.now(), AttemptResult::http(503));
  ASSERT_EQ(wait.at, Millis(1001000));
  clock_.set(Millis(5));  // The clock went back by ~1000 s.
  const Next again = m.step(clock_.now());
  ASSERT_EQ(again.kind, Kind::kWaitUntil);
  EXPECT_EQ(again.at, Millis(1005));  // Waits at most the scheduled 1 s, not 1000 s.
  clock_.set(again.at);
  EXPECT_EQ(m.step(clock_.now()).kind, Kind::kSend);
}

// The server's delay is the earliest moment it may be asked again; the client's own jittered
// wait is spread from there (a fleet told the same delay would otherwise return in step).
TEST_F(RetryMachineTest, ServerDelayIsHonouredWithTheBackoffAfterIt) {
  policy_.jitter = Jitter::kNone;
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next next =
      m.report(clock_.now(), AttemptResult::http(429, Millis(7000), DelaySource::kRetryAfter));
  EXPECT_EQ(next.at, clock_.now() + Millis(7000 + 1000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kRetryAfter);
}

TEST_F(RetryMachineTest, ShortServerDelayStillComesBeforeTheBackoff) {
  policy_.jitter = Jitter::kNone;
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next next =
      m.report(clock_.now(), AttemptResult::http(503, Millis(10), DelaySource::kRetryInfo));
  EXPECT_EQ(next.at, clock_.now() + Millis(10 + 1000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kRetryInfo);
}

// A fleet told "Retry-After: 30" on every attempt: the loop's own term catches up with its age
// (multiplier times the time it has run, up to the cap) instead of staying at its second step,
// so the next waits spread over tens of seconds, not one.
TEST_F(RetryMachineTest, AfterAServerDelayTheTermCatchesUpWithTheLoopsAge) {
  policy_.jitter = Jitter::kEqual;
  script({1});  // Equal jitter's lowest draw (0 loops in the unbiased draw): half the term.
  RetryMachine& m = start();
  const Millis begun = clock_.now();
  (void)m.step(clock_.now());
  const Next first =
      m.report(clock_.now(), AttemptResult::http(503, Millis(30000), DelaySource::kRetryAfter));
  ASSERT_EQ(first.at, begun + Millis(30000 + 500));
  clock_.set(first.at);
  ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  // The term would be 2 s; the loop is 30.5 s old, so it is min(2 x 30.5 s, cap 32 s).
  const Next second = m.report(clock_.now(), AttemptResult::http(503));
  EXPECT_EQ(second.at, clock_.now() + Millis(16000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kBackoff);
  // And it grows from there (capped), rather than falling back.
  clock_.set(second.at);
  ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  EXPECT_EQ(m.report(clock_.now(), AttemptResult::http(503)).at, clock_.now() + Millis(16000));
}

// The literal formula keeps its documented terms, server delays or not.
TEST_F(RetryMachineTest, TheLiteralFormulasTermDoesNotCatchUp) {
  script({1});  // The lowest draw.
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next first =
      m.report(clock_.now(), AttemptResult::http(503, Millis(30000), DelaySource::kRetryAfter));
  clock_.set(first.at);
  ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  EXPECT_EQ(m.report(clock_.now(), AttemptResult::http(503)).at, clock_.now() + Millis(2000));
}

TEST_F(RetryMachineTest, AbsurdServerDelayEndsTheLoopInsteadOfRetryingEarly) {
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next next = m.report(clock_.now(), AttemptResult::http(503, Millis::seconds(86400 * 365),
                                                               DelaySource::kRetryAfter));
  EXPECT_EQ(next.kind, Kind::kDone);
  EXPECT_EQ(next.outcome, Outcome::kServerDelayTooLong);
}

TEST_F(RetryMachineTest, ServerDelayBeyondTheDeadlineGivesUpNow) {
  policy_.total_deadline = Millis(20000);
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next next =
      m.report(clock_.now(), AttemptResult::http(503, Millis(30000), DelaySource::kRetryAfter));
  EXPECT_EQ(next.outcome, Outcome::kDeadline);
}

TEST_F(RetryMachineTest, ServerDelayIgnoredWhenThePolicySaysSo) {
  policy_.jitter = Jitter::kNone;
  policy_.honor_server_delay = false;
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next next = m.report(
      clock_.now(), AttemptResult::http(503, Millis::seconds(86400), DelaySource::kRetryAfter));
  EXPECT_EQ(next.at, clock_.now() + Millis(1000));
}

TEST_F(RetryMachineTest, TerminalStatusAndFailure) {
  RetryMachine a(context());
  (void)a.step(clock_.now());
  EXPECT_EQ(a.report(clock_.now(), AttemptResult::http(404)).outcome, Outcome::kTerminalStatus);
  RetryMachine b(context());
  (void)b.step(clock_.now());
  EXPECT_EQ(b.report(clock_.now(), AttemptResult::transport(Failure::kTlsVerify)).outcome,
            Outcome::kTerminalFailure);
}

TEST_F(RetryMachineTest, NonIdempotentRequestIsNotResentAfterItMayHaveBeenProcessed) {
  for (const AttemptResult& r :
       {AttemptResult::transport(Failure::kReset), AttemptResult::transport(Failure::kTimeout),
        AttemptResult::http(500), AttemptResult::http(502)}) {
    RetryMachine m(context(), Idempotent::kNo);
    (void)m.step(clock_.now());
    EXPECT_EQ(m.report(clock_.now(), r).outcome, Outcome::kNotIdempotent) << r.status;
  }
  for (const AttemptResult& r :
       {AttemptResult::transport(Failure::kConnect), AttemptResult::transport(Failure::kDns),
        AttemptResult::http(429), AttemptResult::http(503)}) {
    RetryMachine m(context(), Idempotent::kNo);
    (void)m.step(clock_.now());
    EXPECT_EQ(m.report(clock_.now(), r).kind, Kind::kWaitUntil) << r.status;
  }
}

TEST_F(RetryMachineTest, CallerCanOptInToRetryNonIdempotentRequests) {
  policy_.idempotency = IdempotencyRule::kRetryAll;
  RetryMachine& m = start(Idempotent::kNo);
  (void)m.step(clock_.now());
  EXPECT_EQ(m.report(clock_.now(), AttemptResult::transport(Failure::kReset)).kind,
            Kind::kWaitUntil);
}

TEST_F(RetryMachineTest, SharedBudgetStopsRetriesAcrossRequests) {
  policy_.max_retries = 3;
  // Others' failures throttle while tokens <= 2.
  const RetryBudget& budget = use_budget(BudgetConfig{4, 100});
  RetryMachine first(context());
  Outcome outcome{};
  const auto waits = run_failing(first, AttemptResult::http(503), &outcome);
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);  // Its own failures never throttle it.
  EXPECT_EQ(waits.size(), 3U);
  EXPECT_EQ(budget.milli_tokens(), 0U);  // 4 failures took the 4 tokens.
  RetryMachine second(context());
  (void)second.step(clock_.now());
  EXPECT_EQ(second.report(clock_.now(), AttemptResult::http(503)).outcome,
            Outcome::kBudgetExhausted);
  RetryMachine third(context());
  (void)third.step(clock_.now());
  EXPECT_EQ(third.report(clock_.now(), AttemptResult::http(200)).outcome, Outcome::kSuccess);
  EXPECT_EQ(budget.milli_tokens(), 100U);
}

// Regression: a fresh 10-token budget stopped every single request after 5
// attempts, below the desktop profile's 6 retries and any --max-retries above 4.
TEST_F(RetryMachineTest, OneRequestAloneGetsTheRetriesItsPolicyPromises) {
  policy_.max_retries = 10;
  use_budget(BudgetConfig{10, 100});
  RetryMachine& m = start();
  Outcome outcome{};
  const auto waits = run_failing(m, AttemptResult::http(503), &outcome);
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(waits.size(), 10U);
}

TEST_F(RetryMachineTest, CancelEndsTheLoopFromAnyLiveState) {
  RetryMachine idle(context());
  idle.cancel();
  EXPECT_EQ(idle.step(clock_.now()).outcome, Outcome::kCancelled);
  RetryMachine waiting(context());
  (void)waiting.step(clock_.now());
  (void)waiting.report(clock_.now(), AttemptResult::http(503));
  waiting.cancel();
  EXPECT_EQ(waiting.step(clock_.now()).kind, Kind::kDone);
  EXPECT_EQ(waiting.step(clock_.now()).outcome, Outcome::kCancelled);
  RetryMachine done(context());
  (void)done.step(clock_.now());
  (void)done.report(clock_.now(), AttemptResult::http(200));
  done.cancel();
  EXPECT_EQ(done.step(clock_.now()).outcome, Outcome::kSuccess);
}

TEST_F(RetryMachineTest, ReportWithoutAnOutstandingAttemptChangesNothing) {
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next wait = m.report(clock_.now(), AttemptResult::http(503));
  const Next again = m.report(clock_.now(), AttemptResult::http(200));
  EXPECT_EQ(again.kind, Kind::kWaitUntil);
  EXPECT_EQ(again.at, wait.at);
}

// A request whose network blinked: its loop is young, so it comes back within the jitter range.
TEST_F(RetryMachineTest, NetworkBackShortensABackoffWait) {
  policy_.jitter = Jitter::kNone;
  policy_.initial_delay = Millis(30000);
  script({0x80000000U});  // U[0, 1000] -> 500 ms.
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next long_wait = m.report(clock_.now(), AttemptResult::http(503));
  ASSERT_EQ((long_wait.at - clock_.now()).count(), 30000U);
  clock_.advance(Millis(300));
  m.network_available(clock_.now());
  const Next soon = m.step(clock_.now());
  EXPECT_EQ(soon.at, clock_.now() + Millis(500));
  EXPECT_EQ(m.wait_reason(), WaitReason::kNetworkBack);
  clock_.set(soon.at);
  EXPECT_EQ(m.step(clock_.now()).kind, Kind::kSend);
}

// A loop that has run 34 s when the network returns (as it does for a whole cell at once)
// comes back within multiplier x 34 s, not within the 1 s jitter range: the fleet spreads over
// about as long as it was lost instead of arriving in one second.
TEST_F(RetryMachineTest, NetworkBackSpreadsOverTheLoopsAge) {
  policy_.jitter = Jitter::kNone;
  policy_.max_retries = 10;
  script({0x40000000U});  // A quarter of the range.
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  for (int i = 0; i < 5; ++i) {  // Walk up to a 32 s wait: 31 s of waits.
    const Next w = m.report(clock_.now(), AttemptResult::http(503));
    clock_.set(w.at);
    ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  }
  const Next long_wait = m.report(clock_.now(), AttemptResult::http(503));
  ASSERT_EQ((long_wait.at - clock_.now()).count(), 32000U);
  clock_.advance(Millis(3000));  // 34 s into the loop: U[0, 68 s] -> 17 s.
  m.network_available(clock_.now());
  const Next later = m.step(clock_.now());
  EXPECT_EQ(later.at, clock_.now() + Millis(17000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kNetworkBack);
}

TEST_F(RetryMachineTest, NetworkBackNeverShortensAServerRequestedWait) {
  script({0x80000000U});
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next w =
      m.report(clock_.now(), AttemptResult::http(503, Millis(20000), DelaySource::kRetryAfter));
  m.network_available(clock_.now() + Millis(100));
  EXPECT_EQ(m.step(clock_.now() + Millis(100)).at, w.at);
}

TEST_F(RetryMachineTest, NetworkBackNeverLengthensAShortWait) {
  policy_.jitter = Jitter::kNone;
  script({0xFFFFFFFFU});  // Would pick 1000 ms.
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next w = m.report(clock_.now(), AttemptResult::http(503));  // 1000 ms.
  m.network_available(clock_.now() + Millis(600));
  EXPECT_EQ(m.step(clock_.now() + Millis(600)).at, w.at);
}

TEST_F(RetryMachineTest, RetryIndexNearTheTopOfItsRangeStaysCapped) {
  policy_.jitter = Jitter::kNone;
  policy_.max_retries = 0xFFFFFFFFU;
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  for (int i = 0; i < 100; ++i) {
    const Next w = m.report(clock_.now(), AttemptResult::http(503));
    ASSERT_EQ(w.kind, Kind::kWaitUntil);
    ASSERT_LE((w.at - clock_.now()).count(), 32000U);
    clock_.set(w.at);
    ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  }
  EXPECT_EQ(m.retries(), 100U);
}

// Instants at or past 2^62 ms count as 2^62 ms (no clock gets there), so a wait or a deadline
// added to them cannot wrap around to an early instant.
TEST_F(RetryMachineTest, InstantsPastTwoToThe62MillisecondsAreClamped) {
  policy_.jitter = Jitter::kNone;
  policy_.total_deadline = Millis(60000);
  RetryMachine& m = start();
  constexpr std::uint64_t kLatest = std::uint64_t{1} << 62;
  ASSERT_EQ(m.step(Millis::max()).kind, Kind::kSend);
  EXPECT_EQ(m.deadline(), Millis(kLatest + 60000));
  const Next wait = m.report(Millis::max(), AttemptResult::http(503));
  ASSERT_EQ(wait.kind, Kind::kWaitUntil);
  EXPECT_EQ(wait.at, Millis(kLatest + 1000));
}

TEST_F(RetryMachineTest, ClockGoingBackFurtherThanTheElapsedTimeRestartsTheWaitFromZero) {
  policy_.jitter = Jitter::kNone;
  policy_.total_deadline = Millis(60000);
  clock_.set(Millis(20000));
  RetryMachine& m = start();
  ASSERT_EQ(m.step(clock_.now()).kind, Kind::kSend);
  clock_.advance(Millis(10000));  // A 10 s attempt.
  ASSERT_EQ(m.report(clock_.now(), AttemptResult::http(503)).at, Millis(31000));
  clock_.set(Millis(5));  // Back to 5 ms, before the 10 s already spent.
  const Next again = m.step(clock_.now());
  ASSERT_EQ(again.kind, Kind::kWaitUntil);
  EXPECT_EQ(again.at, Millis(1005));  // The 1 s wait, from now.
  // An instant cannot go below zero: the loop's start is taken as 0, so of the 10 s spent only
  // the 5 ms before now still count against the deadline.
  EXPECT_EQ(m.deadline(), Millis(60000));
  clock_.set(again.at);
  EXPECT_EQ(m.step(clock_.now()).kind, Kind::kSend);
}

TEST_F(RetryMachineTest, RetryInfoLongerThanBackoffIsHonouredAndNamed) {
  policy_.jitter = Jitter::kNone;
  script({0x80000000U});
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next next =
      m.report(clock_.now(), AttemptResult::http(503, Millis(7000), DelaySource::kRetryInfo));
  EXPECT_EQ(next.at, clock_.now() + Millis(7000 + 1000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kRetryInfo);
  // Like Retry-After, a RetryInfo delay is the server's: connectivity returning does not cut it.
  m.network_available(clock_.now() + Millis(100));
  EXPECT_EQ(m.step(clock_.now() + Millis(100)).at, next.at);
  EXPECT_EQ(m.wait_reason(), WaitReason::kRetryInfo);
}

TEST_F(RetryMachineTest, NetworkBackAtAnInstantBeforeTheWaitBeganChangesNothing) {
  policy_.jitter = Jitter::kNone;
  policy_.initial_delay = Millis(10000);
  script({0x80000000U});  // U[0, 1000] -> 500 ms.
  clock_.set(Millis(10000));
  RetryMachine& m = start();
  (void)m.step(clock_.now());
  const Next wait = m.report(clock_.now(), AttemptResult::http(503));  // 10 s, until 20 s.
  ASSERT_EQ(wait.at, Millis(20000));
  m.network_available(Millis(5000));  // The clock went back before the wait's start.
  EXPECT_EQ(m.step(clock_.now()).at, Millis(20000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kBackoff);
}

}  // namespace
}  // namespace stepback
