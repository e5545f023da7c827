#include "stepback/core/retry_machine.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
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

Policy literal_policy() {
  Policy p;  // 1 s, x2, cap 32 s, 6 retries, seed jitter, no deadline.
  return p;
}

// Runs the machine to the end, failing every attempt with `result`; returns the waits.
std::vector<std::uint64_t> run_failing(RetryMachine& m, FakeClock& clock,
                                       const AttemptResult& result, Outcome* outcome) {
  std::vector<std::uint64_t> waits;
  Next next = m.step(clock.now());
  for (int guard = 0; guard < 10000; ++guard) {
    if (next.kind == Kind::kDone) break;
    if (next.kind == Kind::kSend) {
      next = m.report(clock.now(), result);
    } else {
      waits.push_back((next.at - clock.now()).count());
      clock.set(next.at);
      next = m.step(clock.now());
    }
  }
  EXPECT_EQ(next.kind, Kind::kDone);
  *outcome = next.outcome;
  return waits;
}

TEST(RetryMachine, SuccessOnTheFirstAttempt) {
  const Policy p = literal_policy();
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  EXPECT_EQ(m.step(clock.now()).kind, Kind::kSend);
  EXPECT_EQ(m.step(clock.now()).kind, Kind::kSend);  // Repeats until reported.
  const Next done = m.report(clock.now(), AttemptResult::http(200));
  EXPECT_EQ(done.kind, Kind::kDone);
  EXPECT_EQ(done.outcome, Outcome::kSuccess);
  EXPECT_EQ(m.retries(), 0U);
  EXPECT_EQ(m.step(clock.now()).outcome, Outcome::kSuccess);
}

TEST(RetryMachine, RetriesWithTheSameWaitsAsThePureFormula) {
  for (Jitter j :
       {Jitter::kSeed, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated, Jitter::kNone}) {
    Policy p = literal_policy();
    p.jitter = j;
    p.max_retries = 40;
    Xoshiro128 g(42);
    const RetryContext ctx{p, g, nullptr};
    RetryMachine m(ctx);
    FakeClock clock;
    Outcome outcome{};
    const std::vector<std::uint64_t> waits =
        run_failing(m, clock, AttemptResult::http(503), &outcome);
    EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
    ASSERT_EQ(waits.size(), 40U) << to_string(j);
    Xoshiro128 ref(42);
    Millis previous = p.initial_delay;
    for (std::uint32_t n = 0; n < 40; ++n) {
      previous = backoff_wait(p, n, previous, ref);
      EXPECT_EQ(waits[n], previous.count()) << to_string(j) << " n=" << n;
    }
    EXPECT_EQ(m.retries(), 40U);
  }
}

TEST(RetryMachine, StopsAfterMaxRetries) {
  const Policy p = literal_policy();
  ScriptedRandom r{0xFFFFFFFFU};
  const RetryContext ctx{p, r, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  Outcome outcome{};
  const auto waits = run_failing(m, clock, AttemptResult::transport(Failure::kReset), &outcome);
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(waits, (std::vector<std::uint64_t>{2000, 3000, 5000, 9000, 17000, 32000}));
}

TEST(RetryMachine, ZeroRetriesMeansOneAttempt) {
  Policy p = literal_policy();
  p.max_retries = 0;
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  Outcome outcome{};
  EXPECT_TRUE(run_failing(m, clock, AttemptResult::http(500), &outcome).empty());
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
}

TEST(RetryMachine, GivesUpAtOnceWhenTheNextWaitWouldPassTheDeadline) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.max_retries = 100;
  p.total_deadline = Millis(10000);  // 1 + 2 + 4 = 7 s fit; the 8 s wait would not.
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  Outcome outcome{};
  const auto waits = run_failing(m, clock, AttemptResult::http(503), &outcome);
  EXPECT_EQ(outcome, Outcome::kDeadline);
  EXPECT_EQ(waits, (std::vector<std::uint64_t>{1000, 2000, 4000}));
}

