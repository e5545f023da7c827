// Downloads URL into FILE with checkpoints: killed at any moment and run again, it goes on
// from the last checkpoint (Range and If-Range, so another version of the file is never
// spliced on); progress and retries go to stderr.
//
//   download URL FILE [CA_FILE_OR_DIR]
//
// The body goes to FILE.part and its checkpoint record to FILE.part.state; FILE.part becomes
// FILE when the download succeeds. Without CA_FILE_OR_DIR the system's CA store is used.
// Exits 0 on success, 1 on failure (FILE.part and its record kept when a checkpoint was
// stored), 2 on bad arguments or files.
#include <cstdio>

#include "stepback/app/defaults.hpp"
#include "stepback/app/files.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/transfer/download.hpp"

namespace {

namespace https = stepback::https;
namespace transfer = stepback::transfer;

void print_event(void* /*context*/, const https::ClientEvent& e) {
  using Kind = https::ClientEvent::Kind;
  if (e.kind == Kind::kProgress && e.total) {
    std::fprintf(stderr, "%llu of %llu bytes\n", static_cast<unsigned long long>(e.bytes),
                 static_cast<unsigned long long>(*e.total));
  } else if (e.kind == Kind::kResume) {
    std::fprintf(stderr, "going on from byte %llu\n", static_cast<unsigned long long>(e.offset));
  } else if (e.kind == Kind::kError) {
    std::fprintf(stderr, "attempt %u: %s\n", e.attempt, e.message);
  } else if (e.kind == Kind::kWait) {
    std::fprintf(stderr, "retrying in %lld ms\n", static_cast<long long>(e.wait.count()));
  }
}

// Static: the TLS arena, the buffers and the files' paths and record are tens of KiB.
stepback::app::HttpsStack g_stack;
stepback::app::Buffers g_buffers;
stepback::app::DownloadFiles g_files;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: download URL FILE [CA_FILE_OR_DIR]\n");
    return 2;
  }
  transfer::DownloadSpec spec;
  spec.url_text = argv[1];
  if (https::parse_url(argv[1], &spec.url) != https::Status::kOk) {
    std::fprintf(stderr, "not an http(s) URL: %s\n", argv[1]);
    return 2;
  }
  if (g_stack.init(argc > 3 ? argv[3] : nullptr) != https::Status::kOk) {
    std::fprintf(stderr, "%s\n", g_stack.message());
    return 2;
  }
  // FILE.part and FILE.part.state: a fresh start, or where an earlier run stopped.
  if (g_files.open(argv[2], spec.url_text) == stepback::app::DownloadFiles::Open::kRefused) {
    std::fprintf(stderr, "%s\n", g_files.message());
    return 2;
  }
  spec.resume = g_files.resume();

  // The profile's timeouts, redirects, checkpoint policy and buffers; the files and events.
  transfer::DownloadOptions options = stepback::app::download_options(g_buffers);
  options.client.body = g_files.sink();
  options.checkpoints = g_files.checkpoints();
  options.client.events = https::EventSink{&print_event, nullptr};
  const stepback::app::RetrySetup retry;
  transfer::Download download(g_stack.connector(), retry.context(), options);
  if (download.start(spec) != https::Status::kOk) {
    std::fprintf(stderr, "%s\n", download.message());
    return 2;
  }

  // The main loop: step, then sleep in poll() until the socket is ready or the time comes.
  stepback::Millis now = stepback::platform::monotonic_now();
  for (auto next = download.step(now); next.kind != https::ClientNext::Kind::kDone;
       next = download.step(now)) {
    https::poll_wait(next, now);
    now = stepback::platform::monotonic_now();
  }
  const https::ClientResult& result = download.result();
  const bool ok = result.outcome == stepback::Outcome::kSuccess;
  if (!g_files.finish(ok)) std::fprintf(stderr, "%s\n", g_files.message());
  std::fprintf(stderr, "%s: %s, HTTP %u, %llu bytes\n", argv[2],
               stepback::to_string(result.outcome), static_cast<unsigned>(result.status),
               static_cast<unsigned long long>(download.delivered()));
  return ok ? 0 : 1;
}
