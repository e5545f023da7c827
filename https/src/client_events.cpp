// What the Client tells the app: events (ClientEvent through ClientOptions::events), what a
// response head means for its body (decide_body), the 425 Too Early re-send, and
// paced progress of the request body sent and of the response body delivered to the sink.
#include "stepback/https/client.hpp"

#include "stepback/https/failure.hpp"
#include "stepback/https/http/response_verdict.hpp"

namespace stepback::https {

ClientEvent Client::event(ClientEvent::Kind kind, Millis now) const {
  ClientEvent e;
  e.kind = kind;
  e.at = now;
  e.attempt = result_.attempts;
  return e;
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
  e.total = sending ? std::optional<std::uint64_t>(request_.spec().body.size) : body_.total();
  e.rate = meter_.report(now, bytes);
  emit(e);
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

void Client::decide_body(Millis now) {
  if (body_.use() != BodyState::Use::kUndecided) return;
  const std::uint16_t status = parser_.status();
  ClientEvent e = event(ClientEvent::Kind::kResponse, now);
  e.status = status;
  e.reason = parser_.reason();
  e.early_data = early_.result().state;
  emit(e);
  BodyState::Known known;
  // An expired token's 401 is answered with a fresh one, and a redirect goes on elsewhere:
  // their bodies are nobody's.
  known.nobodys = token_rejected() || is_followed_redirect() || early_.too_early(status);
  known.retryable = classify(context_.policy, AttemptResult::http(status)) == Verdict::kRetryable;
  known.may_be_expired =
      FollowUp::may_be_expired(options_.url_refresh, request_.resumable(), status);
  body_.decide(parser_, known);
}

Client::Step Client::resend_too_early(Millis now) {
  // The server would not act on early data (RFC 8470): the request goes again at once after
  // the handshake, on this connection if it stays open, else on a new one without early data.
  // The machine still waits for this attempt's report, so it answers kSend again: no backoff,
  // no retry counted. A 425 to a request that did not ride early is an ordinary 4xx.
  early_.refuse();
  uncounted_ = true;
  emit_error(now, Status::kOk,
             "the server would not act on the request as early data (425 Too Early): it goes "
             "again after the handshake (not a retry)");
  return go(Phase::kWaiting);
}

}  // namespace stepback::https
