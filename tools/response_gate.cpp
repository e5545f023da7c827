#include "response_gate.hpp"

namespace stepback::tools {

void ResponseGate::on_event(void* self, const https::ClientEvent& event) {
  auto* gate = static_cast<ResponseGate*>(self);
  // Sent before the response's body: what follows is this status's. A new attempt has none
  // yet (it may fail before an answer).
  if (event.kind == https::ClientEvent::Kind::kResponse) gate->status_ = event.status;
  if (event.kind == https::ClientEvent::Kind::kAttempt) gate->status_ = 0;
  if (gate->forward_.on_event != nullptr) gate->forward_.on_event(gate->forward_.context, event);
}

https::ResponseSink ResponseGate::sink(https::ResponseSink inner) {
  inner_ = inner;
  return https::ResponseSink{&ResponseGate::write,
                             inner.restart != nullptr ? &ResponseGate::restart : nullptr, this};
}

bool ResponseGate::write(void* self, std::uint64_t offset, https::ConstBytes data) {
  auto* gate = static_cast<ResponseGate*>(self);
  // The bytes are still counted as delivered: a dropped error body ends the request anyway.
  if (!gate->passes()) return true;
  if (!gate->write_head()) return false;
  // The output holds the head before the body: its offsets are the body's after it.
  return gate->inner_.write == nullptr ||
         gate->inner_.write(gate->inner_.context, gate->head_bytes_ + offset, data);
}

bool ResponseGate::restart(void* self) {
  auto* gate = static_cast<ResponseGate*>(self);
  if (!gate->inner_.restart(gate->inner_.context)) return false;
  gate->head_written_ = false;  // The output is empty again: the head goes first again.
  gate->head_bytes_ = 0;
  return true;
}

bool ResponseGate::write_head() {
  if (!rules_.head || head_written_ || heads_ == nullptr) return true;
  head_written_ = true;
  const std::string_view head = heads_->response_head();
  if (head.empty() || inner_.write == nullptr) return true;
  head_bytes_ = head.size();
  return inner_.write(
      inner_.context, 0,
      https::ConstBytes{reinterpret_cast<const std::uint8_t*>(head.data()), head.size()});
}

bool ResponseGate::finish() { return status_ == 0 || !passes() || write_head(); }

}  // namespace stepback::tools
