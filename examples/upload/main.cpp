// Uploads FILE with Google's resumable upload protocol (Cloud Storage and other Google APIs):
// killed at any moment and run again, it goes on with the same session from what the server
// holds, so only the chunk under way is sent again; progress and retries go to stderr.
//
//   upload FILE URL [CA_FILE_OR_DIR]
//
// URL is the initiation URL, e.g.
// https://storage.googleapis.com/upload/storage/v1/b/BUCKET/o?uploadType=resumable&name=NAME
// (with a bearer token the app would add an Authorization header). The session and where it
// stands are kept in FILE.upload.state, removed once the object is stored. Without
// CA_FILE_OR_DIR the system's CA store is used. Exits 0 on success, 1 on failure (the record
// kept while the session lives), 2 on bad arguments or files.
#include <cstdio>

#include "stepback/app/defaults.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/app/upload_files.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/transfer/upload.hpp"

namespace {

namespace https = stepback::https;
namespace transfer = stepback::transfer;
using Kind = transfer::UploadEvent::Kind;

void print_event(void* /*context*/, const transfer::UploadEvent& e) {
  const auto offset = static_cast<unsigned long long>(e.offset);
  if (e.kind == Kind::kCommitted) {
    std::fprintf(stderr, "the server holds %llu bytes\n", offset);
  } else if (e.kind == Kind::kProgress && e.size > 0) {
    std::fprintf(stderr, "%llu of %llu bytes sent\n", offset,
                 static_cast<unsigned long long>(e.size));
  } else if (e.kind == Kind::kError) {
    std::fprintf(stderr, "exchange %u: %s\n", e.exchange, e.message);
  } else if (e.kind == Kind::kResponse && e.status >= 400) {
    std::fprintf(stderr, "exchange %u: HTTP %u\n", e.exchange, static_cast<unsigned>(e.status));
  } else if (e.kind == Kind::kWait) {
    std::fprintf(stderr, "retrying in %lld ms\n", static_cast<long long>(e.wait.count()));
  }
}

// Static: the TLS arena, the buffers and the file's path and record are tens of KiB.
stepback::app::HttpsStack g_stack;
stepback::app::Buffers g_buffers;
stepback::app::UploadFiles g_files;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: upload FILE URL [CA_FILE_OR_DIR]\n");
    return 2;
  }
  transfer::UploadSpec spec;
  if (https::parse_url(argv[2], &spec.url) != https::Status::kOk) {
    std::fprintf(stderr, "not an http(s) URL: %s\n", argv[2]);
    return 2;
  }
  if (g_stack.init(argc > 3 ? argv[3] : nullptr) != https::Status::kOk) {
    std::fprintf(stderr, "%s\n", g_stack.message());
    return 2;
  }
  // FILE and FILE.upload.state: a new session, or the one an earlier run left.
  const auto opened = g_files.open(argv[1], argv[2]);
  if (opened == stepback::app::UploadFiles::Open::kRefused) {
    std::fprintf(stderr, "%s\n", g_files.message());
    return 2;
  }
  if (const transfer::TransferState* record = g_files.resumed()) {
    std::fprintf(stderr, "going on with the session that held %llu bytes\n",
                 static_cast<unsigned long long>(record->committed));
  }
  g_files.apply(&spec);  // The body, and the session and retry state to go on with.
  // A chunk is what a failure costs again: 1 MiB suits a slow or flaky link (the default,
  // 8 MiB, a fast one).
  spec.chunk_size = 4 * transfer::kChunkGranularity;
  spec.content_type = "application/octet-stream";

  // The profile's timeouts and buffers; events counted by the files, then printed.
  transfer::UploadOptions options = stepback::app::upload_options(g_buffers);
  options.events = g_files.events(transfer::UploadEventSink{&print_event, nullptr});
  const stepback::app::RetrySetup retry;
  transfer::Upload upload(g_stack.connector(), retry.context(), options);
  if (upload.start(spec) != https::Status::kOk) {
    std::fprintf(stderr, "the upload cannot start (a session URI too long?)\n");
    return 2;
  }

  // The main loop: step, save the record when it changed, then sleep in poll() until the
  // socket is ready or the time comes.
  stepback::Millis now = stepback::platform::monotonic_now();
  for (auto next = upload.step(now); next.kind != transfer::UploadNext::Kind::kDone;
       next = upload.step(now)) {
    if (!g_files.after_step(upload, now)) std::fprintf(stderr, "%s\n", g_files.message());
    https::poll_wait(next, now);
    now = stepback::platform::monotonic_now();
  }
  const transfer::UploadResult& result = upload.result();
  const bool ok = result.outcome == stepback::Outcome::kSuccess;
  if (!g_files.finish(upload, now)) std::fprintf(stderr, "%s\n", g_files.message());
  std::fprintf(stderr, "%s: %s, HTTP %u, %llu body bytes sent for %llu%s%s\n", argv[1],
               stepback::to_string(result.outcome), static_cast<unsigned>(result.status),
               static_cast<unsigned long long>(upload.bytes_sent()),
               static_cast<unsigned long long>(g_files.size()), ok ? "" : ": ", result.message);
  return ok ? 0 : 1;
}
