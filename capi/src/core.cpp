// The C API's freestanding part: names, policies, the retry budget and the retry machine,
// on stepback::core alone (no OS, no profile), for firmware.
#include <cstdint>

#include "policy.hpp"
#include "stepback/core/attempt.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/stepback.h"
#include "storage.hpp"

namespace {

using stepback::capi::construct;
using stepback::capi::place;
using stepback::capi::to_millis;

// The retry machine with what it refers to: its own copy of the policy, its generator and
// the context that ties them to the caller's budget. It points into itself, so the C storage
// must not be copied once it holds one (the header says so).
struct Retry {
  Retry(const stepback::Policy& p, std::uint64_t seed, stepback::RetryBudget* budget,
        bool idempotent)
      : policy(p),
        random(seed),
        context{policy, random, budget},
        machine(context, idempotent ? stepback::Idempotent::kYes : stepback::Idempotent::kNo) {}
  stepback::Policy policy;
  stepback::Xoshiro128 random;
  stepback::RetryContext context;
  stepback::RetryMachine machine;
};

static_assert(stepback::capi::footprint<Retry>() <= STEPBACK_RETRY_SIZE,
              "STEPBACK_RETRY_SIZE is too small for the retry machine");
static_assert(stepback::capi::footprint<stepback::RetryBudget>() <= STEPBACK_BUDGET_SIZE,
              "STEPBACK_BUDGET_SIZE is too small for the budget");

// The C enums mirror core's in value; these keep them so.
static_assert(static_cast<int>(stepback::Outcome::kOffline) == STEPBACK_OUTCOME_OFFLINE);
static_assert(static_cast<int>(stepback::Failure::kLocal) == STEPBACK_FAILURE_LOCAL);
static_assert(static_cast<int>(stepback::Jitter::kNone) == STEPBACK_JITTER_NONE);

stepback_next_kind answer(const stepback::Next& n, stepback_next* out) {
  stepback_next c{};
  c.fd = -1;
  c.outcome = static_cast<stepback_outcome>(n.outcome);
  switch (n.kind) {
    case stepback::Next::Kind::kSend:
      c.kind = STEPBACK_NEXT_SEND;
      break;
    case stepback::Next::Kind::kWaitUntil:
      c.kind = STEPBACK_NEXT_WAIT_UNTIL;
      c.at_ms = stepback::capi::from_millis(n.at);
      break;
    case stepback::Next::Kind::kDone:
      c.kind = STEPBACK_NEXT_DONE;
      break;
  }
  if (out != nullptr) *out = c;
  return c.kind;
}

}  // namespace

extern "C" {

const char* stepback_outcome_name(stepback_outcome outcome) {
  if (static_cast<unsigned>(outcome) > STEPBACK_OUTCOME_OFFLINE) return "unknown";
  return stepback::to_string(static_cast<stepback::Outcome>(outcome));
}

void stepback_policy_default(stepback_policy* policy) {
  if (policy != nullptr) stepback::capi::policy_to_c(stepback::Policy{}, policy);
}

bool stepback_policy_valid(const stepback_policy* policy) {
  stepback::Policy p;
  return policy != nullptr && stepback::capi::policy_from_c(*policy, &p);
}

stepback_status stepback_budget_init(stepback_budget* budget, size_t size, uint32_t max_tokens,
                                     uint32_t refund_milli) {
  const stepback::BudgetConfig config{max_tokens, refund_milli};
  if (!stepback::valid(config)) return STEPBACK_E_INVALID_ARGUMENT;
  stepback::RetryBudget* made = nullptr;
  return construct(budget, size, &made, config);
}

uint32_t stepback_budget_milli_tokens(const stepback_budget* budget) {
  return place<stepback::RetryBudget>(budget)->milli_tokens();
}

stepback_status stepback_retry_init(stepback_retry* retry, size_t size,
                                    const stepback_policy* policy, uint64_t seed, bool idempotent,
                                    stepback_budget* budget) {
  stepback::Policy p;
  if (policy == nullptr || !stepback::capi::policy_from_c(*policy, &p)) {
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  stepback::RetryBudget* b = budget != nullptr ? place<stepback::RetryBudget>(budget) : nullptr;
  Retry* made = nullptr;
  return construct(retry, size, &made, p, seed, b, idempotent);
}

stepback_next_kind stepback_retry_step(stepback_retry* retry, int64_t now_ms, stepback_next* next) {
  return answer(place<Retry>(retry)->machine.step(to_millis(now_ms)), next);
}

stepback_next_kind stepback_retry_report(stepback_retry* retry, int64_t now_ms,
                                         uint16_t http_status, stepback_failure failure,
                                         int64_t server_delay_ms, stepback_next* next) {
  stepback::AttemptResult result;
  if (failure != STEPBACK_FAILURE_NONE &&
      static_cast<unsigned>(failure) <= STEPBACK_FAILURE_LOCAL) {
    result = stepback::AttemptResult::transport(static_cast<stepback::Failure>(failure));
  } else if (server_delay_ms >= 0 && server_delay_ms != STEPBACK_NEVER) {
    result = stepback::AttemptResult::http(http_status, to_millis(server_delay_ms),
                                           stepback::DelaySource::kRetryAfter);
  } else {
    result = stepback::AttemptResult::http(http_status);
  }
  return answer(place<Retry>(retry)->machine.report(to_millis(now_ms), result), next);
}

void stepback_retry_network_available(stepback_retry* retry, int64_t now_ms) {
  place<Retry>(retry)->machine.network_available(to_millis(now_ms));
}

void stepback_retry_cancel(stepback_retry* retry, int64_t /*now_ms*/) {
  place<Retry>(retry)->machine.cancel();
}

uint32_t stepback_retry_retries(const stepback_retry* retry) {
  return place<Retry>(retry)->machine.retries();
}

}  // extern "C"
