#include "stepback/core/backoff.hpp"

#include "jitter.hpp"

namespace stepback {

std::uint32_t jitter_ms(const Policy& p, std::uint32_t t, std::uint32_t previous,
                        RandomSource& random) {
  // Every strategy is low + U[0, span]; valid(p) with t and previous at most max_backoff
  // keeps all of it below 2^32 ms (at most 3 days), so 32-bit sums are exact.
  std::uint32_t low = 0;
  std::uint32_t span = t;  // kFull.
  switch (p.jitter) {
    case Jitter::kSeed:
      low = t;
      span = static_cast<std::uint32_t>(p.jitter_range.count());
      break;
    case Jitter::kEqual:
      low = t / 2;
      span = t - low;
      break;
    case Jitter::kDecorrelated:
      // previous >= initial_delay always, so 3 * previous > low.
      low = static_cast<std::uint32_t>(p.initial_delay.count());
      span = previous * 3 - low;
      break;
    case Jitter::kNone:
      return t;
    default:  // kFull.
      break;
  }
  const std::uint32_t wait = low + uniform(random, span);
  const auto cap = static_cast<std::uint32_t>(p.max_backoff.count());
  return wait < cap ? wait : cap;
}

Millis jittered(const Policy& p, Millis t, Millis previous, RandomSource& random) {
  if (p.jitter == Jitter::kNone) return t;
  return Millis(jitter_ms(p, static_cast<std::uint32_t>(t.count()),
                          static_cast<std::uint32_t>(previous.count()), random));
}

}  // namespace stepback
