#include "upload_reporter.hpp"

#include <cstring>
#include <iterator>
#include <string_view>

#include "stepback/https/integrity/integrity.hpp"

namespace stepback::tools {

UploadReporter::UploadReporter(std::FILE* err, bool trace, bool terminal, const char* prefix,
                               std::uint64_t size, Millis start)
    : err_(err),
      trace_(trace),
      prefix_(prefix),
      size_(size),
      start_(start),
      meter_(err, terminal && !trace) {}

void UploadReporter::restored(const transfer::TransferState& state, Millis wait) {
  if (trace_) {
    LineBuffer j;
    j.appendf(
        "{\"event\":\"restored\",\"t_ms\":0,\"committed\":%llu,\"size\":%llu,"
        "\"retries\":%u,\"wait_ms\":%llu,\"session\":",
        static_cast<unsigned long long>(state.committed),
        static_cast<unsigned long long>(state.total_size), state.retries,
        static_cast<unsigned long long>(wait.count()));
    append_json_string(&j, state.session_uri());
    j.append("}\n");
    std::fputs(j.c_str(), err_);
    return;
  }
  LineBuffer l;
  l.append(prefix_);
  l.appendf("going on from the state file: the server held %llu of %llu bytes",
            static_cast<unsigned long long>(state.committed),
            static_cast<unsigned long long>(state.total_size));
  if (wait.count() > 0) l.appendf("; %.2f s of the wait left", seconds(wait));
  std::fprintf(err_, "%s\n", l.c_str());
}

void UploadReporter::on_event(void* self, const transfer::UploadEvent& e) {
  auto* r = static_cast<UploadReporter*>(self);
  if (e.kind == transfer::UploadEvent::Kind::kWait) ++r->waits_;
  if (r->trace_) {
    r->trace(e);
  } else {
    r->human(e);
  }
}

// Announces a session URI the first time it is seen, so a killed run can be continued.
void UploadReporter::show_session() {
  const std::string_view uri = upload_->session_uri();
  if (uri.empty() || uri == std::string_view(shown_session_, shown_size_)) return;
  shown_size_ = uri.size() < sizeof shown_session_ ? uri.size() : sizeof shown_session_;
  std::memcpy(shown_session_, uri.data(), shown_size_);
  LineBuffer l;
  l.append(prefix_);
  l.append("session ");
  append_printable(&l, uri);
  std::fprintf(err_, "%s\n", l.c_str());
}

void UploadReporter::begin_exchange(const transfer::UploadEvent& e) {
  using Kind = transfer::UploadEvent::Kind;
  meter_.end();
  if (e.kind != Kind::kSession) show_session();
  meter_.begin();
  LineBuffer& line = meter_.line();
  if (e.kind == Kind::kSession) {
    line.appendf("session %u: POST: ", e.exchange);
  } else if (e.kind == Kind::kChunk) {
    line.appendf("chunk %u: bytes %llu-%llu: ", e.exchange,
                 static_cast<unsigned long long>(e.offset),
                 static_cast<unsigned long long>(e.offset + e.size - 1));
  } else {
    line.appendf("query %u: ", e.exchange);
  }
  has_status_ = false;
}

void UploadReporter::human(const transfer::UploadEvent& e) {
  using Kind = transfer::UploadEvent::Kind;
  LineBuffer& line = meter_.line();
  switch (e.kind) {
    case Kind::kSession:
    case Kind::kChunk:
    case Kind::kQuery:
      begin_exchange(e);
      break;
    case Kind::kResponse:
      append_status(&line, e.status, e.reason);
      has_status_ = true;
      break;
    case Kind::kError:
      if (has_status_) line.append(", ");
      append_printable(&line, e.message);
      if (e.failure != Failure::kNone) line.appendf(" (%s)", to_string(e.failure));
      has_status_ = true;
      break;
    case Kind::kCommitted: {
      const unsigned percent = size_ == 0 ? 100U : static_cast<unsigned>(e.offset * 100 / size_);
      line.appendf(", committed %llu of %llu (%u%%)", static_cast<unsigned long long>(e.offset),
                   static_cast<unsigned long long>(size_), percent);
      if (meter_.live() && e.at > start_) {
        const double rate = static_cast<double>(e.offset) / seconds(e.at - start_);
        line.appendf(", %.2f MB/s", rate / 1e6);
        if (rate > 0 && e.offset < size_) {
          line.appendf(", %.0f s left", static_cast<double>(size_ - e.offset) / rate);
        }
      }
      break;
    }
    case Kind::kProgress: {
      LineBuffer m;
      append_meter(&m, /*sending=*/true, e.offset, 0,
                   e.size > 0 ? std::optional<std::uint64_t>(e.size) : std::nullopt, e.rate);
      if (meter_.live() && meter_.open()) {
        // The exchange's line, redrawn in place with the meter after it.
        meter_.draw(std::string_view(m.c_str(), m.size()));
      } else if (!meter_.live()) {
        std::fprintf(err_, "%s%s\n", prefix_, m.c_str());
      }
      break;
    }
    case Kind::kWait:
      if (!meter_.open()) {
        // The wait a restored upload sits out before its first exchange.
        meter_.begin();
        line.append("restored wait");
      }
      show_retry_wait(&meter_, e.at, e.wait, e.wait_reason);
      break;
    case Kind::kExpired:
      line.append(", the session expired");
      break;
    case Kind::kDone:
      meter_.end();
      done(e);
      break;
  }
}

void UploadReporter::done(const transfer::UploadEvent& e) {
  const std::uint64_t sent = upload_->bytes_sent();
  const transfer::UploadResult& r = upload_->result();
  if (e.outcome == Outcome::kSuccess) {
    std::fprintf(err_,
                 "%s%llu bytes in %u exchanges; %llu body bytes sent (%.3f per byte), %.2f s\n",
                 prefix_, static_cast<unsigned long long>(size_), r.exchanges,
                 static_cast<unsigned long long>(sent),
                 size_ == 0 ? 0.0 : static_cast<double>(sent) / static_cast<double>(size_),
                 seconds(e.at - start_));
    char words[https::kIntegrityMessageMax];
    (void)https::format_integrity_message(r.integrity, words, sizeof words);
    std::fprintf(err_, "%s%s\n", prefix_, words);
    return;
  }
  LineBuffer l;
  l.append(prefix_);
  l.appendf("stopped after %u exchange%s: %s", r.exchanges, r.exchanges == 1 ? "" : "s",
            to_string(e.outcome));
  if (e.message[0] != '\0') {
    l.append(" (");
    append_printable(&l, e.message);
    l.append(")");
  }
  l.appendf("; the server holds %llu of %llu bytes",
            static_cast<unsigned long long>(upload_->committed()),
            static_cast<unsigned long long>(size_));
  std::fprintf(err_, "%s\n", l.c_str());
  if (state_path_ != nullptr && !r.session_expired) {
    std::fprintf(err_, "%sthe state is in '%s': run the same command again to go on\n", prefix_,
                 state_path_);
  } else if (!upload_->session_uri().empty() && !r.session_expired) {
    LineBuffer s;
    s.append(prefix_);
    s.append("the session stays open; continue it with --session '");
    append_printable(&s, upload_->session_uri());
    s.append("'");
    std::fprintf(err_, "%s\n", s.c_str());
  }
}

void UploadReporter::interrupted(Millis now, const char* what) {
  const std::string_view uri = upload_->session_uri();
  if (trace_) {
    LineBuffer j;
    j.appendf(
        "{\"event\":\"%s\",\"t_ms\":%llu,\"committed\":%llu,\"size\":%llu,"
        "\"session\":",
        what, static_cast<unsigned long long>((now - start_).count()),
        static_cast<unsigned long long>(upload_->committed()),
        static_cast<unsigned long long>(size_));
    append_json_string(&j, uri);
    if (state_writes_ != nullptr) j.appendf(",\"state_writes\":%u", *state_writes_);
    j.append("}\n");
    std::fputs(j.c_str(), err_);
    return;
  }
  meter_.end();
  LineBuffer l;
  l.append(prefix_);
  l.appendf("%s; the server holds %llu of %llu bytes; ", what,
            static_cast<unsigned long long>(upload_->committed()),
            static_cast<unsigned long long>(size_));
  if (uri.empty()) {
    l.append("no session was open yet: run the same command again to start over");
  } else if (state_path_ != nullptr) {
    l.append("the state is in '");
    append_printable(&l, state_path_);
    l.append("': run the same command again to go on");
  } else {
    l.append("the session stays open: run the same command again with --session '");
    append_printable(&l, uri);
    l.append("' to go on");
  }
  std::fprintf(err_, "%s\n", l.c_str());
}

void UploadReporter::trace(const transfer::UploadEvent& e) {
  using Kind = transfer::UploadEvent::Kind;
  static constexpr const char* kNames[] = {"session",   "chunk", "query",   "response", "error",
                                           "committed", "wait",  "expired", "progress", "done"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(Kind::kDone) + 1);
  LineBuffer j;
  j.appendf("{\"event\":\"%s\",\"t_ms\":%llu", kNames[static_cast<int>(e.kind)],
            static_cast<unsigned long long>((e.at - start_).count()));
  if (e.kind != Kind::kDone) j.appendf(",\"n\":%u", e.exchange);
  switch (e.kind) {
    case Kind::kSession:
    case Kind::kQuery:
    case Kind::kExpired:
      break;
    case Kind::kChunk:
      j.appendf(",\"offset\":%llu,\"size\":%llu", static_cast<unsigned long long>(e.offset),
                static_cast<unsigned long long>(e.size));
      break;
    case Kind::kResponse:
      j.appendf(",\"status\":%u,\"reason\":", static_cast<unsigned>(e.status));
      append_json_string(&j, e.reason);
      break;
    case Kind::kError:
      j.appendf(",\"kind\":\"%s\",\"message\":", to_string(e.failure));
      append_json_string(&j, e.message);
      break;
    case Kind::kCommitted:
      j.appendf(",\"offset\":%llu,\"size\":%llu", static_cast<unsigned long long>(e.offset),
                static_cast<unsigned long long>(size_));
      break;
    case Kind::kProgress:
      j.appendf(",\"offset\":%llu,\"size\":%llu,\"rate\":%llu",
                static_cast<unsigned long long>(e.offset), static_cast<unsigned long long>(e.size),
                static_cast<unsigned long long>(e.rate));
      break;
    case Kind::kWait:
      j.appendf(",\"ms\":%llu,\"reason\":\"%s\",\"retry\":%u",
                static_cast<unsigned long long>(e.wait.count()), to_string(e.wait_reason), e.retry);
      break;
    case Kind::kDone: {
      const transfer::UploadResult& r = upload_->result();
      j.appendf(",\"outcome\":\"%s\"", to_string(e.outcome));
      if (e.status != 0) j.appendf(",\"status\":%u", static_cast<unsigned>(e.status));
      j.appendf(",\"integrity\":\"%s\"", https::to_string(r.integrity.status));
      j.appendf(
          ",\"committed\":%llu,\"size\":%llu,\"sent\":%llu,\"exchanges\":%u,"
          "\"connections\":%u,\"sessions\":%u,\"expired\":%s,\"session\":",
          static_cast<unsigned long long>(upload_->committed()),
          static_cast<unsigned long long>(size_),
          static_cast<unsigned long long>(upload_->bytes_sent()), r.exchanges,
          upload_->client().connections(), upload_->sessions(),
          r.session_expired ? "true" : "false");
      append_json_string(&j, upload_->session_uri());
      if (state_writes_ != nullptr) j.appendf(",\"state_writes\":%u", *state_writes_);
      if (e.message[0] != '\0') {
        j.append(",\"message\":");
        append_json_string(&j, e.message);
      }
      break;
    }
  }
  j.append("}\n");
  std::fputs(j.c_str(), err_);
}

}  // namespace stepback::tools
