#include "get_operation.hpp"

#include <poll.h>

#include <cstring>
#include <string_view>

#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/transfer/operation_json.hpp"

namespace stepback::tools {
namespace {

// The latest answer (the Operation, its response or error) lives here whole. Static: a
// created Memorystore instance is 1-2 KiB; an answer that does not fit fails as malformed.
std::uint8_t g_operation[32 * 1024];

// How often a live countdown is redrawn.
// Longest decoded verb and statusDetail kept for the progress line (append_printable and
// append_json_string show at most 200 bytes of any field).
constexpr std::size_t kMaxField = 200;

double seconds(Millis m) { return static_cast<double>(m.count()) / 1000.0; }

// A raw JSON string of the server's (metadata.verb, statusDetail), decoded into `out`.
std::string_view decoded(std::string_view raw, char* out, std::size_t size) {
  const std::size_t n = transfer::json_decode_string(
      raw, https::MutableBytes{reinterpret_cast<std::uint8_t*>(out), size});
  return std::string_view(out, n);
}

// Progress of an operation: the plain get's Reporter for the requests, and the operation's
// own lines (a live line on a terminal) and --trace events (operation, poll, done). While
// polling, a poll's first attempt is shown only when it goes wrong, so a healthy operation
// reads as one line per poll, not two.
class OperationReporter {
 public:
  explicit OperationReporter(const OperationCommand& c)
      : c_(c), forward_(c.reporter->sink()), countdown_(c.countdown && !c.trace) {}

  https::EventSink client_sink() { return https::EventSink{&OperationReporter::on_client, this}; }
  transfer::OperationEventSink sink() {
    return transfer::OperationEventSink{&OperationReporter::on_operation, this};
  }
  bool wants_ticks() const { return countdown_ && waiting_; }

  void tick(Millis now) {
    if (!wants_ticks() || now - last_draw_ < kTick) return;
    last_draw_ = now;
    draw(now);
  }

  // The closing lines, once the operation is done.
  void finish(const transfer::Operation& op) {
    end_line();
    const transfer::OperationResult& r = op.result();
    if (c_.trace) {
      trace_done(op);
      return;
    }
    std::FILE* err = c_.err;
    const char* p = c_.prefix;
    const std::string_view name = op.name();
    const int name_size = static_cast<int>(name.size());
    switch (r.outcome) {
      case transfer::OperationOutcome::kSucceeded:
        std::fprintf(err, "%soperation %.*s done after %u poll%s%s\n", p, name_size, name.data(),
                     r.polls, r.polls == 1 ? "" : "s",
                     r.response_refused ? " (its response could not be written)" : "");
        return;
      case transfer::OperationOutcome::kFailed: {
        LineBuffer line;
        line.appendf("%soperation %.*s finished with an error: %d %s: ", p, name_size, name.data(),
                     static_cast<int>(r.error.code),
                     r.error.code_name[0] != '\0' ? r.error.code_name : "(unknown code)");
        append_printable(&line, r.error.message);
        std::fprintf(err, "%s\n", line.c_str());
        if (!r.error.details.empty() && r.error.details != "[]") {
          line.clear();
          line.append(p);
          line.append("  details: ");
          append_printable(&line, r.error.details);
          std::fprintf(err, "%s\n", line.c_str());
        }
        return;
      }
      case transfer::OperationOutcome::kPollingDeadline:
        std::fprintf(err,
                     "%sgave up polling: operation %.*s was not done after %u poll%s (the "
                     "polling deadline, %.0f s, passed); it may still finish\n",
                     p, name_size, name.data(), r.polls, r.polls == 1 ? "" : "s",
                     seconds(c_.polling.total_deadline));
        return;
      case transfer::OperationOutcome::kAlreadyExists:
      case transfer::OperationOutcome::kGaveUpRetrying:
      case transfer::OperationOutcome::kRequestFailed:
      case transfer::OperationOutcome::kMalformed:
      case transfer::OperationOutcome::kCancelled: {
        LineBuffer line;
        line.append(p);
        line.append(r.message);
        if (r.error.present && !r.error.message.empty()) {
          line.append(": ");
          append_printable(&line, r.error.message);
        }
        if (r.outcome != transfer::OperationOutcome::kAlreadyExists &&
            r.outcome != transfer::OperationOutcome::kCancelled) {
          line.appendf(" (%s after %u attempt%s", to_string(r.request.outcome), r.request.attempts,
                       r.request.attempts == 1 ? "" : "s");
          if (r.request.status != 0)
            line.appendf(", HTTP %u", static_cast<unsigned>(r.request.status));
          if (r.request.error != https::Status::kOk) {
            line.appendf(", %s", https::to_string(r.request.error));
          }
          line.append(")");
        }
        std::fprintf(err, "%s\n", line.c_str());
        return;
      }
    }
  }

