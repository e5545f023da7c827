#include "upload.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "args.hpp"
#include "client_loop.hpp"
#include "network_watch.hpp"
#include "request_flags.hpp"
#include "stack.hpp"
#include "state_file.hpp"
#include "upload_args.hpp"
#include "upload_reporter.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"

#ifndef STEPBACK_VERSION
#error "STEPBACK_VERSION must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback upload: ";
constexpr const char* kUserAgent = "stepback/" STEPBACK_VERSION;
// The session URI (Google's are about 200 bytes) and the metadata output's stdio buffer.
std::uint8_t g_session_uri[4096];
char g_output_buffer[16 * 1024];

// The file, read in place: read(offset, span) with pread, so any chunk can be sent again.
struct FileSource {
  int fd = -1;
  bool failed = false;
  int error = 0;
};

std::size_t read_file(void* context, std::uint64_t offset, https::MutableBytes out) {
  auto* f = static_cast<FileSource*>(context);
  std::size_t done = 0;
  while (done < out.size) {
    const ssize_t n =
        ::pread(f->fd, out.data + done, out.size - done, static_cast<off_t>(offset + done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0) {
      break;  // The file shrank: the Client stops with kBodySource.
    } else if (errno != EINTR) {
      f->failed = true;
      f->error = errno;
      return 0;
    }
  }
  if (done < out.size && !f->failed) {
    f->failed = true;
    f->error = 0;
  }
  return done;
}

// Set by SIGINT and SIGTERM: the loop pauses the upload, saves its state and ends.
volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

// How run_loop() ended.
enum class LoopEnd : std::uint8_t { kDone, kStopped, kDeferred };

// Steps `upload` (started) from a poll() loop until it is done, or until a signal pauses it
// (kStopped), or, with `defer` (--defer-after), until it has a longer wait than that or waits
// for a network (kDeferred: *hint and *deferred_at say which, when). With `state` (may be
// null), saves the upload's state between steps when it changed, and once more when it was
// stopped or deferred. With `watch` (may be null), the network's changes reach the upload
// from the same loop.
LoopEnd run_loop(transfer::Upload& upload, UploadReporter& reporter, StateFile* state,
                 NetworkWatch* watch, std::optional<Millis> defer, https::RunHint* hint,
                 Millis* deferred_at) {
  Millis now = platform::monotonic_now();
  transfer::UploadNext next = upload.step(now);
  for (;;) {
    bool deferred = false;
    if (defer && next.kind == transfer::UploadNext::Kind::kWaitUntil) {
      *hint = upload.run_hint(next);
      deferred = defer_now(*hint, now, *defer);
    }
    if ((g_stop != 0 || deferred) && next.kind != transfer::UploadNext::Kind::kDone) {
      // The session stays open on the server; the record says where it stood.
      upload.pause(now);
      if (state != nullptr) state->save_now(upload, now);
      *deferred_at = now;
      return deferred ? LoopEnd::kDeferred : LoopEnd::kStopped;
    }
    if (state != nullptr && next.kind != transfer::UploadNext::Kind::kDone) {
      state->maybe_save(upload, now, reporter.waits());
    }
    if (next.kind == transfer::UploadNext::Kind::kDone) break;
    pollfd fds[2];
    std::size_t count = 0;
    const bool io = next.kind == transfer::UploadNext::Kind::kWaitIo && next.fd >= 0;
    if (io) fds[count++] = pollfd{next.fd, https::poll_events(next.interest), 0};
    if (watch != nullptr) count += watch->poll_fds(fds + count, 2 - count);
    // A signal cuts the sleep short (EINTR): the loop sees it at once.
    (void)::poll(count == 0 ? nullptr : fds, static_cast<nfds_t>(count),
                 https::poll_timeout(next.at, now, longest_wait(reporter.wants_ticks())));
    now = platform::monotonic_now();
    const bool changed = watch != nullptr && watch->serve(now);
    reporter.tick(now);
    const bool ready = io && fds[0].revents != 0;
    if (ready || changed || now >= next.at) next = upload.step(now);
  }
  return LoopEnd::kDone;
}

}  // namespace

