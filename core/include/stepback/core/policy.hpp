// Policy: what a retry loop may do, as a constexpr value checked by valid().
#ifndef STEPBACK_CORE_POLICY_HPP_
#define STEPBACK_CORE_POLICY_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"

namespace stepback {

// How a retry's wait is drawn from t = min(initial_delay * multiplier^n, max_backoff).
enum class Jitter : std::uint8_t {
  kSeed,   // min(initial * multiplier^n + U[0, jitter_range], max_backoff): the documented formula.
  kFull,   // U[0, t].
  kEqual,  // t/2 + U[0, t - t/2].
  kDecorrelated,  // min(max_backoff, U[initial_delay, 3 * previous wait]).
  kNone,          // t.
};

// Whether requests that may already have been processed by the server are re-sent.
enum class IdempotencyRule : std::uint8_t {
  kSafeOnly,  // Only idempotent requests; others only when provably not processed.
  kRetryAll,  // The caller opts in: every retryable failure is retried.
};

// A set of HTTP status codes in [400, 655]; codes outside that range are never members.
class StatusSet {
 public:
  // The documented retryable set: 408, 429 and 500-599.
  static constexpr StatusSet defaults() {
    return StatusSet().add(408).add(429).add_range(500, 599);
  }

  // This set plus `code` (ignored outside [400, 655]).
  constexpr StatusSet add(std::uint16_t code) const { return add_range(code, code); }
  // This set plus every code in [first, last].
  constexpr StatusSet add_range(std::uint16_t first, std::uint16_t last) const {
    StatusSet s = *this;
    for (std::uint32_t c = first; c <= last; ++c) {
      if (c >= kFirst && c < kFirst + 256) {
        s.bits_[(c - kFirst) / 32] |= std::uint32_t{1} << ((c - kFirst) % 32);
      }
    }
    return s;
  }
  // Whether `code` is in the set.
  constexpr bool contains(std::uint16_t code) const {
    const std::uint32_t i = static_cast<std::uint32_t>(code) - kFirst;  // Wraps for code < 400.
    return i < 256 && ((bits_[i / 32] >> (i % 32)) & 1U) != 0;
  }

 private:
  static constexpr std::uint32_t kFirst = 400;
  std::uint32_t bits_[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // 32-bit words: cheap shifts on 32-bit cores.
};

// Everything the retry machine needs to decide; build one with a constexpr lambda and
// check it with static_assert(valid(p)).
struct Policy {
  Millis initial_delay{1000};       // t for retry 0.
  std::uint32_t multiplier = 2;     // Growth of t per retry, 2..16.
  Jitter jitter = Jitter::kSeed;    // How each wait is drawn from t.
  Millis jitter_range{1000};        // Upper bound of the additive draw of kSeed, and
                                    // of the delay after network_available().
  Millis max_backoff{32000};        // The cap on any backoff wait ("maximum_backoff").
  std::uint32_t max_retries = 6;    // Retries after the first attempt.
  Millis total_deadline{0};         // From the first step; 0 means no deadline.
  bool honor_server_delay = true;   // Whether Retry-After / RetryInfo delay a retry (then the
                                    // jittered wait follows).
  Millis max_server_delay{300000};  // A longer server delay ends the retries.
  StatusSet retryable = StatusSet::defaults();  // HTTP statuses that are retried.
  IdempotencyRule idempotency = IdempotencyRule::kSafeOnly;
};

// Hard limits that keep every computation in range; valid() enforces them.
inline constexpr Millis kMaxBackoffLimit = Millis::seconds(std::uint64_t{24} * 3600);
inline constexpr Millis kMaxDeadlineLimit = Millis::seconds(std::uint64_t{400} * 24 * 3600);

// Whether `p` is usable: positive initial delay no larger than max_backoff, multiplier
// in 2..16, waits and jitter within a day, and a deadline (if any) that allows one retry
// and ends within 400 days.
constexpr bool valid(const Policy& p) {
  return p.initial_delay.count() >= 1 && p.initial_delay <= p.max_backoff &&
         p.max_backoff <= kMaxBackoffLimit && p.multiplier >= 2 && p.multiplier <= 16 &&
         p.jitter_range <= kMaxBackoffLimit && p.max_server_delay <= kMaxBackoffLimit &&
         static_cast<std::uint8_t>(p.jitter) <= static_cast<std::uint8_t>(Jitter::kNone) &&
         p.total_deadline <= kMaxDeadlineLimit &&
         (p.total_deadline.count() == 0 || p.total_deadline >= p.initial_delay);
}

// The name of `j` ("seed", "full", "equal", "decorrelated", "none").
const char* to_string(Jitter j);

}  // namespace stepback

#endif  // STEPBACK_CORE_POLICY_HPP_
