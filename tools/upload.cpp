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
#include "state_file.hpp"
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
constexpr std::size_t kMaxHeaders = transfer::kMaxUploadHeaders;
constexpr std::uint64_t kDefaultChunk = std::uint64_t{8} * 1024 * 1024;
// Longest chunk accepted: 1 GiB, far above anything a phone or a PC would buffer in flight.
constexpr std::uint64_t kMaxChunk = 1024ULL * 1024 * 1024;

// The session URI (Google's are about 200 bytes) and the metadata output's stdio buffer.
std::uint8_t g_session_uri[4096];
char g_output_buffer[16 * 1024];

// What `stepback upload` was asked for. The views point into argv, which outlives the upload.
struct UploadArgs {
  const char* file = nullptr;
  std::string_view url;
  std::string_view session;
  const char* state = nullptr;  // --state FILE.
  std::uint64_t chunk_size = kDefaultChunk;
  std::string_view content_type = "application/octet-stream";
  TrustFlags trust;  // --cacert, --capath
  ProxyFlags proxy;  // --proxy, --noproxy
  RetryFlags retry;  // --profile, --max-retries, --max-backoff, --deadline, --jitter, ...
  https::Header headers[kMaxHeaders];
  std::size_t header_count = 0;
  bool trace = false;
  bool help = false;
};

// Parses a byte count: digits with an optional K, M or G suffix (KiB, MiB, GiB also read).
std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  std::uint64_t unit = 1;
  for (const auto& [suffix, size] : {std::pair<std::string_view, std::uint64_t>{"KiB", 1ULL << 10},
                                     {"MiB", 1ULL << 20},
                                     {"GiB", 1ULL << 30},
                                     {"K", 1ULL << 10},
                                     {"M", 1ULL << 20},
                                     {"G", 1ULL << 30}}) {
    if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
      unit = size;
      text.remove_suffix(suffix.size());
      break;
    }
  }
  const std::optional<std::uint64_t> n = parse_u64(text);
  if (!n || *n > kMaxChunk / unit) return std::nullopt;
  return *n * unit;
}

std::optional<UploadArgs> parse_upload_args(int argc, char** argv, std::string* error) {
  UploadArgs o;
  std::vector<Flag> flags = {
      value_flag("--chunk-size",
                 "expected a positive multiple of 256 KiB, such as 262144, 256K or 8M, at most 1G",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> n = parse_bytes(value);
                   if (!n || *n == 0 || *n % transfer::kChunkGranularity != 0) return false;
                   o.chunk_size = *n;
                   return true;
                 }),
      text_flag("--content-type", &o.content_type),
      text_flag("--session", &o.session),
      text_flag("--state", &o.state),
      header_flag(o.headers, kMaxHeaders, &o.header_count),
  };
  add_trust_flags(&flags, &o.trust);
  add_proxy_flags(&flags, &o.proxy);
  add_retry_flags(&flags, &o.retry);
  flags.push_back(switch_flag("--trace", &o.trace));
  int positional = 0;
  const auto file_and_url = [&o, &positional](std::string_view arg, std::string* message) {
    if (positional == 0) {
      o.file = arg.data();
    } else if (positional == 1) {
      o.url = arg;
    } else {
      *message = "unexpected argument '" + std::string(arg) + "' (one FILE and one URL)";
      return false;
    }
    ++positional;
    return true;
  };
  const Parsed parsed = parse_flags(argc, argv, flags, file_and_url, error);
  if (parsed == Parsed::kOk) {
    if (o.file == nullptr) {
      *error = "a FILE and a URL are required (stepback upload FILE URL)";
      return std::nullopt;
    }
    if (o.url.empty() && o.session.empty() && o.state == nullptr) {
      *error = "a URL (the session initiation URL), --session URI or --state FILE is required";
      return std::nullopt;
    }
    if (!check_trust_flags(o.trust, error)) return std::nullopt;
  }
  return parsed_options(parsed, o);
}