TEST(RetryMachine, AWaitEndingExactlyAtTheDeadlineStillRetries) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.total_deadline = Millis(3000);  // 1 s + 2 s == deadline.
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  Outcome outcome{};
  EXPECT_EQ(run_failing(m, clock, AttemptResult::http(503), &outcome),
            (std::vector<std::uint64_t>{1000, 2000}));
  EXPECT_EQ(outcome, Outcome::kDeadline);
}

TEST(RetryMachine, DeadlineCountsTimeSpentInAttempts) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.total_deadline = Millis(5000);
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  EXPECT_EQ(m.deadline(), Millis::max());  // Not started.
  ASSERT_EQ(m.step(clock.now()).kind, Kind::kSend);
  EXPECT_EQ(m.deadline(), clock.now() + Millis(5000));
  clock.advance(Millis(4500));  // A slow attempt.
  const Next next = m.report(clock.now(), AttemptResult::http(503));
  EXPECT_EQ(next.kind, Kind::kDone);
  EXPECT_EQ(next.outcome, Outcome::kDeadline);
}

TEST(RetryMachine, ClockJumpingPastTheDeadlineDuringAWaitEndsIt) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.total_deadline = Millis(60000);
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  ASSERT_EQ(m.report(clock.now(), AttemptResult::http(503)).kind, Kind::kWaitUntil);
  clock.advance(Millis(3600000));
  EXPECT_EQ(m.step(clock.now()).outcome, Outcome::kDeadline);
}

TEST(RetryMachine, ClockGoingBackRestartsTheWaitWithoutExtendingIt) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock(Millis(1000000));
  (void)m.step(clock.now());
  const Next wait = m.report(clock.now(), AttemptResult::http(503));
  ASSERT_EQ(wait.at, Millis(1001000));
  clock.set(Millis(5));  // The clock went back by ~1000 s.
  const Next again = m.step(clock.now());
  ASSERT_EQ(again.kind, Kind::kWaitUntil);
  EXPECT_EQ(again.at, Millis(1005));  // Waits at most the scheduled 1 s, not 1000 s.
  clock.set(again.at);
  EXPECT_EQ(m.step(clock.now()).kind, Kind::kSend);
}

TEST(RetryMachine, ServerDelayLongerThanBackoffIsHonoured) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next next =
      m.report(clock.now(), AttemptResult::http(429, Millis(7000), DelaySource::kRetryAfter));
  EXPECT_EQ(next.at, clock.now() + Millis(7000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kRetryAfter);
}

TEST(RetryMachine, ServerDelayShorterThanBackoffKeepsTheBackoff) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next next =
      m.report(clock.now(), AttemptResult::http(503, Millis(10), DelaySource::kRetryInfo));
  EXPECT_EQ(next.at, clock.now() + Millis(1000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kBackoff);
}

TEST(RetryMachine, AbsurdServerDelayEndsTheLoopInsteadOfRetryingEarly) {
  Policy p = literal_policy();
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next next = m.report(clock.now(), AttemptResult::http(503, Millis::seconds(86400 * 365),
                                                              DelaySource::kRetryAfter));
  EXPECT_EQ(next.kind, Kind::kDone);
  EXPECT_EQ(next.outcome, Outcome::kServerDelayTooLong);
}

TEST(RetryMachine, ServerDelayBeyondTheDeadlineGivesUpNow) {
  Policy p = literal_policy();
  p.total_deadline = Millis(20000);
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next next =
      m.report(clock.now(), AttemptResult::http(503, Millis(30000), DelaySource::kRetryAfter));
  EXPECT_EQ(next.outcome, Outcome::kDeadline);
}

TEST(RetryMachine, ServerDelayIgnoredWhenThePolicySaysSo) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.honor_server_delay = false;
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next next = m.report(
      clock.now(), AttemptResult::http(503, Millis::seconds(86400), DelaySource::kRetryAfter));
  EXPECT_EQ(next.at, clock.now() + Millis(1000));
}

