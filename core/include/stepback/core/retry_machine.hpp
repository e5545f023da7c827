// RetryMachine: the step-driven retry loop. The application asks step(now) what to do,
// performs attempts itself, and tells the machine what happened with report().
#ifndef STEPBACK_CORE_RETRY_MACHINE_HPP_
#define STEPBACK_CORE_RETRY_MACHINE_HPP_

#include <cstdint>

#include "stepback/core/attempt.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"

namespace stepback {

// What the requests of one client share; must outlive every machine that uses it.
struct RetryContext {
  const Policy& policy;  // Must be valid().
  RandomSource& random;  // Draws every jitter.
  RetryBudget* budget;   // Optional: nullptr retries without a budget.
};

// What the machine needs next.
struct Next {
  enum class Kind : std::uint8_t {
    kSend,       // Perform an attempt now, then report() its result.
    kWaitUntil,  // Sleep until `at` (monotonic), then step() again.
    kDone,       // Finished with `outcome`.
  };
  Kind kind = Kind::kDone;
  Outcome outcome = Outcome::kCancelled;  // Meaningful for kDone.
  Millis at{};                            // Meaningful for kWaitUntil.

  static constexpr Next send() { return Next{Kind::kSend, Outcome::kSuccess, Millis{}}; }
  static constexpr Next wait_until(Millis t) {
    return Next{Kind::kWaitUntil, Outcome::kSuccess, t};
  }
  static constexpr Next done(Outcome o) { return Next{Kind::kDone, o, Millis{}}; }
};

// Whether a request may be re-sent after it may have reached the server.
enum class Idempotent : std::uint8_t { kNo, kYes };

// The retry loop of one request: no heap, no blocking, no threads, trivially copyable.
// Time enters only as `now`, monotonic milliseconds from one clock; a clock that goes
// back restarts the current wait (never waits longer than the wait it scheduled).
class RetryMachine {
 public:
  // A machine for one request; `context` must outlive it.
  explicit RetryMachine(const RetryContext& context, Idempotent idempotent = Idempotent::kYes);
  // A temporary context would dangle.
  explicit RetryMachine(RetryContext&& context, Idempotent idempotent = Idempotent::kYes) = delete;

  // What to do next at `now`. The first call starts the deadline clock and answers kSend;
  // kSend repeats until report() is called.
  [[nodiscard]] Next step(Millis now);

  // Takes the result of the attempt the last kSend asked for and answers step(now).
  // A report with no attempt outstanding changes nothing.
  [[nodiscard]] Next report(Millis now, const AttemptResult& result);

  // Ends the loop with Outcome::kCancelled unless it has already ended.
  void cancel();

  // Connectivity has returned: a backoff wait (not a server-requested one) is shortened
  // to U[0, jitter_range] from `now`, so the retry does not sit out a long wait.
  void network_available(Millis now);

  // The request spent `span` waiting for a network it may use, not trying: the total deadline
  // moves that much later, so that waiting offline spends neither retries nor the deadline.
  void exclude(Millis span);

  // Retries started so far (attempts - 1 once the first attempt started).
  std::uint32_t retries() const { return retries_; }
  // The absolute deadline, or Millis::max() without one or before the first step.
  Millis deadline() const;
  // Why the current (or last) wait has its length.
  WaitReason wait_reason() const { return wait_reason_; }

 private:
  enum class Phase : std::uint8_t { kIdle, kAttempting, kWaiting, kDone };

  // Decides what follows the attempt at `now`: a wait (kWaiting) or the end (kDone).
  void schedule(const AttemptResult& result, Millis now);
  // Ends the loop with `outcome`.
  void end(Outcome outcome) {
    outcome_ = outcome;
    phase_ = Phase::kDone;
  }
  // The answer of step() and report() in the current phase (never kIdle).
  Next next() const;

  const RetryContext* context_;
  std::uint64_t start_ = 0;  // When the first step happened, in ms.
  std::uint64_t wake_ = 0;   // When the current wait ends; it began at wake_ - wait_.
  std::uint32_t wait_ = 0;   // Length of the current wait in ms.
  std::uint32_t carry_ = 0;  // Next exponential term, or the previous wait for kDecorrelated.
  std::uint32_t retries_ = 0;
  Phase phase_ = Phase::kIdle;
  Outcome outcome_ = Outcome::kCancelled;
  WaitReason wait_reason_ = WaitReason::kBackoff;
  Idempotent idempotent_;
};

}  // namespace stepback

#endif  // STEPBACK_CORE_RETRY_MACHINE_HPP_
