#include "stepback/core/retry_machine.hpp"

#include "jitter.hpp"

namespace stepback {
namespace {

// Instants are clamped here on entry, so sums of an instant and any wait or deadline the
// policy allows (valid() bounds both far below 2^62 ms) cannot overflow below.
constexpr std::uint64_t kLatestInstant = std::uint64_t{1} << 62;

// The longest delay after network_available(): the longest backoff wait valid() allows.
constexpr std::uint64_t kBoundLimit = kMaxBackoffLimit.count();

constexpr std::uint64_t clamp(Millis now) {
  // A test of the top two bits: no 64-bit compare with a constant on a 32-bit core.
  return (now.count() >> 62) == 0 ? now.count() : kLatestInstant;
}

// The deadline of a loop started at `start`, ~0 without one. A free function, which -Os
// inlines into step() and schedule(); as a member called from both it stayed a 36-byte call.
constexpr std::uint64_t deadline_of(const Policy& p, std::uint64_t start) {
  return p.total_deadline.count() == 0 ? ~std::uint64_t{0} : start + p.total_deadline.count();
}

}  // namespace

RetryMachine::RetryMachine(const RetryContext& context, Idempotent idempotent)
    : context_(&context),
      carry_(static_cast<std::uint32_t>(context.policy.initial_delay.count())),
      idempotent_(idempotent) {}

// The transition table. report() and network_available() only move kAttempting to
// kWaiting/kDone and shorten waits; every other move happens here.
Next RetryMachine::step(Millis now) {
  const std::uint64_t t = clamp(now);
  if (phase_ == Phase::kIdle) {
    start_ = t;
    phase_ = Phase::kAttempting;
  } else if (phase_ == Phase::kWaiting) {
    const std::uint64_t begun = wake_ - wait_;
    if (t < begun) {
      // The clock went back: keep the elapsed total, restart the wait from now.
      // (A start moved past the wait's beginning by exclude() counts as no time elapsed.)
      const std::uint64_t elapsed = begun > start_ ? begun - start_ : 0;
      start_ = t > elapsed ? t - elapsed : 0;
      wake_ = t + wait_;
    }
    if (t >= wake_) {
      if (t > deadline_of(context_->policy, start_)) {
        end(Outcome::kDeadline);
      } else {
        ++retries_;
        phase_ = Phase::kAttempting;
      }
    }
  }
  return next();
}

Next RetryMachine::report(Millis now, const AttemptResult& result) {
  if (phase_ != Phase::kAttempting) return step(now);
  schedule(result, now);
  return next();
}

Next RetryMachine::next() const {
  if (phase_ == Phase::kWaiting) return Next::wait_until(Millis(wake_));
  return phase_ == Phase::kAttempting ? Next::send() : Next::done(outcome_);
}

void RetryMachine::schedule(const AttemptResult& result, Millis at) {
  const std::uint64_t now = clamp(at);
  const Policy& p = context_->policy;
  RetryBudget* budget = context_->budget;
  const Verdict verdict = classify(p, result);
  if (verdict == Verdict::kSuccess) {
    if (budget != nullptr) budget->record_success();
    return end(Outcome::kSuccess);
  }
  if (verdict == Verdict::kTerminal) {
    return end(result.failure == Failure::kNone ? Outcome::kTerminalStatus
                                                : Outcome::kTerminalFailure);
  }
  if (result.may_have_been_processed && idempotent_ == Idempotent::kNo &&
      p.idempotency == IdempotencyRule::kSafeOnly) {
    return end(Outcome::kNotIdempotent);
  }
  if (budget != nullptr) {
    budget->record_failure();
    // This request's failures so far, this one included, took at most a token each.
    if (retries_ != ~std::uint32_t{0} &&
        !budget->allows_retry(std::uint64_t{retries_ + 1} * 1000)) {
      return end(Outcome::kBudgetExhausted);
    }
  }
  if (retries_ >= p.max_retries) {
    return end(Outcome::kRetriesExhausted);
  }
  // After a wait the server asked for, the term catches up with the loop's age: it becomes
  // at least multiplier times the time the loop has run (up to the cap), as it would be had
  // the loop's own waits filled that time, and grows from there. Server delays stretch a
  // loop without growing the term, and a fleet told the same delay would otherwise keep
  // drawing from the same short range, in step.
  const bool asked_before =
      wait_reason_ == WaitReason::kRetryAfter || wait_reason_ == WaitReason::kRetryInfo;
  if (asked_before && (p.jitter == Jitter::kFull || p.jitter == Jitter::kEqual)) {
    const std::uint64_t ran = (now > start_ ? now - start_ : 0) * p.multiplier;
    const std::uint64_t cap = p.max_backoff.count();
    const std::uint64_t stretched = ran < cap ? ran : cap;
    if (stretched > carry_) carry_ = static_cast<std::uint32_t>(stretched);
  }
  std::uint32_t wait = jitter_ms(p, carry_, carry_, context_->random);
  if (p.jitter == Jitter::kDecorrelated) {
    carry_ = wait;
  } else {
    const std::uint64_t grown = std::uint64_t{carry_} * p.multiplier;
    const std::uint64_t cap = p.max_backoff.count();
    carry_ = static_cast<std::uint32_t>(grown < cap ? grown : cap);
  }
  WaitReason reason = WaitReason::kBackoff;
  if (p.honor_server_delay && result.delay_source != DelaySource::kNone) {
    if (result.server_delay > p.max_server_delay) {
      return end(Outcome::kServerDelayTooLong);
    }
    // The server says when it may be asked again at the earliest; the jittered wait is
    // spread from then, so a fleet told the same delay does not come back in one second.
    // Both are at most a day (valid()), so the sum fits 32 bits.
    wait += static_cast<std::uint32_t>(result.server_delay.count());
    reason = result.delay_source == DelaySource::kRetryAfter ? WaitReason::kRetryAfter
                                                             : WaitReason::kRetryInfo;
  }
  // Gives up now rather than sleeping into the deadline.
  if (now + wait > deadline_of(p, start_)) {
    return end(Outcome::kDeadline);
  }
  wait_reason_ = reason;
  wait_ = wait;
  wake_ = now + wait;
  phase_ = Phase::kWaiting;
}

void RetryMachine::cancel() {
  if (phase_ != Phase::kDone) end(Outcome::kCancelled);
}

void RetryMachine::network_available(Millis now) {
  if (phase_ != Phase::kWaiting || wait_reason_ == WaitReason::kRetryAfter ||
      wait_reason_ == WaitReason::kRetryInfo) {
    return;
  }
  const std::uint64_t t = clamp(now);
  // The retry comes within the jitter range, or within the time the loop has run when that
  // is longer: a request whose network blinked comes back at once, while a fleet whose
  // network returns together after a long loss spreads over about as long as it was lost.
  const std::uint64_t ran = (t > start_ ? t - start_ : 0) * context_->policy.multiplier;
  const std::uint64_t range = context_->policy.jitter_range.count();
  const std::uint64_t bound = ran > range ? ran : range;
  const std::uint32_t delay = uniform(
      context_->random, static_cast<std::uint32_t>(bound < kBoundLimit ? bound : kBoundLimit));
  if (t >= wake_ - wait_ && t + delay < wake_) {
    wait_ = delay;
    wake_ = t + delay;
    wait_reason_ = WaitReason::kNetworkBack;
  }
}

Millis RetryMachine::deadline() const {
  return phase_ == Phase::kIdle ? Millis::max() : Millis(deadline_of(context_->policy, start_));
}

void RetryMachine::exclude(Millis span) {
  // The deadline is start_ + total_deadline: moving the start moves it.
  const std::uint64_t ms = span.count();
  start_ = start_ > UINT64_MAX - ms ? UINT64_MAX : start_ + ms;
}

}  // namespace stepback