int run_upload(int argc, char** argv) {
  std::string error;
  const std::optional<UploadArgs> parsed = parse_upload_args(argc, argv, &error);
  if (!parsed) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }
  const UploadArgs& o = *parsed;
  if (o.help) {
    print_upload_usage(stdout);
    return kExitOk;
  }
  const std::optional<Policy> policy = make_policy(o.retry, &error);
  if (!policy) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }

  FileSource file;
  file.fd = ::open(o.file, O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fprintf(stderr, "%scannot read '%s': %s\n", kPrefix, o.file,
                 file.fd < 0 ? std::strerror(errno) : "not a regular file");
    if (file.fd >= 0) ::close(file.fd);
    return kExitLocalIo;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto fail = [&file](int code, const std::string& message) {
    std::fprintf(stderr, "%s%s\n", kPrefix, message.c_str());
    ::close(file.fd);
    return code;
  };

  // With --state FILE present, the upload goes on where the last run left it.
  std::string_view url_text = o.url;
  std::string_view session_text = o.session;
  transfer::TransferState restored;
  std::optional<StateFile> state_file;
  bool resuming = false;
  if (o.state != nullptr) {
    state_file.emplace(o.state, o.url, kPrefix);
    switch (state_file->load(&restored, &error)) {
      case StateFile::Load::kRefused:
        return fail(kExitLocalIo, error);
      case StateFile::Load::kAbsent:
        break;
      case StateFile::Load::kLoaded: {
        const std::string named = std::string("the state file '") + o.state + "'";
        if (restored.kind != transfer::TransferKind::kUpload) {
          return fail(kExitLocalIo, named + " is not an upload's; remove it or pick another");
        }
        if (restored.total_size != size) {
          return fail(kExitLocalIo, named + " is for a body of " +
                                        std::to_string(restored.total_size) + " bytes, but '" +
                                        o.file + "' has " + std::to_string(size) +
                                        " (changed?); remove it to start over");
        }
        if (!o.url.empty() && o.url != restored.url()) {
          return fail(kExitLocalIo, named + " is for another upload URL (" +
                                        std::string(restored.url()) +
                                        "); remove it or pick another");
        }
        if (!o.session.empty() && o.session != restored.session_uri()) {
          return fail(kExitLocalIo, named + " holds another session than --session");
        }
        url_text = restored.url();
        session_text = restored.session_uri();
        state_file->set_url(url_text);
        resuming = true;
        break;
      }
    }
  }
  if (url_text.empty() && session_text.empty()) {
    return fail(kExitUsage,
                std::string("no state file '") + o.state + "' yet: the first run needs the URL");
  }
  https::Url url;
  if (!url_text.empty() && https::parse_url(url_text, &url) != https::Status::kOk) {
    return fail(kExitUsage,
                "invalid URL '" + std::string(url_text) + "' (expected https://host[:port]/path)");
  }
  https::Url session_url;
  if (!session_text.empty() && https::parse_url(session_text, &session_url) != https::Status::kOk) {
    return fail(kExitUsage, "invalid --session URI '" + std::string(session_text) +
                                "' (expected https://host[:port]/path)");
  }
  if (url_text.empty()) url = session_url;
  static ProxySetup proxy;
  if (!make_proxy(o.proxy, url, &proxy, &error)) return fail(kExitUsage, error);

  BodyOutput output{stdout};
  (void)std::setvbuf(output.file, g_output_buffer, _IOFBF, sizeof g_output_buffer);

  Stack stack;
  StackSpec stack_spec;
  stack_spec.tls = url.tls || (!session_text.empty() && session_url.tls);
  stack_spec.trust = &o.trust;  // The same trust rules as `stepback get`.
  stack_spec.proxy = &proxy;
  stack_spec.binding = &o.retry;
  if (const int code = stack.build(stack_spec, &error); code != kExitOk) return fail(code, error);

  platform::Status random_status = platform::Status::kOk;
  Xoshiro128 random = platform::make_os_random(&random_status);
  RetryBudget budget(o.retry.profile->budget);
  const RetryContext context{*policy, random, &budget};
  const Millis start = platform::monotonic_now();
  UploadReporter reporter(stderr, o.trace, ::isatty(STDERR_FILENO) == 1, kPrefix, size, start);
  transfer::UploadOptions options;
  options.timeouts = make_timeouts(o.retry);
  options.network = o.retry.network;
  options.buffers = client_buffers();
  options.session_uri = https::MutableBytes{g_session_uri, sizeof g_session_uri};
  options.metadata = body_sink(&output);
  options.events = reporter.sink();
  options.progress = reporter.progress_policy();
  options.wall_now = &platform::wall_now;
  options.max_rate = o.retry.limit_rate;
  transfer::Upload upload(stack.connector(), context, options);
  reporter.attach(&upload);
  if (state_file) reporter.attach_state(o.state, state_file->writes());

  transfer::UploadSpec spec;
  spec.url = url;
  spec.session = session_text;
  spec.body = https::BodySource{&read_file, &file, size};
  spec.chunk_size = o.chunk_size;
  spec.content_type = o.content_type;
  spec.headers = o.headers;
  spec.header_count = o.header_count;
  spec.user_agent = kUserAgent;
  spec.idempotency = o.retry.idempotency;
  if (resuming) {
    spec.resume.retries = restored.retries;
    spec.resume.wait = transfer::remaining_wait(restored, platform::wall_now());
    spec.resume.crc32c = restored.crc32c;  // Of the first `committed` bytes, when saved.
    spec.resume.crc32c_length = restored.committed;
    reporter.restored(restored, spec.resume.wait);
  }
  const https::Status started = upload.start(spec);
  if (started != https::Status::kOk) {
    return fail(kExitUsage, started == https::Status::kBufferTooSmall
                                ? "the session URI is too long"
                                : "invalid upload: check the headers (-H), the URL and --session");
  }

  struct sigaction action {};
  action.sa_handler = &on_stop_signal;
  struct sigaction old_int {};
  struct sigaction old_term {};
  (void)::sigaction(SIGINT, &action, &old_int);
  (void)::sigaction(SIGTERM, &action, &old_term);
  // The network: as --network-type says, or as the default routes say and then follow.
  NetworkWatch watch(NetworkChanged{[](void* u, Millis now, const https::NetworkInfo& network) {
                                      static_cast<transfer::Upload*>(u)->network_changed(now,
                                                                                         network);
                                    },
                                    &upload});
  https::NetworkInfo network;
  watch.set_device(o.retry.interface);
  const bool watching = !o.retry.network_type && watch.open(&network);
  if (o.retry.network_type) network = *o.retry.network_type;
  if (o.retry.network_type || !network.connected) {
    upload.network_changed(platform::monotonic_now(), network);
  }
  https::RunHint hint;
  Millis deferred_at{};
  const LoopEnd end =
      run_loop(upload, reporter, state_file ? &*state_file : nullptr, watching ? &watch : nullptr,
               o.retry.defer_after, &hint, &deferred_at);
  (void)::sigaction(SIGINT, &old_int, nullptr);
  (void)::sigaction(SIGTERM, &old_term, nullptr);
  ::close(file.fd);
  if (end == LoopEnd::kStopped) {
    reporter.interrupted(platform::monotonic_now());
    (void)std::fflush(output.file);
    return kExitInterrupted;
  }
  if (end == LoopEnd::kDeferred) {
    report_deferred(kPrefix, hint, deferred_at,
                    o.trace ? std::optional<Millis>(deferred_at - start) : std::nullopt);
    reporter.interrupted(deferred_at, "saved");
    (void)std::fflush(output.file);
    return kExitDeferred;
  }
  const transfer::UploadResult& result = upload.result();
  if (state_file) {
    if (result.outcome == Outcome::kSuccess || result.session_expired) {
      state_file->remove();
    } else {
      // The loop has ended: a later run starts a fresh one, from what the server holds.
      state_file->save_final(upload, platform::monotonic_now());
    }
  }
  if (std::fflush(output.file) != 0 && !output.failed) {
    output.failed = true;
    output.error = errno;
  }
  if (output.failed) {
    std::fprintf(stderr, "%scannot write the object's metadata to stdout: %s\n", kPrefix,
                 std::strerror(output.error));
  }
  if (file.failed) {
    std::fprintf(stderr, "%scannot read '%s': %s\n", kPrefix, o.file,
                 file.error != 0 ? std::strerror(file.error) : "it shrank while being uploaded");
    return kExitLocalIo;
  }
  https::ClientResult as_client;
  as_client.outcome = result.outcome;
  as_client.status = result.status;
  as_client.error = result.error;
  as_client.attempts = result.exchanges;
  as_client.message = result.message;
  return exit_code(as_client, output.failed);
}

}  // namespace stepback::tools
