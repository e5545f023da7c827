// The RAM of one whole HTTPS download, measured: bench/download_ram.sh runs it against a
// loopback nginx, built once with the default TLS buffers and once with the small-RAM ones.
//
//   download_ram URL CA_FILE [--max-fragment N] [--tls12] [--request-head N]
//                [--response-head N] [--io N] [--error-body N] [--gets N] [--expect N]
//                [--range-size N] (each GET as ranged requests of N bytes, Client::continue_body)
//
// Everything a device would hold for the download lives here as it would there: the TLS arena
// (a static buffer of kArenaBytes, every mbedTLS allocation), a TlsClientConfig trusting the
// one CA of CA_FILE, a TcpTlsConnector over a FixedResolver (numeric hosts need no lookup), a
// Client with a RetryContext, and the ClientBuffers at the sizes given (defaults: the small-RAM
// sizes of docs/small_ram.md). The sink only counts the body (a device writes it to flash), so
// that the CPU measured is the download's.
// The work runs on a thread whose stack is a static buffer painted with a pattern first, so the
// stack's high-water mark is read back, not guessed. Printed on stdout, one "key value" a line:
//
//   tls_in_content_len / tls_out_content_len   the build's record buffers (plaintext bytes)
//   max_fragment                               max_fragment_length asked for (0: none)
//   arena_peak_bytes, arena_peak_blocks        tls_arena_usage() after the last GET
//   arena_peak_footprint                       peak bytes + the block headers of the peak
//   sizeof_<type>                              the objects the download keeps
//   buffer_<name>                              the ClientBuffers given to the Client
//   stack_high_water                           the deepest stack the download took, from
//                                              the frame of the function that calls it
//                                              (a device's main loop) down
//   thread_stack_overhead                      not in the total: what glibc itself put on
//                                              the thread's stack (its thread descriptor
//                                              and static TLS above the first frame, the
//                                              thread's start and exit below), which a
//                                              device's loop does not pay
//   total_ram                                  the sum of the lines above
//   body_bytes                                 what the last GET delivered
//   cpu_ns, user_ns, system_ns                 CPU of the GETs (this thread): the total
//                                              (CLOCK_THREAD_CPUTIME_ID), and its user and
//                                              system parts (getrusage RUSAGE_THREAD, whose
//                                              resolution is the scheduler tick's)
//
// The static data of the linked libraries (.data and .bss: PSA's key slots, ...) is not
// visible from here; download_ram.sh adds it from the link map. Exits 0 when every GET
// succeeds (and delivers --expect bytes when given), 1 when one fails, 2 on bad usage.
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include "stepback/core/budget.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

