#include "stepback/https/client.hpp"

#include <cstdio>
#include <cstring>

#include "http/http1_text.hpp"
#include "http/query.hpp"
#include "stepback/https/failure.hpp"
#include "stepback/https/http/http_date.hpp"
#include "stepback/https/http/url_expiry.hpp"
#include "stepback/https/http/retry_info.hpp"

namespace stepback::https {
namespace {

ConstBytes bytes_of(std::string_view s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Whether the request already names a Cloud Storage generation (in its URL, or a precondition
// field of the app's): then the Client adds none of its own.
bool names_generation(const RequestHead& head) {
  for (std::size_t i = 0; i < head.header_count; ++i) {
    if (http1_text::iequals(head.headers[i].name, "x-goog-if-generation-match")) return true;
  }
  return detail::has_query_parameter(head.url.target, "generation") ||
         detail::has_query_parameter(head.url.target, "ifGenerationMatch");
}

}  // namespace

Client::Client(Connector& connector, const RetryContext& context, const ClientOptions& options)
    : connector_(connector),
      context_(context),
      machine_(context),
      options_(options),
      parser_(options.buffers.response_head, BodySink{&Client::deliver_body, this},
              options.body_limit),
      exchange_(options_.timeouts, options_.buffers.io),
      body_(options_.body, options_.buffers.error_body) {}

Client::~Client() { close_connection(); }

Status Client::start(const RequestSpec& spec) {
  const Url& url = spec.head.url;
  if (options_.wall_now == nullptr || !valid(options_.progress)) return Status::kInvalidArgument;
  if (url.host.empty() || url.host.size() >= sizeof host_z_) return Status::kInvalidArgument;
  if (spec.body.size > 0 && spec.body.read == nullptr) return Status::kInvalidArgument;
  // A kept connection serves the next request to its origin; one in the middle of an
  // exchange (start() while a request is under way) or to another origin does not.
  const bool idle = phase_ == Phase::kDone || phase_ == Phase::kIdle || phase_ == Phase::kWaiting;
  if (connection_open_ && (!idle || url.port != connection_port_ || url.tls != connection_tls_ ||
                           url.host != std::string_view(host_z_))) {
    close_connection();
  }
  std::memcpy(host_z_, url.host.data(), url.host.size());
  host_z_[url.host.size()] = '\0';
  spec_ = spec;
  spec_.head.body_size = spec.body.size;
  body_.reset();
  const Status written = write_head(BodyState::Range{});
  if (written != Status::kOk) return written;
  idempotent_ = is_idempotent(spec);
  strict_ = spec.idempotency == RequestSpec::Idempotency::kStrict ||
            spec.idempotency == RequestSpec::Idempotency::kNo;
  resumable_ = spec.head.method == "GET";
  machine_ = RetryMachine(context_, idempotent_ ? Idempotent::kYes : Idempotent::kNo);
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
  // spec_ is the request as the last piece ended it: at the URL redirects led to, with their
  // rules on credentials applied.
  machine_ = RetryMachine(context_, idempotent_ ? Idempotent::kYes : Idempotent::kNo);
  result_ = ClientResult{};
  last_attempt_ = AttemptResult{};
  uncounted_ = false;
  gate_.reset();
  follow_.restart(spec_.head.url);
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
  close_connection();
  if (phase_ == Phase::kDone) return;
  machine_.cancel();
  result_.outcome = Outcome::kCancelled;
  phase_ = Phase::kDone;
}

Client::Step Client::on_machine(Millis now) {
  // Time spent without a usable network is not the request's: the deadline moves with it.
  if (gate_.held()) machine_.exclude(gate_.account(now));
  const Next next = machine_.step(now);
  if (next.kind != Next::Kind::kDone && !network_usable()) return hold(now);
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
  uncounted_ = false;
  if (write_head(body_.next_range(resumable_, names_generation(spec_.head))) != Status::kOk) {
    // The range fields do not fit the request buffer: fetch it whole (the sink restarts).
    (void)write_head(BodyState::Range{});
  }
  if (add_authorization(follow_.take_fresh_token()) != Status::kOk) {
    return stop(now, Outcome::kTerminalFailure, Status::kBufferTooSmall,
                "the Authorization value does not fit the request-head buffer");
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
  // A kept connection the server closed while we waited (or that holds stray bytes, such as
  // an unsolicited response) is dead: a new one is opened before any request byte is
  // written, which is safe for any method.
  if (connection_open_ && !kept_connection_alive()) close_connection();
  if (connection_open_) {
    reused_ = true;
    return go(Phase::kSending);
  }
  return open_connection();
}

void Client::reset_exchange(Millis now) {
  meter_.start(now, 0, options_.progress);
  meter_receiving_ = false;
  body_.begin_response();
  parser_.reset(spec_.head.method == "HEAD");
  exchange_.begin(now, ConstBytes{options_.buffers.request.data, head_size_}, spec_.body);
}

Client::Step Client::open_connection() {
  open_pending_ = true;
  return go(Phase::kConnecting);
}

void Client::network_available(Millis now) {
  if (phase_ == Phase::kDone) return;
  if (phase_ == Phase::kConnecting) {
    close_connection();
    connector_.network_changed();
    open_pending_ = true;  // on_connect() opens again on the next step().
  } else if (phase_ != Phase::kSending && phase_ != Phase::kReceiving) {
    if (connection_open_) close_connection();
    connector_.network_changed();
  }
  machine_.network_available(now);
}

void Client::network_changed(Millis now, const NetworkInfo& network) {
  gate_.changed(network, options_.network, transfer_size());
  const bool under_way =
      phase_ == Phase::kConnecting || phase_ == Phase::kSending || phase_ == Phase::kReceiving;
  if (under_way) {
    gate_.mark_switch();  // step() ends it: phases change there alone.
    return;
  }
  // A connection kept from the old network would only fail on its first use.
  if (connection_open_) close_connection();
  connector_.network_changed();
  if (phase_ != Phase::kDone && network.connected && network_usable()) {
    machine_.network_available(now);
  }
}

bool Client::network_usable() const { return network_refusal()[0] == '\0'; }

RunHint Client::run_hint(const ClientNext& next) const {
  RunHint hint;
  if (next.kind == ClientNext::Kind::kDone) return hint;
  hint.run_at = next.at;
  if (next.kind == ClientNext::Kind::kWaitIo) {
    hint.state = RunHint::State::kRunning;
  } else {
    hint.state = gate_.held() ? RunHint::State::kWaitingForNetwork : RunHint::State::kWaiting;
  }
  set_network_needs(&hint, options_.network, transfer_size());
  if (const std::optional<std::uint64_t> total = body_.total()) {
    hint.bytes_left = *total > body_.delivered() ? *total - body_.delivered() : 0;
  } else if (spec_.body.size > 0) {
    hint.bytes_left = spec_.body.size;
  }
  return hint;
}

std::uint64_t Client::transfer_size() const {
  return spec_.body.size > 0 ? spec_.body.size : body_.total().value_or(0);
}

Client::Step Client::on_network_switch(Millis now) {
  // Request bytes left on the old network: the server may have the request.
  const bool may_have_reached = exchange_.sent() > 0;
  close_connection();
  connector_.network_changed();
  if (may_have_reached && !idempotent_) {
    return fail_attempt(now, Status::kReset,
                        "the network changed while the request was on its way; it may have been "
                        "processed, and it is not idempotent");
  }
  ClientEvent e = event(ClientEvent::Kind::kError, now);
  e.failure = Failure::kReset;
  e.message = network_usable() ? "the network changed: the attempt goes again on the new one"
                               : "the network changed to one the request may not use";
  emit(e);
  // The machine still waits for this attempt's report: it answers kSend again, and the
  // switch is neither a retry nor a failure (a GET goes on by Range).
  uncounted_ = true;
  return go(Phase::kWaiting);
}

Client::Step Client::hold(Millis now) {
  const NetworkGate::Hold h = gate_.hold(now, options_.timeouts.offline);
  if (h.began) {
    ClientEvent e = event(ClientEvent::Kind::kWait, now);
    e.wait = h.end - now;
    e.wait_reason = WaitReason::kOffline;
    e.message = network_refusal();
    emit(e);
  }
  if (h.expired) {
    (void)std::snprintf(limit_message_, sizeof limit_message_,
                        "no network the request may use came within %llu s (Timeouts::offline): "
                        "%s",
                        static_cast<unsigned long long>(options_.timeouts.offline.count() / 1000),
                        network_refusal());
    return stop(now, Outcome::kOffline, Status::kConnectFailed, limit_message_);
  }
  return yield(ClientNext::wait_until(h.end), Phase::kWaiting);
}

Client::Step Client::on_connect(Millis now) {
  if (open_pending_) {
    open_pending_ = false;
    reused_ = false;
    ++connections_;
    connection_port_ = spec_.head.url.port;
    connection_tls_ = spec_.head.url.tls;
    const Status s = connector_.open(spec_.head.url, host_z_, now, options_.timeouts);
    if (s != Status::kOk) return fail_attempt(now, s, connector_.failure_message());
    return go(Phase::kConnecting);
  }
  const Status s = connector_.step(now);
  if (s == Status::kWouldBlock) {
    // Nothing of the request has left yet: the retry deadline may end this attempt.
    if (now >= machine_.deadline()) {
      // Names the host: the wait may have been a lookup that never got an answer.
      std::snprintf(limit_message_, sizeof limit_message_,
                    "the retry deadline passed while connecting to '%.200s'", host_z_);
      return fail_attempt(now, Status::kConnectTimeout, limit_message_);
    }
    return wait_io(connector_.fd(), connector_.wants(),
                   min(connector_.deadline(), machine_.deadline()), Phase::kConnecting);
  }
  if (s != Status::kOk) return fail_attempt(now, s, connector_.failure_message());
  resumed_ = connector_.resumed();
  exchange_.connected(now);
  return go(Phase::kSending);
}

Client::Step Client::on_send(Millis now) {
  const Exchange::SendProgress progress{[](void* self, Millis at, std::uint64_t bytes) {
                                          static_cast<Client*>(self)->report_progress(
                                              at, /*sending=*/true, bytes);
                                        },
                                        this};
  return after_exchange(now,
                        exchange_.send(now, stream(), options_.send_limit, time_limit_, progress),
                        Phase::kSending);
}

Client::Step Client::on_receive(Millis now) {
  return after_exchange(
      now, exchange_.receive(now, stream(), parser_, options_.receive_limit, time_limit_),
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
  connector_.exchange_done();
  if (reusable && parser_.keep_alive()) {
    connection_open_ = true;
  } else {
    close_connection();
  }
  result_.status = parser_.status();
  result_.error = Status::kOk;
  result_.message = "";
  if (token_rejected()) {
    // An expired token: one fresh token and an attempt at once. The machine still waits for
    // this attempt's report, so it answers kSend again: no backoff, no retry counted.
    follow_.want_fresh_token();
    return go(Phase::kWaiting);
  }
  if (body_.sink_failed()) return refuse_splice(now);
  // A forward proxy's 407 is the proxy's, not the origin's: as a tunnel's (kProxyAuth).
  if (forwarded_ && parser_.status() == 407) {
    return stop(now, Outcome::kTerminalFailure, Status::kProxyAuth,
                "the proxy asked for credentials (407 Proxy Authentication Required): none "
                "were given, or it refused them");
  }
  if (is_followed_redirect()) return follow_redirect(now);
  if (is_expired_url()) return refresh_url(now);
  if (body_.use() == BodyState::Use::kCapture && body_.delivered() == 0 && may_be_expired_url() &&
      !body_.give_captured()) {
    // Read in case it was an expiry; it was not, and the body is the caller's as before.
    return stop(now, Outcome::kTerminalFailure, Status::kError,
                "the response sink refused the error body");
  }
  if (body_.unusable() != Status::kOk) {
    return fail_attempt(now, body_.unusable(), body_.unusable_message());
  }
  const std::uint16_t status = parser_.status();
  if (resumable_ && status / 100 == 2) {
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
  if (resumable_ && body_.cut(status)) {
    return fail_attempt(now, Status::kReset, "the response ended before the whole body arrived");
  }
  return report(now, response_result());
}

AttemptResult Client::response_result() const {
  const std::uint16_t status = parser_.status();
  AttemptResult r = AttemptResult::http(status);
  if (const auto retry_after = parser_.retry_after()) {
    // Against the response's own Date when it has one: the device's clock may be wrong.
    if (const auto delay =
            parse_retry_after(*retry_after, parser_.header("date"), options_.wall_now())) {
      r = AttemptResult::http(status, *delay, DelaySource::kRetryAfter);
    }
  }
  const ConstBytes body = body_.captured();
  if (r.delay_source == DelaySource::kNone && body_.use() == BodyState::Use::kCapture &&
      body.size > 0) {
    const std::string_view type = parser_.content_type().value_or(std::string_view{});
    if (const auto delay = retry_delay_from_error_body(bytes_of(type), body)) {
      r = AttemptResult::http(status, *delay, DelaySource::kRetryInfo);
    }
  }
  // Under the strict rules a 429 or 503 does not prove the request was left alone.
  if (strict_) r.may_have_been_processed = true;
  return r;
}

Client::Step Client::fail_attempt(Millis now, Status status, const char* message) {
  // A stream that could not take what the peer sent (a TLS record beyond its input buffer)
  // names the limit in its own words, which say more than the phase's sentence. They stay
  // valid until the connector opens another connection, and this failure is terminal.
  if (status == Status::kBufferTooSmall && phase_ == Phase::kReceiving &&
      stream().failure_message()[0] != '\0') {
    message = stream().failure_message();
  }
  const bool stale_reuse =
      reused_ && !parser_.started() && (status == Status::kReset || status == Status::kClosed);
  // No path to the destination while the platform says there is no network: the request
  // waits for one (hold()), and this attempt is not counted. Without the platform's word
  // (or with a network it calls connected) an unreachable destination is an ordinary retry.
  const bool offline = phase_ == Phase::kConnecting && connector_.unreachable() && gate_.no_path();
  close_connection();
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
  if (stale_reuse && (sent == 0 || (idempotent_ && sent <= exchange_.head_size()))) {
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
  close_connection();
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

void Client::retarget(const Url& url, bool same_origin) {
  if (!same_origin) {
    close_connection();
    spec_.head.omit_credentials = true;
    spec_.head.host = {};
  }
  spec_.head.url = url;
  std::memcpy(host_z_, url.host.data(), url.host.size());
  host_z_[url.host.size()] = '\0';
}

Client::Step Client::follow_redirect(Millis now) {
  // Resolved in the receive scratch, free between responses.
  const FollowUp::Target t =
      follow_.redirect(parser_, spec_.head.method, spec_.head.url, options_.max_redirects,
                       options_.buffers.io, options_.redirect_url, sizeof host_z_);
  if (t.kind != FollowUp::Target::Kind::kGo) {
    return stop(now, Outcome::kTerminalFailure, t.status, t.message);
  }
  retarget(t.url, t.step.same_origin);
  const bool was_idempotent = idempotent_;
  spec_.head.method = t.step.method;
  if (t.step.drop_body) {
    spec_.body = BodySource{};
    spec_.head.body_size = 0;
    spec_.head.omit_content_fields = true;
  }
  idempotent_ = is_idempotent(spec_);
  resumable_ = spec_.head.method == "GET";
  if (idempotent_ != was_idempotent) {
    machine_ = RetryMachine(context_, idempotent_ ? Idempotent::kYes : Idempotent::kNo);
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

bool Client::may_be_expired_url() const {
  return FollowUp::may_be_expired(options_.url_refresh, resumable_, parser_.status());
}

bool Client::is_expired_url() const {
  const ConstBytes body = body_.captured();
  return may_be_expired_url() && body_.use() == BodyState::Use::kCapture &&
         presigned_url_expired(
             parser_.status(),
             std::string_view(reinterpret_cast<const char*>(body.data), body.size));
}

Client::Step Client::refresh_url(Millis now) {
  // Written in the receive scratch, free between responses.
  const FollowUp::Target t =
      follow_.refresh(options_.url_refresh, options_.max_url_refreshes, spec_.head.url,
                      options_.buffers.io, options_.redirect_url, sizeof host_z_);
  if (t.kind == FollowUp::Target::Kind::kNone) return report(now, response_result());
  if (t.kind == FollowUp::Target::Kind::kRefuse) {
    return stop(now, Outcome::kTerminalFailure, t.status, t.message);
  }
  retarget(t.url, t.step.same_origin);
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

Status Client::add_authorization(bool refresh) {
  const Credentials& c = options_.credentials;
  // Credentials are for the origin the request was made to, not one a redirect names.
  if (c.authorization == nullptr || spec_.head.omit_credentials) return Status::kOk;
  // Inserted before the blank line that ends the head: "Authorization: VALUE\r\n\r\n".
  static constexpr std::string_view kName = "Authorization: ";
  MutableBytes out = options_.buffers.request;
  const std::size_t at = head_size_ - 2;
  if (out.size - at < kName.size() + 4) return Status::kBufferTooSmall;
  MutableBytes value{out.data + at + kName.size(), out.size - at - kName.size() - 4};
  const std::size_t n = c.authorization(c.context, refresh, value);
  if (n == 0) return Status::kOk;
  if (n > value.size) return Status::kBufferTooSmall;
  for (std::size_t i = 0; i < n; ++i) {
    // A value with CR, LF or another control byte would split the head: refused.
    if (value.data[i] < 0x20 && value.data[i] != '\t') return Status::kBufferTooSmall;
  }
  std::memcpy(out.data + at, kName.data(), kName.size());
  std::memcpy(out.data + at + kName.size() + n, "\r\n\r\n", 4);
  head_size_ = at + kName.size() + n + 4;
  return Status::kOk;
}

Client::Step Client::wait_io(int fd, IoInterest interest, Millis deadline, Phase phase) const {
  // Never "wait for I/O" on nothing: a loop polling fd -1 would sleep through the whole
  // deadline however soon the connection got ready.
  if (fd < 0 || interest == IoInterest::kNone) {
    return yield(ClientNext::wait_until(deadline), phase);
  }
  return yield(ClientNext::wait_io(fd, interest, deadline), phase);
}

ClientEvent Client::event(ClientEvent::Kind kind, Millis now) const {
  ClientEvent e;
  e.kind = kind;
  e.at = now;
  e.attempt = result_.attempts;
  return e;
}

bool Client::kept_connection_alive() {
  std::uint8_t probe[1];
  std::size_t n = 0;
  return stream().recv(MutableBytes{probe, sizeof probe}, &n) == Status::kWouldBlock;
}

Transport& Client::stream() { return connector_.stream(); }

void Client::close_connection() {
  connector_.close();
  connection_open_ = false;
}

void Client::emit_error(Millis now, Status status, const char* message) const {
  ClientEvent e = event(ClientEvent::Kind::kError, now);
  e.failure = to_failure(status);
  e.message = message;
  emit(e);
}

void Client::emit(const ClientEvent& event) const {
  if (options_.events.on_event != nullptr) options_.events.on_event(options_.events.context, event);
}

void Client::report_progress(Millis now, bool sending, std::uint64_t bytes) {
  if (options_.events.on_event == nullptr || !meter_.due(now, bytes)) return;
  ClientEvent e = event(ClientEvent::Kind::kProgress, now);
  e.sending = sending;
  e.bytes = bytes;
  e.total = sending ? std::optional<std::uint64_t>(spec_.body.size) : body_.total();
  e.rate = meter_.report(now, bytes);
  emit(e);
}

Status Client::write_head(const BodyState::Range& range) {
  RequestHead head = spec_.head;  // Through a forward proxy: absolute form and its credentials.
  head.absolute_form = connector_.forwards(head.url, &head.proxy_authorization);
  forwarded_ = head.absolute_form;
  head.ranged = range.ranged;
  head.range_from = range.from;
  head.range_end = range.end;
  head.if_range = range.if_range;
  head.generation_match = range.generation;
  const Status s = write_request_head(head, options_.buffers.request, &head_size_);
  body_.asked(s == Status::kOk ? range : BodyState::Range{});
  return s;
}

void Client::decide_body(Millis now) {
  if (body_.use() != BodyState::Use::kUndecided) return;
  const std::uint16_t status = parser_.status();
  ClientEvent e = event(ClientEvent::Kind::kResponse, now);
  e.status = status;
  e.reason = parser_.reason();
  emit(e);
  BodyState::Known known;
  // An expired token's 401 is answered with a fresh one, and a redirect goes on elsewhere:
  // their bodies are nobody's.
  known.nobodys = token_rejected() || is_followed_redirect();
  known.retryable = classify(context_.policy, AttemptResult::http(status)) == Verdict::kRetryable;
  known.may_be_expired = may_be_expired_url();
  body_.decide(parser_, known);
}

bool Client::deliver_body(void* self, ConstBytes data) {
  auto* c = static_cast<Client*>(self);
  c->decide_body(c->now_);  // The head is complete once body bytes flow.
  const BodyState::Delivery d = c->body_.deliver(data);
  if (d.wrote && !c->meter_receiving_) {
    c->meter_.start(c->now_, d.offset, c->options_.progress);
    c->meter_receiving_ = true;
  }
  if (!d.ok) return false;
  if (d.wrote) c->report_progress(c->now_, /*sending=*/false, c->body_.delivered());
  return true;
}

BodyResume Client::body_resume() const {
  BodyResume r;
  r.offset = body_.delivered();
  r.validator = body_.validator();
  r.validator_is_etag = body_.validator_is_etag();
  if (follow_.redirects() == 0) r.generation = body_.generation();
  r.total = body_.total();
  r.integrity = body_.integrity_state();
  if (r.integrity.expected_crc32c.size == 0 && r.integrity.expected_md5.size == 0) {
    r.integrity = IntegrityState{};
    r.integrity.size = r.offset;
  }
  return r;
}

}  // namespace stepback::https