 private:
  static void on_client(void* self, const https::ClientEvent& e) {
    static_cast<OperationReporter*>(self)->client(e);
  }
  static void on_operation(void* self, const transfer::OperationEvent& e) {
    static_cast<OperationReporter*>(self)->operation(e);
  }

  void forward(const https::ClientEvent& e) {
    end_line();
    forward_.on_event(forward_.context, e);
  }

  void client(const https::ClientEvent& e) {
    using Kind = https::ClientEvent::Kind;
    // An operation's answers are a few KiB of JSON: no meter for them.
    if (e.kind == Kind::kProgress) return;
    if (e.kind == Kind::kDone) {
      // The operation's own done event and closing lines say how it ended (the request's
      // outcome included); the Reporter only ends its line.
      held_ = false;
      if (c_.trace) return;
      https::ClientEvent quiet = e;
      quiet.outcome = Outcome::kSuccess;
      forward(quiet);
      return;
    }
    if (c_.trace || !polling_) {
      forward(e);
      return;
    }
    // A poll: its first attempt is held until it turns out to need showing.
    if (e.kind == Kind::kAttempt && e.attempt == 1) {
      held_ = true;
      held_event_ = e;
      return;
    }
    if (e.kind == Kind::kResponse && e.attempt == 1 && e.status / 100 == 2) {
      held_ = false;
      return;
    }
    if (held_) {
      held_ = false;
      forward(held_event_);
    }
    forward(e);
  }

  void operation(const transfer::OperationEvent& e) {
    using Kind = transfer::OperationEvent::Kind;
    switch (e.kind) {
      case Kind::kOperation:
      case Kind::kPolled:
        polls_ = e.poll;
        if (e.kind == Kind::kOperation) {
          verb_ = decoded(e.verb, verb_text_, sizeof verb_text_);
        }
        detail_ = decoded(e.status_detail, detail_text_, sizeof detail_text_);
        if (c_.trace) {
          pending_.clear();
          pending_.appendf("{\"event\":\"%s\",\"t_ms\":%llu",
                           e.kind == Kind::kOperation ? "operation" : "poll",
                           static_cast<unsigned long long>((e.at - c_.start).count()));
          if (e.kind == Kind::kOperation) {
            pending_.append(",\"name\":");
            append_json_string(&pending_, e.name);
            pending_.append(",\"verb\":");
            append_json_string(&pending_, verb_);
          } else {
            pending_.appendf(",\"n\":%u", e.poll);
          }
          pending_.append(",\"status_detail\":");
          append_json_string(&pending_, detail_);
          pending_.appendf(",\"done\":%s", e.done ? "true" : "false");
          pending_open_ = true;
          return;
        }
        headline(e);
        return;
      case Kind::kWait:
        if (c_.trace) {
          if (pending_open_) {
            pending_.appendf(",\"next_poll_ms\":%llu}\n",
                             static_cast<unsigned long long>(e.wait.count()));
            std::fputs(pending_.c_str(), c_.err);
            pending_open_ = false;
          }
          return;
        }
        wake_ = e.at + e.wait;
        if (countdown_) {
          waiting_ = true;
          last_draw_ = e.at;
          draw(e.at);
        } else {
          line_.appendf(", %s poll in %.2f s", e.poll == 1 ? "first" : "next", seconds(e.wait));
          end_line();
        }
        return;
      case Kind::kPoll:
        polling_ = true;
        if (countdown_ && live_) {
          waiting_ = false;
          std::fprintf(c_.err, "\r%s, polling...\x1b[K", line_.c_str());
          std::fflush(c_.err);
        }
        return;
      case Kind::kDone:
        if (c_.trace && pending_open_) {
          pending_.append("}\n");
          std::fputs(pending_.c_str(), c_.err);
          pending_open_ = false;
        }
        return;
    }
  }