void print_upload_usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: stepback upload FILE URL [--chunk-size BYTES] [--content-type TYPE]\n"
      "                       [--state FILE] [--session URI] [-H 'Name: value']...\n"
      "                       [--cacert FILE | --capath DIR] [--tls-max-fragment BYTES]\n"
      "                       [--profile desktop|mobile] [--max-retries N] [--max-backoff S]\n"
      "                       [--deadline S] [--idempotency auto|strict|yes|no]\n"
      "                       [--speed-limit BYTES] [--speed-time S] [--limit-rate RATE]\n"
      "                       [--no-metered] [--metered-up-to SIZE] [--no-roaming]\n"
      "                       [--network-type TYPE] [--offline-limit S]\n"
      "                       [--jitter seed|full|equal|decorrelated|none]\n"
      "                       [--proxy URL] [--noproxy LIST] [--trace]\n"
      "\n"
      "Uploads FILE with Google's resumable upload protocol (Cloud Storage JSON API and the\n"
      "other Google APIs that use it). URL is the session initiation URL, e.g.\n"
      "https://storage.googleapis.com/upload/storage/v1/b/BUCKET/o?uploadType=resumable&name=N\n"
      "A POST opens the session; the file goes in chunks (PUT with Content-Range), read from\n"
      "disk as they are sent. After a failure (lost connection, stall, 408, 429, 5xx) the\n"
      "upload waits per the device profile, asks the server how much it holds (an empty PUT\n"
      "with Content-Range: bytes */SIZE) and goes on from there; bytes the server holds are\n"
      "never sent again. Progress (the server holding more) starts the backoff, the retry\n"
      "count and the deadline over. The final response body (the object's metadata) goes to\n"
      "stdout; progress goes to stderr, one line per exchange.\n"
      "\n"
      "  --chunk-size BYTES   bytes per PUT: a multiple of 256 KiB (e.g. 262144, 256K, 8M;\n"
      "                       default 8M); a failure costs at most one chunk sent again\n"
      "  --content-type TYPE  the object's type, sent as X-Upload-Content-Type\n"
      "                       (default application/octet-stream)\n"
      "  --state FILE         keep the upload's state in FILE (written atomically after the\n"
      "                       session opens, after each committed chunk and before each\n"
      "                       wait; removed on success): the same command run again after a\n"
      "                       crash or kill goes on with the same session, from what the\n"
      "                       server holds, after what was left of the wait. With FILE\n"
      "                       present, URL may be left out\n"
      "  --session URI        continue this session (printed by an earlier run) instead of\n"
      "                       opening one: the server is asked what it holds first\n"
      "  -H 'Name: value'     a header sent with every request, e.g. Authorization\n"
      "                       (repeatable, at most %zu)\n"
      "%s"
      "                       (default: %s when it exists)\n"
      "  --profile NAME       desktop or mobile: retry policy, timeouts and budget\n"
      "                       (default: %s, chosen at build time)\n"
      "  --max-retries N      retries without progress (0..1000)\n"
      "  --max-backoff S      the cap on one backoff wait, in seconds\n"
      "  --deadline S         no new attempt or wait past S seconds without progress (0: none)\n"
      "%s"
      "%s"
      "%s"
      "  --idempotency RULE   whether the session POST is sent again after it may have\n"
      "                       reached the server: auto (no: POST), strict, yes, no. A repeated\n"
      "                       POST at worst leaves an unused session. Chunks always are.\n"
      "  --jitter NAME        the backoff strategy; seed is the documented formula itself,\n"
      "                       min(2^n s + U[0, 1000] ms, cap) (default: the profile's)\n"
      "%s"
      "  --trace              one JSON object per event on stderr instead of progress lines\n"
      "                       (session, chunk, query, response, error, committed, wait,\n"
      "                       expired, done; each with t_ms)\n"
      "  --help               print this help\n"
      "\n"
      "exit codes:\n"
      "  0  success: the server holds the whole file (200 or 201)\n"
      "  1  internal error: the TLS library could not be set up\n"
      "  2  usage error: bad option, URL, header, chunk size, or CA file or directory\n"
      "  3  gave up retrying: retries exhausted, deadline, retry budget, or the server asked\n"
      "     for a longer delay than the profile allows (the session stays open: continue it\n"
      "     with --session)\n"
      "  4  an HTTP error that is not retried (e.g. 403), the session expired (404 or 410 on\n"
      "     the session URI: the whole file must be sent again), or a retryable error on a\n"
      "     session POST that is not idempotent\n"
      "  5  TLS verification failed (certificate chain, validity or host name)\n"
      "  6  another failure that is not retried: a malformed response or one that breaks the\n"
      "     protocol (no session URI, a bad Range), or a lost session POST\n"
      "  7  local I/O error: FILE cannot be read, the metadata cannot be written, or the\n"
      "     --state file is unusable (cut, damaged, not a state file, written by a newer\n"
      "     stepback, or another upload's); it is left as it is\n"
      "  8  the metadata had to start over and stdout cannot; nothing was spliced\n"
      "  15 the proxy asked for credentials (407): none were given, or it refused them\n"
      "  16 no network the upload may use came within --offline-limit\n"
      "  17 --defer-after: the upload was paused (with --state its state saved) to run again\n"
      "     later, as the last line says\n"
      "  130 Ctrl-C or SIGTERM stopped the upload; the session stays open and, with --state,\n"
      "      its state is saved: run the same command again to go on\n",
      kMaxHeaders, kTrustFlagsHelp, kSystemBundle, profiles::active.name, kSpeedFlagsHelp,
      kRateFlagHelp, kNetworkFlagsHelp, kProxyFlagsHelp);
}

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

  if (install_tls_arena() != https::Status::kOk) {
    return fail(kExitInternal, "cannot install the TLS arena");
  }
  https::TlsClientConfig tls;
  const bool use_tls = url.tls || (!session_text.empty() && session_url.tls);
  if (use_tls) {
    if (tls.init() != https::Status::kOk) {
      return fail(kExitInternal, "cannot set up TLS (entropy or crypto initialization failed)");
    }
    // The same trust rules as `stepback get`.
    if (!load_trust(o.trust, nullptr, 0, &tls, &error)) return fail(kExitUsage, error);
  }

  platform::Status random_status = platform::Status::kOk;
  Xoshiro128 random = platform::make_os_random(&random_status);
  RetryBudget budget(o.retry.profile->budget);
  const RetryContext context{*policy, random, &budget};
  const Millis start = platform::monotonic_now();
  UploadReporter reporter(stderr, o.trace, ::isatty(STDERR_FILENO) == 1, kPrefix, size, start);
  // The resolver reads resolv.conf here, before the loop, so no step() touches a file;
  // without a usable one every lookup fails with init()'s words, and numeric hosts work.
  https::CaresResolver resolver;
  (void)resolver.init(https::CaresOptions{});
  https::TcpTlsConnector connector(tls, resolver);  // http:// URLs go without TLS.
  static https::ProxyRoom proxy_room;  // What going through a proxy takes (about 2.7 KiB).
  if (connector.set_proxy(&proxy.config, &proxy_room) != https::Status::kOk) {
    return fail(kExitUsage, "the proxy's host name or credentials are too long");
  }
  if (!bind_network(o.retry, &connector, &error)) {
    return fail(kExitUsage, error);
  }
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
  transfer::Upload upload(connector, context, options);
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
