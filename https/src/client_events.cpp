// What the Client tells the app: events (ClientEvent through ClientOptions::events) and
// paced progress of the request body sent and of the response body delivered to the sink.
#include "stepback/https/client.hpp"

#include "stepback/https/failure.hpp"

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

}  // namespace stepback::https
