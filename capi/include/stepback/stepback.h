/* stepback's C API: the retrying HTTPS client for C firmware and for Python (ctypes),
 * Kotlin/Java (JNI) and Swift, with the C++ library's main-loop contract: the app asks an
 * object what to do next (step), waits on the descriptor or until the time it is told, and
 * steps again. Nothing here allocates, blocks or starts a thread; every object lives in
 * storage the caller provides (static, a member, the stack when small).
 *
 * Two libraries implement it:
 *   stepback::capi_core  the retry machine, policies, budgets, names (freestanding like
 *                        stepback::core: a Cortex-M links it with no OS);
 *   stepback::capi       everything else (HTTPS stack, requests, downloads, uploads,
 *                        clocks, poll), on POSIX; it links capi_core.
 * The functions of each are marked [core] or [full] below.
 *
 * Building a C program against an installed stepback (the libraries need no C++ runtime, so
 * a C compiler links them):
 *   pkg-config (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig):
 *     cc -std=c99 app.c $(pkg-config --cflags --libs stepback)
 *   CMake, even in a C-only project (stepback_DIR=PREFIX/lib/cmake/stepback):
 *     find_package(stepback CONFIG REQUIRED COMPONENTS capi)   (or capi_core alone)
 *     target_link_libraries(app PRIVATE stepback::capi)
 * #include "stepback/stepback.h" is all the source needs.
 *
 * A download to a file that goes on after a kill (examples/c/download.c is the whole
 * program):
 *
 *   static stepback_stack stack;        // Static: the TLS arena is in it (128 KiB).
 *   static stepback_download download;  // Static: buffers, paths, the checkpoint record.
 *   stepback_next next;
 *   if (stepback_stack_init(&stack, sizeof stack, NULL) != STEPBACK_OK) fail(...);
 *   if (stepback_download_init(&download, sizeof download, &stack, NULL) != STEPBACK_OK) ...
 *   if (stepback_download_start_file(&download, url, "fw.bin", NULL) != STEPBACK_OK)
 *     fail(stepback_download_message(&download));
 *   int64_t now = stepback_monotonic_ms();
 *   while (stepback_download_step(&download, now, &next) != STEPBACK_NEXT_DONE) {
 *     stepback_poll_wait(&next, now);   // Or register next.fd with your own event loop.
 *     now = stepback_monotonic_ms();
 *   }
 *   stepback_result result;
 *   stepback_download_result(&download, &result);  // result.outcome == STEPBACK_OUTCOME_SUCCESS
 *   stepback_download_destroy(&download);
 *
 * Sizes: the STEPBACK_<X>_SIZE values are upper bounds for 64-bit and 32-bit targets and
 * either device profile (the library checks them when it is compiled); the full layer's
 * objects hold their buffers and paths, hence tens to hundreds of KiB each.
 *
 * Rules that hold for every object:
 *   - Storage: each object is a struct of opaque words, STEPBACK_<X>_SIZE bytes aligned to
 *     STEPBACK_ALIGN (8); its init function takes the storage's size (pass sizeof): a size
 *     under STEPBACK_<X>_SIZE, or storage not so aligned, gets STEPBACK_E_STORAGE and
 *     nothing is written, so a binding that allocates the bytes itself (ctypes, JNI) with a
 *     stale size fails instead of corrupting its heap. After init the object points into
 *     itself: never copy or move its bytes; destroy it where it is.
 *   - Lifetime: init, then any calls, then destroy (where the object has a destroy function).
 *     Anything an object is given by pointer (the stack, a budget, callbacks' contexts,
 *     headers, strings named as such below) must outlive the object, or the request, as
 *     said. Strings the functions only read during the call (URLs, paths) are copied.
 *   - Threads: one object is used by one thread at a time (its main loop); objects used by
 *     different threads share nothing but the stack, whose TLS arena is the process's: init
 *     one stack per process, before the threads start. Callbacks run synchronously inside
 *     the step (or cancel, pause) call that causes them, on that thread; they must not call
 *     back into the same object.
 *   - Time: *_ms arguments named now_ms are monotonic milliseconds from one clock
 *     (stepback_monotonic_ms(), or the firmware's tick counter); STEPBACK_NEVER is "no
 *     time". A clock that goes back is tolerated (the wait under way restarts).
 *   - Errors: functions that can fail return stepback_status (STEPBACK_OK is 0); objects
 *     keep words on the last failure (stepback_*_message). No C++ exception ever crosses
 *     this boundary.
 */
#ifndef STEPBACK_STEPBACK_H_
#define STEPBACK_STEPBACK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's API; it grows when a declaration changes. */
#define STEPBACK_C_API_VERSION 1

/* The alignment every object's storage needs (its opaque words are uint64_t). */
#define STEPBACK_ALIGN 8
/* An instant that never comes ("wait without a time limit"), and "no server delay". */
#define STEPBACK_NEVER INT64_MAX
/* Unknown sizes (a body whose length was not stated). */
#define STEPBACK_UNKNOWN UINT64_MAX

/* ---------------------------------------------------------------------------------------
 * Status, outcomes, names                                                          [core]
 * ------------------------------------------------------------------------------------- */

