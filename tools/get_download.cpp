#include "get_download.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "client_loop.hpp"
#include "network_watch.hpp"
#include "state_file.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/transfer/download.hpp"
#include "stepback/transfer/state.hpp"

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback get: ";

// The output stream's stdio buffer, installed before the first write so that stdio does not
// allocate one while the download runs.
char g_output_buffer[16 * 1024];

// Set by SIGINT and SIGTERM: the loop makes a last checkpoint and ends.
volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

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
  if (g_stop != 0 && !s->stopped) {
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
  BodyOutput output{command.output == nullptr ? stdout : nullptr};
  // -o FILE, a regular file or a new one: the body goes to FILE.part, renamed over FILE on
  // success only, with its checkpoint beside it. Anything else (/dev/null, a FIFO, a
  // terminal) is written in place and, like stdout, cannot start over or go on.
  const bool via_part = command.output != nullptr && writes_via_part(command.output);
  if (command.state != nullptr && !via_part) {
    std::fprintf(stderr, "%s--state needs -o FILE, a regular file (stdout cannot go on)\n", prefix);
    return kExitUsage;
  }
  const std::string part = via_part ? std::string(command.output) + ".part" : std::string();
  const std::string state_path =
      command.state != nullptr ? std::string(command.state) : part + ".state";
  StateFile state_file(state_path.c_str(), command.url_text, prefix);
  transfer::TransferState restored;
  bool resuming = false;
  if (via_part) {
    std::string error;
    switch (state_file.load(&restored, &error)) {
      case StateFile::Load::kRefused:
        std::fprintf(stderr, "%s%s\n", prefix, error.c_str());
        return kExitLocalIo;
      case StateFile::Load::kAbsent:
        break;
      case StateFile::Load::kLoaded: {
        if (restored.kind != transfer::TransferKind::kDownload ||
            (!command.url_may_change && restored.url() != command.url_text)) {
          std::fprintf(stderr,
                       "%sthe state file '%s' is %s; remove it (and '%s') or pick another\n",
                       prefix, state_path.c_str(),
                       restored.kind != transfer::TransferKind::kDownload
                           ? "not a download's"
                           : ("for another URL (" + std::string(restored.url()) + ")").c_str(),
                       part.c_str());
          return kExitLocalIo;
        }
        output.file = std::fopen(part.c_str(), "r+b");
        struct stat st {};
        if (output.file == nullptr || ::fstat(::fileno(output.file), &st) != 0 ||
            static_cast<std::uint64_t>(st.st_size) < restored.delivered) {
          std::fprintf(stderr,
                       "%s'%s' holds fewer bytes than its state file counts (%llu); "
                       "starting over\n",
                       prefix, part.c_str(), static_cast<unsigned long long>(restored.delivered));
          if (output.file != nullptr) std::fclose(output.file);
          output.file = nullptr;
          break;
        }
        // Bytes written after the last checkpoint are not trusted: cut back to it.
        if (::ftruncate(::fileno(output.file), static_cast<off_t>(restored.delivered)) != 0 ||
            std::fseek(output.file, 0, SEEK_END) != 0) {
          std::fprintf(stderr, "%scannot cut '%s' back to its checkpoint: %s\n", prefix,
                       part.c_str(), std::strerror(errno));
          std::fclose(output.file);
          return kExitLocalIo;
        }
        // A digest checked at the end must be of the bytes on the disk: the kept ones are
        // read back and hashed again; a part that changed since its checkpoint starts over.
        const transfer::KeptBytes kept = check_kept_part(restored, output.file);
        if (kept == transfer::KeptBytes::kDamaged || kept == transfer::KeptBytes::kUnreadable) {
          std::fprintf(stderr, "%s'%s' %s the %llu bytes its state file counts; starting over\n",
                       prefix, part.c_str(),
                       kept == transfer::KeptBytes::kDamaged
                           ? "no longer holds (they hash otherwise than when written)"
                           : "cannot be read back for",
                       static_cast<unsigned long long>(restored.delivered));
          std::fclose(output.file);
          output.file = nullptr;
          break;
        }
        resuming = true;
        break;
      }
    }
  }
  if (command.output != nullptr && output.file == nullptr) {
    const char* path = via_part ? part.c_str() : command.output;
    output.file = std::fopen(path, "wb");
    if (output.file == nullptr) {
      std::fprintf(stderr, "%scannot open '%s' for writing: %s\n", prefix, path,
                   std::strerror(errno));
      return kExitLocalIo;
    }
  }
  output.restartable = via_part;
  (void)std::setvbuf(output.file, g_output_buffer, _IOFBF, sizeof g_output_buffer);

  Checkpointing checkpointing{&output, &state_file};
  transfer::DownloadOptions options;
  options.client = command.client;
  options.client.body = body_sink(&output);
  options.checkpoint = command.checkpoint;
  options.max_rate = command.max_rate;
  options.range_size = command.range_size;
  if (via_part) options.checkpoints = transfer::CheckpointSink{&save_checkpoint, &checkpointing};
  transfer::Download download(*command.connector, *command.context, options);
  transfer::DownloadSpec spec;
  spec.url = command.request.head.url;
  spec.url_text = command.url_text;
  spec.url_may_change = command.url_may_change;
  spec.headers = command.request.head.headers;
  spec.header_count = command.request.head.header_count;
  spec.user_agent = command.request.head.user_agent;
  spec.host = command.request.head.host;
  spec.resume = resuming ? &restored : nullptr;
  const https::Status started = download.start(spec);
  if (started != https::Status::kOk) {
    if (resuming) {
      std::fprintf(stderr, "%srefusing the state file '%s': %s; remove it to start over\n", prefix,
                   state_path.c_str(), download.message());
      std::fclose(output.file);
      return kExitLocalIo;
    }
    std::fprintf(stderr, "%s%s\n", prefix,
                 started == https::Status::kBufferTooSmall
                     ? request_head_too_large()
                     : "invalid request: check the headers (-H) and the URL");
    return kExitUsage;
  }
  // (--trace says it in its checkpoints event.)
  if (resuming && !command.trace) {
    std::fprintf(stderr, "%sgoing on from byte %llu of '%s' (state in '%s')\n", prefix,
                 static_cast<unsigned long long>(restored.delivered), part.c_str(),
                 state_path.c_str());
  }
  command.reporter->attach(&download.client());
  Stepping stepping;
  stepping.download = &download;
  stepping.defer_after = command.defer_after;
  struct sigaction action {};
  action.sa_handler = &on_stop_signal;
  struct sigaction old_int {};
  struct sigaction old_term {};
  (void)::sigaction(SIGINT, &action, &old_int);
  (void)::sigaction(SIGTERM, &action, &old_term);
  // The network: as --network-type says, or as the default routes say and then follow.
  NetworkWatch watch(NetworkChanged{[](void* d, Millis now, const https::NetworkInfo& network) {
                                      static_cast<transfer::Download*>(d)->network_changed(now,
                                                                                           network);
                                    },
                                    &download});
  https::NetworkInfo network;
  watch.set_device(command.interface);
  const bool watching = !command.network_type && watch.open(&network);
  if (command.network_type) network = *command.network_type;
  if (command.network_type || !network.connected) {
    download.network_changed(platform::monotonic_now(), network);
  }
  run_steps(Stepper{&step_download, &stepping}, *command.reporter, watching ? &watch : nullptr);
  (void)::sigaction(SIGINT, &old_int, nullptr);
  (void)::sigaction(SIGTERM, &old_term, nullptr);
  const https::ClientResult& result = download.result();
  const Millis end = platform::monotonic_now();
  show_last_error_body(result, download.client().error_body(),
                       command.trace ? std::optional<Millis>(end - command.start) : std::nullopt);
  finish_output(&output, command.output != nullptr, prefix,
                via_part ? part.c_str() : (command.output != nullptr ? command.output : "stdout"));
  const int code = stepping.stopped    ? kExitInterrupted
                   : stepping.deferred ? kExitDeferred
                                       : exit_code(result, output.failed);
  if (stepping.deferred) {
    report_deferred(prefix, stepping.hint, stepping.deferred_at,
                    command.trace ? std::optional<Millis>(end - command.start) : std::nullopt);
  }
  if (command.trace && via_part && (download.checkpoints() > 0 || resuming)) {
    std::fprintf(stderr,
                 "{\"event\":\"checkpoints\",\"t_ms\":%llu,\"made\":%u,\"stored\":%u,"
                 "\"resumed_from\":%llu,\"delivered\":%llu}\n",
                 static_cast<unsigned long long>((end - command.start).count()),
                 download.checkpoints(), checkpointing.stored,
                 static_cast<unsigned long long>(download.resumed_from()),
                 static_cast<unsigned long long>(download.delivered()));
  }
  if (!via_part) return code;
  if (code == kExitOk) {
    if (std::rename(part.c_str(), command.output) != 0) {
      std::fprintf(stderr, "%scannot rename '%s' to '%s': %s\n", prefix, part.c_str(),
                   command.output, std::strerror(errno));
      return kExitLocalIo;
    }
    state_file.remove();
    return code;
  }
  // A pre-signed URL that expired with no fresh one in --url-file: the bytes are good.
  const bool expired = download.client().url_expired();
  if ((worth_keeping(code) || expired) && checkpointing.stored_delivered > 0) {
    if (expired && !command.trace) {
      std::fprintf(stderr,
                   "%sthe URL expired and no fresh one came; kept '%s' (%llu bytes "
                   "checkpointed) and '%s': run the same command again with a fresh URL to go "
                   "on\n",
                   prefix, part.c_str(),
                   static_cast<unsigned long long>(checkpointing.stored_delivered),
                   state_path.c_str());
    } else if (!command.trace) {
      std::fprintf(stderr,
                   "%s%skept '%s' (%llu bytes checkpointed) and '%s': run the same command "
                   "again to go on\n",
                   prefix, code == kExitInterrupted ? "interrupted; " : "", part.c_str(),
                   static_cast<unsigned long long>(checkpointing.stored_delivered),
                   state_path.c_str());
    }
    return code;
  }
  (void)std::remove(part.c_str());
  state_file.remove();
  return code;
}

}  // namespace stepback::tools
