/* The same HTTPS GET as bench/apk_lib.cpp, made through the C API (stepback/stepback.h), for
 * bench/apk_footprint.sh: what a Kotlin/JNI or C app's native library holds when it calls
 * stepback from C. One exported function, everything else hidden. */
#include <stddef.h>
#include <stdint.h>

#include "stepback/stepback.h"

static stepback_stack g_stack;
static stepback_request g_request;

struct out {
  unsigned char* data;
  size_t size;
  size_t used;
};

static bool write_at(void* context, uint64_t offset, const uint8_t* data, size_t size) {
  struct out* out = (struct out*)context;
  size_t i;
  if (offset + size > out->size) return false;
  for (i = 0; i < size; ++i) out->data[offset + i] = data[i];
  out->used = (size_t)(offset + size);
  return true;
}

static bool restart(void* context) {
  ((struct out*)context)->used = 0;
  return true;
}

/* Fetches `url` trusting the PEM file `ca_file` into `out`; returns the body size, or -1. */
__attribute__((visibility("default"))) long stepback_apk_fetch(const char* url, const char* ca_file,
                                                               unsigned char* out,
                                                               unsigned long out_size) {
  struct out body;
  stepback_sink sink;
  stepback_next next;
  stepback_result result;
  int64_t now;
  body.data = out;
  body.size = out_size;
  body.used = 0;
  sink.write = write_at;
  sink.restart = restart;
  sink.context = &body;
  if (stepback_stack_init(&g_stack, sizeof g_stack, ca_file) != STEPBACK_OK) return -1;
  if (stepback_request_init(&g_request, sizeof g_request, &g_stack, NULL) != STEPBACK_OK ||
      stepback_request_start(&g_request, "GET", url, NULL, &sink) != STEPBACK_OK) {
    return -1;
  }
  now = stepback_monotonic_ms();
  while (stepback_request_step(&g_request, now, &next) != STEPBACK_NEXT_DONE) {
    stepback_poll_wait(&next, now);
    now = stepback_monotonic_ms();
  }
  stepback_request_result(&g_request, &result);
  stepback_request_destroy(&g_request);
  stepback_stack_destroy(&g_stack);
  return result.outcome == STEPBACK_OUTCOME_SUCCESS ? (long)body.used : -1;
}