/* Why a call failed, or why a transfer's last attempt did. 1-22 are the HTTPS layer's
 * statuses; 64 and up are this layer's. */
typedef enum stepback_status {
  STEPBACK_OK = 0,
  STEPBACK_E_ERROR = 1,              /* An unclassified failure. */
  STEPBACK_E_WOULD_BLOCK = 2,        /* Nothing can happen now (internal; not returned). */
  STEPBACK_E_CLOSED = 3,             /* The peer closed the connection in an orderly way. */
  STEPBACK_E_INVALID_ARGUMENT = 4,   /* A value is malformed or missing (URL, header, policy). */
  STEPBACK_E_BUFFER_TOO_SMALL = 5,   /* A buffer cannot hold what has to be written. */
  STEPBACK_E_DNS = 6,                /* The name lookup failed. */
  STEPBACK_E_CONNECT = 7,            /* Refused or unreachable on every address. */
  STEPBACK_E_CONNECT_TIMEOUT = 8,    /* No connection within the connect timeout. */
  STEPBACK_E_TLS_HANDSHAKE = 9,      /* The handshake failed (not verification). */
  STEPBACK_E_TLS_VERIFY = 10,        /* The certificate chain, validity or host did not verify. */
  STEPBACK_E_RESET = 11,             /* The connection was reset or cut mid-response. */
  STEPBACK_E_TIMEOUT = 12,           /* No progress within the read timeout. */
  STEPBACK_E_PROTOCOL = 13,          /* The response is not valid HTTP/1.1. */
  STEPBACK_E_HEADERS_TOO_LARGE = 14, /* The response head does not fit its buffer. */
  STEPBACK_E_BODY_TOO_LARGE = 15,    /* The body exceeds its limit. */
  STEPBACK_E_RESTART_REFUSED = 16,   /* The body had to start over and the sink refused. */
  STEPBACK_E_TIME_LIMIT = 17,        /* The request's overall limit (max_time_ms) passed. */
  STEPBACK_E_BODY_SOURCE = 18,       /* The request body source ended before its size. */
  STEPBACK_E_TLS_REFUSED = 19,       /* The handshake failed in a way a retry cannot heal. */
  STEPBACK_E_INTEGRITY = 20,         /* The body's CRC32C or MD5 differs from the server's. */
  STEPBACK_E_REDIRECT = 21,          /* A redirect not followed (loop, too many, https->http). */
  STEPBACK_E_PROXY_AUTH = 22,        /* The proxy answered CONNECT with 407. */
  STEPBACK_E_STORAGE = 64,           /* The object's storage is too small or misaligned. */
  STEPBACK_E_STATE = 65,             /* Called out of order (step before start, init twice). */
  STEPBACK_E_FILE = 66,              /* A file could not be opened, read, written or renamed. */
  STEPBACK_E_RECORD = 67             /* A checkpoint or state record was refused (damaged,
                                        foreign, another URL's, another file's). */
} stepback_status;

/* Lower-case words for `status` ("ok", "tls_verify", "storage", ...); never NULL, static. */
const char* stepback_strerror(stepback_status status);

/* How a retry loop (a request, a download, an upload) ended. */
typedef enum stepback_outcome {
  STEPBACK_OUTCOME_SUCCESS = 0,
  STEPBACK_OUTCOME_RETRIES_EXHAUSTED = 1,     /* The last allowed retry failed too. */
  STEPBACK_OUTCOME_DEADLINE = 2,              /* The next wait would pass the total deadline. */
  STEPBACK_OUTCOME_TERMINAL_STATUS = 3,       /* An HTTP status that is not retried. */
  STEPBACK_OUTCOME_TERMINAL_FAILURE = 4,      /* A failure that is not retried (verify, file). */
  STEPBACK_OUTCOME_NOT_IDEMPOTENT = 5,        /* Retryable, but maybe processed and not safe. */
  STEPBACK_OUTCOME_BUDGET_EXHAUSTED = 6,      /* The shared retry budget is below half. */
  STEPBACK_OUTCOME_SERVER_DELAY_TOO_LONG = 7, /* Retry-After beyond max_server_delay_ms. */
  STEPBACK_OUTCOME_CANCELLED = 8,             /* Cancelled by the app. */
  STEPBACK_OUTCOME_OFFLINE = 9                /* No usable network within the offline limit. */
} stepback_outcome;

/* Lower-case name of `outcome` ("success", "retries_exhausted", ...); never NULL, static. */
const char* stepback_outcome_name(stepback_outcome outcome);

