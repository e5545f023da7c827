#include "stepback/core/polling.hpp"

#include "stepback/core/backoff.hpp"

namespace stepback {

Millis polling_wait(const PollingPolicy& p, std::uint32_t n, Millis previous,
                    RandomSource& random) {
  Policy q;
  q.initial_delay = p.initial_delay;
  q.multiplier = p.multiplier;
  q.max_backoff = p.max_delay;
  q.jitter = p.jitter;
  q.jitter_range = min(Millis(1000), p.max_delay);
  // kDecorrelated draws from [initial, 3 x previous]; previous is never below initial.
  const Millis last = max(previous, p.initial_delay);
  return max(p.min_delay, backoff_wait(q, n, min(last, p.max_delay), random));
}

}  // namespace stepback
