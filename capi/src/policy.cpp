#include "policy.hpp"

#include <cstdint>

namespace stepback::capi {

void policy_to_c(const Policy& p, stepback_policy* out) {
  stepback_policy c{};
  c.initial_delay_ms = static_cast<std::uint32_t>(p.initial_delay.count());
  c.multiplier = p.multiplier;
  c.jitter = static_cast<stepback_jitter>(p.jitter);
  c.jitter_range_ms = static_cast<std::uint32_t>(p.jitter_range.count());
  c.max_backoff_ms = static_cast<std::uint32_t>(p.max_backoff.count());
  c.max_retries = p.max_retries;
  c.total_deadline_ms = p.total_deadline.count();
  c.honor_server_delay = p.honor_server_delay;
  c.max_server_delay_ms = static_cast<std::uint32_t>(p.max_server_delay.count());
  c.retry_all = p.idempotency == IdempotencyRule::kRetryAll;
  *out = c;
}

bool policy_from_c(const stepback_policy& c, Policy* out) {
  if (static_cast<unsigned>(c.jitter) > STEPBACK_JITTER_NONE) return false;
  Policy p;
  p.initial_delay = Millis(c.initial_delay_ms);
  p.multiplier = c.multiplier;
  p.jitter = static_cast<Jitter>(c.jitter);
  p.jitter_range = Millis(c.jitter_range_ms);
  p.max_backoff = Millis(c.max_backoff_ms);
  p.max_retries = c.max_retries;
  p.total_deadline = Millis(c.total_deadline_ms);
  p.honor_server_delay = c.honor_server_delay;
  p.max_server_delay = Millis(c.max_server_delay_ms);
  p.idempotency = c.retry_all ? IdempotencyRule::kRetryAll : IdempotencyRule::kSafeOnly;
  for (std::uint16_t code : c.extra_retryable) {
    if (code == 0) continue;
    if (code < 400 || code > 655) return false;
    p.retryable = p.retryable.add(code);
  }
  if (!valid(p)) return false;
  *out = p;
  return true;
}

}  // namespace stepback::capi
