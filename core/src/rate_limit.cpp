#include "stepback/core/rate_limit.hpp"

namespace stepback {
namespace {

// The deepest debt kept, in thousandths of a byte: far beyond any transfer, far from overflow.
constexpr std::int64_t kDebtFloor = -(std::int64_t{1} << 62);

constexpr std::uint64_t clamp_rate(std::uint64_t v) { return v > kMaxRate ? kMaxRate : v; }

}  // namespace

RateLimiter::RateLimiter(std::uint64_t bytes_per_second, std::uint64_t burst)
    : rate_(clamp_rate(bytes_per_second)), burst_(burst == 0 ? 1 : clamp_rate(burst)) {}

std::int64_t RateLimiter::level_at(Millis now) const {
  if (!started_) return level_;  // Empty (or in debt) until the first available().
  // burst_ <= 2^40, so the cap stays below 2^50.
  const auto cap = static_cast<std::int64_t>(burst_ * 1000);
  if (now <= at_ || level_ >= cap) return level_ < cap ? level_ : cap;
  const std::uint64_t elapsed = (now - at_).count();
  // level_ >= kDebtFloor: the room is below 2^62 + 2^50, and elapsed x rate_ below it plus
  // rate_ (<= 2^40) when not full: no overflow either way.
  const auto room = static_cast<std::uint64_t>(cap - level_);
  if (elapsed > room / rate_) return cap;
  const std::int64_t level = level_ + static_cast<std::int64_t>(elapsed * rate_);
  return level < cap ? level : cap;
}

std::uint64_t RateLimiter::available(Millis now, std::uint64_t want) {
  if (rate_ == 0) return want;
  if (!started_) {
    started_ = true;
    at_ = now;
  }
  level_ = level_at(now);
  if (now > at_) at_ = now;
  if (level_ < 1000) return 0;
  const auto bytes = static_cast<std::uint64_t>(level_ / 1000);
  return bytes < want ? bytes : want;
}

void RateLimiter::take(std::uint64_t bytes) {
  if (rate_ == 0) return;
  const std::uint64_t limit = static_cast<std::uint64_t>(level_ - kDebtFloor) / 1000;
  level_ = bytes >= limit ? kDebtFloor : level_ - static_cast<std::int64_t>(bytes * 1000);
}

Millis RateLimiter::ready_at(Millis now, std::uint64_t bytes) const {
  if (rate_ == 0 || bytes == 0) return now;
  const std::uint64_t b = bytes < burst_ ? bytes : burst_;
  const auto need = static_cast<std::int64_t>(b * 1000);
  const std::int64_t level = level_at(now);
  if (level >= need) return now;
  const auto deficit = static_cast<std::uint64_t>(need - level);
  const Millis from = started_ && at_ > now ? at_ : now;
  return from + Millis((deficit + rate_ - 1) / rate_);
}

}  // namespace stepback
