// The find_package consumer's download: one transfer::Download of an HTTPS URL, stepped from a
// poll() loop, on an installed stepback (consumers.download_request runs it against a loopback
// server that answers 503, then 200). The body goes to stdout, one line per attempt to stderr;
// at the end the download's checkpoint record is written and read back.
//
//   download URL CA_FILE
//
// Exits 0 when the download succeeded and its record reads back as written.

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/transfer/download.hpp"
#include "stepback/transfer/state.hpp"

namespace {

namespace https = stepback::https;
namespace transfer = stepback::transfer;

alignas(16) std::uint8_t g_tls_arena[256 * 1024];
std::uint8_t g_request[4 * 1024];
std::uint8_t g_response_head[8 * 1024];
std::uint8_t g_io[16 * 1024];
std::uint8_t g_error_body[2 * 1024];
std::uint8_t g_record[transfer::kMaxStateBytes];
transfer::TransferState g_saved;
transfer::TransferState g_read_back;

bool write_body(void* /*context*/, std::uint64_t /*offset*/, https::ConstBytes data) {
  return std::fwrite(data.data, 1, data.size, stdout) == data.size;
}

void print_event(void* /*context*/, const https::ClientEvent& event) {
  using Kind = https::ClientEvent::Kind;
  if (event.kind == Kind::kResponse) {
    std::fprintf(stderr, "attempt %u: HTTP %u\n", event.attempt,
                 static_cast<unsigned>(event.status));
  } else if (event.kind == Kind::kError) {
    std::fprintf(stderr, "attempt %u: %s\n", event.attempt, event.message);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: download URL CA_FILE\n");
    return 2;
  }
  transfer::DownloadSpec spec;
  spec.url_text = argv[1];
  if (https::parse_url(spec.url_text, &spec.url) != https::Status::kOk) {
    std::fprintf(stderr, "not an http(s) URL: %s\n", argv[1]);
    return 1;
  }
  https::TlsClientConfig tls;
  if (https::tls_arena_init(g_tls_arena, sizeof g_tls_arena) != https::Status::kOk ||
      tls.init() != https::Status::kOk || tls.add_ca_file(argv[2]) != https::Status::kOk) {
    std::fprintf(stderr, "cannot set up TLS with CA file %s\n", argv[2]);
    return 1;
  }

  const stepback::profiles::DeviceProfile& profile = stepback::profiles::active;
  stepback::platform::Status random_status{};
  stepback::Xoshiro128 random = stepback::platform::make_os_random(&random_status);
  stepback::RetryBudget budget(profile.budget);
  const stepback::RetryContext context{profile.retry, random, &budget};
  https::CaresResolver resolver;  // The URL's host is numeric: no lookup.
  https::TcpTlsConnector connector(tls, resolver);
  transfer::DownloadOptions options;
  options.client.timeouts = profile.timeouts;
  options.client.buffers = https::ClientBuffers{{g_request, sizeof g_request},
                                                {g_response_head, sizeof g_response_head},
                                                {g_io, sizeof g_io},
                                                {g_error_body, sizeof g_error_body}};
  options.client.body.write = &write_body;
  options.client.body_limit = 1024 * 1024;
  options.client.events = https::EventSink{&print_event, nullptr};
  options.client.wall_now = &stepback::platform::wall_now;
  transfer::Download download(connector, context, options);
  if (download.start(spec) != https::Status::kOk) {
    std::fprintf(stderr, "invalid download: %s\n", download.message());
    return 1;
  }

  stepback::Millis now = stepback::platform::monotonic_now();
  for (transfer::DownloadNext next = download.step(now);
       next.kind != transfer::DownloadNext::Kind::kDone; next = download.step(now)) {
    https::poll_wait(next, now);
    now = stepback::platform::monotonic_now();
  }
  std::fflush(stdout);
  const https::ClientResult& result = download.result();
  std::fprintf(stderr, "%s after %u attempt(s), HTTP %u, %llu bytes\n",
               stepback::to_string(result.outcome), result.attempts,
               static_cast<unsigned>(result.status),
               static_cast<unsigned long long>(download.delivered()));

  std::size_t written = 0;
  transfer::StateStatus status = transfer::StateStatus::kInvalid;
  if (download.save(&g_saved, now, stepback::platform::wall_now())) {
    status = transfer::encode_state(g_saved, {g_record, sizeof g_record}, &written);
    if (status == transfer::StateStatus::kOk) {
      status = transfer::decode_state({g_record, written}, &g_read_back);
    }
  }
  const bool record_ok = status == transfer::StateStatus::kOk &&
                         g_read_back.delivered == download.delivered() &&
                         g_read_back.url() == spec.url_text;
  std::fprintf(stderr, "record: %zu bytes, read back %s\n", written, transfer::describe(status));
  return result.outcome == stepback::Outcome::kSuccess && record_ok ? 0 : 1;
}
