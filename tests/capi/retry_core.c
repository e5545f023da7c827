/* The retry machine through the C API, linked with stepback::capi_core alone (no platform,
 * no HTTPS): waits grow as the policy says, a 200 ends it, the retry limit ends it, a budget
 * shared by two machines runs out, bad storage and policies are refused. Exits non-zero with
 * a line on the first check that fails. */
#include <stdio.h>
#include <string.h>

#include "stepback/stepback.h"

static int failures = 0;
#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                \
    }                                                            \
  } while (0)

int main(void) {
  stepback_policy policy;
  stepback_retry retry;
  stepback_next next;
  stepback_budget budget;
  int64_t now = 1000;
  int attempts = 0;

  stepback_policy_default(&policy);
  CHECK(policy.initial_delay_ms == 1000 && policy.max_retries == 6 &&
        stepback_policy_valid(&policy));
  policy.jitter = STEPBACK_JITTER_NONE;
  policy.max_retries = 3;

  /* Storage: too small (also one word under the stated size, where the machine itself would
   * fit: the rule is the header's size, the same on every target), misaligned. */
  CHECK(stepback_retry_init(&retry, 8, &policy, 1, true, NULL) == STEPBACK_E_STORAGE);
  CHECK(stepback_retry_init(&retry, sizeof retry - 8, &policy, 1, true, NULL) ==
        STEPBACK_E_STORAGE);
  CHECK(stepback_retry_init((stepback_retry*)((char*)&retry + 1), sizeof retry - 8, &policy, 1,
                            true, NULL) == STEPBACK_E_STORAGE);
  policy.multiplier = 1;
  CHECK(!stepback_policy_valid(&policy));
  CHECK(stepback_retry_init(&retry, sizeof retry, &policy, 1, true, NULL) ==
        STEPBACK_E_INVALID_ARGUMENT);
  policy.multiplier = 2;

  /* 503, 503, then 200: waits of 1 s and 2 s (no jitter), then success. */
  CHECK(stepback_retry_init(&retry, sizeof retry, &policy, 7, true, NULL) == STEPBACK_OK);
  CHECK(stepback_retry_step(&retry, now, &next) == STEPBACK_NEXT_SEND);
  CHECK(stepback_retry_report(&retry, now, 503, STEPBACK_FAILURE_NONE, STEPBACK_NEVER, &next) ==
        STEPBACK_NEXT_WAIT_UNTIL);
  CHECK(next.at_ms == now + 1000);
  now = next.at_ms;
  CHECK(stepback_retry_step(&retry, now, &next) == STEPBACK_NEXT_SEND);
  CHECK(stepback_retry_report(&retry, now, 0, STEPBACK_FAILURE_CONNECT, STEPBACK_NEVER, &next) ==
        STEPBACK_NEXT_WAIT_UNTIL);
  CHECK(next.at_ms == now + 2000);
  now = next.at_ms;
  CHECK(stepback_retry_step(&retry, now, &next) == STEPBACK_NEXT_SEND);
  CHECK(stepback_retry_report(&retry, now, 200, STEPBACK_FAILURE_NONE, STEPBACK_NEVER, &next) ==
        STEPBACK_NEXT_DONE);
  CHECK(next.outcome == STEPBACK_OUTCOME_SUCCESS && stepback_retry_retries(&retry) == 2);

  /* A Retry-After of 5 s is honoured (the jittered backoff comes after it); a 404 is terminal. */
  CHECK(stepback_retry_init(&retry, sizeof retry, &policy, 7, true, NULL) == STEPBACK_OK);
  (void)stepback_retry_step(&retry, now, &next);
  (void)stepback_retry_report(&retry, now, 429, STEPBACK_FAILURE_NONE, 5000, &next);
  CHECK(next.kind == STEPBACK_NEXT_WAIT_UNTIL && next.at_ms == now + 5000 + 1000);
  now = next.at_ms;
  (void)stepback_retry_step(&retry, now, &next);
  (void)stepback_retry_report(&retry, now, 404, STEPBACK_FAILURE_NONE, STEPBACK_NEVER, &next);
  CHECK(next.kind == STEPBACK_NEXT_DONE && next.outcome == STEPBACK_OUTCOME_TERMINAL_STATUS);

  /* Always failing: 1 + max_retries attempts, then retries_exhausted. */
  CHECK(stepback_retry_init(&retry, sizeof retry, &policy, 7, true, NULL) == STEPBACK_OK);
  while (stepback_retry_step(&retry, now, &next) != STEPBACK_NEXT_DONE) {
    if (next.kind == STEPBACK_NEXT_SEND) {
      ++attempts;
      (void)stepback_retry_report(&retry, now, 0, STEPBACK_FAILURE_TIMEOUT, STEPBACK_NEVER, &next);
    }
    if (next.kind == STEPBACK_NEXT_WAIT_UNTIL) now = next.at_ms;
  }
  CHECK(attempts == 4 && next.outcome == STEPBACK_OUTCOME_RETRIES_EXHAUSTED);

  /* A not-idempotent request that timed out (may have been processed) is not repeated. */
  CHECK(stepback_retry_init(&retry, sizeof retry, &policy, 7, false, NULL) == STEPBACK_OK);
  (void)stepback_retry_step(&retry, now, &next);
  (void)stepback_retry_report(&retry, now, 0, STEPBACK_FAILURE_TIMEOUT, STEPBACK_NEVER, &next);
  CHECK(next.kind == STEPBACK_NEXT_DONE && next.outcome == STEPBACK_OUTCOME_NOT_IDEMPOTENT);

  /* A budget of 2 tokens: the first failure of another machine finds it at half. */
  CHECK(stepback_budget_init(&budget, sizeof budget, 0, 100) == STEPBACK_E_INVALID_ARGUMENT);
  CHECK(stepback_budget_init(&budget, sizeof budget, 2, 100) == STEPBACK_OK);
  CHECK(stepback_retry_init(&retry, sizeof retry, &policy, 7, true, &budget) == STEPBACK_OK);
  (void)stepback_retry_step(&retry, now, &next);
  (void)stepback_retry_report(&retry, now, 503, STEPBACK_FAILURE_NONE, STEPBACK_NEVER, &next);
  CHECK(stepback_budget_milli_tokens(&budget) == 1000);
  CHECK(stepback_retry_init(&retry, sizeof retry, &policy, 7, true, &budget) == STEPBACK_OK);
  (void)stepback_retry_step(&retry, now, &next);
  (void)stepback_retry_report(&retry, now, 503, STEPBACK_FAILURE_NONE, STEPBACK_NEVER, &next);
  CHECK(next.kind == STEPBACK_NEXT_DONE && next.outcome == STEPBACK_OUTCOME_BUDGET_EXHAUSTED);

  CHECK(strcmp(stepback_outcome_name(STEPBACK_OUTCOME_BUDGET_EXHAUSTED), "budget_exhausted") == 0);
  CHECK(strcmp(stepback_strerror(STEPBACK_E_TLS_VERIFY), "tls_verify") == 0);
  CHECK(strcmp(stepback_strerror(STEPBACK_E_STORAGE), "storage") == 0);
  if (failures == 0) printf("retry_core: ok\n");
  return failures == 0 ? 0 : 1;
}