/* Why an attempt produced no HTTP response (for stepback_retry_report). */
typedef enum stepback_failure {
  STEPBACK_FAILURE_NONE = 0,            /* The attempt produced an HTTP status. */
  STEPBACK_FAILURE_DNS = 1,             /* Retryable. */
  STEPBACK_FAILURE_CONNECT = 2,         /* Retryable. */
  STEPBACK_FAILURE_CONNECT_TIMEOUT = 3, /* Retryable. */
  STEPBACK_FAILURE_TLS_HANDSHAKE = 4,   /* Retryable. */
  STEPBACK_FAILURE_TLS_VERIFY = 5,      /* Terminal. */
  STEPBACK_FAILURE_RESET = 6,           /* Retryable; the server may have acted. */
  STEPBACK_FAILURE_TIMEOUT = 7,         /* Retryable; the server may have acted. */
  STEPBACK_FAILURE_PROTOCOL = 8,        /* Terminal. */
  STEPBACK_FAILURE_TOO_LARGE = 9,       /* Terminal. */
  STEPBACK_FAILURE_TLS_REFUSED = 10,    /* Terminal. */
  STEPBACK_FAILURE_INTEGRITY = 11,      /* Terminal. */
  STEPBACK_FAILURE_TIME_LIMIT = 12,     /* Terminal. */
  STEPBACK_FAILURE_LOCAL = 13           /* Terminal: this side failed. */
} stepback_failure;

/* ---------------------------------------------------------------------------------------
 * What to do next: the main-loop contract                                    [core, full]
 * ------------------------------------------------------------------------------------- */

typedef enum stepback_next_kind {
  STEPBACK_NEXT_SEND = 0,       /* Retry machine only: perform an attempt now, then report. */
  STEPBACK_NEXT_WAIT_IO = 1,    /* Wait until `fd` is ready as want_read / want_write say,
                                   or until at_ms at the latest; then step again. */
  STEPBACK_NEXT_WAIT_UNTIL = 2, /* Sleep until at_ms (STEPBACK_NEVER: until the app acts,
                                   e.g. resumes a paused transfer); then step again. */
  STEPBACK_NEXT_DONE = 3        /* Finished with `outcome`; see the object's result. */
} stepback_next_kind;

/* A step's answer. Waking early (a signal, another descriptor) is always allowed: step
 * again, and the object answers the same wait or moves on. */
typedef struct stepback_next {
  stepback_next_kind kind;
  int fd;                   /* WAIT_IO: the descriptor (>= 0); else -1. */
  bool want_read;           /* WAIT_IO: wait for readable (POLLIN). */
  bool want_write;          /* WAIT_IO: wait for writable (POLLOUT). */
  int64_t at_ms;            /* WAIT_IO, WAIT_UNTIL: when to step again at the latest (monotonic). */
  stepback_outcome outcome; /* DONE: how it ended. */
} stepback_next;

/* [full] Monotonic milliseconds that count a device's suspend (CLOCK_BOOTTIME on Linux and
 * Android, so a wait that spans a sleep of the device ends on time): the clock every now_ms
 * of the full layer expects. */
int64_t stepback_monotonic_ms(void);
/* [full] Wall-clock milliseconds since the Unix epoch. */
int64_t stepback_wall_ms(void);
/* [full] Sleeps in poll(2) until next->fd is ready for what next asks or next->at_ms passes
 * (now_ms is the time the step was made at), and no longer than a minute; returns at once
 * for SEND and DONE. True when the descriptor reported readiness. For apps that have no
 * event loop of their own. */
bool stepback_poll_wait(const stepback_next* next, int64_t now_ms);

/* ---------------------------------------------------------------------------------------
 * Retry policy                                                                 [core, full]
 * ------------------------------------------------------------------------------------- */

/* How a retry's wait is drawn from t = min(initial_delay * multiplier^n, max_backoff). */
typedef enum stepback_jitter {
  STEPBACK_JITTER_SEED = 0,         /* min(t + U[0, jitter_range], max_backoff). */
  STEPBACK_JITTER_FULL = 1,         /* U[0, t]. */
  STEPBACK_JITTER_EQUAL = 2,        /* t/2 + U[0, t - t/2]. */
  STEPBACK_JITTER_DECORRELATED = 3, /* min(max_backoff, U[initial_delay, 3 * previous]). */
  STEPBACK_JITTER_NONE = 4          /* t. */
} stepback_jitter;

/* Extra retryable HTTP statuses a policy may name, besides 408, 429 and 500-599. */
#define STEPBACK_POLICY_EXTRA_STATUSES 8

/* What a retry loop may do. Fill it with stepback_policy_default() (or, in the full layer,
 * stepback_policy_from_profile()) and change fields. Limits: 1 <= initial_delay_ms <=
 * max_backoff_ms <= 86400000; 2 <= multiplier <= 16; jitter_range_ms and
 * max_server_delay_ms <= 86400000; total_deadline_ms 0 (none) or in [initial_delay_ms,
 * 400 days]. */
typedef struct stepback_policy {
  uint32_t initial_delay_ms;    /* t for retry 0. Default 1000. */
  uint32_t multiplier;          /* Growth of t per retry. Default 2. */
  stepback_jitter jitter;       /* Default STEPBACK_JITTER_SEED. */
  uint32_t jitter_range_ms;     /* SEED's additive draw, and the wait after network_available.
                                   Default 1000. */
  uint32_t max_backoff_ms;      /* The cap on any backoff wait. Default 32000. */
  uint32_t max_retries;         /* Retries after the first attempt. Default 6. */
  uint64_t total_deadline_ms;   /* From the first step; 0: none. Default 0. */
  bool honor_server_delay;      /* Retry-After (RetryInfo) delays the retry: that long, then
                                   the jittered wait. Default true. */
  uint32_t max_server_delay_ms; /* A longer server delay ends the loop. Default 300000. */
  bool retry_all;               /* Retry requests that may have been processed even when not
                                   idempotent (the caller opts in). Default false. */
  /* More retryable statuses in [400, 655], 0 for none. Default all 0. */
  uint16_t extra_retryable[STEPBACK_POLICY_EXTRA_STATUSES];
} stepback_policy;

