// A retrying PUT (or POST) of a local file to any HTTPS server, for servers without a
// resumable-upload protocol: each attempt sends the whole file again, read from disk through a
// BodySource, so it never has to fit in memory. The response body goes to stdout, one line
// per attempt and wait to stderr.
//
//   retrying_put [-X PUT|POST] [--idempotency-key KEY] FILE URL [CA_FILE]
//
// PUT is idempotent (RFC 9110 9.2.2), so the client sends it again after any retryable
// failure. A POST is sent again only when the server provably did not act on it (a failed
// connect, a 429 or 503); after a 500 or a connection cut once the body left it is not, since
// the server may have acted. --idempotency-key makes a POST safe to repeat: the key goes out
// in an Idempotency-Key field, by which a server that supports it recognizes a repeat, and
// the request declares itself idempotent, so the client retries it as it would a PUT.
// Without CA_FILE the system's CA store is used. Exits 0 when the final response is a success,
// 1 when it is not, 2 on bad arguments.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "stepback/app/defaults.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/platform/clock.hpp"

namespace {

namespace https = stepback::https;

// Static: the TLS arena and the buffers are tens of KiB; nothing is allocated while the
// request runs.
stepback::app::HttpsStack g_stack;
stepback::app::Buffers g_buffers;

// The body: any attempt may start over from any offset, so read with pread, never a cursor.
std::size_t read_file(void* context, std::uint64_t offset, https::MutableBytes out) {
  const int fd = *static_cast<const int*>(context);
  const ssize_t n = pread(fd, out.data, out.size, static_cast<off_t>(offset));
  return n > 0 ? static_cast<std::size_t>(n) : 0;  // Short: the client fails the attempt.
}

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
  } else if (event.kind == Kind::kWait) {
    std::fprintf(stderr, "retrying in %llu ms\n",
                 static_cast<unsigned long long>(event.wait.count()));
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: retrying_put [-X PUT|POST] [--idempotency-key KEY] FILE URL [CA_FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* method = "PUT";
  const char* key = nullptr;
  const char* positional[3] = {};
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-X") == 0 && i + 1 < argc) {
      method = argv[++i];
    } else if (std::strcmp(argv[i], "--idempotency-key") == 0 && i + 1 < argc) {
      key = argv[++i];
    } else if (argv[i][0] != '-' && count < 3) {
      positional[count++] = argv[i];
    } else {
      return usage();
    }
  }
  if (count < 2 || (std::strcmp(method, "PUT") != 0 && std::strcmp(method, "POST") != 0)) {
    return usage();
  }
  const char* ca_file = count > 2 ? positional[2] : nullptr;  // None: the system's store.

  int fd = open(positional[0], O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fprintf(stderr, "cannot read the file %s\n", positional[0]);
    return 2;
  }

  https::RequestSpec spec;
  if (https::parse_url(positional[1], &spec.head.url) != https::Status::kOk) {
    std::fprintf(stderr, "not an http(s) URL: %s\n", positional[1]);
    return 2;
  }
  spec.head.method = method;
  const https::Header headers[] = {{"Content-Type", "application/octet-stream"},
                                   {"Idempotency-Key", key != nullptr ? key : ""}};
  spec.head.headers = headers;
  spec.head.header_count = key != nullptr ? 2 : 1;
  spec.body = https::BodySource{&read_file, &fd, static_cast<std::uint64_t>(st.st_size)};
  // The default rule (kByMethod) already retries a PUT; the key is the app's word that a
  // repeated POST does no harm.
  if (key != nullptr) spec.idempotency = https::RequestSpec::Idempotency::kYes;

  if (g_stack.init(ca_file) != https::Status::kOk) {
    std::fprintf(stderr, "%s\n", g_stack.message());
    return 2;
  }
  // The profile's timeouts, redirects, buffers and retries.
  https::ClientOptions options = stepback::app::client_options(g_buffers);
  const stepback::app::RetrySetup retry;

  // The app's own: where the response body and the events go.
  options.body = https::ResponseSink{&write_body, nullptr, nullptr};
  options.body_limit = 1024 * 1024;
  options.events = https::EventSink{&print_event, nullptr};

  https::Client client(g_stack.connector(), retry.context(), options);
  if (client.start(spec) != https::Status::kOk) {
    std::fprintf(stderr, "invalid request\n");
    return 2;
  }
  stepback::Millis now = stepback::platform::monotonic_now();
  for (https::ClientNext next = client.step(now); next.kind != https::ClientNext::Kind::kDone;
       next = client.step(now)) {
    https::poll_wait(next, now);
    now = stepback::platform::monotonic_now();
  }
  const https::ClientResult& result = client.result();
  std::fflush(stdout);
  std::fprintf(stderr, "%s %s: %s after %u attempt(s), HTTP %u\n", method, positional[0],
               stepback::to_string(result.outcome), result.attempts,
               static_cast<unsigned>(result.status));
  close(fd);
  return result.outcome == stepback::Outcome::kSuccess ? 0 : 1;
}
