// The backoff formula as pure functions: the exponential term and each jitter strategy.
#ifndef STEPBACK_CORE_BACKOFF_HPP_
#define STEPBACK_CORE_BACKOFF_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"

namespace stepback {

// min(initial_delay * multiplier^n, max_backoff) for any n, without overflow; needs valid(p).
constexpr Millis exponential(const Policy& p, std::uint32_t n) {
  std::uint64_t t = p.initial_delay.count();
  const std::uint64_t cap = p.max_backoff.count();
  // Stops once t reaches the cap: at most log2(cap) rounds whatever n is.
  for (std::uint32_t i = 0; i < n && t < cap; ++i) t *= p.multiplier;
  return Millis(t < cap ? t : cap);
}

// The wait drawn by p.jitter from t = exponential(p, n); `previous` is the last wait
// (initial_delay before the first), used only by kDecorrelated. Needs valid(p), and t and
// previous at most p.max_backoff (as exponential() and every wait are).
Millis jittered(const Policy& p, Millis t, Millis previous, RandomSource& random);

// The wait before retry n: jittered(p, exponential(p, n), previous, random).
inline Millis backoff_wait(const Policy& p, std::uint32_t n, Millis previous,
                           RandomSource& random) {
  return jittered(p, exponential(p, n), previous, random);
}

}  // namespace stepback

#endif  // STEPBACK_CORE_BACKOFF_HPP_
