// The code an app's native library would hold to make one HTTPS GET with stepback, for
// bench/apk_footprint.sh: one exported C function, everything else hidden.

#include <cstddef>
#include <cstdint>

#include "stepback/core/random.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/dns/android_resolver.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/dns/system_resolver.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

namespace {

namespace https = stepback::https;

alignas(16) std::uint8_t g_arena[64 * 1024];
std::uint8_t g_request[2048], g_head[8192], g_io[16384], g_error[1024];

struct Out {
  std::uint8_t* data;
  std::size_t size;
  std::size_t used;
};

bool write_at(void* context, std::uint64_t offset, https::ConstBytes bytes) {
  auto* out = static_cast<Out*>(context);
  if (offset + bytes.size > out->size) return false;
  for (std::size_t i = 0; i < bytes.size; ++i) out->data[offset + i] = bytes.data[i];
  out->used = static_cast<std::size_t>(offset + bytes.size);
  return true;
}

bool restart(void* context) {
  static_cast<Out*>(context)->used = 0;
  return true;
}

}  // namespace

// Fetches `url` trusting the PEM file `ca_file` into `out`; returns the body size, or -1.
extern "C" __attribute__((visibility("default"))) long stepback_apk_fetch(const char* url_text,
                                                                          const char* ca_file,
                                                                          unsigned char* out,
                                                                          unsigned long out_size) {
  if (!https::tls_arena_installed() &&
      https::tls_arena_init({g_arena, sizeof g_arena}) != https::Status::kOk) {
    return -1;
  }
  https::Url url;
  if (https::parse_url(url_text, &url) != https::Status::kOk) return -1;
  https::TlsClientConfig tls;
  if (tls.init() != https::Status::kOk || tls.add_ca_file(ca_file) != https::Status::kOk) return -1;
  stepback::platform::Status random_status{};
  stepback::Xoshiro128 random = stepback::platform::make_os_random(&random_status);
  const auto& profile = stepback::profiles::active;
  stepback::RetryBudget budget(profile.budget);
  const stepback::RetryContext context{profile.retry, random, &budget};
#if defined(APK_ANDROID_RESOLVER)
  // Android API 29+: the system's resolver (android_res_nquery), c-ares only parses answers.
  https::AndroidResolver resolver;
#elif defined(APK_SYSTEM_RESOLVER)
  // Android API 24-28 without c-ares: the system's getaddrinfo on worker threads
  // (android_getaddrinfofornetwork), started here, outside the loop.
  https::SystemResolver resolver;
  if (resolver.init() != https::Status::kOk) return -1;
#else
  // The resolver reads resolv.conf once, here, outside the loop (a failure is reported by
  // the first lookup, with why; numeric hosts need no lookup).
  https::CaresResolver resolver;
  (void)resolver.init(https::CaresOptions{});
#endif
  https::TcpTlsConnector connector(tls, resolver);
  Out body{out, out_size, 0};
  https::ClientOptions options;
  options.timeouts = profile.timeouts;
  options.buffers = {{g_request, sizeof g_request},
                     {g_head, sizeof g_head},
                     {g_io, sizeof g_io},
                     {g_error, sizeof g_error}};
  options.body = https::ResponseSink{&write_at, &restart, &body};
  options.wall_now = &stepback::platform::wall_now;
  https::Client client(connector, context, options);
  https::RequestSpec spec;
  spec.head.url = url;
  if (client.start(spec) != https::Status::kOk) return -1;
  for (https::ClientNext next = client.step(stepback::platform::monotonic_now());
       next.kind != https::ClientNext::Kind::kDone;
       next = client.step(stepback::platform::monotonic_now())) {
    (void)https::poll_wait(next, stepback::platform::monotonic_now());
  }
  return client.result().outcome == stepback::Outcome::kSuccess ? static_cast<long>(body.used) : -1;
}
