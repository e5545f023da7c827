/* Compiled (not run) as C99, C11 and C++17 with every warning an error: the header must
 * stand alone on <stddef.h>, <stdint.h> and <stdbool.h>, and its objects keep the sizes and
 * alignment it states. */
#include "stepback/stepback.h"

/* A negative array size fails the build: C99 has no static_assert. */
#define CHECK(name, cond) typedef char check_##name[(cond) ? 1 : -1]

CHECK(retry_size, sizeof(stepback_retry) == STEPBACK_RETRY_SIZE);
CHECK(budget_size, sizeof(stepback_budget) == STEPBACK_BUDGET_SIZE);
CHECK(stack_size, sizeof(stepback_stack) == STEPBACK_STACK_SIZE);
CHECK(request_size, sizeof(stepback_request) == STEPBACK_REQUEST_SIZE);
CHECK(download_size, sizeof(stepback_download) == STEPBACK_DOWNLOAD_SIZE);
CHECK(upload_size, sizeof(stepback_upload) == STEPBACK_UPLOAD_SIZE);
CHECK(ok_is_zero, STEPBACK_OK == 0);

/* Uses of each kind of declaration, so that a prototype that does not parse as written is
 * caught here and not by the first binding. */
int header_check_use(void);
int header_check_use(void) {
  stepback_policy policy;
  stepback_next next;
  stepback_retry retry;
  stepback_policy_default(&policy);
  policy.jitter = STEPBACK_JITTER_FULL;
  if (stepback_retry_init(&retry, sizeof retry, &policy, 42u, true, NULL) != STEPBACK_OK) {
    return 1;
  }
  while (stepback_retry_step(&retry, 0, &next) == STEPBACK_NEXT_SEND) {
    (void)stepback_retry_report(&retry, 0, 503, STEPBACK_FAILURE_NONE, STEPBACK_NEVER, &next);
  }
  return (int)next.kind + (int)sizeof(stepback_event) +
         (stepback_strerror(STEPBACK_E_STORAGE)[0] == 's');
}
