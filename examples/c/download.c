/* Downloads URL into FILE with checkpoints, in C: killed at any moment and run again, it goes
 * on from the last checkpoint (Range and If-Range, so another version of the file is never
 * spliced on); progress and retries go to stderr.
 *
 *   download_c URL FILE [CA_FILE_OR_DIR]
 *
 * The body goes to FILE.part and its checkpoint record to FILE.part.state; FILE.part becomes
 * FILE when the download succeeds. Without CA_FILE_OR_DIR the system's CA store is used.
 * Exits 0 on success, 1 on failure (FILE.part and its record kept when a checkpoint was
 * stored), 2 on bad arguments or files. */
#include <stdio.h>

#include "stepback/stepback.h"

static void print_event(void* context, const stepback_event* e) {
  (void)context;
  if (e->kind == STEPBACK_EVENT_PROGRESS && e->total != STEPBACK_UNKNOWN) {
    fprintf(stderr, "%llu of %llu bytes\n", (unsigned long long)e->bytes,
            (unsigned long long)e->total);
  } else if (e->kind == STEPBACK_EVENT_RESUME) {
    fprintf(stderr, "going on from byte %llu\n", (unsigned long long)e->bytes);
  } else if (e->kind == STEPBACK_EVENT_ERROR) {
    fprintf(stderr, "attempt %u: %s\n", (unsigned)e->attempt, e->message);
  } else if (e->kind == STEPBACK_EVENT_WAIT) {
    fprintf(stderr, "retrying in %lld ms\n", (long long)e->wait_ms);
  }
}

/* Static: the TLS arena, the buffers and the files' paths and record are tens of KiB. */
static stepback_stack g_stack;
static stepback_download g_download;

int main(int argc, char** argv) {
  stepback_options options;
  stepback_next next;
  stepback_result result;
  int64_t now;
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: download_c URL FILE [CA_FILE_OR_DIR]\n");
    return 2;
  }
  if (stepback_stack_init(&g_stack, sizeof g_stack, argc > 3 ? argv[3] : NULL) != STEPBACK_OK) {
    fprintf(stderr, "%s\n", stepback_stack_message(&g_stack));
    return 2;
  }
  /* The profile's policy, timeouts, redirects, checkpoints and buffers; our events. */
  stepback_options_default(&options);
  options.on_event = print_event;
  if (stepback_download_init(&g_download, sizeof g_download, &g_stack, &options) != STEPBACK_OK) {
    fprintf(stderr, "cannot set up the download\n");
    return 2;
  }
  /* FILE.part and FILE.part.state: a fresh start, or where an earlier run stopped. */
  if (stepback_download_start_file(&g_download, argv[1], argv[2], NULL) != STEPBACK_OK) {
    fprintf(stderr, "%s\n", stepback_download_message(&g_download));
    return 2;
  }

  /* The main loop: step, then sleep in poll() until the socket is ready or the time comes. */
  now = stepback_monotonic_ms();
  while (stepback_download_step(&g_download, now, &next) != STEPBACK_NEXT_DONE) {
    stepback_poll_wait(&next, now);
    now = stepback_monotonic_ms();
  }
  stepback_download_result(&g_download, &result);
  fprintf(stderr, "%s: %s, HTTP %u, %llu bytes%s%s\n", argv[2],
          stepback_outcome_name(result.outcome), (unsigned)result.http_status,
          (unsigned long long)stepback_download_delivered(&g_download),
          result.message[0] != '\0' ? ": " : "", result.message);
  stepback_download_destroy(&g_download);
  stepback_stack_destroy(&g_stack);
  return result.outcome == STEPBACK_OUTCOME_SUCCESS ? 0 : 1;
}
