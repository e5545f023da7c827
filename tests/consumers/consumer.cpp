// The consumer program of tests/consumers: one use of each component of stepback::stepback,
// built through find_package, add_subdirectory and pkg-config. Prints what it saw and
// exits 0 when every part answered as expected.
#include <cstdint>
#include <cstdio>

#include "stepback/core/retry_machine.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

namespace {

alignas(16) std::uint8_t g_tls_arena[64 * 1024];

}  // namespace

int main() {
  namespace https = stepback::https;
  int failures = 0;

  // core + profiles: the first wait after a 503, under the active profile's policy.
  stepback::Xoshiro128 random(42);
  stepback::RetryBudget budget(stepback::profiles::active.budget);
  const stepback::RetryContext context{stepback::profiles::active.retry, random, &budget};
  stepback::RetryMachine machine(context);
  // platform: the clock shim.
  const stepback::Millis now = stepback::platform::monotonic_now();
  const stepback::Next first = machine.step(now);
  const stepback::Next wait = machine.report(now, stepback::AttemptResult::http(503));
  if (first.kind != stepback::Next::Kind::kSend || wait.kind != stepback::Next::Kind::kWaitUntil) {
    ++failures;
  }
  std::printf("profile %s: first retry in %llu ms\n", stepback::profiles::active.name,
              static_cast<unsigned long long>((wait.at - now).count()));

  // https: a URL parse, and a TLS configuration set up on mbedTLS inside the arena.
  https::Url url;
  if (https::parse_url("https://example.com:8443/v1/items?x=1", &url) != https::Status::kOk ||
      url.port != 8443 || url.host != "example.com") {
    ++failures;
  }
  std::printf("url: host %.*s port %u\n", static_cast<int>(url.host.size()), url.host.data(),
              static_cast<unsigned>(url.port));
  if (https::tls_arena_init(g_tls_arena, sizeof g_tls_arena) != https::Status::kOk) ++failures;
  {
    https::TlsClientConfig tls;
    const https::Status status = tls.init();
    std::printf("tls init: %s\n", https::to_string(status));
    if (status != https::Status::kOk) ++failures;
  }

  std::printf("%s\n", failures == 0 ? "consumer: ok" : "consumer: FAILED");
  return failures == 0 ? 0 : 1;
}
