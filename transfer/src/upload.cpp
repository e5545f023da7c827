// The Upload's machine: start(), the phase handlers step() runs, and what each exchange's
// answer means for the session (the protocol itself is resumable_protocol.cpp; the app's
// controls between steps upload_control.cpp; the Client's sinks upload_sinks.cpp).
#include "stepback/transfer/upload.hpp"

#include "resumable_protocol.hpp"
#include "stepback/https/failure.hpp"

namespace stepback::transfer {
namespace {

using detail::PutPlan;
using detail::Verdict;
using https::Status;

// The policy of one exchange: the session's classification of statuses and failures, no
// retries, no deadline until begin_exchange() sets one, and a 1 ms first delay so that any
// deadline of at least 1 ms keeps it valid.
Policy exchange_policy(const Policy& session) {
  Policy p = session;
  p.max_retries = 0;
  p.total_deadline = Millis(0);
  p.initial_delay = Millis(1);
  return p;
}

constexpr Millis kNoDeadline = Millis::max();

}  // namespace

Upload::Upload(https::Connector& connector, const RetryContext& context,
               const UploadOptions& options)
    : context_(context),
      session_policy_(context.policy),
      session_context_{session_policy_, context.random, context.budget},
      options_(options),
      exchange_policy_(exchange_policy(context.policy)),
      exchange_context_{exchange_policy_, context.random, nullptr},
      client_(connector, exchange_context_,
              [this, &options] {
                https::ClientOptions o;
                o.timeouts = options.timeouts;
                o.buffers = options.buffers;
                o.body = https::ResponseSink{&Upload::write_metadata, nullptr, this};
                o.body_limit = options.metadata_limit;
                o.events = https::EventSink{&Upload::on_client_event, this};
                o.wall_now = options.wall_now;
                if (options.max_rate > 0) o.send_limit = &rate_;
                // Every send reports to the upload, whose own meter spaces its events
                // across exchanges (a chunk's exchange is often shorter than the interval).
                o.progress = ProgressPolicy{1, Millis(0)};
                o.network = options.network;
                return o;
              }()),
      machine_(session_context_) {
  session_text_ = reinterpret_cast<char*>(options_.session_uri.data);
}

Status Upload::start(const UploadSpec& spec) {
  client_.cancel();
  deferred_until_.reset();
  // A refused spec leaves the upload done, so that stepping it does nothing.
  const auto refuse = [this](Status status) {
    result_ = UploadResult{};
    result_.outcome = Outcome::kTerminalFailure;
    result_.error = status;
    result_.message = "the upload was not started: its spec is invalid";
    phase_ = Phase::kDone;
    return status;
  };
  if (options_.wall_now == nullptr || !valid(options_.progress)) {
    return refuse(Status::kInvalidArgument);
  }
  if (spec.chunk_size == 0 || spec.chunk_size % kChunkGranularity != 0) {
    return refuse(Status::kInvalidArgument);
  }
  if (spec.body.size > 0 && spec.body.read == nullptr) return refuse(Status::kInvalidArgument);
  if (spec.header_count > kMaxUploadHeaders || (spec.header_count > 0 && spec.headers == nullptr)) {
    return refuse(Status::kInvalidArgument);
  }
  if (spec.metadata.size > 0 && spec.metadata.data == nullptr) {
    return refuse(Status::kInvalidArgument);
  }
  spec_ = spec;
  for (std::size_t i = 0; i < spec.header_count; ++i) headers_[i] = spec.headers[i];
  write_upload_length();
  result_ = UploadResult{};
  committed_ = chunk_begin_ = chunk_end_ = bytes_sent_ = metadata_delivered_ = 0;
  sessions_ = 0;
  restarts_left_ = spec.session_restarts;
  response_status_ = 0;
  exchange_ = Exchange::kNone;
  need_query_ = false;
  metadata_failed_ = metadata_refused_restart_ = false;
  session_size_ = 0;
  digests_.start(spec.compute_crc32c, spec.crc32c, spec.md5);
  resume_wait_ = Millis(0);
  wait_until_ = Millis(0);
  fresh_machine();
  rate_ = RateLimiter(options_.max_rate, default_burst(options_.max_rate));
  paused_wait_end_ = Millis(0);
  meter_started_ = false;
  phase_ = Phase::kIdle;
  if (!spec.session.empty()) {
    if (spec.session.size() > options_.session_uri.size) return refuse(Status::kBufferTooSmall);
    if (!store_session(spec.session)) return refuse(Status::kInvalidArgument);
    need_query_ = true;  // What does the server hold of it?
    resume(spec.resume);
    if (spec.resume.crc32c && spec.resume.crc32c_length <= spec.body.size) {
      digests_.restore(*spec.resume.crc32c, spec.resume.crc32c_length);
    }
  }
  return Status::kOk;
}

// The transition table: the machine decides sends and waits, the Client runs exchanges, and
// the phase handlers below choose the next exchange. Every exchange that ends hands the loop
// its turn before the next begins.
UploadNext Upload::step(Millis now) {
  for (;;) {
    Step s;
    switch (phase_) {
      case Phase::kDone:
        return UploadNext::done();
      case Phase::kIdle:
        s = on_idle(now);
        break;
      case Phase::kResumeWait:
        s = on_resume_wait(now);
        break;
      case Phase::kMachine:
        s = on_machine(now);
        break;
      case Phase::kNext:
        s = begin_exchange(now);
        break;
      case Phase::kHash:
        // Bounded work: a turn of hashing hands the loop its turn.
        s = hash_ahead(now);
        break;
      case Phase::kStarved:
        s = yield(UploadNext::wait_until(Millis::max()), Phase::kStarved);
        break;
      case Phase::kExchange:
        s = on_exchange(now);
        break;
      case Phase::kPaused:
        // Nothing moves until resume(): the app's wait, not a timed one.
        s = yield(UploadNext::wait_until(Millis::max()), Phase::kPaused);
        break;
    }
    phase_ = s.phase;
    if (s.yield) return s.next;
  }
}

Upload::Step Upload::on_idle(Millis now) {
  if (resume_wait_.count() == 0) return go(Phase::kMachine);
  // A restored session first sits out what was left of its wait.
  wait_until_ = now + resume_wait_;
  UploadEvent e = event(UploadEvent::Kind::kWait, now);
  e.wait = resume_wait_;
  emit(e);
  resume_wait_ = Millis(0);
  return go(Phase::kResumeWait);
}

Upload::Step Upload::on_resume_wait(Millis now) {
  if (now < wait_until_) return yield(UploadNext::wait_until(wait_until_), Phase::kResumeWait);
  return go(Phase::kMachine);
}

Upload::Step Upload::on_machine(Millis now) {
  const Next next = machine_.step(now);
  if (next.kind == Next::Kind::kWaitUntil) {
    wait_until_ = next.at;
    return yield(UploadNext::wait_until(next.at), Phase::kMachine);
  }
  machine_waiting_ = false;
  if (next.kind == Next::Kind::kDone) {
    return finish(now, next.outcome, result_.error, result_.message);
  }
  return go(Phase::kNext);
}

Upload::Step Upload::on_exchange(Millis now) {
  const https::ClientNext next = client_.step(now);
  if (next.kind != https::ClientNext::Kind::kDone) return yield(next, Phase::kExchange);
  // Time spent waiting for a usable network is not the session's either.
  machine_.exclude(client_.time_offline());
  if (switched_) {
    // What the server took of the abandoned chunk is asked over the new network.
    switched_ = false;
    need_query_ = true;
    return go(Phase::kNext);
  }
  return end_exchange(now);
}

void Upload::write_upload_length() { *detail::write_u64(upload_length_, spec_.body.size) = '\0'; }

Upload::Step Upload::begin_exchange(Millis now) {
  const std::uint64_t size = spec_.body.size;
  std::size_t count = spec_.header_count;
  https::RequestSpec request;
  request.head.user_agent = spec_.user_agent;
  request.head.headers = headers_;
  UploadEvent begun = event(UploadEvent::Kind::kSession, now);
  if (session_size_ == 0) {
    exchange_ = Exchange::kOpen;
    request.head.method = "POST";
    request.head.url = spec_.url;
    count += detail::session_start_fields(spec_.size_final, upload_length_, spec_.content_type,
                                          spec_.metadata.size > 0, headers_ + count);
    request.body = https::BodySource::of(&spec_.metadata);
    request.idempotency = spec_.idempotency;
  } else {
    const PutPlan plan =
        detail::plan_put(size, spec_.size_final, committed_, spec_.chunk_size, need_query_);
    // Less than a whole chunk is ready: wait for the caller's extend().
    if (plan.kind == PutPlan::Kind::kStarved) return go(Phase::kStarved);
    // The last chunk, or the empty PUT that finishes a body the server holds whole, carries
    // the body's digests; a CRC-32C still being computed is completed first.
    if (plan.last && digests_.computing() && digests_.hashed() < size) return hash_ahead(now);
    const std::string_view goog_hash = plan.last ? digests_.goog_hash(size) : std::string_view();
    request.head.method = "PUT";
    request.head.url = session_url_;
    request.idempotency = https::RequestSpec::Idempotency::kYes;
    if (plan.kind == PutPlan::Kind::kQuery) {
      exchange_ = Exchange::kQuery;
      begun.kind = UploadEvent::Kind::kQuery;
    } else {
      exchange_ = Exchange::kChunk;
      chunk_begin_ = plan.begin;
      chunk_end_ = plan.end;
      request.body = https::BodySource{&Upload::read_chunk, this, chunk_end_ - chunk_begin_};
      begun.kind = UploadEvent::Kind::kChunk;
      begun.offset = chunk_begin_;
      begun.size = chunk_end_ - chunk_begin_;
      // The rate counts from the first chunk's first byte (a restored upload's from where
      // its server stood), across the exchanges after it.
      if (!meter_started_) {
        meter_.start(now, chunk_begin_, options_.progress);
        meter_started_ = true;
      }
    }
    const std::size_t range =
        detail::write_content_range(plan, size, spec_.size_final, content_range_);
    count +=
        detail::put_fields(std::string_view(content_range_, range), goog_hash, headers_ + count);
  }
  request.head.header_count = count;
  // The session's deadline (counted from the last progress) may end an exchange that is
  // still connecting, as it would a Client's own attempt.
  const Millis deadline = machine_.deadline();
  exchange_policy_.total_deadline =
      deadline == kNoDeadline ? Millis(0) : min(max(deadline - now, Millis(1)), kMaxDeadlineLimit);
  response_status_ = 0;
  const Status started = client_.start(request);
  if (started != Status::kOk) {
    return finish(now, Outcome::kTerminalFailure, started,
                  started == Status::kBufferTooSmall
                      ? "the request head does not fit the request buffer"
                      : "the request is invalid (URL, headers or session URI)");
  }
  ++result_.exchanges;
  begun.exchange = result_.exchanges;
  emit(begun);
  return go(Phase::kExchange);
}

// What the exchange that ended means for the session (resumable_protocol.hpp says).
Upload::Step Upload::end_exchange(Millis now) {
  const https::ClientResult& r = client_.result();
  if (r.status != 0) result_.status = r.status;
  result_.error = r.error;
  result_.message = r.message;
  if (metadata_refused_restart_) {
    return finish(now, Outcome::kTerminalFailure, Status::kRestartRefused,
                  "the object's metadata arrived again and its sink cannot start over");
  }
  if (metadata_failed_) {
    return finish(now, Outcome::kTerminalFailure, Status::kError,
                  "the sink of the object's metadata failed");
  }
  detail::Answer answer;
  answer.outcome = r.outcome;
  answer.status = result_.status;
  answer.error = r.error;
  answer.message = r.message;
  answer.location = client_.response_header("location");
  answer.range = client_.response_header("range");
  const Verdict v =
      exchange_ == Exchange::kOpen
          ? detail::classify_session_start(answer)
          : detail::classify_put(answer,
                                 detail::Position{spec_.body.size, spec_.size_final, committed_,
                                                  exchange_ == Exchange::kChunk, chunk_end_});
  switch (v.kind) {
    case Verdict::Kind::kOpened:
      return on_open(now, v.location);
    case Verdict::Kind::kFinished:
      return on_finished(now);
    case Verdict::Kind::kProgress:
    case Verdict::Kind::kGoOn:
    case Verdict::Kind::kStalled:
      return on_held(now, v);
    case Verdict::Kind::kGone:
      return on_expired(now);
    case Verdict::Kind::kRetry:
      // The session decides, with the server's delay (Retry-After or RetryInfo) the Client read.
      return fail(now, client_.last_attempt(), session_size_ > 0);
    case Verdict::Kind::kFail:
      break;
  }
  return finish(now, v.outcome, v.error, v.message);
}

Upload::Step Upload::on_open(Millis now, std::string_view location) {
  if (!store_session(location)) {
    return finish(now, Outcome::kTerminalFailure, Status::kProtocol,
                  "the session URI (Location) is not a usable URL or does not fit its buffer");
  }
  ++sessions_;
  committed_ = 0;
  return progress(now);
}

Upload::Step Upload::on_finished(Millis now) {
  committed_ = spec_.body.size;
  UploadEvent e = event(UploadEvent::Kind::kCommitted, now);
  e.offset = committed_;
  emit(e);
  // The budget's success.
  const Next next = machine_.report(now, AttemptResult::http(result_.status));
  return check_integrity(now, next.kind == Next::Kind::kDone ? next.outcome : Outcome::kSuccess);
}

Upload::Step Upload::on_held(Millis now, const Verdict& v) {
  committed_ = v.held;
  UploadEvent e = event(UploadEvent::Kind::kCommitted, now);
  e.offset = committed_;
  emit(e);
  need_query_ = false;
  if (v.kind == Verdict::Kind::kProgress) return progress(now);
  if (v.kind == Verdict::Kind::kGoOn) return turn(now, Phase::kNext);
  result_.error = Status::kOk;
  result_.message = v.message;
  UploadEvent err = event(UploadEvent::Kind::kError, now);
  err.message = result_.message;
  emit(err);
  return fail(now, AttemptResult::transport(Failure::kReset, true), false);
}

Upload::Step Upload::on_expired(Millis now) {
  UploadEvent e = event(UploadEvent::Kind::kExpired, now);
  e.offset = committed_;
  emit(e);
  if (restarts_left_ == 0) {
    result_.session_expired = true;
    return finish(now, Outcome::kTerminalStatus, Status::kOk,
                  "the upload session expired (404/410 on the session URI); a new session "
                  "must send the whole body again");
  }
  // A new session from byte 0, begun at once within the same attempt.
  --restarts_left_;
  session_size_ = 0;
  committed_ = 0;
  need_query_ = false;
  return turn(now, Phase::kNext);
}

Upload::Step Upload::progress(Millis now) {
  if (context_.budget != nullptr) context_.budget->record_success();
  fresh_machine();
  need_query_ = false;
  return turn(now, Phase::kMachine);
}

Upload::Step Upload::fail(Millis now, const AttemptResult& attempt, bool query_next) {
  const Next next = machine_.report(now, attempt);
  need_query_ = query_next;
  if (next.kind == Next::Kind::kDone) {
    return finish(now, next.outcome, result_.error, result_.message);
  }
  if (next.kind == Next::Kind::kWaitUntil) {
    machine_waiting_ = true;
    wait_until_ = next.at;
    UploadEvent e = event(UploadEvent::Kind::kWait, now);
    e.retry += 1;  // The attempt after the wait.
    e.wait = next.at - now;
    e.wait_reason = machine_.wait_reason();
    emit(e);
    return yield(UploadNext::wait_until(next.at), Phase::kMachine);
  }
  return turn(now, Phase::kMachine);
}

Upload::Step Upload::finish(Millis now, Outcome outcome, Status error, const char* message) {
  machine_.cancel();
  result_.outcome = outcome;
  result_.error = error;
  result_.message = outcome == Outcome::kSuccess ? "" : message;
  // Given up on a failure a later run may get past, with the session open: deferred, at a
  // time drawn once here so that every run_hint() agrees.
  if (defers(options_.defer, outcome, /*resumable=*/session_size_ > 0)) {
    deferred_until_ = defer_until(options_.defer, now, context_.random);
  }
  UploadEvent e = event(UploadEvent::Kind::kDone, now);
  e.status = result_.status;
  e.outcome = outcome;
  e.message = result_.message;
  emit(e);
  return yield(UploadNext::done(), Phase::kDone);
}

Upload::Step Upload::turn(Millis now, Phase phase) {
  return yield(UploadNext::wait_until(now), phase);
}

bool Upload::store_session(std::string_view uri) {
  session_size_ = detail::session_uri(uri, spec_.url, options_.session_uri, &session_url_);
  return session_size_ != 0;
}

void Upload::fresh_machine() {
  session_policy_ = context_.policy;
  retry_offset_ = 0;
  machine_waiting_ = false;
  machine_ = RetryMachine(session_context_, Idempotent::kYes);
}

// Reads the body's unhashed bytes, a bounded amount per step, until the CRC-32C covers the
// whole body; then the exchange that needed it begins.
Upload::Step Upload::hash_ahead(Millis now) {
  if (!digests_.hash_ahead(spec_.body)) {
    return finish(now, Outcome::kTerminalFailure, Status::kError,
                  "the body source gave fewer bytes than its size while its CRC-32C was "
                  "computed");
  }
  return turn(now, digests_.hashed() < spec_.body.size ? Phase::kHash : Phase::kNext);
}

// The upload is done on the server: its digests of the stored object against the body's.
Upload::Step Upload::check_integrity(Millis now, Outcome outcome) {
  if (const auto field = client_.response_header("x-goog-hash")) digests_.returned_field(*field);
  result_.integrity = digests_.compare(spec_.body.size);
  if (result_.integrity.status != https::IntegrityStatus::kMismatch) {
    return finish(now, outcome, Status::kOk, "");
  }
  return finish(now, Outcome::kTerminalFailure, Status::kIntegrity,
                digests_.mismatch_message(result_.integrity));
}

}  // namespace stepback::transfer
