// Millis: the library's one unit of time, a count of milliseconds with saturating
// arithmetic. Durations and monotonic instants both use it.
#ifndef STEPBACK_CORE_MILLIS_HPP_
#define STEPBACK_CORE_MILLIS_HPP_

#include <cstdint>

namespace stepback {

// A duration, or an instant on a monotonic clock, in milliseconds; arithmetic saturates.
class Millis {
 public:
  constexpr Millis() = default;
  constexpr explicit Millis(std::uint64_t count) : count_(count) {}

  // Whole seconds as Millis, saturating at max().
  static constexpr Millis seconds(std::uint64_t s) {
    return Millis(s > kMaxCount / 1000 ? kMaxCount : s * 1000);
  }
  // The largest representable value; also "never" for instants.
  static constexpr Millis max() { return Millis(kMaxCount); }

  // The count of milliseconds.
  constexpr std::uint64_t count() const { return count_; }

  // Sum, saturating at max().
  friend constexpr Millis operator+(Millis a, Millis b) {
    return Millis(a.count_ > kMaxCount - b.count_ ? kMaxCount : a.count_ + b.count_);
  }
  // Difference, saturating at zero.
  friend constexpr Millis operator-(Millis a, Millis b) {
    return Millis(a.count_ > b.count_ ? a.count_ - b.count_ : 0);
  }
  friend constexpr bool operator==(Millis a, Millis b) { return a.count_ == b.count_; }
  friend constexpr bool operator!=(Millis a, Millis b) { return a.count_ != b.count_; }
  friend constexpr bool operator<(Millis a, Millis b) { return a.count_ < b.count_; }
  friend constexpr bool operator>(Millis a, Millis b) { return a.count_ > b.count_; }
  friend constexpr bool operator<=(Millis a, Millis b) { return a.count_ <= b.count_; }
  friend constexpr bool operator>=(Millis a, Millis b) { return a.count_ >= b.count_; }

 private:
  static constexpr std::uint64_t kMaxCount = ~std::uint64_t{0};
  std::uint64_t count_ = 0;
};

// The smaller of two values.
constexpr Millis min(Millis a, Millis b) { return a < b ? a : b; }
// The larger of two values.
constexpr Millis max(Millis a, Millis b) { return a < b ? b : a; }

}  // namespace stepback

#endif  // STEPBACK_CORE_MILLIS_HPP_