namespace {

namespace https = stepback::https;
using stepback::Millis;

// Large enough for the default build's handshake; the figure that matters is the peak.
constexpr std::size_t kArenaBytes = 64 * 1024;
// The thread's stack, painted; far more than a download needs.
constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::uint8_t kPaint = 0xA5;
constexpr std::size_t kMaxBuffer = 64 * 1024;
constexpr int kMaxGets = 1000;

alignas(16) std::uint8_t g_arena[kArenaBytes];
alignas(64) std::uint8_t g_stack[kStackBytes];
std::uint8_t g_request_head[kMaxBuffer];
std::uint8_t g_response_head[kMaxBuffer];
std::uint8_t g_io[kMaxBuffer];
std::uint8_t g_error_body[kMaxBuffer];

struct Options {
  const char* url = nullptr;
  const char* ca_file = nullptr;
  std::size_t max_fragment = 0;
  bool tls12 = false;
  // The small-RAM sizes (docs/small_ram.md): a request head for a long signed URL, a response
  // head for Cloud Storage's x-goog-* fields, one TLS record per read, the start of an error
  // body.
  std::size_t request_head = 2048;
  std::size_t response_head = 4096;
  std::size_t io = 4096;
  std::size_t error_body = 512;
  int gets = 1;
  std::optional<std::uint64_t> expect;  // Body bytes each GET must deliver.
  std::size_t range_size = 0;           // Each GET in pieces of this size (0: one request).
};

// What the run measured, filled by the worker thread.
struct Run {
  Options options;
  bool ok = false;
  const char* failure = "";
  std::uint64_t body_bytes = 0;
  std::uint64_t cpu_ns = 0;
  std::uint64_t user_ns = 0;
  std::uint64_t system_ns = 0;
  https::TlsArenaUsage arena;
  std::size_t stack_bytes = 0;  // the download's, from the caller's frame down
};

struct Body {
  std::uint64_t bytes = 0;
};

bool count_body(void* context, std::uint64_t /*offset*/, https::ConstBytes data) {
  static_cast<Body*>(context)->bytes += data.size;
  return true;
}

bool restart_body(void* context) {
  *static_cast<Body*>(context) = Body{};
  return true;
}

// User and system CPU of this thread so far.
void thread_usage(std::uint64_t* user_ns, std::uint64_t* system_ns) {
  rusage u{};
  (void)getrusage(RUSAGE_THREAD, &u);
  const auto ns = [](const timeval& t) {
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000000U +
           static_cast<std::uint64_t>(t.tv_usec) * 1000U;
  };
  *user_ns = ns(u.ru_utime);
  *system_ns = ns(u.ru_stime);
}

std::uint64_t thread_cpu_ns() {
  timespec t{};
  (void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000U + static_cast<std::uint64_t>(t.tv_nsec);
}

// The download, from TLS set-up to the last GET's end; on the painted stack.
void download(Run* run) {
  const Options& o = run->options;
  if (https::tls_arena_init(g_arena, sizeof g_arena) != https::Status::kOk) {
    run->failure = "cannot install the TLS arena";
    return;
  }
  static https::Url url;
  if (https::parse_url(o.url, &url) != https::Status::kOk) {
    run->failure = "invalid URL";
    return;
  }
  // The objects are static, as a device's would be, so that the stack's high-water mark is
  // call depth alone and each object's size counts once.
  static https::TlsClientConfig tls;
  if (tls.init() != https::Status::kOk || tls.add_ca_file(o.ca_file) != https::Status::kOk) {
    run->failure = "TLS set-up failed (init or CA file)";
    return;
  }
  if (o.tls12) tls.set_versions(https::TlsVersion::kTls12, https::TlsVersion::kTls12);
  if (tls.set_max_fragment_length(o.max_fragment) != https::Status::kOk) {
    run->failure = "max_fragment_length refused by this build";
    return;
  }
  stepback::platform::Status random_status{};
  static stepback::Xoshiro128 random = stepback::platform::make_os_random(&random_status);
  const auto& profile = stepback::profiles::active;
  static stepback::RetryBudget budget(profile.budget);
  static stepback::Policy policy = profile.retry;
  policy.max_retries = 0;  // A failure is a finding here, not something to retry.
  static const stepback::RetryContext context{policy, random, &budget};
  static https::FixedResolver resolver;
  static https::TcpTlsConnector connector(tls, resolver);
  static Body body;
  static https::ClientOptions options;
  options.timeouts = profile.timeouts;
  options.buffers = {{g_request_head, o.request_head},
                     {g_response_head, o.response_head},
                     {g_io, o.io},
                     {g_error_body, o.error_body}};
  options.body = https::ResponseSink{&count_body, &restart_body, &body};
  options.wall_now = &stepback::platform::wall_now;
  static https::Client client(connector, context, options);
  static https::RequestSpec spec;
  spec.head.url = url;
  const std::uint64_t cpu_start = thread_cpu_ns();
  std::uint64_t user_start = 0;
  std::uint64_t system_start = 0;
  thread_usage(&user_start, &system_start);
  for (int i = 0; i < o.gets; ++i) {
    body = Body{};
    // In pieces: the first asks for bytes [0, range_size), each finished 206 for the next.
    https::BodyResume first;
    if (o.range_size > 0) first.until = o.range_size;
    if (client.start(spec, first) != https::Status::kOk) {
      run->failure = "start() refused the request (a buffer too small?)";
      return;
    }
    for (;;) {
      for (https::ClientNext next = client.step(stepback::platform::monotonic_now());
           next.kind != https::ClientNext::Kind::kDone;
           next = client.step(stepback::platform::monotonic_now())) {
        (void)https::poll_wait(next, stepback::platform::monotonic_now());
      }
      const std::optional<std::uint64_t> total = client.expected_size();
      if (o.range_size == 0 || client.result().outcome != stepback::Outcome::kSuccess ||
          client.result().status != 206 || !total || client.delivered() >= *total ||
          client.continue_body(client.delivered() + o.range_size) != https::Status::kOk) {
        break;
      }
    }
    if (client.result().outcome != stepback::Outcome::kSuccess) {
      std::fprintf(stderr, "download_ram: GET %d: %s (%s)\n", i + 1, client.result().message,
                   https::to_string(client.result().error));
      run->failure = "a GET failed";
      return;
    }
  }
  run->cpu_ns = thread_cpu_ns() - cpu_start;
  thread_usage(&run->user_ns, &run->system_ns);
  run->user_ns -= user_start;
  run->system_ns -= system_start;
  run->body_bytes = body.bytes;
  run->arena = https::tls_arena_usage();
  run->ok = true;
}

// Bytes of g_stack written since it was painted: from the lowest byte that lost the paint
// (the stack grows down) to the top.
std::size_t stack_high_water() {
  std::size_t untouched = 0;
  while (untouched < kStackBytes && g_stack[untouched] == kPaint) ++untouched;
  return kStackBytes - untouched;
}

// The thread's first function stands for a device's main loop: the download's stack is what
// lies below its frame when download() has returned, read before the thread ends (glibc's
// thread exit runs below that frame too). Above the frame glibc keeps the thread's descriptor
// and static TLS at the top of the stack it was given; neither is the download's.
__attribute__((noinline)) void* worker(void* arg) {
  auto* run = static_cast<Run*>(arg);
  const auto* frame = static_cast<const std::uint8_t*>(__builtin_frame_address(0));
  const std::size_t top_gap = static_cast<std::size_t>(g_stack + kStackBytes - frame);
  download(run);
  run->stack_bytes = stack_high_water() - top_gap;
  return nullptr;
}

bool parse_size(const char* text, std::size_t limit, std::size_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || v > limit) return false;
  *out = static_cast<std::size_t>(v);
  return true;
}

bool parse_args(int argc, char** argv, Options* o) {
  if (argc < 3) return false;
  o->url = argv[1];
  o->ca_file = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--tls12") {
      o->tls12 = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    std::size_t n = 0;
    if (!parse_size(value, flag == "--expect" ? SIZE_MAX : kMaxBuffer, &n)) return false;
    if (flag == "--max-fragment") {
      o->max_fragment = n;
    } else if (flag == "--request-head") {
      o->request_head = n;
    } else if (flag == "--response-head") {
      o->response_head = n;
    } else if (flag == "--io") {
      o->io = n;
    } else if (flag == "--error-body") {
      o->error_body = n;
    } else if (flag == "--gets") {
      if (n < 1 || n > kMaxGets) return false;
      o->gets = static_cast<int>(n);
    } else if (flag == "--expect") {
      o->expect = n;
    } else if (flag == "--range-size") {
      o->range_size = n;
    } else {
      return false;
    }
  }
  return true;
}

