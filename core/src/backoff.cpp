#include "stepback/core/backoff.hpp"

namespace stepback {

Millis jittered(const Policy& p, Millis t, Millis previous, RandomSource& random) {
  // Every strategy is low + U[0, span]; valid(p) keeps all of it below 2^32 ms.
  const auto t32 = static_cast<std::uint32_t>(t.count());
  std::uint32_t low = 0;
  std::uint32_t span = t32;  // kFull.
  switch (p.jitter) {
    case Jitter::kSeed:
      low = t32;
      span = static_cast<std::uint32_t>(p.jitter_range.count());
      break;
    case Jitter::kFull:
      break;
    case Jitter::kEqual:
      low = t32 / 2;
      span = t32 - low;
      break;
    case Jitter::kDecorrelated: {
      // previous >= initial_delay always, so 3 * previous > low.
      low = static_cast<std::uint32_t>(p.initial_delay.count());
      span = static_cast<std::uint32_t>(previous.count()) * 3 - low;
      break;
    }
    case Jitter::kNone:
      return t;
  }
  return min(Millis(std::uint64_t{low} + uniform(random, span)), p.max_backoff);
}

}  // namespace stepback
