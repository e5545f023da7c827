#include "get_download.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "client_loop.hpp"
#include "network_watch.hpp"
#include "output.hpp"
#include "state_file.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/transfer/download.hpp"
#include "stepback/transfer/state.hpp"

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback get: ";

// Where checkpoints go: the part file made durable, then the record beside it.
struct Checkpointing {
  BodyOutput* output = nullptr;
  StateFile* state = nullptr;
  std::uint64_t stored_delivered = 0;  // Of the last record stored.
  std::uint32_t stored = 0;
};

bool save_checkpoint(void* context, const transfer::TransferState& state) {
  auto* c = static_cast<Checkpointing*>(context);
  // The record may only count bytes that are on the disk: the data first, then the record.
  if (std::fflush(c->output->file) != 0 || ::fdatasync(::fileno(c->output->file)) != 0) {
    return false;
  }
  if (!c->state->store(state)) return false;
  c->stored_delivered = state.delivered;
  ++c->stored;
  return true;
}

struct Stepping {
  transfer::Download* download = nullptr;
  std::optional<Millis> defer_after;  // --defer-after.
  bool stopped = false;               // A signal ended the download.
  bool deferred = false;              // --defer-after ended it, at `deferred_at`, with `hint`.
  Millis deferred_at{};
  https::RunHint hint;
};

https::ClientNext step_download(void* context, Millis now) {
  auto* s = static_cast<Stepping*>(context);
  // SIGINT or SIGTERM (StopSignals): a last checkpoint and the end.
  if (stop_requested() && !s->stopped) {
    s->stopped = true;
    s->download->cancel(now);
  }
  const https::ClientNext next = s->download->step(now);
  if (!s->defer_after || s->stopped || s->deferred) return next;
  const https::RunHint hint = s->download->run_hint(next);
  if (!defer_now(hint, now, *s->defer_after)) return next;
  // Handed to the scheduler: a last checkpoint (with the wait under way) and the end.
  s->deferred = true;
  s->deferred_at = now;
  s->hint = hint;
  s->download->cancel(now);
  return s->download->step(now);
}

// The part file's first state.delivered bytes against the checkpoint's running digests
// (transfer::check_kept_bytes), read with pread so the stream's position stays at the end.
transfer::KeptBytes check_kept_part(const transfer::TransferState& state, std::FILE* part) {
  static std::uint8_t scratch[64 * 1024];
  int fd = ::fileno(part);
  const https::BodySource source{
      [](void* context, std::uint64_t offset, https::MutableBytes out) -> std::size_t {
        const int f = *static_cast<int*>(context);
        for (;;) {
          const ssize_t n = ::pread(f, out.data, out.size, static_cast<off_t>(offset));
          if (n >= 0) return static_cast<std::size_t>(n);
          if (errno != EINTR) return 0;
        }
      },
      &fd, state.delivered};
  return transfer::check_kept_bytes(state, source, https::MutableBytes{scratch, sizeof scratch});
}

// Whether a download that ended with `code` leaves its part and record for the next run: when
// it may still finish (the network, the server's patience, the time limit, this side's
// disk), not when the object is gone or the bytes are wrong.
bool worth_keeping(int code) {
  return code == kExitGaveUp || code == kExitTransport || code == kExitTimeLimit ||
         code == kExitLocalIo || code == kExitTlsVerify || code == kExitInterrupted ||
         code == kExitOffline || code == kExitDeferred;
}

// A download's pieces, for the steps of run_download_command().
struct Run {
  const DownloadCommand& command;
  const OutputPath& target;
  const std::string& state_path;
  StateFile& state_file;
  transfer::TransferState& restored;
  BodyOutput& output;
  bool resuming = false;
};

// How a kept part stands against its state file.
enum class Kept : std::uint8_t { kGoesOn, kStartOver, kFailed };

