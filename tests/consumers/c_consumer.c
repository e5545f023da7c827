/* The C consumer of tests/consumers: what a firmware or app developer writes against the
 * installed stepback/stepback.h alone, built by a C-only CMake project
 * (find_package(stepback COMPONENTS capi)) and by `cc $(pkg-config --cflags --libs stepback)`.
 * It runs the retry machine with a policy of its own, then one request to a loopback port
 * nothing listens on: each attempt is refused and retried, and the result says so. Prints
 * "c consumer: ok" when every answer was the expected one. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stepback/stepback.h"

static int failures;

static void check(int ok, const char* what) {
  if (!ok) {
    printf("c consumer: FAILED: %s\n", what);
    failures++;
  }
}

/* A loopback port that was free a moment ago: bound, read back, closed. */
static int closed_port(void) {
  struct sockaddr_in address;
  socklen_t length = sizeof address;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = -1;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && bind(fd, (struct sockaddr*)&address, sizeof address) == 0 &&
      getsockname(fd, (struct sockaddr*)&address, &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

static void retry_machine(void) {
  stepback_policy policy;
  stepback_retry retry;
  stepback_next next;
  int64_t now = 0;
  stepback_policy_default(&policy);
  policy.initial_delay_ms = 100;
  policy.max_backoff_ms = 400;
  policy.max_retries = 3;
  check(stepback_retry_init(&retry, sizeof retry - 8, &policy, 7, true, NULL) == STEPBACK_E_STORAGE,
        "small storage is refused");
  check(stepback_retry_init(&retry, sizeof retry, &policy, 7, true, NULL) == STEPBACK_OK,
        "retry init");
  while (stepback_retry_step(&retry, now, &next) != STEPBACK_NEXT_DONE) {
    if (next.kind == STEPBACK_NEXT_SEND) {
      stepback_retry_report(&retry, now, 503, STEPBACK_FAILURE_NONE, STEPBACK_NEVER, &next);
    } else {
      check(next.at_ms > now && next.at_ms - now <= 400 + 1000, "a wait within the cap");
      now = next.at_ms;
    }
  }
  check(next.outcome == STEPBACK_OUTCOME_RETRIES_EXHAUSTED, "503s exhaust the retries");
  check(stepback_retry_retries(&retry) == 3, "three retries");
  check(strcmp(stepback_outcome_name(next.outcome), "retries_exhausted") == 0, "outcome name");
  printf("retry machine: %s after %u retries, at %lld ms\n", stepback_outcome_name(next.outcome),
         stepback_retry_retries(&retry), (long long)now);
}

static stepback_stack stack;
static stepback_request request;

static void refused_request(void) {
  char url[64];
  stepback_policy policy;
  stepback_options options;
  stepback_next next;
  stepback_result result;
  int64_t now;
  int port = closed_port();
  check(port > 0, "a free loopback port");
  snprintf(url, sizeof url, "https://127.0.0.1:%d/file", port);
  stepback_policy_from_profile(&policy);
  policy.initial_delay_ms = 50;
  policy.max_backoff_ms = 100;
  policy.max_retries = 2;
  stepback_options_default(&options);
  options.policy = &policy;
  check(stepback_stack_init(&stack, sizeof stack, NULL) == STEPBACK_OK, "stack init");
  check(stepback_request_init(&request, sizeof request, &stack, &options) == STEPBACK_OK,
        "request init");
  check(stepback_request_start(&request, "GET", "ftp://x/", NULL, NULL) ==
            STEPBACK_E_INVALID_ARGUMENT,
        "an ftp URL is refused");
  check(stepback_request_start(&request, "GET", url, NULL, NULL) == STEPBACK_OK, "start");
  now = stepback_monotonic_ms();
  while (stepback_request_step(&request, now, &next) != STEPBACK_NEXT_DONE) {
    stepback_poll_wait(&next, now);
    now = stepback_monotonic_ms();
  }
  stepback_request_result(&request, &result);
  printf("request to %s (%s profile): %s, %u attempts, %s: %s\n", url, stepback_profile_name(),
         stepback_outcome_name(result.outcome), result.attempts, stepback_strerror(result.error),
         result.message);
  check(result.outcome == STEPBACK_OUTCOME_RETRIES_EXHAUSTED, "the refusals exhaust the retries");
  check(result.error == STEPBACK_E_CONNECT, "the last failure is a refused connection");
  check(result.attempts == 3, "three attempts");
  stepback_request_destroy(&request);
  stepback_stack_destroy(&stack);
}

int main(void) {
  retry_machine();
  refused_request();
  if (failures == 0) printf("c consumer: ok\n");
  return failures == 0 ? 0 : 1;
}
