#include "stepback/transfer/upload.hpp"

#include <cstring>

#include "held_range.hpp"
#include "stepback/https/failure.hpp"

namespace stepback::transfer {
namespace {

using https::Status;

// Writes `v` in decimal at `out` (room for 20 digits) and returns the end.
char* write_u64(char* out, std::uint64_t v) {
  char digits[20];
  std::size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

char* write_text(char* out, std::string_view s) {
  std::memcpy(out, s.data(), s.size());
  return out + s.size();
}

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
  crc_ = 0;
  hashed_ = 0;
  returned_.clear();
  scan_ = detail::MetadataDigestScan{};
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
      crc_ = *spec.resume.crc32c;
      hashed_ = spec.resume.crc32c_length;
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

https::RunHint Upload::run_hint(const UploadNext& next) const {
  https::RunHint hint;
  if (phase_ == Phase::kDone || next.kind == UploadNext::Kind::kDone) return hint;
  if (phase_ == Phase::kExchange) {
    hint = client_.run_hint(next);
  } else if (phase_ == Phase::kPaused || phase_ == Phase::kStarved) {
    hint.state = https::RunHint::State::kPaused;
  } else {
    hint.state = next.kind == UploadNext::Kind::kWaitIo ? https::RunHint::State::kRunning
                                                        : https::RunHint::State::kWaiting;
    hint.run_at = next.at;
  }
  if (spec_.size_final) {
    hint.bytes_left = spec_.body.size > committed_ ? spec_.body.size - committed_ : 0;
  } else {
    hint.bytes_left.reset();
  }
  https::set_network_needs(&hint, options_.network, spec_.size_final ? spec_.body.size : 0);
  return hint;
}

void Upload::network_changed(Millis now, const https::NetworkInfo& network) {
  if (phase_ == Phase::kExchange && exchange_ != Exchange::kOpen) {
    client_.cancel();
    switched_ = true;
  }
  client_.network_changed(now, network);
  if (network.connected && client_.network_usable()) machine_.network_available(now);
}

Status Upload::extend(std::uint64_t available, bool final) {
  if (available < spec_.body.size || (spec_.size_final && available != spec_.body.size)) {
    return Status::kInvalidArgument;
  }
  if (available > 0 && spec_.body.read == nullptr) return Status::kInvalidArgument;
  spec_.body.size = available;
  spec_.size_final = final;
  write_upload_length();
  if (phase_ == Phase::kStarved) {
    // The wait was the caller's, not the server's: the retry loop starts over, as after
    // progress, and the chunk (or the finishing PUT) goes at once.
    fresh_machine();
    phase_ = Phase::kMachine;
  } else if (phase_ == Phase::kPaused && paused_from_ == Phase::kStarved) {
    paused_from_ = Phase::kMachine;  // resume() starts the loop over.
  }
  return Status::kOk;
}

void Upload::pause(Millis now) {
  if (phase_ == Phase::kDone || phase_ == Phase::kPaused) return;
  paused_from_ = phase_;
  paused_wait_end_ = Millis(0);
  const bool backoff = phase_ == Phase::kMachine && machine_waiting_;
  if ((backoff || phase_ == Phase::kResumeWait) && wait_until_ > now) {
    paused_wait_end_ = wait_until_;
  }
  if (phase_ == Phase::kExchange) {
    // What the server kept of the exchange is unknown: resume() asks (a session POST goes
    // again, which at worst leaves an unused session behind).
    client_.cancel();
    need_query_ = session_size_ > 0;
    paused_from_ = Phase::kNext;
  }
  phase_ = Phase::kPaused;
}

void Upload::resume(Millis now) {
  if (phase_ != Phase::kPaused) return;
  switch (paused_from_) {
    case Phase::kIdle:     // Not begun: the first step() begins it.
    case Phase::kHash:     // Reading the body, not talking to the server.
    case Phase::kStarved:  // Waiting for the body, not for the server.
      phase_ = paused_from_;
      return;
    case Phase::kResumeWait:
    case Phase::kMachine:
    case Phase::kNext:
    case Phase::kExchange:
    case Phase::kPaused:
    case Phase::kDone:
      break;
  }
  fresh_machine();
  resume_wait_ = paused_wait_end_ > now ? paused_wait_end_ - now : Millis(0);
  paused_wait_end_ = Millis(0);
  phase_ = Phase::kIdle;  // Serves resume_wait_, then asks the fresh machine.
}

void Upload::write_upload_length() { *write_u64(upload_length_, spec_.body.size) = '\0'; }

void Upload::cancel() {
  if (phase_ == Phase::kDone) return;
  client_.cancel();
  machine_.cancel();
  result_.outcome = Outcome::kCancelled;
  phase_ = Phase::kDone;
}

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
    if (spec_.size_final)
      headers_[count++] = https::Header{"X-Upload-Content-Length", upload_length_};
    if (!spec_.content_type.empty()) {
      headers_[count++] = https::Header{"X-Upload-Content-Type", spec_.content_type};
    }
    if (spec_.metadata.size > 0) {
      headers_[count++] = https::Header{"Content-Type", "application/json; charset=UTF-8"};
    }
    request.body = https::BodySource::of(&spec_.metadata);
    request.idempotency = spec_.idempotency;
  } else {
    // The last chunk, or the empty PUT that finishes a body the server holds whole, carries
    // the body's digests; a CRC-32C still being computed is completed first.
    const bool final = spec_.size_final;
    if (!final && !need_query_ && size - committed_ < spec_.chunk_size) {
      // Less than a whole chunk is ready: wait for the caller's extend().
      return go(Phase::kStarved);
    }
    const bool last =
        final && !need_query_ && (committed_ >= size || size - committed_ <= spec_.chunk_size);
    if (last && computing_crc32c() && hashed_ < size) return hash_ahead(now);
    const std::size_t hash_size = last ? write_goog_hash(goog_hash_) : 0;
    if (hash_size > 0) {
      headers_[count++] = https::Header{"x-goog-hash", std::string_view(goog_hash_, hash_size)};
    }
    request.head.method = "PUT";
    request.head.url = session_url_;
    request.idempotency = https::RequestSpec::Idempotency::kYes;
    char* end = write_text(content_range_, "bytes ");
    if (need_query_ || (final && committed_ >= size)) {
      // An empty PUT asks what the server holds; with everything sent, it also asks the
      // server to finish (an empty body is one such request).
      exchange_ = Exchange::kQuery;
      begun.kind = UploadEvent::Kind::kQuery;
      end = write_text(end, "*/");
    } else {
      exchange_ = Exchange::kChunk;
      chunk_begin_ = committed_;
      chunk_end_ = size - committed_ > spec_.chunk_size ? committed_ + spec_.chunk_size : size;
      if (!final) chunk_end_ = committed_ + spec_.chunk_size;  // Ready: checked above.
      end = write_u64(end, chunk_begin_);
      *end++ = '-';
      end = write_u64(end, chunk_end_ - 1);
      *end++ = '/';
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
    if (final) {
      end = write_u64(end, size);
    } else {
      *end++ = '*';
    }
    headers_[count++] = https::Header{
        "Content-Range",
        std::string_view(content_range_, static_cast<std::size_t>(end - content_range_))};
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
  switch (r.outcome) {
    case Outcome::kSuccess:
      return exchange_ == Exchange::kOpen ? on_open(now) : on_session_answer(now);
    case Outcome::kRetriesExhausted: {
      // A retryable failure (the exchange's policy allows no retry): the session decides,
      // with the server's delay (Retry-After or RetryInfo) the Client read.
      return fail(now, client_.last_attempt(), session_size_ > 0);
    }
    case Outcome::kTerminalStatus:
      if (exchange_ != Exchange::kOpen && (r.status == 404 || r.status == 410)) {
        return on_expired(now);
      }
      return finish(now, Outcome::kTerminalStatus, Status::kOk,
                    exchange_ == Exchange::kOpen
                        ? "the session POST was refused with a status that is not retried"
                        : "the upload was refused with a status that is not retried");
    case Outcome::kNotIdempotent:
      return finish(now, Outcome::kNotIdempotent, r.error,
                    r.error == Status::kOk
                        ? "the session POST failed and may have been processed; it is not "
                          "re-sent (see UploadSpec::idempotency)"
                        : r.message);
    case Outcome::kTerminalFailure:
    case Outcome::kDeadline:
    case Outcome::kBudgetExhausted:
    case Outcome::kServerDelayTooLong:
    case Outcome::kCancelled:
    case Outcome::kOffline:
      break;
  }
  return finish(now, r.outcome, r.error, r.message);
}

Upload::Step Upload::on_open(Millis now) {
  if (result_.status / 100 != 2) {
    return finish(now, Outcome::kTerminalStatus, Status::kOk,
                  "the session POST was answered without a session (redirects are not followed)");
  }
  const std::optional<std::string_view> location = client_.response_header("location");
  if (!location) {
    return finish(now, Outcome::kTerminalFailure, Status::kProtocol,
                  "the session POST's answer has no Location (the session URI)");
  }
  if (!store_session(*location)) {
    return finish(now, Outcome::kTerminalFailure, Status::kProtocol,
                  "the session URI (Location) is not a usable URL or does not fit its buffer");
  }
  ++sessions_;
  committed_ = 0;
  return progress(now);
}

Upload::Step Upload::on_session_answer(Millis now) {
  const std::uint16_t status = result_.status;
  if (status / 100 == 2) {
    if (!spec_.size_final) {
      return finish(now, Outcome::kTerminalFailure, Status::kProtocol,
                    "the server finished an upload whose size was not yet declared");
    }
    committed_ = spec_.body.size;
    UploadEvent e = event(UploadEvent::Kind::kCommitted, now);
    e.offset = committed_;
    emit(e);
    const Next next = machine_.report(now, AttemptResult::http(status));  // The budget's success.
    return check_integrity(now, next.kind == Next::Kind::kDone ? next.outcome : Outcome::kSuccess);
  }
  if (status != 308) {
    return finish(now, Outcome::kTerminalFailure, Status::kProtocol,
                  "the session answered with a status the protocol does not know (not 2xx, "
                  "308, 404 or 410)");
  }
  std::uint64_t held = 0;
  if (const auto range = client_.response_header("range")) {
    if (!detail::parse_held(*range, &held)) {
      return finish(now, Outcome::kTerminalFailure, Status::kProtocol,
                    "the 308's Range is not of the form bytes=0-K");
    }
  }
  if (held > spec_.body.size || (exchange_ == Exchange::kChunk && held > chunk_end_)) {
    return finish(now, Outcome::kTerminalFailure, Status::kProtocol,
                  "the server claims bytes it was never sent");
  }
  // The server's word is the truth, even below what it said before (it lost data): sending
  // goes on from there, never repeating a byte it holds.
  const bool progressed = held > committed_;
  committed_ = held;
  UploadEvent e = event(UploadEvent::Kind::kCommitted, now);
  e.offset = committed_;
  emit(e);
  need_query_ = false;
  if (progressed) return progress(now);
  if (exchange_ == Exchange::kQuery && (committed_ < spec_.body.size || !spec_.size_final)) {
    // The answer the query was for; the chunk from there (or the wait for more of a body
    // still being produced) is part of the same attempt.
    return turn(now, Phase::kNext);
  }
  // A chunk of which nothing was kept, or everything held and still no final answer: a
  // failed attempt, so that a server that never moves cannot hold the loop forever.
  result_.error = Status::kOk;
  result_.message = exchange_ == Exchange::kChunk
                        ? "the server kept none of the chunk (308 without progress)"
                        : "the server holds every byte but did not finish the upload";
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
  const std::size_t room = options_.session_uri.size;
  std::size_t size = 0;
  if (!uri.empty() && uri.front() == '/') {
    // A path on the initiation URL's origin.
    const https::Url& origin = spec_.url;
    const bool literal6 = origin.host.find(':') != std::string_view::npos;
    const std::size_t prefix =
        8 + origin.host.size() + (literal6 ? 2 : 0) + 6;  // port <= 5 digits.
    if (prefix + uri.size() > room) return false;
    char* out = session_text_;
    out = write_text(out, origin.tls ? "https://" : "http://");
    if (literal6) *out++ = '[';
    out = write_text(out, origin.host);
    if (literal6) *out++ = ']';
    if (origin.port != origin.default_port()) {
      *out++ = ':';
      out = write_u64(out, origin.port);
    }
    out = write_text(out, uri);
    size = static_cast<std::size_t>(out - session_text_);
  } else {
    if (uri.size() > room) return false;
    std::memmove(session_text_, uri.data(), uri.size());
    size = uri.size();
  }
  https::Url url;
  if (https::parse_url(std::string_view(session_text_, size), &url) != Status::kOk) {
    session_size_ = 0;
    return false;
  }
  session_url_ = url;
  session_size_ = size;
  return true;
}

void Upload::fresh_machine() {
  session_policy_ = context_.policy;
  retry_offset_ = 0;
  machine_waiting_ = false;
  machine_ = RetryMachine(session_context_, Idempotent::kYes);
}

void Upload::resume(const UploadResume& resume) {
  resume_wait_ = resume.wait;
  const std::uint32_t r = resume.retries;
  if (r == 0) return;
  // The machine starts at retry 0; its policy starts where retry r would have been: the
  // retries left, and the first wait of the backoff sequence at r.
  const Policy& p = context_.policy;
  retry_offset_ = r;
  session_policy_.max_retries = r < p.max_retries ? p.max_retries - r : 0;
  const std::uint64_t cap = p.max_backoff.count();
  std::uint64_t t = p.initial_delay.count();
  for (std::uint32_t i = 0; i < r && t < cap; ++i) t *= p.multiplier;
  Millis first(t < cap ? t : cap);
  if (p.total_deadline.count() != 0) first = min(first, p.total_deadline);
  session_policy_.initial_delay = first;
  machine_ = RetryMachine(session_context_, Idempotent::kYes);
}

bool Upload::save(TransferState* state, Millis now, Millis wall_now) const {
  if (!spec_.size_final) return false;
  if (session_size_ == 0 || !state->set_session_uri(session_uri())) return false;
  state->kind = TransferKind::kUpload;
  state->total_size = spec_.body.size;
  state->committed = committed_;
  state->chunk_size = spec_.chunk_size;
  // The CRC-32C of the committed prefix, when the running one ends exactly there.
  state->crc32c.reset();
  if (computing_crc32c() && hashed_ == committed_) state->crc32c = crc_;
  // A paused upload is described as it stood when paused.
  const Phase phase = phase_ == Phase::kPaused ? paused_from_ : phase_;
  const bool backoff = phase == Phase::kMachine && machine_waiting_;
  const bool waiting = backoff || phase == Phase::kResumeWait;
  // The retry number of the next attempt: one more than the machine's while it waits.
  state->retries = retry_offset_ + machine_.retries() + (backoff ? 1U : 0U);
  state->wait_remaining = waiting ? wait_until_ - now : Millis(0);
  const auto wall = static_cast<std::int64_t>(wall_now.count() & 0x7FFFFFFFFFFFFFFFULL);
  state->saved_wall_ms = wall;
  state->release_wall_ms = wall + static_cast<std::int64_t>(state->wait_remaining.count());
  return true;
}

// Reads the body's bytes from hashed_ on, a bounded amount per step, until the CRC-32C
// covers the whole body; then the exchange that needed it begins.
Upload::Step Upload::hash_ahead(Millis now) {
  constexpr std::uint64_t kPerStep = std::uint64_t{256} * 1024;
  std::uint8_t block[4096];
  const std::uint64_t size = spec_.body.size;
  const std::uint64_t stop = size - hashed_ > kPerStep ? hashed_ + kPerStep : size;
  while (hashed_ < stop) {
    const std::uint64_t left = stop - hashed_;
    const std::size_t want = left < sizeof block ? static_cast<std::size_t>(left) : sizeof block;
    const std::size_t n =
        spec_.body.read(spec_.body.context, hashed_, https::MutableBytes{block, want});
    if (n != want) {
      return finish(now, Outcome::kTerminalFailure, Status::kError,
                    "the body source gave fewer bytes than its size while its CRC-32C was "
                    "computed");
    }
    hash(hashed_, https::ConstBytes{block, n});
  }
  return turn(now, hashed_ < size ? Phase::kHash : Phase::kNext);
}

void Upload::hash(std::uint64_t offset, https::ConstBytes data) {
  if (!computing_crc32c() || offset > hashed_ || offset + data.size <= hashed_) return;
  const auto skip = static_cast<std::size_t>(hashed_ - offset);
  crc_ = https::crc32c_extend(crc_, https::ConstBytes{data.data + skip, data.size - skip});
  hashed_ = offset + data.size;
}

bool Upload::whole_crc32c(std::uint32_t* crc) const {
  if (spec_.crc32c) {
    *crc = *spec_.crc32c;
    return true;
  }
  if (!spec_.compute_crc32c || hashed_ != spec_.body.size) return false;
  *crc = crc_;
  return true;
}

// Writes "crc32c=...,md5=..." (what is known) at `out` (64 bytes); returns its length.
std::size_t Upload::write_goog_hash(char* out) const {
  char* at = out;
  std::uint32_t crc = 0;
  if (whole_crc32c(&crc)) {
    const https::Digest d = https::Digest::crc32c(crc);
    at = write_text(at, "crc32c=");
    at += https::base64_encode(d.view(), at, 12);
  }
  if (spec_.md5 != nullptr) {
    if (at != out) *at++ = ',';
    at = write_text(at, "md5=");
    at += https::base64_encode(https::ConstBytes{spec_.md5, https::kMd5DigestSize}, at, 24);
  }
  return static_cast<std::size_t>(at - out);
}

// The upload is done on the server: its digests of the stored object against the body's.
Upload::Step Upload::check_integrity(Millis now, Outcome outcome) {
  if (const auto field = client_.response_header("x-goog-hash")) {
    (void)returned_.add_x_goog_hash(*field);
  }
  std::uint32_t crc = 0;
  const bool have_crc = whole_crc32c(&crc);
  const https::Digest crc_digest = https::Digest::crc32c(have_crc ? crc : 0);
  https::Digest md5_digest;
  if (spec_.md5 != nullptr) {
    std::uint8_t raw[https::kMd5DigestSize];
    std::memcpy(raw, spec_.md5, sizeof raw);
    md5_digest = https::Digest::md5(raw);
  }
  result_.integrity = returned_.compare_with(have_crc ? &crc_digest : nullptr,
                                             spec_.md5 != nullptr ? &md5_digest : nullptr);
  result_.integrity.size = spec_.body.size;
  if (result_.integrity.status != https::IntegrityStatus::kMismatch) {
    return finish(now, outcome, Status::kOk, "");
  }
  constexpr char kLead[] = "the server stored an object whose digest differs from the body's: ";
  std::memcpy(integrity_message_, kLead, sizeof kLead - 1);
  (void)https::format_integrity_message(result_.integrity, integrity_message_ + sizeof kLead - 1,
                                        sizeof integrity_message_ - (sizeof kLead - 1));
  return finish(now, Outcome::kTerminalFailure, Status::kIntegrity, integrity_message_);
}

void Upload::emit(const UploadEvent& e) const {
  if (options_.events.on_event != nullptr) options_.events.on_event(options_.events.context, e);
}

UploadEvent Upload::event(UploadEvent::Kind kind, Millis at) const {
  UploadEvent e;
  e.kind = kind;
  e.at = at;
  e.exchange = result_.exchanges;
  e.retry = retry_offset_ + machine_.retries();
  return e;
}

std::size_t Upload::read_chunk(void* self, std::uint64_t offset, https::MutableBytes out) {
  auto* u = static_cast<Upload*>(self);
  const std::uint64_t at = u->chunk_begin_ + offset;
  const std::size_t n = u->spec_.body.read(u->spec_.body.context, at, out);
  u->bytes_sent_ += n;
  u->hash(at, https::ConstBytes{out.data, n});
  return n;
}

bool Upload::write_metadata(void* self, std::uint64_t offset, https::ConstBytes data) {
  auto* u = static_cast<Upload*>(self);
  // Only the final answer's body is the object's metadata; 308s and errors are dropped.
  if (u->exchange_ == Exchange::kOpen || u->response_status_ / 100 != 2) return true;
  const https::ResponseSink& sink = u->options_.metadata;
  if (offset == 0 && u->metadata_delivered_ > 0) {
    // A later exchange brings the metadata again (the first copy was cut short).
    if (sink.write != nullptr && (sink.restart == nullptr || !sink.restart(sink.context))) {
      u->metadata_refused_restart_ = true;
      return false;
    }
    u->metadata_delivered_ = 0;
  }
  if (offset == 0) {
    u->returned_.clear();
    u->scan_ = detail::MetadataDigestScan{};
  }
  u->scan_.feed(data, &u->returned_);
  const std::uint64_t at = u->metadata_delivered_;
  u->metadata_delivered_ += data.size;
  if (sink.write == nullptr || sink.write(sink.context, at, data)) return true;
  u->metadata_failed_ = true;
  return false;
}

void Upload::on_client_event(void* self, const https::ClientEvent& event) {
  auto* u = static_cast<Upload*>(self);
  if (event.kind == https::ClientEvent::Kind::kResponse) {
    u->response_status_ = event.status;
    UploadEvent e = u->event(UploadEvent::Kind::kResponse, event.at);
    e.status = event.status;
    e.reason = event.reason;
    u->emit(e);
  } else if (event.kind == https::ClientEvent::Kind::kProgress && event.sending &&
             u->exchange_ == Exchange::kChunk) {
    const std::uint64_t offset = u->chunk_begin_ + event.bytes;
    if (!u->meter_.due(event.at, offset)) return;
    UploadEvent e = u->event(UploadEvent::Kind::kProgress, event.at);
    e.offset = offset;
    e.size = u->spec_.size_final ? u->spec_.body.size : 0;
    e.rate = u->meter_.report(event.at, offset);
    u->emit(e);
  } else if (event.kind == https::ClientEvent::Kind::kError) {
    UploadEvent e = u->event(UploadEvent::Kind::kError, event.at);
    e.failure = event.failure;
    e.message = event.message;
    u->emit(e);
  }
}

}  // namespace stepback::transfer