/* [core] The library's documented defaults (the seeds' values above; no device profile). */
void stepback_policy_default(stepback_policy* policy);
/* [core] Whether `policy` is within the limits above. */
bool stepback_policy_valid(const stepback_policy* policy);
/* [full] The retry policy of the device profile this library was built with (desktop or
 * mobile), which the full layer's objects use when given no policy. */
void stepback_policy_from_profile(stepback_policy* policy);
/* [full] The name of that profile ("desktop", "mobile"); static. */
const char* stepback_profile_name(void);

/* ---------------------------------------------------------------------------------------
 * Retry budget and retry machine                                                    [core]
 * ------------------------------------------------------------------------------------- */

#define STEPBACK_BUDGET_SIZE 16
/* A token bucket shared by the retry machines of one client, so a client whose server is
 * broadly down stops multiplying the load: a failure costs a token, a success refunds a
 * fraction; a machine retries only while the bucket is over half full (its own failures
 * given back). Trivially destroyed (no destroy function). */
typedef struct stepback_budget {
  uint64_t opaque[STEPBACK_BUDGET_SIZE / 8];
} stepback_budget;

/* A full bucket of `max_tokens` (1..1000000) of which a success refunds `refund_milli`
 * thousandths (1..1000); 10 and 100 are the defaults. STEPBACK_E_INVALID_ARGUMENT out of
 * range, STEPBACK_E_STORAGE when size < STEPBACK_BUDGET_SIZE or misaligned. */
stepback_status stepback_budget_init(stepback_budget* budget, size_t size, uint32_t max_tokens,
                                     uint32_t refund_milli);
/* Tokens left, in thousandths. */
uint32_t stepback_budget_milli_tokens(const stepback_budget* budget);

#define STEPBACK_RETRY_SIZE 256
/* The retry loop of one operation the app performs itself (any transport: a UART modem, a
 * CoAP exchange, an HTTP client of its own): step() says send or wait, report() takes what
 * the attempt gave. It holds a copy of the policy and its own jitter generator. Trivially
 * destroyed (no destroy function). */
typedef struct stepback_retry {
  uint64_t opaque[STEPBACK_RETRY_SIZE / 8];
} stepback_retry;

/* A loop under `policy` (copied) drawing its jitter from `seed` (the app's own entropy: a
 * hardware RNG, a unique ID mixed with the time; a fleet with equal seeds retries in step).
 * `idempotent`: whether the operation may be repeated after it may have reached the server.
 * `budget` (may be NULL) must outlive the machine. STEPBACK_E_INVALID_ARGUMENT for an
 * invalid policy, STEPBACK_E_STORAGE when size < STEPBACK_RETRY_SIZE or misaligned. */
stepback_status stepback_retry_init(stepback_retry* retry, size_t size,
                                    const stepback_policy* policy, uint64_t seed, bool idempotent,
                                    stepback_budget* budget);
/* What to do at now_ms: SEND (perform an attempt, then report it), WAIT_UNTIL (sleep until
 * next->at_ms, then step), or DONE. The first call starts the deadline; SEND repeats until
 * report(). Fills *next and returns its kind. */
stepback_next_kind stepback_retry_step(stepback_retry* retry, int64_t now_ms, stepback_next* next);
/* The result of the attempt the last SEND asked for: an HTTP status (failure NONE), or a
 * failure kind (http_status 0); server_delay_ms is the server's Retry-After in ms, or
 * STEPBACK_NEVER when it gave none. Answers as step(now_ms) would. A report with no attempt
 * outstanding changes nothing. */
stepback_next_kind stepback_retry_report(stepback_retry* retry, int64_t now_ms,
                                         uint16_t http_status, stepback_failure failure,
                                         int64_t server_delay_ms, stepback_next* next);
/* Connectivity returned: a backoff wait (not a server-requested one) shrinks to
 * U[0, jitter_range] from now_ms. Step again after it. */
void stepback_retry_network_available(stepback_retry* retry, int64_t now_ms);
/* Ends the loop with STEPBACK_OUTCOME_CANCELLED unless it has ended. */
void stepback_retry_cancel(stepback_retry* retry, int64_t now_ms);
/* Retries started so far (attempts - 1 once the first attempt started). */
uint32_t stepback_retry_retries(const stepback_retry* retry);

/* ---------------------------------------------------------------------------------------
 * Callbacks, events, results                                                        [full]
 * ------------------------------------------------------------------------------------- */

/* A request field. Both strings must outlive the object they are given to. */
typedef struct stepback_header {
  const char* name;
  const char* value;
} stepback_header;

/* A request body: read() copies up to `size` bytes from byte `offset` of the body into
 * `buffer` and returns how many (0 only past the end). Any attempt may read any offset
 * again, so the body never has to sit in memory. `context` is the app's. */