  // The line of an answer: "operation NAME (create): Creating instance" after the mutation,
  // "poll 3: not done (Creating instance)" after a poll.
  void headline(const transfer::OperationEvent& e) {
    end_line();
    line_.clear();
    line_.append(c_.prefix);
    if (e.kind == transfer::OperationEvent::Kind::kOperation) {
      line_.append("operation ");
      append_printable(&line_, e.name);
      if (!verb_.empty()) {
        line_.append(" (");
        append_printable(&line_, verb_);
        line_.append(")");
      }
      line_.append(e.done ? ": done" : ": not done");
      if (!detail_.empty()) {
        line_.append(", ");
        append_printable(&line_, detail_);
      }
    } else {
      line_.appendf("poll %u: %s", e.poll, e.done ? "done" : "not done");
      if (!detail_.empty()) {
        line_.append(" (");
        append_printable(&line_, detail_);
        line_.append(")");
      }
    }
    live_ = true;
    if (e.done) end_line();
  }

  void draw(Millis now) {
    std::fprintf(c_.err, "\r%s, %u poll%s, next poll in %.1f s\x1b[K", line_.c_str(), polls_,
                 polls_ == 1 ? "" : "s", seconds(wake_ - now));
    std::fflush(c_.err);
  }

  void end_line() {
    if (!live_) return;
    if (countdown_ && waiting_) {
      std::fprintf(c_.err, "\r%s, %u poll%s\x1b[K\n", line_.c_str(), polls_,
                   polls_ == 1 ? "" : "s");
    } else if (countdown_) {
      std::fprintf(c_.err, "\r%s\x1b[K\n", line_.c_str());
    } else {
      std::fprintf(c_.err, "%s\n", line_.c_str());
    }
    live_ = false;
    waiting_ = false;
  }

  void trace_done(const transfer::Operation& op) {
    const transfer::OperationResult& r = op.result();
    LineBuffer j;
    j.appendf("{\"event\":\"done\",\"t_ms\":%llu,\"outcome\":\"%s\",\"polls\":%u,\"name\":",
              static_cast<unsigned long long>((platform::monotonic_now() - c_.start).count()),
              transfer::to_string(r.outcome), r.polls);
    append_json_string(&j, op.name());
    j.appendf(",\"phase\":\"%s\",\"request_outcome\":\"%s\",\"attempts\":%u",
              transfer::to_string(r.phase), to_string(r.request.outcome), r.request.attempts);
    if (r.request.status != 0) j.appendf(",\"status\":%u", static_cast<unsigned>(r.request.status));
    if (r.error.present) {
      j.appendf(",\"error_code\":%d", static_cast<int>(r.error.code));
      if (r.error.code_name[0] != '\0') j.appendf(",\"error_name\":\"%s\"", r.error.code_name);
      if (!r.error.status.empty()) {
        j.append(",\"error_status\":");
        append_json_string(&j, r.error.status);
      }
      j.append(",\"error_message\":");
      append_json_string(&j, r.error.message);
    }
    j.append(",\"message\":");
    append_json_string(&j, r.message);
    j.appendf(",\"connections\":%u,\"resumed\":%s", op.client().connections(),
              op.client().resumed() ? "true" : "false");
    const https::TlsArenaUsage arena = https::tls_arena_usage();
    j.appendf(",\"arena_peak\":%zu}\n", arena.peak_bytes);
    std::fputs(j.c_str(), c_.err);
  }

