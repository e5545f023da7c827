#include "upload.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "client_loop.hpp"
#include "network_watch.hpp"
#include "output.hpp"
#include "request_flags.hpp"
#include "stack.hpp"
#include "state_file.hpp"
#include "upload_args.hpp"
#include "upload_reporter.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"

#ifndef STEPBACK_VERSION
#error "STEPBACK_VERSION must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback upload: ";
constexpr const char* kUserAgent = "stepback/" STEPBACK_VERSION;

// The session URI (Google's are about 200 bytes).
std::uint8_t g_session_uri[4096];

// Says `message` on stderr and returns `code`.
int fail(int code, const std::string& message) {
  std::fprintf(stderr, "%s%s\n", kPrefix, message.c_str());
  return code;
}

// The file, read in place: read(offset, span) with pread, so any chunk can be sent again.
struct FileSource {
  FileSource() = default;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  ~FileSource() {
    if (fd >= 0) ::close(fd);
  }
  int fd = -1;
  std::uint64_t size = 0;
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

// Opens `path`, a regular file, into *file; false after saying why on stderr.
bool open_file(const char* path, FileSource* file) {
  file->fd = ::open(path, O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (file->fd < 0 || ::fstat(file->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fprintf(stderr, "%scannot read '%s': %s\n", kPrefix, path,
                 file->fd < 0 ? std::strerror(errno) : "not a regular file");
    return false;
  }
  file->size = static_cast<std::uint64_t>(st.st_size);
  return true;
}

// Where the upload stands before it starts: the URL and session to use, and what a state file
// restored.
struct Resume {
  std::string_view url_text;
  std::string_view session_text;
  transfer::TransferState restored;
  bool resuming = false;
};

// With --state FILE present, the upload goes on where the last run left it (*resume), when
// the state is this upload's; kExitOk, or kExitLocalIo with *error.
int restore_state(const UploadArgs& o, std::uint64_t size, StateFile* state_file, Resume* resume,
                  std::string* error) {
  const transfer::TransferState& restored = resume->restored;
  switch (state_file->load(&resume->restored, error)) {
    case StateFile::Load::kRefused:
      return kExitLocalIo;
    case StateFile::Load::kAbsent:
      return kExitOk;
    case StateFile::Load::kLoaded:
      break;
  }
  const std::string named = std::string("the state file '") + o.state + "'";
  if (restored.kind != transfer::TransferKind::kUpload) {
    *error = named + " is not an upload's; remove it or pick another";
  } else if (restored.total_size != size) {
    *error = named + " is for a body of " + std::to_string(restored.total_size) + " bytes, but '" +
             o.file + "' has " + std::to_string(size) + " (changed?); remove it to start over";
  } else if (!o.url.empty() && o.url != restored.url()) {
    *error = named + " is for another upload URL (" + std::string(restored.url()) +
             "); remove it or pick another";
  } else if (!o.session.empty() && o.session != restored.session_uri()) {
    *error = named + " holds another session than --session";
  } else {
    resume->url_text = restored.url();
    resume->session_text = restored.session_uri();
    resume->resuming = true;
    return kExitOk;
  }
  return kExitLocalIo;
}

// The initiation URL (the session URI's when there is none) and the session URI, parsed;
// kExitOk, or kExitUsage with *error.
int parse_urls(const UploadArgs& o, const Resume& resume, https::Url* url, https::Url* session_url,
               std::string* error) {
  if (resume.url_text.empty() && resume.session_text.empty()) {
    *error = std::string("no state file '") + o.state + "' yet: the first run needs the URL";
    return kExitUsage;
  }
  if (!resume.url_text.empty() && https::parse_url(resume.url_text, url) != https::Status::kOk) {
    *error =
        "invalid URL '" + std::string(resume.url_text) + "' (expected https://host[:port]/path)";
    return kExitUsage;
  }
  if (!resume.session_text.empty() &&
      https::parse_url(resume.session_text, session_url) != https::Status::kOk) {
    *error = "invalid --session URI '" + std::string(resume.session_text) +
             "' (expected https://host[:port]/path)";
    return kExitUsage;
  }
  if (resume.url_text.empty()) *url = *session_url;
  return kExitOk;
}

// What `stepback upload` sends through: TLS when the URL or the session is https://, with the
// same trust rules as `stepback get`.
StackSpec stack_spec(const UploadArgs& o, bool tls, const ProxySetup& proxy) {
  StackSpec spec;
  spec.tls = tls;
  spec.trust = &o.trust;
  spec.proxy = &proxy;
  spec.binding = &o.retry;
  return spec;
}

transfer::UploadOptions upload_options(const UploadArgs& o, BodyOutput* output,
                                       UploadReporter& reporter) {
  transfer::UploadOptions options;
  options.timeouts = make_timeouts(o.retry);
  options.network = o.retry.network;
  options.buffers = client_buffers();
  options.session_uri = https::MutableBytes{g_session_uri, sizeof g_session_uri};
  options.metadata = body_sink(output);
  options.events = reporter.sink();
  options.progress = reporter.progress_policy();
  options.wall_now = &platform::wall_now;
  options.max_rate = o.retry.limit_rate;
  return options;
}

transfer::UploadSpec upload_spec(const UploadArgs& o, const https::Url& url, const Resume& resume,
                                 FileSource* file) {
  transfer::UploadSpec spec;
  spec.url = url;
  spec.session = resume.session_text;
  spec.body = https::BodySource{&read_file, file, file->size};
  spec.chunk_size = o.chunk_size;
  spec.content_type = o.content_type;
  spec.headers = o.headers;
  spec.header_count = o.header_count;
  spec.user_agent = kUserAgent;
  spec.idempotency = o.retry.idempotency;
  if (resume.resuming) {
    spec.resume.retries = resume.restored.retries;
    spec.resume.wait = transfer::remaining_wait(resume.restored, platform::wall_now());
    spec.resume.crc32c = resume.restored.crc32c;  // Of the first `committed` bytes, when saved.
    spec.resume.crc32c_length = resume.restored.committed;
  }
  return spec;
}

// How the upload's loop ended.
enum class LoopEnd : std::uint8_t { kDone, kStopped, kDeferred };

// What step_upload() steps, and how it ended.
struct Stepping {
  transfer::Upload* upload = nullptr;
  const UploadReporter* reporter = nullptr;
  StateFile* state = nullptr;         // --state; null: none.
  std::optional<Millis> defer_after;  // --defer-after.
  LoopEnd end = LoopEnd::kDone;
  https::RunHint hint;  // kDeferred: when to run again, from `deferred_at`.
  Millis deferred_at{};
};

// Steps the upload until it is done, or until a signal pauses it (kStopped), or, with
// --defer-after, until it has a longer wait than that or waits for a network (kDeferred).
// With --state, saves the upload's state between steps when it changed, and once more when
// it was stopped or deferred.
https::ClientNext step_upload(void* context, Millis now) {
  auto* s = static_cast<Stepping*>(context);
  const transfer::UploadNext next = s->upload->step(now);
  if (next.kind == transfer::UploadNext::Kind::kDone) return next;
  bool deferred = false;
  if (s->defer_after && next.kind == transfer::UploadNext::Kind::kWaitUntil) {
    s->hint = s->upload->run_hint(next);
    deferred = defer_now(s->hint, now, *s->defer_after);
  }
  if (stop_requested() || deferred) {
    // The session stays open on the server; the record says where it stood.
    s->upload->pause(now);
    if (s->state != nullptr) s->state->save_now(*s->upload, now);
    s->deferred_at = now;
    s->end = deferred ? LoopEnd::kDeferred : LoopEnd::kStopped;
    return https::ClientNext{};  // kDone.
  }
  if (s->state != nullptr) s->state->maybe_save(*s->upload, now, s->reporter->waits());
  return next;
}

// The end of an upload that ran: what ended it said, its state removed or saved, the
// metadata flushed. The exit code.
int finish_upload(const UploadArgs& o, const transfer::Upload& upload, UploadReporter& reporter,
                  const Stepping& stepping, BodyOutput* output, const FileSource& file,
                  Millis start) {
  if (stepping.end == LoopEnd::kStopped) {
    reporter.interrupted(platform::monotonic_now());
    (void)std::fflush(output->file);
    return kExitInterrupted;
  }
  if (stepping.end == LoopEnd::kDeferred) {
    const Millis at = stepping.deferred_at;
    report_deferred(kPrefix, stepping.hint, at,
                    o.trace ? std::optional<Millis>(at - start) : std::nullopt);
    reporter.interrupted(at, "saved");
    (void)std::fflush(output->file);
    return kExitDeferred;
  }
  const transfer::UploadResult& result = upload.result();
  if (stepping.state != nullptr) {
    if (result.outcome == Outcome::kSuccess || result.session_expired) {
      stepping.state->remove();
    } else {
      // The loop has ended: a later run starts a fresh one, from what the server holds.
      stepping.state->save_final(upload, platform::monotonic_now());
    }
  }
  if (std::fflush(output->file) != 0 && !output->failed) {
    output->failed = true;
    output->error = errno;
  }
  if (output->failed) {
    std::fprintf(stderr, "%scannot write the object's metadata to stdout: %s\n", kPrefix,
                 std::strerror(output->error));
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
  return exit_code(as_client, output->failed);
}

}  // namespace

int run_upload(int argc, char** argv) {
  std::string error;
  const std::optional<UploadArgs> parsed = parse_upload_args(argc, argv, &error);
  if (!parsed) return fail(kExitUsage, error);
  const UploadArgs& o = *parsed;
  if (o.help) {
    print_upload_usage(stdout);
    return kExitOk;
  }
  const std::optional<Policy> policy = make_policy(o.retry, &error);
  if (!policy) return fail(kExitUsage, error);
  FileSource file;
  if (!open_file(o.file, &file)) return kExitLocalIo;
  Resume resume{o.url, o.session, {}, false};
  std::optional<StateFile> state_file;
  if (o.state != nullptr) {
    state_file.emplace(o.state, o.url, kPrefix);
    if (const int code = restore_state(o, file.size, &*state_file, &resume, &error); code != 0) {
      return fail(code, error);
    }
  }
  https::Url url;
  https::Url session_url;
  if (const int code = parse_urls(o, resume, &url, &session_url, &error); code != kExitOk) {
    return fail(code, error);
  }
  static ProxySetup proxy;
  if (!make_proxy(o.proxy, url, &proxy, &error)) return fail(kExitUsage, error);
  BodyOutput output{stdout};
  buffer_output(&output);
  Stack stack;
  const bool tls = url.tls || (!resume.session_text.empty() && session_url.tls);
  if (const int code = stack.build(stack_spec(o, tls, proxy), &error); code != kExitOk) {
    return fail(code, error);
  }
  stack.load_session(o.trust, o.url, kPrefix);

  platform::Status random_status = platform::Status::kOk;
  Xoshiro128 random = platform::make_os_random(&random_status);
  RetryBudget budget(o.retry.profile->budget);
  const RetryContext context{*policy, random, &budget};
  const Millis start = platform::monotonic_now();
  UploadReporter reporter(stderr, o.trace, ::isatty(STDERR_FILENO) == 1, kPrefix, file.size, start);
  transfer::Upload upload(stack.connector(), context, upload_options(o, &output, reporter));
  reporter.attach(&upload);
  if (state_file) reporter.attach_state(o.state, state_file->writes());
  const transfer::UploadSpec spec = upload_spec(o, url, resume, &file);
  if (resume.resuming) reporter.restored(resume.restored, spec.resume.wait);
  const https::Status started = upload.start(spec);
  if (started != https::Status::kOk) {
    return fail(kExitUsage, started == https::Status::kBufferTooSmall
                                ? "the session URI is too long"
                                : "invalid upload: check the headers (-H), the URL and --session");
  }
  Stepping stepping;
  stepping.upload = &upload;
  stepping.reporter = &reporter;
  stepping.state = state_file ? &*state_file : nullptr;
  stepping.defer_after = o.retry.defer_after;
  run_transfer(TransferLoop{Stepper{&step_upload, &stepping}, network_changed_of(&upload),
                            o.retry.network_type, o.retry.interface},
               reporter);
  stack.store_session(kPrefix);
  return finish_upload(o, upload, reporter, stepping, &output, file, start);
}

}  // namespace stepback::tools