typedef struct stepback_source {
  size_t (*read)(void* context, uint64_t offset, uint8_t* buffer, size_t size);
  void* context;
  uint64_t size; /* The body's length in bytes. */
} stepback_source;

/* Where a response body goes: write() takes `size` bytes at byte `offset` of the body
 * (offsets only grow, except after restart()); false stops the transfer (STEPBACK_E_ERROR,
 * a local failure). restart() says the body starts over at offset 0 (another version of
 * the object, or a server that ignored the range); false refuses, and the transfer ends with
 * STEPBACK_E_RESTART_REFUSED rather than splice two versions. NULL restart: refuse. */
typedef struct stepback_sink {
  bool (*write)(void* context, uint64_t offset, const uint8_t* data, size_t size);
  bool (*restart)(void* context);
  void* context;
} stepback_sink;

typedef enum stepback_event_kind {
  STEPBACK_EVENT_ATTEMPT = 0,    /* An attempt (an upload's session POST, chunk PUT, query)
                                    begins: attempt; upload chunk: bytes = first byte,
                                    total = its size. */
  STEPBACK_EVENT_RESPONSE = 1,   /* A response head arrived: http_status, message = reason. */
  STEPBACK_EVENT_ERROR = 2,      /* An attempt failed: failure, message. */
  STEPBACK_EVENT_WAIT = 3,       /* A wait of wait_ms begins (backoff, Retry-After, offline). */
  STEPBACK_EVENT_RESUME = 4,     /* A download goes on from byte `bytes`. */
  STEPBACK_EVENT_PROGRESS = 5,   /* Body bytes moved: bytes (so far), total, rate. */
  STEPBACK_EVENT_REDIRECT = 6,   /* A redirect is followed: http_status, message = new URL. */
  STEPBACK_EVENT_COMMITTED = 7,  /* Upload: the server holds `bytes`. */
  STEPBACK_EVENT_CHECKPOINT = 8, /* Download: a checkpoint counting `bytes` was stored. */
  STEPBACK_EVENT_EXPIRED = 9,    /* Upload: the session expired (404/410), holding `bytes`. */
  STEPBACK_EVENT_INTEGRITY = 10, /* The body's digests were checked: message says how. */
  STEPBACK_EVENT_DONE = 11,      /* The loop ended: outcome, http_status. */
  STEPBACK_EVENT_OTHER = 12      /* Anything else (a pre-signed URL refreshed, ...): message. */
} stepback_event_kind;

/* Something that happened, for progress lines and logs. Valid only during the callback
 * (copy what you keep; `message` included). */
typedef struct stepback_event {
  stepback_event_kind kind;
  uint32_t attempt;         /* 1-based attempt (upload: exchange) number. */
  uint16_t http_status;     /* RESPONSE, REDIRECT, DONE. */
  stepback_failure failure; /* ERROR. */
  stepback_outcome outcome; /* DONE. */
  uint64_t bytes;           /* PROGRESS, RESUME, COMMITTED, CHECKPOINT, EXPIRED, ATTEMPT. */
  uint64_t total;           /* PROGRESS: the body's length, STEPBACK_UNKNOWN when not known. */
  uint64_t rate;            /* PROGRESS: bytes a second lately. */
  int64_t wait_ms;          /* WAIT: its length. */
  int64_t at_ms;            /* When it happened (monotonic). */
  const char* message;      /* Words ("" when none); never NULL. */
} stepback_event;

typedef void (*stepback_event_fn)(void* context, const stepback_event* event);

/* Whether a request may be re-sent after it may have reached the server. */
typedef enum stepback_idempotency {
  STEPBACK_IDEMPOTENT_BY_METHOD = 0, /* GET, HEAD, PUT, DELETE, OPTIONS, TRACE yes; POST no. */
  STEPBACK_IDEMPOTENT_STRICT = 1,    /* Safe methods, or requests with a precondition. */
  STEPBACK_IDEMPOTENT_YES = 2,
  STEPBACK_IDEMPOTENT_NO = 3
} stepback_idempotency;

/* The most header fields one request, download or upload takes. */
#define STEPBACK_MAX_HEADERS 32

/* How a request, download or upload runs. stepback_options_default() fills it from the
 * device profile (policy, timeouts, redirects and buffers come from the profile always);
 * change the fields you need. The object copies the struct at init; the pointers in it
 * (policy is copied too) must outlive the object. */
typedef struct stepback_options {
  const stepback_policy* policy;    /* NULL: the profile's. Copied at init. */
  uint32_t max_redirects;           /* Redirects followed (0-255); the profile's by default.
                                       An upload follows none whatever this says. */
  stepback_idempotency idempotency; /* Default BY_METHOD. */
  int64_t max_time_ms;              /* Overall limit, waits included; 0: none (default).
                                       Requests and downloads; an upload has none. */
  uint64_t max_rate;                /* Bytes a second at most (download, upload); 0: no limit. */
  const char* user_agent;           /* NULL: none. */
  const stepback_header* headers;   /* Sent with every request; at most STEPBACK_MAX_HEADERS. */
  size_t header_count;
  stepback_event_fn on_event; /* NULL: no events. */
  void* event_context;
} stepback_options;