void print(const char* key, std::size_t value) { std::printf("%s %zu\n", key, value); }

}  // namespace

int main(int argc, char** argv) {
  Run run;
  if (!parse_args(argc, argv, &run.options)) {
    std::fprintf(stderr,
                 "usage: download_ram URL CA_FILE [--max-fragment N] [--tls12] [--request-head N]\n"
                 "                    [--response-head N] [--io N] [--error-body N] [--gets N]\n"
                 "                    [--expect BYTES] [--range-size BYTES]\n");
    return 2;
  }
  std::memset(g_stack, kPaint, sizeof g_stack);
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setstack(&attr, g_stack, sizeof g_stack) != 0 ||
      pthread_create(&thread, &attr, &worker, &run) != 0) {
    std::fprintf(stderr, "download_ram: cannot start the measured thread\n");
    return 1;
  }
  (void)pthread_join(thread, nullptr);
  (void)pthread_attr_destroy(&attr);
  if (!run.ok) {
    std::fprintf(stderr, "download_ram: %s\n", run.failure);
    return 1;
  }
  const Options& o = run.options;
  if (o.expect && run.body_bytes != *o.expect) {
    std::fprintf(stderr, "download_ram: got %llu body bytes, expected %llu\n",
                 static_cast<unsigned long long>(run.body_bytes),
                 static_cast<unsigned long long>(*o.expect));
    return 1;
  }
  struct Part {
    const char* key;
    std::size_t bytes;
  };
  const Part parts[] = {
      {"arena_peak_footprint", run.arena.peak_footprint_bytes()},
      {"sizeof_TlsClientConfig", sizeof(https::TlsClientConfig)},
      {"sizeof_TcpTlsConnector", sizeof(https::TcpTlsConnector)},
      {"sizeof_FixedResolver", sizeof(https::FixedResolver)},
      {"sizeof_Client", sizeof(https::Client)},
      {"sizeof_RetryContext", sizeof(stepback::RetryContext) + sizeof(stepback::Policy) +
                                  sizeof(stepback::RetryBudget) + sizeof(stepback::Xoshiro128)},
      {"sizeof_ClientOptions_RequestSpec_Url",
       sizeof(https::ClientOptions) + sizeof(https::RequestSpec) + sizeof(https::Url)},
      {"buffer_request_head", o.request_head},
      {"buffer_response_head", o.response_head},
      {"buffer_io", o.io},
      {"buffer_error_body", o.error_body},
      {"stack_high_water", run.stack_bytes},
  };
  std::size_t total = 0;
  print("tls_in_content_len", https::kTlsInputBufferBytes);
  print("tls_out_content_len", MBEDTLS_SSL_OUT_CONTENT_LEN);
  print("max_fragment", o.max_fragment);
  print("arena_peak_bytes", run.arena.peak_bytes);
  print("arena_peak_blocks", run.arena.peak_blocks);
  for (const Part& p : parts) {
    print(p.key, p.bytes);
    total += p.bytes;
  }
  print("total_ram", total);
  print("thread_stack_overhead", stack_high_water() - run.stack_bytes);
  std::printf(
      "body_bytes %llu\ncpu_ns %llu\nuser_ns %llu\nsystem_ns %llu\n",
      static_cast<unsigned long long>(run.body_bytes), static_cast<unsigned long long>(run.cpu_ns),
      static_cast<unsigned long long>(run.user_ns), static_cast<unsigned long long>(run.system_ns));
  return 0;
}
