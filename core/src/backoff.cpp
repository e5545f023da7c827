#include "stepback/core/backoff.hpp"

namespace stepback {

Millis jittered(const Policy& p, Millis t, Millis previous, RandomSource& random) {
  // valid(p) keeps every wait below 2^32 ms, so the draws below fit 32 bits.
  const auto t32 = static_cast<std::uint32_t>(t.count());
  switch (p.jitter) {
    case Jitter::kSeed:
      return min(t + Millis(uniform(random, static_cast<std::uint32_t>(p.jitter_range.count()))),
                 p.max_backoff);
    case Jitter::kFull:
      return Millis(uniform(random, t32));
    case Jitter::kEqual:
      return Millis(t32 / 2 + uniform(random, t32 - t32 / 2));
    case Jitter::kDecorrelated: {
      const std::uint64_t base = p.initial_delay.count();
      const std::uint64_t high = previous.count() * 3;  // previous <= 2^27, no overflow.
      if (high <= base) return min(Millis(base), p.max_backoff);
      const auto span = static_cast<std::uint32_t>(high - base);
      return min(Millis(base + uniform(random, span)), p.max_backoff);
    }
    case Jitter::kNone:
      break;
  }
  return t;
}

}  // namespace stepback
