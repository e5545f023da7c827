#include "reporter.hpp"

#include <cstdio>
#include <iterator>

#include "stepback/https/tls/tls_arena.hpp"
#include "words.hpp"

namespace stepback::tools {

void append_status(LineBuffer* line, std::uint16_t status, std::string_view reason) {
  line->appendf("%u", static_cast<unsigned>(status));
  if (!reason.empty()) {
    line->append(" ");
    append_printable(line, reason);
  }
}

void show_retry_wait(LineMeter* meter, Millis at, Millis wait, WaitReason reason) {
  meter->line().appendf(", retrying in %.2f s%s", seconds(wait), wait_note(reason));
  if (meter->live()) {
    meter->count_down(at, at + wait, ", ", " s left");
  } else {
    meter->end();
  }
}

Reporter::Reporter(std::FILE* err, bool trace, bool countdown, const char* prefix, Millis start)
    : err_(err), trace_(trace), prefix_(prefix), start_(start), meter_(err, countdown && !trace) {}

void Reporter::on_event(void* self, const https::ClientEvent& event) {
  auto* r = static_cast<Reporter*>(self);
  if (r->trace_) {
    r->trace(event);
  } else if (r->quiet_) {
    if (event.kind == https::ClientEvent::Kind::kError) r->last_failure_ = event.failure;
    if (event.kind == https::ClientEvent::Kind::kDone && event.outcome != Outcome::kSuccess) {
      r->stopped(event);
    }
  } else {
    r->human(event);
  }
}

void Reporter::human(const https::ClientEvent& event) {
  using Kind = https::ClientEvent::Kind;
  switch (event.kind) {
    case Kind::kAttempt:
      end_line();
      meter_.begin();
      meter_.line().appendf("attempt %u: ", event.attempt);
      line_has_status_ = false;
      line_base_ = 0;
      meter_from_ = client_ != nullptr ? client_->delivered() : 0;
      break;
    case Kind::kResponse:
      append_status(&meter_.line(), event.status, event.reason);
      if (event.early_data != https::EarlyData::kNone) {
        meter_.line().append(event.early_data == https::EarlyData::kAccepted
                                 ? " (sent in TLS early data, accepted)"
                                 : " (TLS early data rejected: sent after the handshake)");
      }
      line_has_status_ = true;
      break;
    case Kind::kError:
      last_failure_ = event.failure;
      // "attempt 1: 200 OK, the connection closed ...", not "200 OKthe connection ...".
      if (line_has_status_) meter_.line().append(", ");
      append_printable(&meter_.line(), event.message);
      meter_.line().appendf(" (%s)", to_string(event.failure));
      break;
    case Kind::kWait:
      if (event.wait_reason == WaitReason::kOffline) {
        // Not a retry: the request waits for a network it may use (Client::network_changed).
        end_line();
        std::fprintf(err_, "%swaiting up to %llu s for a network this transfer may use: %s\n",
                     prefix_, static_cast<unsigned long long>(event.wait.count() / 1000),
                     event.message);
        break;
      }
      show_retry_wait(&meter_, event.at, event.wait, event.wait_reason);
      break;
    case Kind::kIntegrity:
      if (!event.verified) break;  // A mismatch is the request's failure, reported with it.
      end_line();
      std::fprintf(err_, "%s%s\n", prefix_, event.message);
      break;
    case Kind::kRedirect:
      meter_.line().append(", redirected to ");
      append_printable(&meter_.line(), event.url);
      end_line();
      break;
    case Kind::kResume:
      end_line();
      std::fprintf(err_, "%sresuming at byte %llu%s\n", prefix_,
                   static_cast<unsigned long long>(event.offset),
                   event.validator.empty() ? "" : " of the same representation (If-Range)");
      break;
    case Kind::kUrlRefresh:
      // The URL is not shown: a pre-signed one carries its signature.
      meter_.line().appendf(", the URL expired; going on from byte %llu with a fresh one",
                            static_cast<unsigned long long>(event.offset));
      end_line();
      break;
    case Kind::kProgress:
      progress(event);
      break;
    case Kind::kDone:
      end_line();
      if (event.outcome != Outcome::kSuccess) stopped(event);
      break;
  }
}

ProgressPolicy Reporter::progress_policy() const {
  return ProgressPolicy{1, meter_.live() ? Millis(250) : Millis::seconds(5)};
}

void Reporter::progress(const https::ClientEvent& event) {
  LineBuffer m;
  // One line on a terminal, redrawn in place: the attempt's words, then the meter.
  if (meter_.live() && line_has_status_) m.append(", ");
  append_meter(&m, event.sending, event.bytes, event.sending ? 0 : meter_from_, event.total,
               event.rate);
  if (meter_.live()) {
    meter_.draw(std::string_view(m.c_str(), m.size()));
    return;
  }
  // Plain lines: the attempt's words so far first, so that the order reads true.
  LineBuffer& line = meter_.line();
  if (meter_.open() && line.size() > line_base_) {
    std::fprintf(err_, "%s\n", line.c_str());
    line.clear();
    line.appendf("attempt %u: ", event.attempt);
    line_has_status_ = false;
    line_base_ = line.size();
  }
  std::fprintf(err_, "%s%s\n", prefix_, m.c_str());
}

void Reporter::stopped(const https::ClientEvent& event) {
  LineBuffer l;
  l.appendf("%sstopped after %u attempt%s: ", prefix_, event.attempt,
            event.attempt == 1 ? "" : "s");
  // The time limit is named as such: "the transport failed" would be untrue of it.
  if (event.outcome == Outcome::kTerminalFailure && last_failure_ == Failure::kTimeLimit) {
    if (time_limit_) {
      l.appendf("the time limit (--max-time %g s) passed",
                static_cast<double>(time_limit_->count()) / 1000.0);
    } else {
      l.append("the request's time limit (max_time) passed");
    }
  } else {
    l.appendf("%s (%s)", to_string(event.outcome), describe_stop(event.outcome));
  }
  std::fprintf(err_, "%s\n", l.c_str());
}

void Reporter::trace(const https::ClientEvent& event) {
  using Kind = https::ClientEvent::Kind;
  static constexpr const char* kNames[] = {"attempt",  "response",  "error",    "wait",
                                           "resume",   "integrity", "redirect", "url_refresh",
                                           "progress", "done"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(Kind::kDone) + 1);
  LineBuffer j;
  j.appendf("{\"event\":\"%s\",\"t_ms\":%llu", kNames[static_cast<int>(event.kind)],
            static_cast<unsigned long long>((event.at - start_).count()));
  if (event.kind != Kind::kDone) j.appendf(",\"n\":%u", event.attempt);
  switch (event.kind) {
    case Kind::kAttempt:
      break;
    case Kind::kResponse:
      j.appendf(",\"status\":%u,\"reason\":", static_cast<unsigned>(event.status));
      append_json_string(&j, event.reason);
      if (event.early_data != https::EarlyData::kNone) {
        j.appendf(",\"early_data\":\"%s\"",
                  event.early_data == https::EarlyData::kAccepted ? "accepted" : "rejected");
      }
      break;
    case Kind::kError:
      j.appendf(",\"kind\":\"%s\",\"message\":", to_string(event.failure));
      append_json_string(&j, event.message);
      break;
    case Kind::kWait:
      j.appendf(",\"ms\":%llu,\"reason\":\"%s\"",
                static_cast<unsigned long long>(event.wait.count()), to_string(event.wait_reason));
      if (event.wait_reason == WaitReason::kOffline) {
        j.append(",\"message\":");
        append_json_string(&j, event.message);
      }
      break;
    case Kind::kIntegrity:
      j.appendf(",\"verified\":%s,\"message\":", event.verified ? "true" : "false");
      append_json_string(&j, event.message);
      break;
    case Kind::kRedirect:
      j.appendf(",\"status\":%u,\"url\":", static_cast<unsigned>(event.status));
      append_json_string(&j, event.url);
      break;
    case Kind::kResume:
      j.appendf(",\"offset\":%llu,\"validator\":", static_cast<unsigned long long>(event.offset));
      append_json_string(&j, event.validator);
      break;
    case Kind::kUrlRefresh:
      j.appendf(",\"status\":%u,\"offset\":%llu", static_cast<unsigned>(event.status),
                static_cast<unsigned long long>(event.offset));
      break;
    case Kind::kProgress:
      j.appendf(",\"sending\":%s,\"bytes\":%llu", event.sending ? "true" : "false",
                static_cast<unsigned long long>(event.bytes));
      if (event.total) j.appendf(",\"total\":%llu", static_cast<unsigned long long>(*event.total));
      j.appendf(",\"rate\":%llu", static_cast<unsigned long long>(event.rate));
      break;
    case Kind::kDone: {
      j.appendf(",\"outcome\":\"%s\",\"attempts\":%u", to_string(event.outcome), event.attempt);
      if (event.status != 0) j.appendf(",\"status\":%u", static_cast<unsigned>(event.status));
      if (client_ != nullptr) {
        j.appendf(
            ",\"connections\":%u,\"resumed\":%s,\"delivered\":%llu,\"refetched\":%llu,"
            "\"redirects\":%u",
            client_->connections(), client_->resumed() ? "true" : "false",
            static_cast<unsigned long long>(client_->delivered()),
            static_cast<unsigned long long>(client_->refetched()), client_->redirects());
      }
      const https::TlsArenaUsage arena = https::tls_arena_usage();
      j.appendf(",\"arena_peak\":%zu,\"arena_peak_footprint\":%zu", arena.peak_bytes,
                arena.peak_footprint_bytes());
      break;
    }
  }
  j.append("}\n");
  std::fputs(j.c_str(), err_);
}

void Reporter::end_line() {
  if (line_base_ > 0 && meter_.line().size() == line_base_) {
    // Printed already up to here (plain progress lines came after it): nothing new to say.
    meter_.drop();
  } else {
    meter_.end();
  }
}

}  // namespace stepback::tools