// Opens the part that `run.restored` (just loaded) counts, cut back to its checkpoint and
// checked against its digests, into run.output.
Kept open_kept_part(Run& run) {
  const char* prefix = run.command.prefix;
  const char* part = run.target.part();
  const transfer::TransferState& restored = run.restored;
  std::FILE*& file = run.output.file;
  file = std::fopen(part, "r+b");
  struct stat st {};
  if (file == nullptr || ::fstat(::fileno(file), &st) != 0 ||
      static_cast<std::uint64_t>(st.st_size) < restored.delivered) {
    std::fprintf(stderr,
                 "%s'%s' holds fewer bytes than its state file counts (%llu); "
                 "starting over\n",
                 prefix, part, static_cast<unsigned long long>(restored.delivered));
    if (file != nullptr) std::fclose(file);
    file = nullptr;
    return Kept::kStartOver;
  }
  // Bytes written after the last checkpoint are not trusted: cut back to it.
  if (::ftruncate(::fileno(file), static_cast<off_t>(restored.delivered)) != 0 ||
      std::fseek(file, 0, SEEK_END) != 0) {
    std::fprintf(stderr, "%scannot cut '%s' back to its checkpoint: %s\n", prefix, part,
                 std::strerror(errno));
    std::fclose(file);
    return Kept::kFailed;
  }
  // A digest checked at the end must be of the bytes on the disk: the kept ones are
  // read back and hashed again; a part that changed since its checkpoint starts over.
  const transfer::KeptBytes kept = check_kept_part(restored, file);
  if (kept == transfer::KeptBytes::kDamaged || kept == transfer::KeptBytes::kUnreadable) {
    std::fprintf(stderr, "%s'%s' %s the %llu bytes its state file counts; starting over\n", prefix,
                 part,
                 kept == transfer::KeptBytes::kDamaged
                     ? "no longer holds (they hash otherwise than when written)"
                     : "cannot be read back for",
                 static_cast<unsigned long long>(restored.delivered));
    std::fclose(file);
    file = nullptr;
    return Kept::kStartOver;
  }
  return Kept::kGoesOn;
}

// Takes up FILE.part where its state file says the last run left it (run->resuming), or
// leaves it to start over; kExitOk, or kExitLocalIo when the state file is refused.
int take_up_part(Run* run) {
  const DownloadCommand& command = run->command;
  std::string error;
  switch (run->state_file.load(&run->restored, &error)) {
    case StateFile::Load::kRefused:
      std::fprintf(stderr, "%s%s\n", command.prefix, error.c_str());
      return kExitLocalIo;
    case StateFile::Load::kAbsent:
      return kExitOk;
    case StateFile::Load::kLoaded:
      break;
  }
  const transfer::TransferState& restored = run->restored;
  if (restored.kind != transfer::TransferKind::kDownload ||
      (!command.url_may_change && restored.url() != command.url_text)) {
    std::fprintf(stderr, "%sthe state file '%s' is %s; remove it (and '%s') or pick another\n",
                 command.prefix, run->state_path.c_str(),
                 restored.kind != transfer::TransferKind::kDownload
                     ? "not a download's"
                     : ("for another URL (" + std::string(restored.url()) + ")").c_str(),
                 run->target.part());
    return kExitLocalIo;
  }
  const Kept kept = open_kept_part(*run);
  run->resuming = kept == Kept::kGoesOn;
  return kept == Kept::kFailed ? kExitLocalIo : kExitOk;
}

// The Download's options: the command's client options with the body to run.output, and
// checkpoints to `checkpointing` (null: none).
transfer::DownloadOptions download_options(const Run& run, Checkpointing* checkpointing) {
  transfer::DownloadOptions options;
  options.client = run.command.client;
  options.client.body = body_sink(&run.output);
  if (run.command.gate != nullptr)
    options.client.body = run.command.gate->sink(options.client.body);
  options.checkpoint = run.command.checkpoint;
  options.max_rate = run.command.max_rate;
  options.range_size = run.command.range_size;
  if (checkpointing != nullptr) {
    options.checkpoints = transfer::CheckpointSink{&save_checkpoint, checkpointing};
  }
  return options;
}

