#include "reporter.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "stepback/https/tls/tls_arena.hpp"
#include "words.hpp"

namespace stepback::tools {

// Appends `s` (at most kMaxFieldBytes of it) to `out` as a JSON string: quotes, backslashes
// and control bytes escaped, and bytes >= 0x7f as \u00XX (read as Latin-1), so the line is
// valid JSON whatever the server sent.
void append_json_string(LineBuffer* out, std::string_view s) {
  out->append("\"");
  for (const char c : s.substr(0, kMaxFieldBytes)) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      const char escaped[2] = {'\\', c};
      out->append(std::string_view(escaped, 2));
    } else if (b < 0x20 || b >= 0x7f) {
      out->appendf("\\u%04x", static_cast<unsigned>(b));
    } else {
      out->append(std::string_view(&c, 1));
    }
  }
  out->append("\"");
}

// Appends `s` (at most kMaxFieldBytes of it) with control bytes replaced, for a terminal.
void append_printable(LineBuffer* out, std::string_view s) {
  for (const char c : s.substr(0, kMaxFieldBytes)) {
    const auto b = static_cast<unsigned char>(c);
    // C0 and C1 controls (0x9b is a one-byte CSI on many terminals) and anything else
    // outside ASCII: what a server sends never reaches the terminal raw.
    const char shown = (b < 0x20 || b >= 0x7f) ? '?' : c;
    out->append(std::string_view(&shown, 1));
  }
}

void append_meter(LineBuffer* out, bool sending, std::uint64_t bytes, std::uint64_t from,
                  std::optional<std::uint64_t> total, std::uint64_t rate) {
  if (sending) out->append("sent ");
  out->appendf("%.1f MB", static_cast<double>(bytes) / 1e6);
  if (from > 0 && from <= bytes) out->appendf(" (from %.1f MB)", static_cast<double>(from) / 1e6);
  if (total && *total > 0) {
    const std::uint64_t have = bytes < *total ? bytes : *total;
    out->appendf(" of %.1f MB (%u%%)", static_cast<double>(*total) / 1e6,
                 static_cast<unsigned>(have * 100 / *total));
  }
  out->appendf(", %.1f MB/s", static_cast<double>(rate) / 1e6);
  if (total && *total > bytes && rate > 0) {
    out->appendf(", %llu s left",
                 static_cast<unsigned long long>((*total - bytes + rate - 1) / rate));
  }
}

void LineBuffer::append(std::string_view s) {
  const std::size_t room = sizeof text_ - 1 - size_;
  const std::size_t n = s.size() < room ? s.size() : room;
  std::memcpy(text_ + size_, s.data(), n);
  size_ += n;
  text_[size_] = '\0';
}

void LineBuffer::appendf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  // clang-analyzer 14 takes `args` for uninitialized after va_start (a false positive, also
  // in sim.cpp's format()).
  // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
  const int n = std::vsnprintf(text_ + size_, sizeof text_ - size_, format, args);
  va_end(args);
  if (n > 0) size_ += static_cast<std::size_t>(n);
  if (size_ > sizeof text_ - 1) size_ = sizeof text_ - 1;  // Cut: vsnprintf stopped there.
}

Reporter::Reporter(std::FILE* err, bool trace, bool countdown, const char* prefix, Millis start)
    : err_(err), trace_(trace), countdown_(countdown && !trace), prefix_(prefix), start_(start) {}

void Reporter::on_event(void* self, const https::ClientEvent& event) {
  auto* r = static_cast<Reporter*>(self);
  if (r->trace_) {
    r->trace(event);
  } else {
    r->human(event);
  }
}

void Reporter::human(const https::ClientEvent& event) {
  using Kind = https::ClientEvent::Kind;
  switch (event.kind) {
    case Kind::kAttempt:
      end_line();
      line_.clear();
      line_.appendf("attempt %u: ", event.attempt);
      line_open_ = true;
      line_has_status_ = false;
      line_base_ = 0;
      meter_from_ = client_ != nullptr ? client_->delivered() : 0;
      break;
    case Kind::kResponse:
      line_.appendf("%u", static_cast<unsigned>(event.status));
      line_has_status_ = true;
      if (!event.reason.empty()) {
        line_.append(" ");
        append_printable(&line_, event.reason);
      }
      break;
    case Kind::kError:
      last_failure_ = event.failure;
      // "attempt 1: 200 OK, the connection closed ...", not "200 OKthe connection ...".
      if (line_has_status_) line_.append(", ");
      append_printable(&line_, event.message);
      line_.appendf(" (%s)", to_string(event.failure));
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
      line_.appendf(", retrying in %.2f s%s", static_cast<double>(event.wait.count()) / 1000.0,
                    wait_note(event.wait_reason));
      if (countdown_) {
        waiting_ = true;
        wait_end_ = event.at + event.wait;
        last_draw_ = event.at;
        draw_countdown(event.at);
      } else {
        end_line();
      }
      break;
    case Kind::kIntegrity:
      if (!event.verified) break;  // A mismatch is the request's failure, reported with it.
      end_line();
      std::fprintf(err_, "%s%s\n", prefix_, event.message);
      break;
    case Kind::kRedirect:
      line_.append(", redirected to ");
      append_printable(&line_, event.url);
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
      line_.appendf(", the URL expired; going on from byte %llu with a fresh one",
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
  return ProgressPolicy{1, countdown_ ? Millis(250) : Millis::seconds(5)};
}

void Reporter::progress(const https::ClientEvent& event) {
  LineBuffer m;
  append_meter(&m, event.sending, event.bytes, event.sending ? 0 : meter_from_, event.total,
               event.rate);
  if (countdown_) {
    // One line, redrawn in place: the attempt's words, then the meter.
    metering_ = true;
    std::fprintf(err_, "\r%s%s%s\x1b[K", line_.c_str(), line_has_status_ ? ", " : "", m.c_str());
    std::fflush(err_);
    return;
  }
  // Plain lines: the attempt's words so far first, so that the order reads true.
  if (line_open_ && line_.size() > line_base_) {
    std::fprintf(err_, "%s\n", line_.c_str());
    line_.clear();
    line_.appendf("attempt %u: ", event.attempt);
    line_has_status_ = false;
    line_base_ = line_.size();
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
  if (!line_open_) return;
  if (line_base_ > 0 && line_.size() == line_base_) {
    // Printed already up to here (plain progress lines came after it): nothing new to say.
  } else if (waiting_ || metering_) {
    // Replaces the countdown with the plain line.
    std::fprintf(err_, "\r%s\x1b[K\n", line_.c_str());
  } else {
    std::fprintf(err_, "%s\n", line_.c_str());
  }
  line_open_ = false;
  waiting_ = false;
  metering_ = false;
}

void Reporter::tick(Millis now) {
  if (!wants_ticks() || now - last_draw_ < kTick) return;
  last_draw_ = now;
  draw_countdown(now);
}

void Reporter::draw_countdown(Millis now) {
  const double left = static_cast<double>((wait_end_ - now).count()) / 1000.0;
  std::fprintf(err_, "\r%s, %.1f s left\x1b[K", line_.c_str(), left);
  std::fflush(err_);
}

}  // namespace stepback::tools
