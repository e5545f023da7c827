#include "stepback/https/client.hpp"

#include <cstdio>

#include "stepback/https/failure.hpp"
#include "stepback/https/http/response_verdict.hpp"

namespace stepback::https {

Client::Client(Connector& connector, const RetryContext& context, const ClientOptions& options)
    : context_(context),
      machine_(context),
      options_(options),
      parser_(options.buffers.response_head, BodySink{&Client::deliver_body, this},
              options.body_limit),
      exchange_(options_.timeouts, options_.buffers.io),
      body_(options_.body, options_.buffers.error_body),
      conn_(connector) {}

Client::~Client() { conn_.close(); }

Status Client::start(const RequestSpec& spec) {
  const Url& url = spec.head.url;
  if (options_.wall_now == nullptr || !valid(options_.progress)) return Status::kInvalidArgument;
  // A kept connection serves the next request to its origin; one in the middle of an
  // exchange (start() while a request is under way) or to another origin does not.
  const bool idle = phase_ == Phase::kDone || phase_ == Phase::kIdle || phase_ == Phase::kWaiting;
  if (!Request::valid(spec)) return Status::kInvalidArgument;
  conn_.keep_for(url, request_.host(), idle);  // The last request's host, before set().
  (void)request_.set(spec);
  body_.reset();
  const Status written = write_head(BodyState::Range{});
  if (written != Status::kOk) return written;
  machine_ = RetryMachine(context_, request_.idempotent() ? Idempotent::kYes : Idempotent::kNo);
  result_ = ClientResult{};
  last_attempt_ = AttemptResult{};
  uncounted_ = false;
  gate_.reset();
  follow_.reset(url);
  started_ = false;
  phase_ = Phase::kIdle;
  return Status::kOk;
}

Status Client::start(const RequestSpec& spec, const BodyResume& resume) {
  if (spec.head.method != "GET" || !BodyState::valid(resume)) return Status::kInvalidArgument;
  const Status s = start(spec);
  if (s != Status::kOk) return s;
  return body_.resume(resume) ? Status::kOk : Status::kInvalidArgument;
}

bool Client::piece_finished() const {
  // (Also true while the kDone event is emitted, before step() returns kDone.)
  return result_.outcome == Outcome::kSuccess && result_.status == 206 && body_.incomplete();
}

Status Client::continue_body(std::uint64_t until) {
  if (phase_ != Phase::kDone || !piece_finished() || until <= body_.delivered()) {
    return Status::kInvalidArgument;
  }
  // request_ is where the last piece ended it: at the URL redirects led to, with their rules
  // on credentials applied.
  machine_ = RetryMachine(context_, request_.idempotent() ? Idempotent::kYes : Idempotent::kNo);
  result_ = ClientResult{};
  last_attempt_ = AttemptResult{};
  uncounted_ = false;
  gate_.reset();
  follow_.restart(request_.url());
  body_.set_until(until);
  phase_ = Phase::kIdle;
  return Status::kOk;
}

ClientNext Client::step(Millis now) {
  now_ = now;
  if (!started_) {
    started_ = true;
    time_limit_ = options_.max_time ? now + *options_.max_time : Millis::max();
  }
  if (phase_ != Phase::kDone && now >= time_limit_) {
    phase_ = stop(now, Outcome::kTerminalFailure, Status::kTimeLimit,
                  "the request's overall time limit (max_time) passed")
                 .phase;
  }
  // The transition table: each handler yields an answer for the loop or names the next
  // phase; phase_ changes here and nowhere else. A handler never calls another, and every
  // path through an attempt yields within a few turns.
  for (;;) {
    Step s;
    const bool under_way =
        phase_ == Phase::kConnecting || phase_ == Phase::kSending || phase_ == Phase::kReceiving;
    // What runs on a network that went away, or that the request may no longer use (a
    // response longer than a metered network may carry), ends here.
    if (under_way && (gate_.take_switch() || !network_usable())) {
      s = on_network_switch(now);
    } else {
      switch (phase_) {
        case Phase::kIdle:
        case Phase::kWaiting:
          s = on_machine(now);
          break;
        case Phase::kConnecting:
          s = on_connect(now);
          break;
        case Phase::kSending:
          s = on_send(now);
          break;
        case Phase::kReceiving:
          s = on_receive(now);
          break;
        case Phase::kDone:
          return ClientNext::done();
      }
    }
    phase_ = s.phase;
    if (s.yield) {
      // The loop sleeps at most until the overall limit.
      if (s.next.kind != ClientNext::Kind::kDone && s.next.at > time_limit_)
        s.next.at = time_limit_;
      return s.next;
    }
  }
}

void Client::cancel() {
  conn_.close();
  if (phase_ == Phase::kDone) return;
  machine_.cancel();
  result_.outcome = Outcome::kCancelled;
  phase_ = Phase::kDone;
}

Client::Step Client::on_machine(Millis now) {
  const Next next = machine_step(now);
  if (next.kind != Next::Kind::kDone && !network_usable()) return hold(now);
  if (next.kind == Next::Kind::kSend && now < spread_send(now)) {
    return yield(ClientNext::wait_until(gate_.send_at()), Phase::kWaiting);
  }
  gate_.release();
  switch (next.kind) {
    case Next::Kind::kSend:
      return begin_attempt(now);
    case Next::Kind::kWaitUntil:
      return yield(ClientNext::wait_until(next.at), Phase::kWaiting);
    case Next::Kind::kDone:
      break;
  }
  // Every path here left the connection closed or kept after a complete response, which
  // the next start() to the same origin may use.
  result_.outcome = next.outcome;
  ClientEvent e = event(ClientEvent::Kind::kDone, now);
  e.status = result_.status;
  e.outcome = next.outcome;
  emit(e);
  return yield(ClientNext::done(), Phase::kDone);
}

Client::Step Client::begin_attempt(Millis now) {
  if (!uncounted_) ++result_.attempts;
  if (!uncounted_) early_.new_attempt();
  uncounted_ = false;
  BodyState::Range range = body_.next_range(request_.resumable(), request_.names_generation());
  // The range fields do not fit the request buffer: fetch it whole (the sink restarts).
  if (range.ranged && write_head(range) != Status::kOk) range = BodyState::Range{};
  // Authorization, last in the head, is asked for once the rest has fitted.
  const Status authorized = write_head(range, Authorize{true, follow_.take_fresh_token()});
  if (authorized != Status::kOk) {
    return stop(now, Outcome::kTerminalFailure, authorized,
                authorized == Status::kBufferTooSmall
                    ? "the Authorization value does not fit the request-head buffer"
                    : "the Authorization value holds a control byte");
  }
  if (body_.range_from() > 0) {
    ClientEvent r = event(ClientEvent::Kind::kResume, now);
    r.offset = body_.range_from();
    r.validator = body_.validator();
    emit(r);
  }
  ClientEvent e = event(ClientEvent::Kind::kAttempt, now);
  emit(e);
  reset_exchange(now);
  return conn_.reuse() ? go(Phase::kSending) : open_connection();
}

void Client::reset_exchange(Millis now) {
  meter_.start(now, 0, options_.progress);
  meter_receiving_ = false;
  body_.begin_response();
  parser_.reset(request_.head().method == "HEAD");
  early_.reset();
  exchange_.begin(now, head(), request_.spec().body);
}

Client::Step Client::open_connection() {
  open_pending_ = true;
  return go(Phase::kConnecting);
}

Client::Step Client::on_connect(Millis now) {
  if (open_pending_) {
    open_pending_ = false;
    const Status s = conn_.open(request_.url(), request_.host(), now, options_.timeouts);
    if (s != Status::kOk) return fail_attempt(now, s, conn_.connector().failure_message());
    // The head is written and stays as it is until the attempt ends.
    if (early_.may_ride(request_)) conn_.connector().offer_early_data(head());
    return go(Phase::kConnecting);
  }
  const Status s = conn_.step(now);
  const Connector& connector = conn_.connector();
  if (s == Status::kWouldBlock) {
    // Nothing of the request has left yet: the retry deadline may end this attempt.
    if (now >= machine_.deadline()) {
      // Names the host: the wait may have been a lookup that never got an answer.
      std::snprintf(limit_message_, sizeof limit_message_,
                    "the retry deadline passed while connecting to '%.200s'", request_.host());
      return fail_attempt(now, Status::kConnectTimeout, limit_message_);
    }
    return wait_io(connector.fd(), connector.wants(),
                   min(connector.deadline(), machine_.deadline()), Phase::kConnecting);
  }
  if (s != Status::kOk) return fail_attempt(now, s, connector.failure_message());
  exchange_.connected(now);
  early_.connected(connector.early_data());
  exchange_.sent_early(early_.result().sent);  // What the server took early; the rest goes now.
  return go(Phase::kSending);
}

Client::Step Client::on_send(Millis now) {
  const Exchange::SendProgress progress{[](void* self, Millis at, std::uint64_t bytes) {
                                          static_cast<Client*>(self)->report_progress(
                                              at, /*sending=*/true, bytes);
                                        },
                                        this};
  return after_exchange(
      now, exchange_.send(now, conn_.stream(), options_.send_limit, time_limit_, progress),
      Phase::kSending);
}

Client::Step Client::on_receive(Millis now) {
  return after_exchange(
      now, exchange_.receive(now, conn_.stream(), parser_, options_.receive_limit, time_limit_),
      Phase::kReceiving);
}

Client::Step Client::after_exchange(Millis now, const Exchange::Result& r, Phase phase) {
  switch (r.kind) {
    case Exchange::Result::Kind::kWait:
      return wait_io(r.fd, r.interest, r.at, phase);
    case Exchange::Result::Kind::kSent:
      return go(Phase::kReceiving);
    case Exchange::Result::Kind::kComplete:
      return end_response(now, r.reusable);
    case Exchange::Result::Kind::kParseFailed:
      // The sink refused to start the body over: that, not the parse, ends the request.
      if (body_.sink_failed()) return refuse_splice(now);
      break;
    case Exchange::Result::Kind::kBodySource:
      return stop(now, Outcome::kTerminalFailure, r.status, r.message);
    case Exchange::Result::Kind::kFailed:
      break;
  }
  return fail_attempt(now, r.status, r.message);
}

Client::Step Client::end_response(Millis now, bool reusable) {
  decide_body(now);
  conn_.exchange_done(reusable && parser_.keep_alive());
  result_.status = parser_.status();
  result_.error = Status::kOk;
  result_.message = "";
  if (token_rejected()) {
    // An expired token: one fresh token and an attempt at once. The machine still waits for
    // this attempt's report, so it answers kSend again: no backoff, no retry counted.
    follow_.want_fresh_token();
    return go(Phase::kWaiting);
  }
  if (early_.too_early(parser_.status())) return resend_too_early(now);
  if (body_.sink_failed()) return refuse_splice(now);
  const std::uint16_t status = parser_.status();
  // A forward proxy's 407 is the proxy's, not the origin's: as a tunnel's (kProxyAuth).
  if (forwarded_ && status == 407) {
    return stop(now, Outcome::kTerminalFailure, Status::kProxyAuth,
                "the proxy asked for credentials (407 Proxy Authentication Required): none "
                "were given, or it refused them");
  }
  if (is_followed_redirect()) return follow_redirect(now);
  const bool captured = body_.use() == BodyState::Use::kCapture;
  const UrlRefresh& refresh = options_.url_refresh;
  if (FollowUp::expired(refresh, request_.resumable(), status, captured, body_.captured())) {
    return refresh_url(now);
  }
  if (captured && body_.delivered() == 0 &&
      FollowUp::may_be_expired(refresh, request_.resumable(), status) && !body_.give_captured()) {
    // Read in case it was an expiry; it was not, and the body is the caller's as before.
    return stop(now, Outcome::kTerminalFailure, Status::kError,
                "the response sink refused the error body");
  }
  if (body_.unusable() != Status::kOk) {
    return fail_attempt(now, body_.unusable(), body_.unusable_message());
  }
  if (request_.resumable() && status / 100 == 2) {
    if (const std::optional<IntegrityResult> checked = body_.check_integrity()) {
      ClientEvent e = event(ClientEvent::Kind::kIntegrity, now);
      e.verified = checked->status != IntegrityStatus::kMismatch;
      e.message = body_.integrity_message();
      emit(e);
      if (!e.verified) {
        return stop(now, Outcome::kTerminalFailure, Status::kIntegrity, body_.integrity_message());
      }
    }
  }
  if (request_.resumable() && body_.cut(status)) {
    return fail_attempt(now, Status::kReset, "the response ended before the whole body arrived");
  }
  return report(now, response_result());
}

AttemptResult Client::response_result() const {
  const bool captured = body_.use() == BodyState::Use::kCapture;
  return response_verdict(parser_, captured ? body_.captured() : ConstBytes{}, options_.wall_now(),
                          request_.strict());
}

Client::Step Client::fail_attempt(Millis now, Status status, const char* message) {
  // A stream that could not take what the peer sent (a TLS record beyond its input buffer)
  // names the limit in its own words, which say more than the phase's sentence. They stay
  // valid until the connector opens another connection, and this failure is terminal.
  if (status == Status::kBufferTooSmall && phase_ == Phase::kReceiving &&
      conn_.stream().failure_message()[0] != '\0') {
    message = conn_.stream().failure_message();
  }
  const bool stale_reuse = conn_.reused() && !parser_.started() &&
                           (status == Status::kReset || status == Status::kClosed);
  // No path to the destination while the platform says there is no network: the request
  // waits for one (hold()), and this attempt is not counted. Without the platform's word
  // (or with a network it calls connected) an unreachable destination is an ordinary retry.
  const bool offline =
      phase_ == Phase::kConnecting && conn_.connector().unreachable() && gate_.no_path();
  conn_.close();
  if (offline) {
    emit_error(now, status, message);
    // The machine still waits for this attempt's report: it answers kSend again, and
    // on_machine() holds until the network changes.
    uncounted_ = true;
    return go(Phase::kWaiting);
  }
  // A kept connection the server had already closed: that is no attempt; the request goes
  // again at once on a fresh connection if re-sending it is safe and it failed before any
  // of its body left. Once body bytes have gone the server may have taken them in (an
  // upload chunk it partly committed): that is a failed attempt, which the caller's retry
  // rules see.
  const std::uint64_t sent = exchange_.sent();
  if (stale_reuse && (sent == 0 || (request_.idempotent() && sent <= exchange_.head_size()))) {
    // Said, not counted: a trace shows why a second connection was opened.
    emit_error(now, status,
               "the kept connection had been closed by the server: the request goes again at "
               "once on a new one (not a retry)");
    reset_exchange(now);
    return open_connection();
  }
  result_.error = status;
  result_.message = message;
  if (parser_.head_complete()) result_.status = parser_.status();
  emit_error(now, status, message);
  // The core's rule by failure kind, narrowed by what this attempt knows: nothing was sent.
  const AttemptResult by_kind = AttemptResult::transport(to_failure(status));
  return report(
      now, AttemptResult::transport(by_kind.failure, sent > 0 && by_kind.may_have_been_processed));
}

Client::Step Client::report(Millis now, const AttemptResult& result) {
  last_attempt_ = result;
  const Next next = machine_.report(now, result);
  if (next.kind == Next::Kind::kWaitUntil) {
    ClientEvent e = event(ClientEvent::Kind::kWait, now);
    e.wait = next.at - now;
    e.wait_reason = machine_.wait_reason();
    emit(e);
  }
  // The machine answers step(now) as report() did; the next turn follows it.
  return go(Phase::kWaiting);
}

Client::Step Client::stop(Millis now, Outcome outcome, Status status, const char* message) {
  machine_.cancel();
  conn_.close();
  result_.outcome = outcome;
  result_.error = status;
  result_.message = message;
  ClientEvent e = event(ClientEvent::Kind::kError, now);
  e.failure = to_failure(status);
  e.message = message;
  emit(e);
  e.kind = ClientEvent::Kind::kDone;
  e.status = result_.status;
  e.outcome = outcome;
  emit(e);
  return yield(ClientNext::done(), Phase::kDone);
}

Client::Step Client::follow_redirect(Millis now) {
  // Resolved in the receive scratch, free between responses.
  const FollowUp::Target t =
      follow_.redirect(parser_, request_.head().method, request_.url(), options_.max_redirects,
                       options_.buffers.io, options_.redirect_url, Request::kHostMax + 1);
  if (t.kind != FollowUp::Target::Kind::kGo) {
    return stop(now, Outcome::kTerminalFailure, t.status, t.message);
  }
  if (!t.step.same_origin) conn_.close();
  const bool was_idempotent = request_.idempotent();
  request_.redirect(t.url, t.step);
  if (request_.idempotent() != was_idempotent) {
    machine_ = RetryMachine(context_, request_.idempotent() ? Idempotent::kYes : Idempotent::kNo);
  }
  if (write_head(BodyState::Range{}) != Status::kOk) {
    const FollowUp::Target r =
        follow_.refuse_redirect("the redirected request does not fit its buffer", parser_);
    return stop(now, Outcome::kTerminalFailure, r.status, r.message);
  }
  ClientEvent e = event(ClientEvent::Kind::kRedirect, now);
  e.status = parser_.status();
  e.url = t.text;
  emit(e);
  // The machine still waits for this attempt's report: it answers kSend again, and the
  // redirect is neither a retry nor a failure.
  uncounted_ = true;
  return go(Phase::kWaiting);
}

Client::Step Client::refresh_url(Millis now) {
  // Written in the receive scratch, free between responses.
  const FollowUp::Target t =
      follow_.refresh(options_.url_refresh, options_.max_url_refreshes, request_.url(),
                      options_.buffers.io, options_.redirect_url, Request::kHostMax + 1);
  if (t.kind == FollowUp::Target::Kind::kNone) return report(now, response_result());
  if (t.kind == FollowUp::Target::Kind::kRefuse) {
    return stop(now, Outcome::kTerminalFailure, t.status, t.message);
  }
  if (!t.step.same_origin) conn_.close();
  request_.retarget(t.url, t.step.same_origin);
  ClientEvent e = event(ClientEvent::Kind::kUrlRefresh, now);
  e.status = parser_.status();
  e.url = t.text;
  e.offset = body_.delivered();
  emit(e);
  // As after a redirect: the machine still waits for this attempt's report, and the next
  // attempt goes at once, neither a retry nor a failure.
  uncounted_ = true;
  return go(Phase::kWaiting);
}

Client::Step Client::refuse_splice(Millis now) {
  return stop(now, Outcome::kTerminalFailure, Status::kRestartRefused,
              "the body had to start over and the sink cannot restart; nothing was spliced");
}

Client::Step Client::wait_io(int fd, IoInterest interest, Millis deadline, Phase phase) const {
  // Never "wait for I/O" on nothing: a loop polling fd -1 would sleep through the whole
  // deadline however soon the connection got ready.
  if (fd < 0 || interest == IoInterest::kNone) {
    return yield(ClientNext::wait_until(deadline), phase);
  }
  return yield(ClientNext::wait_io(fd, interest, deadline), phase);
}

Status Client::write_head(const BodyState::Range& range, Authorize authorize) {
  RequestHead head =
      request_.head();  // Through a forward proxy: absolute form and its credentials.
  head.absolute_form = conn_.connector().forwards(head.url, &head.proxy_authorization);
  forwarded_ = head.absolute_form;
  head.ranged = range.ranged;
  head.range_from = range.from;
  head.range_end = range.end;
  head.if_range = range.if_range;
  head.generation_match = range.generation;
  if (authorize.ask) {
    const Credentials& c = options_.credentials;
    head.authorization = LateValue{c.authorization, c.context, authorize.refresh};
  }
  const Status s = write_request_head(head, options_.buffers.request, &head_size_);
  body_.asked(s == Status::kOk ? range : BodyState::Range{});
  return s;
}

BodyResume Client::body_resume() const {
  // The generation only when no redirect was followed: a resume starts at the URL asked for.
  return body_.resume_point(follow_.redirects() == 0);
}

}  // namespace stepback::https
