#include "demo.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "args.hpp"
#include "client_loop.hpp"
#include "demo_server.hpp"
#include "reporter.hpp"
#include "stack.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback demo: ";
// The 429's Retry-After, in seconds (--retry-after). The retry machine waits the server's
// delay, then its own jittered backoff (up to 2 s for the second wait), so with 1 s the second
// wait is 1-3 s; --retry-after 3 makes it 3-5 s.
constexpr std::uint32_t kDefaultRetryAfter = 1;
constexpr std::uint64_t kMaxRetryAfter = 10;

// The body, kept until the loop ends so that it prints after the progress lines.
struct BodyBuffer {
  char bytes[1024] = {};
  std::size_t size = 0;
};

bool keep_body(void* context, std::uint64_t offset, https::ConstBytes data) {
  auto* body = static_cast<BodyBuffer*>(context);
  if (offset != body->size || data.size > sizeof body->bytes - body->size) return false;
  std::memcpy(body->bytes + body->size, data.data, data.size);
  body->size += data.size;
  return true;
}

bool restart_body(void* context) {
  static_cast<BodyBuffer*>(context)->size = 0;
  return true;
}

struct DemoOptions {
  const profiles::DeviceProfile* profile = &profiles::active;
  std::uint32_t retry_after = kDefaultRetryAfter;
  bool close = false;
  bool trace = false;
  bool help = false;
};

std::optional<DemoOptions> parse_demo_args(int argc, char** argv, std::string* error) {
  DemoOptions o;
  const std::vector<Flag> flags = {
      profile_flag(&o.profile),
      value_flag("--retry-after", "expected 0.." + std::to_string(kMaxRetryAfter) + " seconds",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> s = parse_u64(value);
                   if (!s || *s > kMaxRetryAfter) return false;
                   o.retry_after = static_cast<std::uint32_t>(*s);
                   return true;
                 }),
      switch_flag("--close", &o.close),
      switch_flag("--trace", &o.trace),
  };
  return parsed_options(parse_flags(argc, argv, flags, nullptr, error), o);
}

void print_demo_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: stepback demo [--profile desktop|mobile] [--retry-after SECONDS] [--close]\n"
               "                     [--trace]\n"
               "\n"
               "Starts an HTTPS server on 127.0.0.1 inside this process (mbedTLS, with a\n"
               "certificate generated now) that answers 503 Service Unavailable, then 429 Too\n"
               "Many Requests with Retry-After, then 200 OK, and runs a retrying client against\n"
               "it from the same single-threaded poll() loop. Progress goes to stderr as with\n"
               "'stepback get', the body to stdout, then a summary line. Takes about 3 s.\n"
               "\n"
               "  --profile NAME       desktop or mobile (default: %s, chosen at build time)\n"
               "  --retry-after S      the 429's Retry-After in seconds, 0..%llu (default %u;\n"
               "                       the client waits it, then its own jittered backoff)\n"
               "  --close              the server closes the connection after each response, so\n"
               "                       every retry reconnects (and resumes the TLS session)\n"
               "  --trace              one JSON object per event on stderr, as 'stepback get'\n"
               "  --help               print this help\n"
               "\n"
               "Exit codes as 'stepback get' (see 'stepback get --help'); 0 on success.\n",
               profiles::active.name, static_cast<unsigned long long>(kMaxRetryAfter),
               kDefaultRetryAfter);
}

// The closing line: attempts, connections, TLS resumptions and the arena's peak.
void print_summary(const https::ClientResult& result, std::uint32_t connections,
                   std::uint32_t resumptions) {
  std::string reuse;
  if (connections <= 1) {
    reuse = result.attempts > 1 ? " (kept alive between attempts), so no TLS resumption" : "";
  } else {
    // The server counts the session tickets it accepted: each is a resumed handshake.
    reuse = ", " + std::to_string(resumptions) + " of " + std::to_string(connections - 1) +
            " reconnections resumed the TLS session";
  }
  std::fprintf(stderr,
               "%s%u attempt%s, %u connection%s opened%s; peak TLS arena %zu bytes (client "
               "and server together, of %zu KiB)\n",
               kPrefix, result.attempts, result.attempts == 1 ? "" : "s", connections,
               connections == 1 ? "" : "s", reuse.c_str(), https::tls_arena_usage().peak_bytes,
               tls_arena_bytes() / 1024);
}

}  // namespace

int run_demo(int argc, char** argv) {
  std::string error;
  const std::optional<DemoOptions> parsed = parse_demo_args(argc, argv, &error);
  if (!parsed) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }
  const DemoOptions& o = *parsed;
  if (o.help) {
    print_demo_usage(stdout);
    return kExitOk;
  }
  // The client first: its TLS set-up starts PSA crypto, which the server's key generation
  // and session tickets use too. The demo server is 127.0.0.1: nothing to look up.
  DemoServer server;  // Outlives the client's connection.
  Stack stack;
  StackSpec spec;
  spec.tls = true;
  spec.lookups = false;
  if (const int code = stack.build(spec, &error); code != kExitOk) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return code;
  }
  if (!server.start(o.retry_after, o.close, &error)) {
    std::fprintf(stderr, "%sserver: %s\n", kPrefix, error.c_str());
    return kExitInternal;
  }
  // The client trusts exactly the certificate the server just generated.
  if (stack.tls().add_ca_pem(server.certificate_pem(), server.certificate_pem_size()) !=
      https::Status::kOk) {
    std::fprintf(stderr, "%sthe generated certificate does not parse\n", kPrefix);
    return kExitInternal;
  }

  char url_text[64];
  std::snprintf(url_text, sizeof url_text, "https://127.0.0.1:%u/",
                static_cast<unsigned>(server.port()));
  https::Url url;
  if (https::parse_url(url_text, &url) != https::Status::kOk) return kExitInternal;

  platform::Status random_status = platform::Status::kOk;
  Xoshiro128 random = platform::make_os_random(&random_status);
  RetryBudget budget(o.profile->budget);
  const RetryContext context{o.profile->retry, random, &budget};
  BodyBuffer body;
  const Millis start = platform::monotonic_now();
  Reporter reporter(stderr, o.trace, ::isatty(STDERR_FILENO) == 1, kPrefix, start);
  https::ClientOptions options;
  options.timeouts = o.profile->timeouts;
  options.buffers = client_buffers();
  options.body = https::ResponseSink{&keep_body, &restart_body, &body};
  options.events = reporter.sink();
  options.progress = reporter.progress_policy();
  options.wall_now = &platform::wall_now;
  https::Client client(stack.connector(), context, options);
  reporter.attach(&client);
  https::RequestSpec request;
  request.head.url = url;
  request.head.user_agent = "stepback-demo";
  if (client.start(request) != https::Status::kOk) return kExitInternal;

  if (!o.trace) {
    std::fprintf(stderr,
                 "%sHTTPS server on %s (in this process; self-signed certificate for localhost "
                 "and 127.0.0.1, generated now)\n"
                 "%sit answers 503, then 429 with Retry-After: %u, then 200; profile %s, "
                 "jitter %s, up to %u retries\n",
                 kPrefix, url_text, kPrefix, o.retry_after, o.profile->name,
                 to_string(o.profile->retry.jitter), o.profile->retry.max_retries);
  }
  const https::ClientResult& result = run_client(client, reporter, &server);
  const bool output_failed =
      std::fwrite(body.bytes, 1, body.size, stdout) != body.size || std::fflush(stdout) != 0;
  if (!o.trace) print_summary(result, client.connections(), server.resumptions());
  return exit_code(result, output_failed);
}

}  // namespace stepback::tools