TEST(RetryMachine, TerminalStatusAndFailure) {
  const Policy p = literal_policy();
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  FakeClock clock;
  RetryMachine a(ctx);
  (void)a.step(clock.now());
  EXPECT_EQ(a.report(clock.now(), AttemptResult::http(404)).outcome, Outcome::kTerminalStatus);
  RetryMachine b(ctx);
  (void)b.step(clock.now());
  EXPECT_EQ(b.report(clock.now(), AttemptResult::transport(Failure::kTlsVerify)).outcome,
            Outcome::kTerminalFailure);
}

TEST(RetryMachine, NonIdempotentRequestIsNotResentAfterItMayHaveBeenProcessed) {
  const Policy p = literal_policy();
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  FakeClock clock;
  for (const AttemptResult& r :
       {AttemptResult::transport(Failure::kReset), AttemptResult::transport(Failure::kTimeout),
        AttemptResult::http(500), AttemptResult::http(502)}) {
    RetryMachine m(ctx, Idempotent::kNo);
    (void)m.step(clock.now());
    EXPECT_EQ(m.report(clock.now(), r).outcome, Outcome::kNotIdempotent) << r.status;
  }
  for (const AttemptResult& r :
       {AttemptResult::transport(Failure::kConnect), AttemptResult::transport(Failure::kDns),
        AttemptResult::http(429), AttemptResult::http(503)}) {
    RetryMachine m(ctx, Idempotent::kNo);
    (void)m.step(clock.now());
    EXPECT_EQ(m.report(clock.now(), r).kind, Kind::kWaitUntil) << r.status;
  }
}

TEST(RetryMachine, CallerCanOptInToRetryNonIdempotentRequests) {
  Policy p = literal_policy();
  p.idempotency = IdempotencyRule::kRetryAll;
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx, Idempotent::kNo);
  FakeClock clock;
  (void)m.step(clock.now());
  EXPECT_EQ(m.report(clock.now(), AttemptResult::transport(Failure::kReset)).kind,
            Kind::kWaitUntil);
}

TEST(RetryMachine, SharedBudgetStopsRetriesAcrossRequests) {
  Policy p = literal_policy();
  p.max_retries = 3;
  Xoshiro128 g(1);
  RetryBudget budget(BudgetConfig{4, 100});  // Others' failures throttle while tokens <= 2.
  const RetryContext ctx{p, g, &budget};
  FakeClock clock;
  RetryMachine first(ctx);
  Outcome outcome{};
  const auto waits = run_failing(first, clock, AttemptResult::http(503), &outcome);
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);  // Its own failures never throttle it.
  EXPECT_EQ(waits.size(), 3U);
  EXPECT_EQ(budget.milli_tokens(), 0U);  // 4 failures took the 4 tokens.
  RetryMachine second(ctx);
  (void)second.step(clock.now());
  EXPECT_EQ(second.report(clock.now(), AttemptResult::http(503)).outcome,
            Outcome::kBudgetExhausted);
  RetryMachine third(ctx);
  (void)third.step(clock.now());
  EXPECT_EQ(third.report(clock.now(), AttemptResult::http(200)).outcome, Outcome::kSuccess);
  EXPECT_EQ(budget.milli_tokens(), 100U);
}