/* The profile's options: no events, no headers, no limits. */
void stepback_options_default(stepback_options* options);

/* How a request, download or upload ended; valid once a step answered DONE. */
typedef struct stepback_result {
  stepback_outcome outcome;
  uint16_t http_status;  /* The last HTTP status, 0 if none arrived. */
  stepback_status error; /* The last failure, or why it stopped; STEPBACK_OK when none. */
  uint32_t attempts;     /* Attempts (upload: exchanges) made. */
  const char* message;   /* Words on the last failure ("" when none); valid until the
                            object's next start or destroy. */
} stepback_result;

/* What a transfer waits for, for OS schedulers (WorkManager, BGTaskScheduler): when it next
 * needs to run, and what network. */
typedef enum stepback_run_state {
  STEPBACK_RUN_RUNNING = 0,         /* Working: keep stepping. */
  STEPBACK_RUN_WAITING = 1,         /* Nothing to do until run_at_ms. */
  STEPBACK_RUN_WAITING_NETWORK = 2, /* Until a usable network comes (or run_at_ms). */
  STEPBACK_RUN_PAUSED = 3,          /* Until the app resumes it. */
  STEPBACK_RUN_DONE = 4,
  /* Finished for now without losing anything: its retries ran out on a failure a later run
   * may get past, and it kept its checkpoint (a download) or session (an upload). Start it
   * again from that record at run_at_ms (the profile's deferral: a delay and a random
   * spread). */
  STEPBACK_RUN_DEFERRED = 5
} stepback_run_state;

typedef struct stepback_run_hint {
  stepback_run_state state;
  int64_t run_at_ms;   /* Monotonic; STEPBACK_NEVER when there is no time. */
  bool unmetered;      /* Needs an unmetered network. */
  bool not_roaming;    /* Needs a network that is not roaming. */
  uint64_t bytes_left; /* STEPBACK_UNKNOWN when not known. */
} stepback_run_hint;

/* ---------------------------------------------------------------------------------------
 * The HTTPS stack: TLS arena, trust anchors, resolver, connector                    [full]
 * ------------------------------------------------------------------------------------- */

#define STEPBACK_STACK_SIZE 131072 /* 128 KiB */
/* What every HTTPS app sets up once. Large (the TLS arena mbedTLS allocates from is in it):
 * make it a static or global, never a local. Once per process, before any thread uses it;
 * every request, download and upload of the process may share it (each from one thread). */
typedef struct stepback_stack {
  uint64_t opaque[STEPBACK_STACK_SIZE / 8];
} stepback_stack;

/* Sets up TLS with the trust anchors of `ca` (a PEM or DER bundle file, or a directory
 * hashed by `openssl rehash`; NULL: the system's store), the wall clock and the resolver
 * (c-ares, which reads resolv.conf; on Android the system's resolver: android_res_nquery on
 * API 29+, below it getaddrinfo on two worker threads started here; call it outside the
 * loop). STEPBACK_OK, or what failed with words in
 * stepback_stack_message(). Unless it answered STEPBACK_E_STORAGE (then nothing was placed
 * in the storage: no message, no destroy), destroy it when done, also after a failure; the
 * storage may then be given to init again. */
stepback_status stepback_stack_init(stepback_stack* stack, size_t size, const char* ca);
/* Words on what init refused ("" when nothing). */
const char* stepback_stack_message(const stepback_stack* stack);
/* Ends it, after every object that uses it is destroyed. */
void stepback_stack_destroy(stepback_stack* stack);

/* ---------------------------------------------------------------------------------------
 * One HTTP(S) request with retries                                                  [full]
 * ------------------------------------------------------------------------------------- */

#define STEPBACK_REQUEST_SIZE 98304 /* 96 KiB */
/* One request at a time (start again for the next; a kept-alive connection is reused).
 * Holds its buffers (tens of KiB): static or heap-allocated by the app, not a small stack. */
typedef struct stepback_request {
  uint64_t opaque[STEPBACK_REQUEST_SIZE / 8];
} stepback_request;

/* A request object going through `stack` (which must outlive it), configured by `options`
 * (NULL: stepback_options_default()). STEPBACK_E_INVALID_ARGUMENT for bad options (an
 * invalid policy, too many headers), STEPBACK_E_STORAGE when size < STEPBACK_REQUEST_SIZE or
 * misaligned. */
stepback_status stepback_request_init(stepback_request* request, size_t size, stepback_stack* stack,
                                      const stepback_options* options);
/* Prepares `method` (any token: "GET", "POST", ...) to `url` (http:// or https://; copied),
 * with `body` (NULL: none; copied, its callbacks' context must outlive the request) and the
 * response body to `response` (NULL: discarded; copied likewise). Ends a request under way.
 * STEPBACK_E_INVALID_ARGUMENT (bad URL, method or header) or STEPBACK_E_BUFFER_TOO_SMALL,
 * with words in stepback_request_message(). */
stepback_status stepback_request_start(stepback_request* request, const char* method,
                                       const char* url, const stepback_source* body,
                                       const stepback_sink* response);