  const OperationCommand& c_;
  const https::EventSink forward_;
  const bool countdown_;
  bool polling_ = false;  // The mutation is answered; requests now are polls.
  bool held_ = false;     // held_event_ is a poll's first kAttempt, not yet shown.
  https::ClientEvent held_event_;
  LineBuffer line_;       // The current answer's line, without its newline.
  bool live_ = false;     // line_ is on screen (or due) and not yet ended.
  bool waiting_ = false;  // A countdown to the next poll is on screen.
  Millis wake_{};
  Millis last_draw_{};
  std::uint32_t polls_ = 0;
  LineBuffer pending_;  // --trace: an operation or poll event awaiting next_poll_ms.
  bool pending_open_ = false;
  char verb_text_[64] = {};
  char detail_text_[kMaxField] = {};
  std::string_view verb_;
  std::string_view detail_;
};

}  // namespace

PollingPolicy polling_for(const profiles::DeviceProfile& profile, std::optional<Millis> deadline) {
  PollingPolicy p = profile.polling;
  if (deadline) p.total_deadline = *deadline;
  return p;
}

int operation_exit_code(const transfer::OperationResult& result, bool output_failed) {
  if (output_failed || result.response_refused) return kExitLocalIo;
  switch (result.outcome) {
    case transfer::OperationOutcome::kSucceeded:
      return kExitOk;
    case transfer::OperationOutcome::kFailed:
      return kExitOperationError;
    case transfer::OperationOutcome::kPollingDeadline:
      return kExitGaveUpPolling;
    case transfer::OperationOutcome::kAlreadyExists:
      return kExitAlreadyExists;
    case transfer::OperationOutcome::kGaveUpRetrying:
      return kExitGaveUp;
    case transfer::OperationOutcome::kRequestFailed:
      return exit_code(result.request, false);
    case transfer::OperationOutcome::kMalformed:
      return kExitTransport;
    case transfer::OperationOutcome::kCancelled:
      break;
  }
  return kExitInternal;
}

int run_operation_command(const OperationCommand& c) {
  OperationReporter progress(c);
  transfer::OperationOptions options;
  options.client = c.client;
  options.client.events = progress.client_sink();
  options.operation_buffer = https::MutableBytes{g_operation, sizeof g_operation};
  options.response = body_sink(c.output);
  options.polling = c.polling;
  options.events = progress.sink();
  transfer::Operation op(*c.connector, *c.context, options);
  transfer::OperationSpec spec;
  spec.mutation = c.mutation;
  const https::Status started = op.start(spec);
  if (started != https::Status::kOk) {
    std::fprintf(c.err, "%s%s\n", c.prefix,
                 started == https::Status::kBufferTooSmall
                     ? request_head_too_large()
                     : "invalid request: check the method (-X), the headers (-H) and the URL");
    return kExitUsage;
  }

  Millis now = platform::monotonic_now();
  https::ClientNext next = op.step(now);
  while (next.kind != https::ClientNext::Kind::kDone) {
    const bool ticks = c.reporter->wants_ticks() || progress.wants_ticks();
    const bool ready = https::poll_wait(next, now, longest_wait(ticks));
    now = platform::monotonic_now();
    c.reporter->tick(now);
    progress.tick(now);
    if (ready || now >= next.at) next = op.step(now);
  }
  progress.finish(op);
  return operation_exit_code(op.result(), c.output->failed);
}

}  // namespace stepback::tools