// Regression: a fresh 10-token budget stopped every single request after 5
// attempts, below the desktop profile's 6 retries and any --max-retries above 4.
TEST(RetryMachine, OneRequestAloneGetsTheRetriesItsPolicyPromises) {
  Policy p = literal_policy();
  p.max_retries = 10;
  Xoshiro128 g(1);
  RetryBudget budget(BudgetConfig{10, 100});
  const RetryContext ctx{p, g, &budget};
  FakeClock clock;
  RetryMachine m(ctx);
  Outcome outcome{};
  const auto waits = run_failing(m, clock, AttemptResult::http(503), &outcome);
  EXPECT_EQ(outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(waits.size(), 10U);
}

TEST(RetryMachine, CancelEndsTheLoopFromAnyLiveState) {
  const Policy p = literal_policy();
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  FakeClock clock;
  RetryMachine idle(ctx);
  idle.cancel();
  EXPECT_EQ(idle.step(clock.now()).outcome, Outcome::kCancelled);
  RetryMachine waiting(ctx);
  (void)waiting.step(clock.now());
  (void)waiting.report(clock.now(), AttemptResult::http(503));
  waiting.cancel();
  EXPECT_EQ(waiting.step(clock.now()).kind, Kind::kDone);
  EXPECT_EQ(waiting.step(clock.now()).outcome, Outcome::kCancelled);
  RetryMachine done(ctx);
  (void)done.step(clock.now());
  (void)done.report(clock.now(), AttemptResult::http(200));
  done.cancel();
  EXPECT_EQ(done.step(clock.now()).outcome, Outcome::kSuccess);
}

TEST(RetryMachine, ReportWithoutAnOutstandingAttemptChangesNothing) {
  const Policy p = literal_policy();
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next wait = m.report(clock.now(), AttemptResult::http(503));
  const Next again = m.report(clock.now(), AttemptResult::http(200));
  EXPECT_EQ(again.kind, Kind::kWaitUntil);
  EXPECT_EQ(again.at, wait.at);
}

TEST(RetryMachine, NetworkBackShortensABackoffWait) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.max_retries = 10;
  ScriptedRandom r{0x80000000U};  // U[0, 1000] -> 500 ms.
  const RetryContext ctx{p, r, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  Outcome outcome{};
  (void)m.step(clock.now());
  for (int i = 0; i < 5; ++i) {  // Walk up to a 32 s wait.
    const Next w = m.report(clock.now(), AttemptResult::http(503));
    clock.set(w.at);
    ASSERT_EQ(m.step(clock.now()).kind, Kind::kSend);
  }
  const Next long_wait = m.report(clock.now(), AttemptResult::http(503));
  ASSERT_EQ((long_wait.at - clock.now()).count(), 32000U);
  clock.advance(Millis(3000));
  m.network_available(clock.now());
  const Next soon = m.step(clock.now());
  EXPECT_EQ(soon.at, clock.now() + Millis(500));
  EXPECT_EQ(m.wait_reason(), WaitReason::kNetworkBack);
  clock.set(soon.at);
  EXPECT_EQ(m.step(clock.now()).kind, Kind::kSend);
  (void)outcome;
}

TEST(RetryMachine, NetworkBackNeverShortensAServerRequestedWait) {
  Policy p = literal_policy();
  ScriptedRandom r{0x80000000U};
  const RetryContext ctx{p, r, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next w =
      m.report(clock.now(), AttemptResult::http(503, Millis(20000), DelaySource::kRetryAfter));
  m.network_available(clock.now() + Millis(100));
  EXPECT_EQ(m.step(clock.now() + Millis(100)).at, w.at);
}

TEST(RetryMachine, NetworkBackNeverLengthensAShortWait) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  ScriptedRandom r{0xFFFFFFFFU};  // Would pick 1000 ms.
  const RetryContext ctx{p, r, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next w = m.report(clock.now(), AttemptResult::http(503));  // 1000 ms.
  m.network_available(clock.now() + Millis(600));
  EXPECT_EQ(m.step(clock.now() + Millis(600)).at, w.at);
}

TEST(RetryMachine, RetryIndexNearTheTopOfItsRangeStaysCapped) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.max_retries = 0xFFFFFFFFU;
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  for (int i = 0; i < 100; ++i) {
    const Next w = m.report(clock.now(), AttemptResult::http(503));
    ASSERT_EQ(w.kind, Kind::kWaitUntil);
    ASSERT_LE((w.at - clock.now()).count(), 32000U);
    clock.set(w.at);
    ASSERT_EQ(m.step(clock.now()).kind, Kind::kSend);
  }
  EXPECT_EQ(m.retries(), 100U);
}

// Instants at or past 2^62 ms count as 2^62 ms (no clock gets there), so a wait or a deadline
// added to them cannot wrap around to an early instant.
TEST(RetryMachine, InstantsPastTwoToThe62MillisecondsAreClamped) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.total_deadline = Millis(60000);
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  constexpr std::uint64_t kLatest = std::uint64_t{1} << 62;
  ASSERT_EQ(m.step(Millis::max()).kind, Kind::kSend);
  EXPECT_EQ(m.deadline(), Millis(kLatest + 60000));
  const Next wait = m.report(Millis::max(), AttemptResult::http(503));
  ASSERT_EQ(wait.kind, Kind::kWaitUntil);
  EXPECT_EQ(wait.at, Millis(kLatest + 1000));
}