// Starts `download`; kExitOk, or the exit code of a refused start, said.
int start_download(const Run& run, transfer::Download* download) {
  const DownloadCommand& command = run.command;
  transfer::DownloadSpec spec;
  spec.url = command.request.head.url;
  spec.url_text = command.url_text;
  spec.url_may_change = command.url_may_change;
  spec.headers = command.request.head.headers;
  spec.header_count = command.request.head.header_count;
  spec.user_agent = command.request.head.user_agent;
  spec.host = command.request.head.host;
  spec.resume = run.resuming ? &run.restored : nullptr;
  const https::Status started = download->start(spec);
  if (started == https::Status::kOk) return kExitOk;
  if (run.resuming) {
    std::fprintf(stderr, "%srefusing the state file '%s': %s; remove it to start over\n",
                 command.prefix, run.state_path.c_str(), download->message());
    std::fclose(run.output.file);
    return kExitLocalIo;
  }
  std::fprintf(stderr, "%s%s\n", command.prefix,
               started == https::Status::kBufferTooSmall
                   ? request_head_too_large()
                   : "invalid request: check the headers (-H) and the URL");
  return kExitUsage;
}

// After a download ended with `code` (not success): its part and state kept for the next
// run, with words on how to go on, or both removed.
void keep_or_remove(const Run& run, const transfer::Download& download,
                    const Checkpointing& checkpointing, int code) {
  const DownloadCommand& command = run.command;
  // A pre-signed URL that expired with no fresh one in --url-file: the bytes are good.
  const bool expired = download.client().url_expired();
  if ((worth_keeping(code) || expired) && checkpointing.stored_delivered > 0) {
    if (command.trace) return;
    if (expired) {
      std::fprintf(stderr,
                   "%sthe URL expired and no fresh one came; kept '%s' (%llu bytes "
                   "checkpointed) and '%s': run the same command again with a fresh URL to go "
                   "on\n",
                   command.prefix, run.target.part(),
                   static_cast<unsigned long long>(checkpointing.stored_delivered),
                   run.state_path.c_str());
    } else {
      std::fprintf(
          stderr,
          "%s%skept '%s' (%llu bytes checkpointed) and '%s': run the same command "
          "again to go on\n",
          command.prefix, code == kExitInterrupted ? "interrupted; " : "", run.target.part(),
          static_cast<unsigned long long>(checkpointing.stored_delivered), run.state_path.c_str());
    }
    return;
  }
  (void)std::remove(run.target.part());
  run.state_file.remove();
}

// The end of a download that ran: its output finished, what ended it said, and its part
// renamed over FILE, kept or removed. The exit code.
int finish_download(const Run& run, const transfer::Download& download, const Stepping& stepping,
                    const Checkpointing& checkpointing) {
  const DownloadCommand& command = run.command;
  const https::ClientResult& result = download.result();
  const Millis end = platform::monotonic_now();
  const std::optional<Millis> trace_at =
      command.trace ? std::optional<Millis>(end - command.start) : std::nullopt;
  show_last_error_body(result, download.client().error_body(), trace_at);
  if (command.gate != nullptr && !command.gate->finish()) run.output.failed = true;
  run.target.finish(&run.output, command.prefix);
  const int code = stepping.stopped    ? kExitInterrupted
                   : stepping.deferred ? kExitDeferred
                                       : exit_code(result, run.output.failed);
  // -f changes what the run says, not what it keeps: a part checkpointed before a 503 that
  // outlasted the retries is still there for the next run.
  const int said = command.fail ? fail_exit_code(result, code) : code;
  if (stepping.deferred) {
    report_deferred(command.prefix, stepping.hint, stepping.deferred_at, trace_at);
  }
  if (command.trace && run.target.via_part() && (download.checkpoints() > 0 || run.resuming)) {
    std::fprintf(stderr,
                 "{\"event\":\"checkpoints\",\"t_ms\":%llu,\"made\":%u,\"stored\":%u,"
                 "\"resumed_from\":%llu,\"delivered\":%llu}\n",
                 static_cast<unsigned long long>((end - command.start).count()),
                 download.checkpoints(), checkpointing.stored,
                 static_cast<unsigned long long>(download.resumed_from()),
                 static_cast<unsigned long long>(download.delivered()));
  }
  if (!run.target.via_part()) return said;
  if (code != kExitOk) {
    keep_or_remove(run, download, checkpointing, code);
    return said;
  }
  if (!run.target.commit(command.prefix)) return kExitLocalIo;
  run.state_file.remove();
  return code;
}

}  // namespace

