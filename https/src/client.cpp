#include "stepback/https/client.hpp"

#include <cstring>

#include "stepback/https/failure.hpp"
#include "stepback/https/http_date.hpp"
#include "stepback/https/retry_info.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::https {
namespace {

ConstBytes bytes_of(std::string_view s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

Client::Client(TlsClientConfig* tls, const RetryContext& context,
               const profiles::Timeouts& timeouts, ClientBuffers buffers, BodySink body,
               std::uint64_t body_limit, EventSink events)
    : Client(tls, nullptr, context, timeouts, buffers, body, body_limit, events) {}

Client::Client(Connector& connector, const RetryContext& context,
               const profiles::Timeouts& timeouts, ClientBuffers buffers, BodySink body,
               std::uint64_t body_limit, EventSink events)
    : Client(nullptr, &connector, context, timeouts, buffers, body, body_limit, events) {}

Client::Client(TlsClientConfig* tls, Connector* connector, const RetryContext& context,
               const profiles::Timeouts& timeouts, ClientBuffers buffers, BodySink body,
               std::uint64_t body_limit, EventSink events)
    : own_connector_(tls),
      connector_(connector != nullptr ? connector : &own_connector_),
      context_(&context),
      machine_(context),
      timeouts_(timeouts),
      buffers_(buffers),
      body_(body),
      events_(events),
      parser_(buffers.response_head, BodySink{&Client::deliver_body, this}, body_limit) {}

Client::~Client() { close_connection(); }

Status Client::start(const RequestSpec& spec) {
  const Url& url = spec.head.url;
  if (url.host.empty() || url.host.size() >= sizeof host_z_) return Status::kInvalidArgument;
  std::memcpy(host_z_, url.host.data(), url.host.size());
  host_z_[url.host.size()] = '\0';
  spec_ = spec;
  spec_.head.body_size = spec.body.size;
  const Status written = write_request_head(spec_.head, buffers_.request, &head_size_);
  if (written != Status::kOk) return written;
  bool idempotent = is_idempotent_method(spec.head.method);
  if (spec.idempotency != RequestSpec::Idempotency::kByMethod) {
    idempotent = spec.idempotency == RequestSpec::Idempotency::kYes;
  }
  idempotent_ = idempotent;
  machine_ = RetryMachine(*context_, idempotent ? Idempotent::kYes : Idempotent::kNo);
  result_ = ClientResult{};
  phase_ = Phase::kIdle;
  return Status::kOk;
}

ClientNext Client::step(Millis now) {
  now_ = now;
  switch (phase_) {
    case Phase::kIdle:
    case Phase::kWaiting:
      return follow(now, machine_.step(now));
    case Phase::kConnecting:
      return connect_step(now);
    case Phase::kSending:
      return send_step(now);
    case Phase::kReceiving:
      return receive_step(now);
    case Phase::kDone:
      break;
  }
  return ClientNext{};
}

void Client::cancel() {
  if (phase_ == Phase::kDone) return;
  machine_.cancel();
  close_connection();
  result_.outcome = Outcome::kCancelled;
  phase_ = Phase::kDone;
}

ClientNext Client::follow(Millis now, const Next& next) {
  switch (next.kind) {
    case Next::Kind::kSend:
      return begin_attempt(now);
    case Next::Kind::kWaitUntil:
      phase_ = Phase::kWaiting;
      return ClientNext{ClientNext::Kind::kWaitUntil, -1, IoInterest::kNone, next.at};
    case Next::Kind::kDone:
      break;
  }
  close_connection();
  result_.outcome = next.outcome;
  phase_ = Phase::kDone;
  ClientEvent e;
  e.kind = ClientEvent::Kind::kDone;
  e.at = now;
  e.attempt = result_.attempts;
  e.status = result_.status;
  e.outcome = next.outcome;
  emit(e);
  return ClientNext{};
}

ClientNext Client::begin_attempt(Millis now) {
  ++result_.attempts;
  ClientEvent e;
  e.kind = ClientEvent::Kind::kAttempt;
  e.at = now;
  e.attempt = result_.attempts;
  emit(e);
  reset_exchange();
  if (connection_open_) {
    reused_ = true;
    phase_ = Phase::kSending;
    io_deadline_ = now + timeouts_.read;
    return send_step(now);
  }
  return connect(now);
}

void Client::reset_exchange() {
  sent_ = 0;
  error_body_size_ = 0;
  body_decided_ = false;
  capture_error_body_ = false;
  parser_.reset(spec_.head.method == "HEAD");
}

ClientNext Client::connect(Millis now) {
  reused_ = false;
  ++connections_;
  phase_ = Phase::kConnecting;
  const Status s = connector_->open(spec_.head.url, host_z_, now, timeouts_);
  if (s != Status::kOk) return fail_attempt(now, s, connector_->failure_message());
  return connect_step(now);
}

ClientNext Client::connect_step(Millis now) {
  const Status s = connector_->step(now);
  if (s == Status::kWouldBlock) {
    if (now >= machine_.deadline()) {
      return fail_attempt(now, Status::kConnectTimeout, "total deadline reached while connecting");
    }
    return wait_io(connector_->fd(), connector_->wants(),
                   min(connector_->deadline(), machine_.deadline()));
  }
  if (s != Status::kOk) return fail_attempt(now, s, connector_->failure_message());
  resumed_ = connector_->resumed();
  phase_ = Phase::kSending;
  io_deadline_ = now + timeouts_.read;
  return send_step(now);
}

ClientNext Client::send_step(Millis now) {
  const std::size_t total = head_size_ + spec_.body.size;
  while (sent_ < total) {
    ConstBytes chunk = sent_ < head_size_
                           ? ConstBytes{buffers_.request.data + sent_, head_size_ - sent_}
                           : ConstBytes{spec_.body.data + (sent_ - head_size_), total - sent_};
    std::size_t n = 0;
    const Status s = stream().send(chunk, &n);
    if (s == Status::kOk) {
      sent_ += n;
      continue;
    }
    if (s == Status::kWouldBlock) {
      if (now >= io_limit()) return fail_attempt(now, Status::kTimeout, "timed out sending the request");
      return wait_io(stream().fd(), stream().wants(), io_limit());
    }
    return fail_attempt(now, s, "the connection failed while sending the request");
  }
  phase_ = Phase::kReceiving;
  io_deadline_ = now + timeouts_.read;
  return receive_step(now);
}

ClientNext Client::receive_step(Millis now) {
  for (;;) {
    std::size_t n = 0;
    const Status s = stream().recv(buffers_.io, &n);
    if (s == Status::kOk) {
      io_deadline_ = now + timeouts_.read;  // The read timeout bounds silence, not the whole body.
      std::size_t consumed = 0;
      const ParseProgress p = parser_.feed(ConstBytes{buffers_.io.data, n}, &consumed);
      if (p == ParseProgress::kFailed) return fail_attempt(now, parser_.error(), "the response is malformed or too large");
      if (p == ParseProgress::kDone) return end_response(now, consumed == n);
      continue;
    }
    if (s == Status::kWouldBlock) {
      if (now >= io_limit()) return fail_attempt(now, Status::kTimeout, "timed out waiting for the response");
      return wait_io(stream().fd(), stream().wants(), io_limit());
    }
    if (s == Status::kClosed) {
      if (parser_.finish() == ParseProgress::kDone) return end_response(now, false);
      return fail_attempt(now, Status::kReset, "the connection closed before the response was complete");
    }
    return fail_attempt(now, s, "the connection failed while receiving the response");
  }
}

ClientNext Client::end_response(Millis now, bool reusable) {
  note_head(now);
  connector_->exchange_done();
  if (reusable && parser_.keep_alive()) {
    connection_open_ = true;
  } else {
    close_connection();
  }
  result_.status = parser_.status();
  result_.error = Status::kOk;
  result_.message = "";
  return end_attempt(now, response_result(platform::wall_now()));
}

AttemptResult Client::response_result(Millis wall_now) const {
  const std::uint16_t status = parser_.status();
  if (const auto retry_after = parser_.retry_after()) {
    if (const auto delay = parse_retry_after(*retry_after, wall_now)) {
      return AttemptResult::http(status, *delay, DelaySource::kRetryAfter);
    }
  }
  if (capture_error_body_ && error_body_size_ > 0) {
    const ConstBytes body{buffers_.error_body.data, error_body_size_};
    const std::string_view type = parser_.content_type().value_or(std::string_view{});
    if (const auto delay = retry_delay_from_error_body(bytes_of(type), body)) {
      return AttemptResult::http(status, *delay, DelaySource::kRetryInfo);
    }
  }
  return AttemptResult::http(status);
}

ClientNext Client::fail_attempt(Millis now, Status status, const char* message) {
  const bool stale_reuse = reused_ && !parser_.started() &&
                           (status == Status::kReset || status == Status::kClosed);
  close_connection();
  // A kept connection the server had already closed: that is no attempt; the request goes
  // again at once on a fresh connection if re-sending it is safe.
  if (stale_reuse && (idempotent_ || sent_ == 0)) {
    reset_exchange();
    return connect(now);
  }
  result_.error = status;
  result_.message = message;
  ClientEvent e;
  e.kind = ClientEvent::Kind::kError;
  e.at = now;
  e.attempt = result_.attempts;
  e.failure = to_failure(status);
  e.message = message;
  emit(e);
  // The core's rule by failure kind, narrowed by what this attempt knows: nothing was sent.
  const AttemptResult by_kind = AttemptResult::transport(to_failure(status));
  return end_attempt(now, AttemptResult::transport(by_kind.failure,
                                                   sent_ > 0 && by_kind.may_have_been_processed));
}

ClientNext Client::end_attempt(Millis now, const AttemptResult& result) {
  phase_ = Phase::kWaiting;
  const Next next = machine_.report(now, result);
  if (next.kind == Next::Kind::kWaitUntil) {
    ClientEvent e;
    e.kind = ClientEvent::Kind::kWait;
    e.at = now;
    e.attempt = result_.attempts;
    e.wait = next.at - now;
    e.wait_reason = machine_.wait_reason();
    emit(e);
  }
  return follow(now, next);
}

ClientNext Client::wait_io(int fd, IoInterest interest, Millis deadline) {
  // Never "wait for I/O" on nothing: a loop polling fd -1 would sleep through the whole
  // deadline however soon the connection got ready.
  if (fd < 0 || interest == IoInterest::kNone) {
    return ClientNext{ClientNext::Kind::kWaitUntil, -1, IoInterest::kNone, deadline};
  }
  return ClientNext{ClientNext::Kind::kWaitIo, fd, interest, deadline};
}

Millis Client::io_limit() const { return min(io_deadline_, machine_.deadline()); }

Transport& Client::stream() { return connector_->stream(); }

void Client::close_connection() {
  connector_->close();
  connection_open_ = false;
}

void Client::emit(const ClientEvent& event) const {
  if (events_.on_event != nullptr) events_.on_event(events_.context, event);
}

void Client::note_head(Millis now) {
  if (body_decided_) return;
  // Retryable answers keep their body for RetryInfo; the others' bodies go to the caller.
  body_decided_ = true;
  capture_error_body_ =
      classify(context_->policy, AttemptResult::http(parser_.status())) == Verdict::kRetryable;
  ClientEvent e;
  e.kind = ClientEvent::Kind::kResponse;
  e.at = now;
  e.attempt = result_.attempts;
  e.status = parser_.status();
  e.reason = parser_.reason();
  emit(e);
}

bool Client::deliver_body(void* self, ConstBytes data) {
  auto* c = static_cast<Client*>(self);
  c->note_head(c->now_);  // The head is complete once body bytes flow.
  if (!c->capture_error_body_) {
    return c->body_.write == nullptr || c->body_.write(c->body_.context, data);
  }
  // Keeps what fits; a longer error body is cut (RetryInfo then reads as absent).
  const std::size_t room = c->buffers_.error_body.size - c->error_body_size_;
  const std::size_t n = data.size < room ? data.size : room;
  if (n > 0) std::memcpy(c->buffers_.error_body.data + c->error_body_size_, data.data, n);
  c->error_body_size_ += n;
  return true;
}

}  // namespace stepback::https