/* Advances the request at now_ms; fills *next, returns its kind (never SEND). Bounded work,
 * never blocks. Before a successful start: DONE. */
stepback_next_kind stepback_request_step(stepback_request* request, int64_t now_ms,
                                         stepback_next* next);
/* Ends the request (STEPBACK_OUTCOME_CANCELLED) and closes its connection. */
void stepback_request_cancel(stepback_request* request);
/* Connectivity returned or the network changed: old connections are dropped, a backoff wait
 * shrinks. Step again after it. */
void stepback_request_network_available(stepback_request* request, int64_t now_ms);
/* The result; meaningful after DONE. */
void stepback_request_result(const stepback_request* request, stepback_result* result);
/* The first response field named `name` (case-insensitive) of the last response, copied
 * NUL-terminated into `out` (of `out_size` bytes); its length, or -1 when there is none or it
 * does not fit. */
int32_t stepback_request_header(const stepback_request* request, const char* name, char* out,
                                size_t out_size);
/* Words on why start() refused, or the result's message. */
const char* stepback_request_message(const stepback_request* request);
void stepback_request_destroy(stepback_request* request);

/* ---------------------------------------------------------------------------------------
 * A download whose position outlives the process                                   [full]
 * ------------------------------------------------------------------------------------- */

/* The largest checkpoint record (stepback_checkpoint_sink). */
#define STEPBACK_RECORD_MAX 4546

#define STEPBACK_DOWNLOAD_SIZE 196608 /* 192 KiB */
/* One GET with retries, Range resumes and checkpoints. Large (buffers, paths, the record):
 * static or heap-allocated by the app. One download at a time per object. */
typedef struct stepback_download {
  uint64_t opaque[STEPBACK_DOWNLOAD_SIZE / 8];
} stepback_download;

/* Receives a checkpoint record (`size` bytes at `record`, valid during the call) that counts
 * the first `delivered` bytes of the body: make those bytes durable in your sink first
 * (flush, fsync, flash write done), then store the record (atomically: a new file renamed
 * over the old, an A/B flash slot). Return false when that failed; the download goes on
 * and tries again at the next checkpoint. */
typedef struct stepback_checkpoint_sink {
  bool (*save)(void* context, const uint8_t* record, size_t size, uint64_t delivered);
  void* context;
} stepback_checkpoint_sink;

/* A download going through `stack` (which must outlive it), configured by `options` (NULL:
 * defaults). Errors as stepback_request_init. */
stepback_status stepback_download_init(stepback_download* download, size_t size,
                                       stepback_stack* stack, const stepback_options* options);
/* Opt-in, off by default; before stepback_download_start_file: keeps the TLS session in
 * PATH.tls-session (mode 0600, beside the record, written at a checkpoint when it changed), so
 * that a later process going on with this download resumes the TLS session too (its GET may
 * then ride in TLS 1.3 early data) instead of a full handshake. The file holds a resumption
 * secret (docs/https.md, "Sessions kept on disk"); it is removed with the record when the
 * download succeeds. STEPBACK_E_STATE after a start. */
stepback_status stepback_download_keep_tls_session(stepback_download* download);
/* Starts a download of `url` into the file `path` (both copied): the body goes to PATH.part
 * and its checkpoint record to `state_path` (NULL: PATH.part.state); when the download
 * succeeds PATH.part is renamed over PATH and the record removed. If an earlier process left
 * a record of the same URL, the download goes on from it (the kept bytes are read back and
 * checked against the record's digests first; stepback_download_resumed_from() says where).
 * STEPBACK_E_RECORD (a foreign, damaged or other URL's record), STEPBACK_E_FILE (a file
 * cannot be opened or cut) or STEPBACK_E_INVALID_ARGUMENT, with words in
 * stepback_download_message(); nothing was changed on disk then. */
stepback_status stepback_download_start_file(stepback_download* download, const char* url,
                                             const char* path, const char* state_path);
/* Starts a download of `url` (copied) into `sink` (copied; its context must outlive the
 * download), handing checkpoint records to `checkpoints` (NULL: none). With `record`
 * (`record_size` bytes, read during the call) a record an earlier checkpoint gave, it goes
 * on after the bytes that record counts, which the sink must still hold; NULL: from byte 0.
 * STEPBACK_E_RECORD for a record that is damaged, foreign or another URL's. */
stepback_status stepback_download_start_sink(stepback_download* download, const char* url,
                                             const stepback_sink* sink,
                                             const stepback_checkpoint_sink* checkpoints,
                                             const uint8_t* record, size_t record_size);
/* Advances the download at now_ms (a checkpoint when one is due); fills *next, returns its
 * kind (never SEND). A download to a file finishes its files on DONE: PATH.part renamed on
 * success, kept with its record after a failure that stored a checkpoint, removed otherwise;
 * when that fails the result says STEPBACK_E_FILE with outcome TERMINAL_FAILURE. */
stepback_next_kind stepback_download_step(stepback_download* download, int64_t now_ms,
                                          stepback_next* next);
