// RateLimiter: a token bucket that paces the bytes of a transfer to a rate, answering "how
// many may pass now" and "when will n be allowed" so that a step-driven loop sleeps until
// then instead of polling. Fixed point in thousandths of a byte: a rate of R bytes a second
// adds exactly R thousandths each millisecond, so no rounding drifts over a long transfer.
#ifndef STEPBACK_CORE_RATE_LIMIT_HPP_
#define STEPBACK_CORE_RATE_LIMIT_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"

namespace stepback {

// The highest rate a RateLimiter takes, in bytes a second (1 TiB/s).
inline constexpr std::uint64_t kMaxRate = std::uint64_t{1} << 40;

// The burst the transfers give a rate of `bytes_per_second`: an eighth of a second of it (at
// least a byte), enough that a loop that wakes late loses nothing, small enough that no
// second carries much more than the rate.
constexpr std::uint64_t default_burst(std::uint64_t bytes_per_second) {
  return bytes_per_second / 8 > 0 ? bytes_per_second / 8 : 1;
}

// A token bucket of bytes; value type, no heap, not thread-safe (one main loop owns it).
// It starts empty at its first available() call, so that no interval from then on carries
// more than rate x interval + burst bytes, and the first bytes pass a quantum later.
class RateLimiter {
 public:
  // No limit: available() grants whatever is asked.
  constexpr RateLimiter() = default;
  // At most `bytes_per_second` (0: no limit; clamped to kMaxRate), holding up to `burst`
  // bytes (at least 1; clamped to kMaxRate) when the bytes are not taken as they accrue.
  RateLimiter(std::uint64_t bytes_per_second, std::uint64_t burst);

  // Whether a rate is set.
  bool limited() const { return rate_ != 0; }
  // The rate in bytes a second (0: none) and the bucket's size in bytes.
  std::uint64_t rate() const { return rate_; }
  std::uint64_t burst() const { return burst_; }

  // How many of `want` bytes may pass at `now` (monotonic): 0 while the bucket holds less
  // than a byte or is in debt; `want` without a limit.
  std::uint64_t available(Millis now, std::uint64_t want);
  // Takes `bytes` that passed. More than available() granted puts the bucket in debt, which
  // later bytes pay back first (the rate holds even when a transport moved a little more).
  void take(std::uint64_t bytes);
  // The earliest instant at or after `now` at which `bytes` (at most burst()) are available;
  // `now` without a limit.
  Millis ready_at(Millis now, std::uint64_t bytes) const;

 private:
  // The bucket's level at `now`, in thousandths of a byte.
  std::int64_t level_at(Millis now) const;

  std::uint64_t rate_ = 0;   // Bytes a second = thousandths of a byte a millisecond.
  std::uint64_t burst_ = 0;  // Bytes.
  std::int64_t level_ = 0;   // Thousandths of a byte at `at_`; negative: debt.
  Millis at_{};
  bool started_ = false;
};

}  // namespace stepback

#endif  // STEPBACK_CORE_RATE_LIMIT_HPP_
