// RetryBudget: a token bucket shared by the requests of one client, so a client whose
// server is broadly down stops multiplying the load (as gRPC's retry throttling does).
#ifndef STEPBACK_CORE_BUDGET_HPP_
#define STEPBACK_CORE_BUDGET_HPP_

#include <cstdint>

namespace stepback {

// Size of a retry budget: failures cost one token, successes refund a fraction of one.
struct BudgetConfig {
  std::uint32_t max_tokens = 10;     // Bucket size in tokens, 1..1000000.
  std::uint32_t refund_milli = 100;  // Thousandths of a token a success refunds, 1..1000.
};

// Whether `c` is usable.
constexpr bool valid(const BudgetConfig& c) {
  return c.max_tokens >= 1 && c.max_tokens <= 1000000 && c.refund_milli >= 1 &&
         c.refund_milli <= 1000;
}

// The bucket, in fixed-point thousandths of a token; starts full. Not thread-safe: one
// client's main loop owns it.
class RetryBudget {
 public:
  // A full bucket sized by `config` (which must be valid).
  explicit constexpr RetryBudget(const BudgetConfig& config)
      : max_milli_(config.max_tokens * 1000),
        refund_milli_(config.refund_milli),
        milli_tokens_(max_milli_) {}

  // Takes one token for a retryable failure (not below zero).
  constexpr void record_failure() {
    milli_tokens_ = milli_tokens_ > 1000 ? milli_tokens_ - 1000 : 0;
  }
  // Refunds part of a token for a success (not above the bucket size).
  constexpr void record_success() {
    milli_tokens_ =
        max_milli_ - milli_tokens_ > refund_milli_ ? milli_tokens_ + refund_milli_ : max_milli_;
  }
  // Whether a request whose own failures took `own_milli` thousandths may retry: the bucket,
  // those tokens given back, holds more than half its size. The budget is a safety valve for
  // a client's traffic as a whole; a request is never throttled by its own failures alone,
  // which its policy (retries, deadline) already bounds.
  constexpr bool allows_retry(std::uint64_t own_milli = 0) const {
    // milli_tokens_ + own_milli > half, without a 64-bit sum.
    const std::uint32_t half = max_milli_ / 2;
    return milli_tokens_ > half || own_milli > half - milli_tokens_;
  }
  // The tokens left, in thousandths.
  constexpr std::uint32_t milli_tokens() const { return milli_tokens_; }

 private:
  std::uint32_t max_milli_;
  std::uint32_t refund_milli_;
  std::uint32_t milli_tokens_;
};

}  // namespace stepback

#endif  // STEPBACK_CORE_BUDGET_HPP_