void show_last_error_body(const https::ClientResult& result, https::ConstBytes body,
                          std::optional<Millis> trace_at) {
  const bool gave_up =
      result.outcome == Outcome::kRetriesExhausted || result.outcome == Outcome::kDeadline ||
      result.outcome == Outcome::kBudgetExhausted || result.outcome == Outcome::kServerDelayTooLong;
  if (!gave_up || result.status == 0 || body.size == 0) return;
  std::string_view text(reinterpret_cast<const char*>(body.data), body.size);
  // The line ends here: a body's own line end would show as '?' before it.
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  LineBuffer line;
  if (trace_at) {
    line.appendf("{\"event\":\"last_body\",\"t_ms\":%llu,\"status\":%u,\"body\":",
                 static_cast<unsigned long long>(trace_at->count()),
                 static_cast<unsigned>(result.status));
    append_json_string(&line, text);
    line.append("}");
  } else {
    line.appendf("%sthe last answer (%u) said: ", kPrefix, static_cast<unsigned>(result.status));
    append_printable(&line, text);
    if (text.size() > kMaxFieldBytes) line.append(" [...]");
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

int run_download_command(const DownloadCommand& command) {
  const char* prefix = command.prefix;
  // -o FILE, a regular file or a new one: the body goes to FILE.part, renamed over FILE on
  // success only, with its checkpoint beside it. Anything else (/dev/null, a FIFO, a
  // terminal) is written in place and, like stdout, cannot start over or go on.
  const OutputPath target(command.output);
  if (command.state != nullptr && !target.via_part()) {
    std::fprintf(stderr, "%s--state needs -o FILE, a regular file (stdout cannot go on)\n", prefix);
    return kExitUsage;
  }
  const std::string state_path =
      command.state != nullptr ? std::string(command.state) : std::string(target.part()) + ".state";
  StateFile state_file(state_path.c_str(), command.url_text, prefix);
  transfer::TransferState restored;
  BodyOutput output{command.output == nullptr ? stdout : nullptr};
  Run run{command, target, state_path, state_file, restored, output};
  if (target.via_part()) {
    if (const int code = take_up_part(&run); code != kExitOk) return code;
  }
  if (command.output != nullptr && output.file == nullptr && !target.create(&output, prefix)) {
    return kExitLocalIo;
  }
  output.restartable = target.via_part();
  buffer_output(&output);

  Checkpointing checkpointing{&output, &state_file};
  transfer::Download download(*command.connector, *command.context,
                              download_options(run, target.via_part() ? &checkpointing : nullptr));
  if (const int code = start_download(run, &download); code != kExitOk) return code;
  // (--trace says it in its checkpoints event.)
  if (run.resuming && !command.trace && !command.silent) {
    std::fprintf(stderr, "%sgoing on from byte %llu of '%s' (state in '%s')\n", prefix,
                 static_cast<unsigned long long>(restored.delivered), target.part(),
                 state_path.c_str());
  }
  command.reporter->attach(&download.client());
  Stepping stepping;
  stepping.download = &download;
  stepping.defer_after = command.defer_after;
  run_transfer(TransferLoop{Stepper{&step_download, &stepping}, network_changed_of(&download),
                            command.network_type, command.interface},
               *command.reporter);
  return finish_download(run, download, stepping, checkpointing);
}

}  // namespace stepback::tools
