// One HTTPS GET with retries, stepped from a poll() loop: the smallest complete use of
// stepback::https::Client. The body goes to stdout, one line per attempt to stderr.
//
//   installed_app [URL [CA_FILE]]
//
// URL defaults to https://127.0.0.1:8443/, CA_FILE to the Debian system bundle. Exits 0
// when the final response is a success, 1 otherwise.

#include <cstdint>
#include <cstdio>

#include "stepback/https/client.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

namespace {

namespace https = stepback::https;

// mbedTLS allocates only from this arena (one TLS connection and a small CA file need
// about 40 KiB; a system CA bundle, several hundred).
alignas(16) std::uint8_t g_tls_arena[1024 * 1024];
// The client's buffers: the request head, the response head, receive scratch, and the
// body of retryable error responses (for RetryInfo).
std::uint8_t g_request[4 * 1024];
std::uint8_t g_response_head[8 * 1024];
std::uint8_t g_io[16 * 1024];
std::uint8_t g_error_body[2 * 1024];

// Bytes arrive once each, in order; stdout cannot start over, so restart stays null and a
// body that would have to start over fails the request instead of splicing.
bool write_body(void* /*context*/, std::uint64_t /*offset*/, https::ConstBytes data) {
  return std::fwrite(data.data, 1, data.size, stdout) == data.size;
}

void print_event(void* /*context*/, const https::ClientEvent& event) {
  using Kind = https::ClientEvent::Kind;
  switch (event.kind) {
    case Kind::kResponse:
      std::fprintf(stderr, "attempt %u: HTTP %u\n", event.attempt,
                   static_cast<unsigned>(event.status));
      break;
    case Kind::kError:
      std::fprintf(stderr, "attempt %u: %s\n", event.attempt, event.message);
      break;
    case Kind::kWait:
      std::fprintf(stderr, "retrying in %llu ms\n",
                   static_cast<unsigned long long>(event.wait.count()));
      break;
    default:
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* url_text = argc > 1 ? argv[1] : "https://127.0.0.1:8443/";
  const char* ca_file = argc > 2 ? argv[2] : "/etc/ssl/certs/ca-certificates.crt";

  https::RequestSpec spec;
  if (https::parse_url(url_text, &spec.head.url) != https::Status::kOk) {
    std::fprintf(stderr, "not an http(s) URL: %s\n", url_text);
    return 1;
  }
  // Set-up, once: the TLS arena before any mbedTLS call, then the TLS configuration and
  // its trust anchors.
  if (https::tls_arena_init(g_tls_arena, sizeof g_tls_arena) != https::Status::kOk) {
    std::fprintf(stderr, "cannot install the TLS arena\n");
    return 1;
  }
  https::TlsClientConfig tls;
  if (tls.init() != https::Status::kOk || tls.add_ca_file(ca_file) != https::Status::kOk) {
    std::fprintf(stderr, "cannot set up TLS with CA file %s\n", ca_file);
    return 1;
  }

  const stepback::profiles::DeviceProfile& profile = stepback::profiles::active;
  stepback::platform::Status random_status{};
  stepback::Xoshiro128 random = stepback::platform::make_os_random(&random_status);
  stepback::RetryBudget budget(profile.budget);
  const stepback::RetryContext context{profile.retry, random, &budget};
  // The resolver reads resolv.conf once, here, outside the loop (a failure is reported by
  // the first lookup, with why; numeric hosts need no lookup).
  https::CaresResolver resolver;
  (void)resolver.init(https::CaresOptions{});
  https::TcpTlsConnector connector(tls, resolver);
  https::ClientOptions options;
  options.timeouts = profile.timeouts;
  options.buffers = https::ClientBuffers{{g_request, sizeof g_request},
                                         {g_response_head, sizeof g_response_head},
                                         {g_io, sizeof g_io},
                                         {g_error_body, sizeof g_error_body}};
  options.body = https::ResponseSink{&write_body, nullptr, nullptr};
  options.body_limit = 1024 * 1024;
  options.events = https::EventSink{&print_event, nullptr};
  options.wall_now = &stepback::platform::wall_now;
  https::Client client(connector, context, options);
  if (client.start(spec) != https::Status::kOk) {
    std::fprintf(stderr, "invalid request\n");
    return 1;
  }

  // The main loop: sleep in poll() until the client's fd is ready or its time comes, then
  // step again (an app with its own event loop registers next.fd there instead).
  stepback::Millis now = stepback::platform::monotonic_now();
  for (https::ClientNext next = client.step(now); next.kind != https::ClientNext::Kind::kDone;
       next = client.step(now)) {
    https::poll_wait(next, now);
    now = stepback::platform::monotonic_now();
  }
  const https::ClientResult& result = client.result();
  std::fflush(stdout);
  std::fprintf(stderr, "%s after %u attempt(s), HTTP %u\n", stepback::to_string(result.outcome),
               result.attempts, static_cast<unsigned>(result.status));
  return result.outcome == stepback::Outcome::kSuccess ? 0 : 1;
}
