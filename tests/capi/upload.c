/* Uploads FILE to URL (Google's resumable protocol) through the C API, its state kept in
 * STATE: killed and run again, it goes on with the same session. Prints each committed
 * offset; exits 0 on success, 1 on failure, 2 on bad arguments or files.
 *
 *   upload_c URL FILE STATE */
#include <stdio.h>

#include "stepback/stepback.h"

static void print_event(void* context, const stepback_event* e) {
  (void)context;
  if (e->kind == STEPBACK_EVENT_COMMITTED) {
    fprintf(stderr, "committed %llu\n", (unsigned long long)e->bytes);
  } else if (e->kind == STEPBACK_EVENT_ERROR) {
    fprintf(stderr, "exchange %u: %s\n", (unsigned)e->attempt, e->message);
  }
}

static stepback_stack g_stack;
static stepback_upload g_upload;

int main(int argc, char** argv) {
  stepback_options options;
  stepback_next next;
  stepback_result result;
  int64_t now;
  if (argc != 4) {
    fprintf(stderr, "usage: upload_c URL FILE STATE\n");
    return 2;
  }
  if (stepback_stack_init(&g_stack, sizeof g_stack, NULL) != STEPBACK_OK) {
    fprintf(stderr, "%s\n", stepback_stack_message(&g_stack));
    return 2;
  }
  stepback_options_default(&options);
  options.on_event = print_event;
  if (stepback_upload_init(&g_upload, sizeof g_upload, &g_stack, &options) != STEPBACK_OK ||
      stepback_upload_start_file(&g_upload, argv[1], argv[2], argv[3], 256 * 1024, NULL) !=
          STEPBACK_OK) {
    fprintf(stderr, "%s\n", stepback_upload_message(&g_upload));
    return 2;
  }
  now = stepback_monotonic_ms();
  while (stepback_upload_step(&g_upload, now, &next) != STEPBACK_NEXT_DONE) {
    stepback_poll_wait(&next, now);
    now = stepback_monotonic_ms();
  }
  stepback_upload_result(&g_upload, &result);
  fprintf(stderr, "upload: %s, HTTP %u, %llu bytes held\n", stepback_outcome_name(result.outcome),
          (unsigned)result.http_status, (unsigned long long)stepback_upload_committed(&g_upload));
  stepback_upload_destroy(&g_upload);
  stepback_stack_destroy(&g_stack);
  return result.outcome == STEPBACK_OUTCOME_SUCCESS ? 0 : 1;
}
