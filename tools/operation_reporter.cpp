#include "operation_reporter.hpp"

#include <cstdio>

#include "reporter.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/transfer/operation_json.hpp"

namespace stepback::tools {
namespace {

// A raw JSON string of the server's (metadata.verb, statusDetail), decoded into `out`.
std::string_view decoded(std::string_view raw, char* out, std::size_t size) {
  const std::size_t n = transfer::json_decode_string(
      raw, https::MutableBytes{reinterpret_cast<std::uint8_t*>(out), size});
  return std::string_view(out, n);
}

}  // namespace

OperationReporter::OperationReporter(const OperationCommand& c)
    : c_(c), forward_(c.reporter->sink()), meter_(c.err, c.countdown && !c.trace) {}

bool OperationReporter::wants_ticks() const {
  return c_.reporter->wants_ticks() || meter_.wants_ticks();
}

void OperationReporter::tick(Millis now) {
  c_.reporter->tick(now);
  meter_.tick(now);
}

void OperationReporter::finish(const transfer::Operation& op) {
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
    case transfer::OperationOutcome::kFailed:
      failed(r, name);
      return;
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
    case transfer::OperationOutcome::kCancelled:
      request_failed(r);
      return;
  }
}

void OperationReporter::failed(const transfer::OperationResult& r, std::string_view name) const {
  LineBuffer line;
  line.appendf("%soperation %.*s finished with an error: %d %s: ", c_.prefix,
               static_cast<int>(name.size()), name.data(), static_cast<int>(r.error.code),
               r.error.code_name[0] != '\0' ? r.error.code_name : "(unknown code)");
  append_printable(&line, r.error.message);
  std::fprintf(c_.err, "%s\n", line.c_str());
  if (!r.error.details.empty() && r.error.details != "[]") {
    line.clear();
    line.append(c_.prefix);
    line.append("  details: ");
    append_printable(&line, r.error.details);
    std::fprintf(c_.err, "%s\n", line.c_str());
  }
}

void OperationReporter::request_failed(const transfer::OperationResult& r) const {
  LineBuffer line;
  line.append(c_.prefix);
  line.append(r.message);
  if (r.error.present && !r.error.message.empty()) {
    line.append(": ");
    append_printable(&line, r.error.message);
  }
  if (r.outcome != transfer::OperationOutcome::kAlreadyExists &&
      r.outcome != transfer::OperationOutcome::kCancelled) {
    line.appendf(" (%s after %u attempt%s", to_string(r.request.outcome), r.request.attempts,
                 r.request.attempts == 1 ? "" : "s");
    if (r.request.status != 0) line.appendf(", HTTP %u", static_cast<unsigned>(r.request.status));
    if (r.request.error != https::Status::kOk) {
      line.appendf(", %s", https::to_string(r.request.error));
    }
    line.append(")");
  }
  std::fprintf(c_.err, "%s\n", line.c_str());
}

void OperationReporter::forward(const https::ClientEvent& e) {
  end_line();
  forward_.on_event(forward_.context, e);
}

void OperationReporter::client(const https::ClientEvent& e) {
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

void OperationReporter::operation(const transfer::OperationEvent& e) {
  using Kind = transfer::OperationEvent::Kind;
  switch (e.kind) {
    case Kind::kOperation:
    case Kind::kPolled:
      polls_ = e.poll;
      if (e.kind == Kind::kOperation) verb_ = decoded(e.verb, verb_text_, sizeof verb_text_);
      detail_ = decoded(e.status_detail, detail_text_, sizeof detail_text_);
      if (c_.trace) {
        trace_answer(e);
      } else {
        headline(e);
      }
      return;
    case Kind::kWait:
      show_wait(e);
      return;
    case Kind::kPoll:
      polling_ = true;
      if (meter_.live() && meter_.open()) meter_.draw(", polling...");
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

void OperationReporter::trace_answer(const transfer::OperationEvent& e) {
  const bool first = e.kind == transfer::OperationEvent::Kind::kOperation;
  pending_.clear();
  pending_.appendf("{\"event\":\"%s\",\"t_ms\":%llu", first ? "operation" : "poll",
                   static_cast<unsigned long long>((e.at - c_.start).count()));
  if (first) {
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
}

void OperationReporter::show_wait(const transfer::OperationEvent& e) {
  if (c_.trace) {
    if (pending_open_) {
      pending_.appendf(",\"next_poll_ms\":%llu}\n",
                       static_cast<unsigned long long>(e.wait.count()));
      std::fputs(pending_.c_str(), c_.err);
      pending_open_ = false;
    }
    return;
  }
  if (meter_.live()) {
    LineBuffer before;
    before.appendf(", %u poll%s, next poll in ", polls_, polls_ == 1 ? "" : "s");
    meter_.count_down(e.at, e.at + e.wait, std::string_view(before.c_str(), before.size()), " s");
  } else {
    meter_.line().appendf(", %s poll in %.2f s", e.poll == 1 ? "first" : "next", seconds(e.wait));
    end_line();
  }
}

void OperationReporter::headline(const transfer::OperationEvent& e) {
  end_line();
  meter_.begin(/*in_place=*/true);
  LineBuffer& line = meter_.line();
  line.append(c_.prefix);
  if (e.kind == transfer::OperationEvent::Kind::kOperation) {
    line.append("operation ");
    append_printable(&line, e.name);
    if (!verb_.empty()) {
      line.append(" (");
      append_printable(&line, verb_);
      line.append(")");
    }
    line.append(e.done ? ": done" : ": not done");
    if (!detail_.empty()) {
      line.append(", ");
      append_printable(&line, detail_);
    }
  } else {
    line.appendf("poll %u: %s", e.poll, e.done ? "done" : "not done");
    if (!detail_.empty()) {
      line.append(" (");
      append_printable(&line, detail_);
      line.append(")");
    }
  }
  if (e.done) end_line();
}

void OperationReporter::end_line() {
  LineBuffer closing;
  closing.appendf(", %u poll%s", polls_, polls_ == 1 ? "" : "s");
  meter_.end(std::string_view(closing.c_str(), closing.size()));
}

void OperationReporter::trace_done(const transfer::Operation& op) {
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

}  // namespace stepback::tools