/* Stops at now_ms with a checkpoint, closing the connection; steps answer WAIT_UNTIL
 * STEPBACK_NEVER until resume. The process may also end here and a later one go on. */
void stepback_download_pause(stepback_download* download, int64_t now_ms);
/* Goes on with a paused download (a new request for the bytes after those held). */
stepback_status stepback_download_resume(stepback_download* download, int64_t now_ms);
bool stepback_download_paused(const stepback_download* download);
/* Ends the download (STEPBACK_OUTCOME_CANCELLED) after a last checkpoint; step once more to
 * see DONE (and, for a file, keep its files for a later run). */
void stepback_download_cancel(stepback_download* download, int64_t now_ms);
void stepback_download_network_available(stepback_download* download, int64_t now_ms);
/* What the download waits for after a step answered *next. */
void stepback_download_run_hint(const stepback_download* download, const stepback_next* next,
                                stepback_run_hint* hint);
void stepback_download_result(const stepback_download* download, stepback_result* result);
/* Bytes of the body the sink holds (resumed ones included), and where this start went on
 * from (0: from the beginning). */
uint64_t stepback_download_delivered(const stepback_download* download);
uint64_t stepback_download_resumed_from(const stepback_download* download);
/* Words on the last refusal or failure ("" when none). */
const char* stepback_download_message(const stepback_download* download);
/* Ends it (closing a part file, keeping it on disk as it stands). */
void stepback_download_destroy(stepback_download* download);

/* ---------------------------------------------------------------------------------------
 * A resumable upload (Google's protocol: Cloud Storage, Firebase Storage)           [full]
 * ------------------------------------------------------------------------------------- */

#define STEPBACK_UPLOAD_SIZE 147456 /* 144 KiB */
/* One session: a POST opens it, chunks go as PUTs, a failure asks the server what it holds
 * and goes on from there. Large: static or heap-allocated by the app. */
typedef struct stepback_upload {
  uint64_t opaque[STEPBACK_UPLOAD_SIZE / 8];
} stepback_upload;

/* An upload going through `stack`, configured by `options` (NULL: defaults). Errors as
 * stepback_request_init. */
stepback_status stepback_upload_init(stepback_upload* upload, size_t size, stepback_stack* stack,
                                     const stepback_options* options);
/* Starts uploading the file `path` to the session initiation `url` (both copied; e.g.
 * https://storage.googleapis.com/upload/storage/v1/b/B/o?uploadType=resumable&name=N), in
 * chunks of `chunk_size` bytes (a positive multiple of 262144; 0: 8 MiB), with
 * X-Upload-Content-Type `content_type` (NULL: none). With `state_path` (NULL: none), the
 * session and the bytes the server holds are saved there as the upload goes (replaced
 * atomically); a later process that starts the same file, URL and state path goes on with
 * the same session, and the file is removed when the upload succeeds. STEPBACK_E_FILE (the
 * file cannot be read), STEPBACK_E_RECORD (a state file of another upload, URL or size) or
 * STEPBACK_E_INVALID_ARGUMENT, with words in stepback_upload_message(). */
stepback_status stepback_upload_start_file(stepback_upload* upload, const char* url,
                                           const char* path, const char* state_path,
                                           uint64_t chunk_size, const char* content_type);
/* The same with the body read from `body` (copied; its context must outlive the upload). */
stepback_status stepback_upload_start_source(stepback_upload* upload, const char* url,
                                             const stepback_source* body, const char* state_path,
                                             uint64_t chunk_size, const char* content_type);
/* Advances the upload at now_ms (saving the state file when it changed); fills *next and
 * returns its kind (never SEND). On DONE the state file is removed after a success (or an
 * expired session), else saved for a later run. */
stepback_next_kind stepback_upload_step(stepback_upload* upload, int64_t now_ms,
                                        stepback_next* next);
/* Stops at now_ms keeping the session (and saving the state file); steps answer WAIT_UNTIL
 * STEPBACK_NEVER until resume. */
void stepback_upload_pause(stepback_upload* upload, int64_t now_ms);
void stepback_upload_resume(stepback_upload* upload, int64_t now_ms);
bool stepback_upload_paused(const stepback_upload* upload);
/* Ends the upload (STEPBACK_OUTCOME_CANCELLED); the session stays open on the server and
 * the state file is kept. Step once more to see DONE. */
void stepback_upload_cancel(stepback_upload* upload, int64_t now_ms);
void stepback_upload_network_available(stepback_upload* upload, int64_t now_ms);
void stepback_upload_run_hint(const stepback_upload* upload, const stepback_next* next,
                              stepback_run_hint* hint);
void stepback_upload_result(const stepback_upload* upload, stepback_result* result);
/* Bytes the server has said it holds, and the session URI copied NUL-terminated into `out`
 * (its length, or -1 when there is none yet or it does not fit). */
uint64_t stepback_upload_committed(const stepback_upload* upload);
int32_t stepback_upload_session(const stepback_upload* upload, char* out, size_t out_size);
/* Words on the last refusal or failure ("" when none). */
const char* stepback_upload_message(const stepback_upload* upload);
void stepback_upload_destroy(stepback_upload* upload);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STEPBACK_STEPBACK_H_ */