TEST(RetryMachine, ClockGoingBackFurtherThanTheElapsedTimeRestartsTheWaitFromZero) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.total_deadline = Millis(60000);
  Xoshiro128 g(1);
  const RetryContext ctx{p, g, nullptr};
  RetryMachine m(ctx);
  FakeClock clock(Millis(20000));
  ASSERT_EQ(m.step(clock.now()).kind, Kind::kSend);
  clock.advance(Millis(10000));  // A 10 s attempt.
  ASSERT_EQ(m.report(clock.now(), AttemptResult::http(503)).at, Millis(31000));
  clock.set(Millis(5));  // Back to 5 ms, before the 10 s already spent.
  const Next again = m.step(clock.now());
  ASSERT_EQ(again.kind, Kind::kWaitUntil);
  EXPECT_EQ(again.at, Millis(1005));  // The 1 s wait, from now.
  // An instant cannot go below zero: the loop's start is taken as 0, so of the 10 s spent only
  // the 5 ms before now still count against the deadline.
  EXPECT_EQ(m.deadline(), Millis(60000));
  clock.set(again.at);
  EXPECT_EQ(m.step(clock.now()).kind, Kind::kSend);
}

TEST(RetryMachine, RetryInfoLongerThanBackoffIsHonouredAndNamed) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  ScriptedRandom r{0x80000000U};
  const RetryContext ctx{p, r, nullptr};
  RetryMachine m(ctx);
  FakeClock clock;
  (void)m.step(clock.now());
  const Next next =
      m.report(clock.now(), AttemptResult::http(503, Millis(7000), DelaySource::kRetryInfo));
  EXPECT_EQ(next.at, clock.now() + Millis(7000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kRetryInfo);
  // Like Retry-After, a RetryInfo delay is the server's: connectivity returning does not cut it.
  m.network_available(clock.now() + Millis(100));
  EXPECT_EQ(m.step(clock.now() + Millis(100)).at, next.at);
  EXPECT_EQ(m.wait_reason(), WaitReason::kRetryInfo);
}

TEST(RetryMachine, NetworkBackAtAnInstantBeforeTheWaitBeganChangesNothing) {
  Policy p = literal_policy();
  p.jitter = Jitter::kNone;
  p.initial_delay = Millis(10000);
  ScriptedRandom r{0x80000000U};  // U[0, 1000] -> 500 ms.
  const RetryContext ctx{p, r, nullptr};
  RetryMachine m(ctx);
  FakeClock clock(Millis(10000));
  (void)m.step(clock.now());
  const Next wait = m.report(clock.now(), AttemptResult::http(503));  // 10 s, until 20 s.
  ASSERT_EQ(wait.at, Millis(20000));
  m.network_available(Millis(5000));  // The clock went back before the wait's start.
  EXPECT_EQ(m.step(clock.now()).at, Millis(20000));
  EXPECT_EQ(m.wait_reason(), WaitReason::kBackoff);
}

}  // namespace
}  // namespace stepback
