// The consumer program of tests/consumers: one use of each component of stepback::stepback,
// built through find_package, add_subdirectory and pkg-config. Prints what it saw and
// exits 0 when every part answered as expected.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "stepback/core/retry_machine.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/transfer/download.hpp"
#include "stepback/transfer/state.hpp"

namespace {

namespace https = stepback::https;
namespace transfer = stepback::transfer;

alignas(16) std::uint8_t g_tls_arena[64 * 1024];
std::uint8_t g_request[2 * 1024];
std::uint8_t g_response_head[4 * 1024];
std::uint8_t g_io[4 * 1024];
std::uint8_t g_error_body[512];
std::uint8_t g_record[transfer::kMaxStateBytes];
transfer::TransferState g_saved;
transfer::TransferState g_read_back;

// transfer: a download over the built-in connector, started and cancelled before it
// connects, and its checkpoint record written and read back (nanopb both ways). Returns the
// number of failures.
int check_download(https::TlsClientConfig& tls, const stepback::RetryContext& context,
                   const https::Url& url, stepback::Millis now) {
  https::CaresResolver resolver;
  https::TcpTlsConnector connector(tls, resolver);
  transfer::DownloadOptions options;
  options.client.buffers = https::ClientBuffers{{g_request, sizeof g_request},
                                                {g_response_head, sizeof g_response_head},
                                                {g_io, sizeof g_io},
                                                {g_error_body, sizeof g_error_body}};
  options.client.body.write = [](void*, std::uint64_t, https::ConstBytes) { return true; };
  options.client.wall_now = &stepback::platform::wall_now;
  options.client.timeouts = stepback::profiles::active.timeouts;
  transfer::Download download(connector, context, options);
  transfer::DownloadSpec spec;
  spec.url = url;
  spec.url_text = "https://example.com:8443/v1/items?x=1";
  const https::Status started = download.start(spec);
  download.cancel(now);
  const transfer::DownloadNext end = download.step(now);
  std::size_t written = 0;
  const bool saved = download.save(&g_saved, now, stepback::Millis(1700000000000));
  const transfer::StateStatus encoded =
      saved ? transfer::encode_state(g_saved, {g_record, sizeof g_record}, &written)
            : transfer::StateStatus::kInvalid;
  const transfer::StateStatus decoded =
      encoded == transfer::StateStatus::kOk
          ? transfer::decode_state({g_record, written}, &g_read_back)
          : encoded;
  std::printf("download: start %s, %s; record %zu bytes, read back %s\n", https::to_string(started),
              stepback::to_string(download.result().outcome), written, transfer::describe(decoded));
  const bool ok = started == https::Status::kOk &&
                  end.kind == transfer::DownloadNext::Kind::kDone &&
                  download.result().outcome == stepback::Outcome::kCancelled &&
                  decoded == transfer::StateStatus::kOk && g_read_back.url() == spec.url_text &&
                  g_read_back.kind == transfer::TransferKind::kDownload;
  return ok ? 0 : 1;
}

}  // namespace

int main() {
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

    failures += check_download(tls, context, url, now);
  }

  std::printf("%s\n", failures == 0 ? "consumer: ok" : "consumer: FAILED");
  return failures == 0 ? 0 : 1;
}
