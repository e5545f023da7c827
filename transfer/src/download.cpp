#include "stepback/transfer/download.hpp"

#include <cstring>

#include "stepback/https/integrity/integrity.hpp"

namespace stepback::transfer {
namespace {

// Copies `v` into `out` (room for it) and returns the copy.
std::string_view copy(std::string_view v, char* out) {
  if (!v.empty()) std::memcpy(out, v.data(), v.size());
  return std::string_view(out, v.size());
}

}  // namespace

const char* to_string(KeptBytes k) {
  switch (k) {
    case KeptBytes::kUnchecked:
      return "unchecked";
    case KeptBytes::kIntact:
      return "intact";
    case KeptBytes::kDamaged:
      return "damaged";
    case KeptBytes::kUnreadable:
      return "unreadable";
  }
  return "unknown";
}

KeptBytes check_kept_bytes(const TransferState& state, const https::BodySource& kept,
                           https::MutableBytes scratch) {
  const https::IntegrityState& saved = state.integrity;
  if (state.delivered == 0 || (saved.expected_crc32c.size == 0 && saved.expected_md5.size == 0)) {
    return KeptBytes::kUnchecked;
  }
  if (kept.read == nullptr || scratch.data == nullptr || scratch.size == 0) {
    return KeptBytes::kUnreadable;
  }
  // The record's expectations before the first byte, so that MD5 runs as it ran then.
  https::IntegrityState fresh;
  fresh.expected_crc32c = saved.expected_crc32c;
  fresh.expected_md5 = saved.expected_md5;
  https::IntegrityCheck check;
  if (!check.restore(fresh)) return KeptBytes::kDamaged;
  check.reset();  // Runs MD5 from byte 0 when one is expected.
  for (std::uint64_t at = 0; at < state.delivered;) {
    const std::uint64_t left = state.delivered - at;
    const https::MutableBytes into{
        scratch.data, left < scratch.size ? static_cast<std::size_t>(left) : scratch.size};
    const std::size_t n = kept.read(kept.context, at, into);
    if (n == 0 || n > into.size) return KeptBytes::kUnreadable;
    check.update(https::ConstBytes{scratch.data, n});
    at += n;
  }
  const https::IntegrityState now = check.state();
  if (now.crc32c != state.crc32c.value_or(saved.crc32c)) return KeptBytes::kDamaged;
  if (saved.md5_running) {
    // The chaining state and byte count, then the bytes of the block not yet processed (the
    // rest of that block buffer is whatever earlier blocks left there).
    const std::size_t pending = static_cast<std::size_t>(state.delivered % 64);
    if (!now.md5_running || std::memcmp(now.md5_context, saved.md5_context, 24 + pending) != 0) {
      return KeptBytes::kDamaged;
    }
  }
  return KeptBytes::kIntact;
}

Download::Download(https::Connector& connector, const RetryContext& context,
                   const DownloadOptions& options)
    : options_(options),
      random_(context.random),
      app_events_(options.client.events),
      client_(connector, context, [&] {
        https::ClientOptions o = options.client;
        o.events = https::EventSink{&Download::on_client_event, this};
        if (options.max_rate > 0) o.receive_limit = &rate_;
        return o;
      }()) {}

https::Status Download::start(const DownloadSpec& spec) {
  message_ = "";
  request_ = https::RequestSpec{};
  request_.head.method = "GET";
  request_.head.url = spec.url;
  request_.head.user_agent = spec.user_agent;
  request_.head.host = spec.host;
  request_.head.headers = spec.headers;
  request_.head.header_count = spec.header_count;
  url_text_ = spec.url_text;
  resumed_from_ = saved_delivered_ = 0;
  retries_ = 0;
  backoff_end_.reset();
  wait_checkpoint_due_ = false;
  phase_ = Phase::kIdle;
  rate_ = RateLimiter(options_.max_rate, default_burst(options_.max_rate));
  restore_wait_ = Millis{};
  checkpoints_ = stored_ = 0;
  pieces_ = 1;
  record_delivered_ = 0;
  deferred_until_.reset();
  continuing_ = false;
  if (spec.resume == nullptr) {
    https::BodyResume first;  // From byte 0, up to the first piece's end (none: the whole).
    first.until = piece_end(0);
    return client_.start(request_, first);
  }
  const TransferState& r = *spec.resume;
  if (r.kind != TransferKind::kDownload) {
    message_ = "the record is not a download's";
    return https::Status::kInvalidArgument;
  }
  if (!spec.url_may_change && r.url() != spec.url_text) {
    message_ = "the record belongs to another URL";
    return https::Status::kInvalidArgument;
  }
  https::BodyResume resume;
  resume.offset = r.delivered;
  resume.validator = r.validator();
  resume.validator_is_etag = r.validator_is_etag;
  // The generation pins the object the bytes came from; it is asked of the URL they came
  // from, not of a redirector in front of it.
  if (r.final_url() == r.url() || spec.url_may_change) resume.generation = r.generation();
  if (r.total_size > 0) resume.total = r.total_size;
  resume.integrity = r.integrity;
  resume.integrity.size = r.delivered;
  resume.integrity.crc32c = r.crc32c.value_or(0);
  resume.until = piece_end(r.delivered);
  const https::Status s = client_.start(request_, resume);
  if (s != https::Status::kOk) {
    message_ = "the record cannot be taken up (its validator or integrity check is malformed)";
    return s;
  }
  // The retry loop starts afresh in this process (the Client's); the wait under way is not
  // cut short by the restart.
  resumed_from_ = saved_delivered_ = record_delivered_ = r.delivered;
  // Served from the first step, on the monotonic clock of this process.
  restore_wait_ = r.wait_remaining;
  return https::Status::kOk;
}

// The transition table: each handler yields an answer for the loop or names the next phase.
DownloadNext Download::step(Millis now) {
  for (;;) {
    Step s;
    switch (phase_) {
      case Phase::kIdle:
        s = on_idle(now);
        break;
      case Phase::kRestoreWait:
        s = on_restore_wait(now);
        break;
      case Phase::kRunning:
        s = on_running(now);
        break;
      case Phase::kPaused:
        // Nothing moves until resume(): the app's wait, not a timed one.
        s = yield(DownloadNext::wait_until(Millis::max()), Phase::kPaused);
        break;
      case Phase::kDone:
        s = yield(client_.step(now), Phase::kDone);
        break;
    }
    phase_ = s.phase;
    if (s.yield) return s.next;
  }
}

Download::Step Download::on_idle(Millis now) {
  saved_at_ = now;
  wait_until_ = now + restore_wait_;
  // A save during the restored wait keeps what is left of it (the Client's first kAttempt
  // ends it, as any backoff).
  if (restore_wait_ > Millis{}) backoff_end_ = wait_until_;
  return go(Phase::kRestoreWait);
}

Download::Step Download::on_restore_wait(Millis now) {
  if (now < wait_until_) return yield(DownloadNext::wait_until(wait_until_), Phase::kRestoreWait);
  return go(Phase::kRunning);
}

Download::Step Download::on_running(Millis now) {
  const DownloadNext next = client_.step(now);
  if (next.kind != DownloadNext::Kind::kDone) {
    if (wait_checkpoint_due_ || due(now)) checkpoint(now);
    return yield(next, Phase::kRunning);
  }
  // A finished piece: the next one goes on the loop's next turn (at once, on the kept
  // connection), so that a step does one piece's work however fast they come.
  if (more_pieces() &&
      client_.continue_body(piece_end(client_.delivered())) == https::Status::kOk) {
    ++pieces_;
    continuing_ = true;
    if (due(now)) checkpoint(now);
    return yield(DownloadNext::wait_until(now), Phase::kRunning);
  }
  // A download that did not finish leaves where it stood; one that did needs no record.
  const Outcome outcome = client_.result().outcome;
  if (outcome != Outcome::kSuccess) checkpoint(now);
  // Given up on a failure a later run may get past, with bytes a record counts: deferred,
  // at a time drawn once here so that every run_hint() agrees.
  if (defers(options_.defer, outcome, /*resumable=*/record_delivered_ > 0)) {
    deferred_until_ = defer_until(options_.defer, now, random_);
  }
  return yield(next, Phase::kDone);
}

void Download::cancel(Millis now) {
  if (phase_ == Phase::kRestoreWait || phase_ == Phase::kRunning) checkpoint(now);
  if (phase_ != Phase::kDone) deferred_until_.reset();  // A cancel under way is final.
  phase_ = Phase::kDone;
  client_.cancel();
}

void Download::pause(Millis now) {
  if (phase_ == Phase::kDone || phase_ == Phase::kPaused) return;
  paused_from_ = phase_;
  phase_ = Phase::kPaused;
  if (paused_from_ == Phase::kIdle) return;  // Not begun: resume() lets the first step() begin.
  // A wait under way still ends when it would have; resume() serves what is left of it.
  if (backoff_end_) {
    paused_wait_end_ = *backoff_end_;
  } else {
    paused_wait_end_ = now < wait_until_ ? wait_until_ : Millis{};
  }
  checkpoint(now);
  client_.cancel();
}

https::Status Download::resume(Millis now) {
  if (phase_ != Phase::kPaused) return https::Status::kOk;
  if (paused_from_ == Phase::kIdle) {
    phase_ = Phase::kIdle;
    return https::Status::kOk;
  }
  // Where the Client stood, as a checkpoint would hold it, its views copied out of the
  // Client that start() overwrites.
  https::BodyResume resume = client_.body_resume();
  resume.validator = copy(resume.validator, resume_validator_);
  resume.generation = copy(resume.generation, resume_generation_);
  resume.until = piece_end(resume.offset);
  const https::Status s = client_.start(request_, resume);
  if (s != https::Status::kOk) {
    message_ = "the paused download cannot go on (its validator or integrity check is malformed)";
    return s;
  }
  wait_until_ = paused_wait_end_ > now ? paused_wait_end_ : Millis{};
  paused_wait_end_ = Millis{};
  phase_ = Phase::kRestoreWait;
  return https::Status::kOk;
}

std::uint64_t Download::piece_end(std::uint64_t offset) const {
  const std::uint64_t size = options_.range_size;
  return size == 0 || offset > UINT64_MAX - size ? UINT64_MAX : offset + size;
}

bool Download::more_pieces() const { return options_.range_size > 0 && client_.piece_finished(); }

bool Download::due(Millis now) const {
  if (options_.checkpoints.save == nullptr) return false;
  const std::uint64_t delivered = client_.delivered();
  return delivered > saved_delivered_ &&
         delivered - saved_delivered_ >= options_.checkpoint.bytes &&
         now - saved_at_ >= options_.checkpoint.interval;
}

void Download::checkpoint(Millis now) {
  wait_checkpoint_due_ = false;
  if (options_.checkpoints.save == nullptr || options_.client.wall_now == nullptr) return;
  TransferState state;
  if (!save(&state, now, options_.client.wall_now())) return;
  ++checkpoints_;
  saved_at_ = now;
  saved_delivered_ = client_.delivered();
  if (options_.checkpoints.save(options_.checkpoints.context, state)) {
    ++stored_;
    record_delivered_ = state.delivered;
  }
}

https::RunHint Download::run_hint(const DownloadNext& next) const {
  https::RunHint hint = client_.run_hint(next);
  if (phase_ == Phase::kPaused && next.kind != DownloadNext::Kind::kDone) {
    hint.state = https::RunHint::State::kPaused;
    hint.run_at = Millis::max();
  } else if (phase_ == Phase::kDone && deferred_until_) {
    hint.state = https::RunHint::State::kDeferred;
    hint.run_at = *deferred_until_;
  }
  return hint;
}

bool Download::save(TransferState* state, Millis now, Millis wall_now) const {
  TransferState& s = *state;
  s = TransferState{};
  s.kind = TransferKind::kDownload;
  if (!s.set_url(url_text_)) return false;
  // Where the bytes come from: the URL redirects led to, or the one asked for.
  const std::string_view final_url = client_.redirected_url();
  (void)s.set_final_url(final_url.empty() ? url_text_ : final_url);
  // The integrity check is the count alone when no digest was announced.
  const https::BodyResume at = client_.body_resume();
  s.delivered = at.offset;
  s.total_size = at.total.value_or(0);
  // A validator that does not fit is left out: the next run then fetches the body whole
  // rather than trusting bytes it cannot pin.
  if (!s.set_validator(at.validator)) s.delivered = 0;
  // The generation even behind redirects: start() takes it only when the final URL is the
  // one asked for.
  (void)s.set_generation(client_.generation());
  s.validator_is_etag = at.validator_is_etag;
  if (s.delivered > 0 && at.integrity.size == s.delivered) {
    s.integrity = at.integrity;
    s.crc32c = at.integrity.crc32c;
  } else {
    s.delivered = 0;
  }
  s.retries = retries_;
  const auto wall =
      static_cast<std::int64_t>(wall_now.count() > INT64_MAX ? INT64_MAX : wall_now.count());
  s.saved_wall_ms = wall;
  if (backoff_end_ && *backoff_end_ > now) {
    s.wait_remaining = *backoff_end_ - now;
    s.release_wall_ms = wall + static_cast<std::int64_t>(s.wait_remaining.count());
  }
  return true;
}

void Download::on_client_event(void* self, const https::ClientEvent& event) {
  auto* d = static_cast<Download*>(self);
  switch (event.kind) {
    case https::ClientEvent::Kind::kWait:
      // Waiting for a network: saved, but not as a backoff a later process would sit out.
      if (event.wait_reason == WaitReason::kOffline) {
        d->wait_checkpoint_due_ = true;
        break;
      }
      d->backoff_end_ = event.at + event.wait;
      d->retries_ = event.attempt;  // The attempt after the wait is retry number `attempt`.
      d->wait_checkpoint_due_ = true;
      break;
    case https::ClientEvent::Kind::kAttempt:
      d->backoff_end_.reset();
      // A piece's first attempt is not news; a retry of it is.
      if (d->continuing_ && event.attempt == 1) return;
      d->continuing_ = false;
      break;
    case https::ClientEvent::Kind::kResume:
      // A piece's Range and its 206 on its first attempt are the plan, not news.
      if (d->continuing_ && event.attempt == 1) return;
      break;
    case https::ClientEvent::Kind::kResponse:
      if (d->continuing_ && event.attempt == 1 && event.status == 206) return;
      break;
    case https::ClientEvent::Kind::kDone:
      if (d->more_pieces()) return;  // The next piece follows at once.
      break;
    default:
      break;
  }
  if (d->app_events_.on_event != nullptr) d->app_events_.on_event(d->app_events_.context, event);
}

}  // namespace stepback::transfer
