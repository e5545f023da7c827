/* A firmware main loop in C around the retry machine alone (stepback::capi_core on
 * stepback::core: no profiles, no platform, no heap, no OS). The four platform_* functions at
 * the top are the port: a board replaces them with its tick counter, its seed, its radio or
 * modem call and its low-power sleep. The versions here simulate one on the host: the clock
 * moves only when the loop sleeps, and the send fails twice (the link drops, then the server
 * is busy) before it goes through. */
#include <stdint.h>
#include <stdio.h>

#include "stepback/stepback.h"

/* ---- The port ------------------------------------------------------------------------- */

/* Milliseconds since boot: on a board, SysTick_Handler adds one every millisecond. */
static int64_t g_millis = 0;
static int64_t platform_millis(void) { return g_millis; }

/* 64 bits that differ between devices (a unique ID mixed with a hardware RNG word), so a fleet
 * rebooted by one power cut does not retry in step. */
static uint64_t platform_seed(void) { return 0x5eed0000c0ffeeULL; }

/* One attempt of the firmware's request through its radio or modem: an HTTP status, or a
 * transport failure (then *status is 0). */
static stepback_failure platform_send(unsigned attempt, uint16_t* status) {
  *status = attempt == 1 ? 0 : attempt == 2 ? 503 : 200;
  return attempt == 1 ? STEPBACK_FAILURE_RESET : STEPBACK_FAILURE_NONE;
}

/* Sleeps until `at`: on a board, an RTC wake-up and __WFI(). The simulation moves the clock. */
static void platform_sleep_until(int64_t at) {
  if (at > g_millis) g_millis = at;
}

/* ---- The application ------------------------------------------------------------------ */

int main(void) {
  /* Static: no heap; the budget outlives every request of the device. */
  static stepback_budget budget;
  static stepback_retry retry;
  stepback_policy policy;
  stepback_next next;
  unsigned attempts = 0;

  /* A cellular device's numbers: 1 s doubling to a 64 s cap, equal jitter, 10 retries, all
   * within 10 minutes. */
  stepback_policy_default(&policy);
  policy.jitter = STEPBACK_JITTER_EQUAL;
  policy.max_backoff_ms = 64000;
  policy.max_retries = 10;
  policy.total_deadline_ms = 600000;
  if (stepback_budget_init(&budget, sizeof budget, 20, 100) != STEPBACK_OK ||
      stepback_retry_init(&retry, sizeof retry, &policy, platform_seed(), true, &budget) !=
          STEPBACK_OK) {
    printf("c_bare_metal: set-up failed\n");
    return 1;
  }

  stepback_retry_step(&retry, platform_millis(), &next);
  while (next.kind != STEPBACK_NEXT_DONE) {
    if (next.kind == STEPBACK_NEXT_SEND) {
      uint16_t status = 0;
      const stepback_failure failure = platform_send(++attempts, &status);
      if (failure != STEPBACK_FAILURE_NONE) {
        printf("attempt %u at %ld ms: transport failure %d\n", attempts, (long)platform_millis(),
               (int)failure);
      } else {
        printf("attempt %u at %ld ms: HTTP %u\n", attempts, (long)platform_millis(),
               (unsigned)status);
      }
      stepback_retry_report(&retry, platform_millis(), status, failure, STEPBACK_NEVER, &next);
      continue;
    }
    printf("waiting %ld ms\n", (long)(next.at_ms - platform_millis()));
    platform_sleep_until(next.at_ms);
    stepback_retry_step(&retry, platform_millis(), &next);
  }
  printf("c_bare_metal: %s after %u attempts\n", stepback_outcome_name(next.outcome), attempts);
  return next.outcome == STEPBACK_OUTCOME_SUCCESS && attempts == 3 ? 0 : 1;
}
