// What curl's -f, --fail-with-body, -i and -I do to a response on its way to the output: the
// gate between the Client and the output's sink. It learns each response's status from the
// Client's events (which it passes on) and its head from a HeadTap.
#ifndef STEPBACK_TOOLS_RESPONSE_GATE_HPP_
#define STEPBACK_TOOLS_RESPONSE_GATE_HPP_

#include <cstdint>

#include "head_tap.hpp"
#include "stepback/https/client.hpp"

namespace stepback::tools {

class ResponseGate {
 public:
  struct Rules {
    // -f: the body of an HTTP error (400 or above) is not written (nor its head).
    bool drop_errors = false;
    // -i, -I: the final response's head, from `heads`, goes to the output before its body.
    bool head = false;
  };

  // `heads` (may be null without rules.head) and what `forward` points to must outlive the
  // gate; `forward` gets every event.
  ResponseGate(Rules rules, const HeadTap* heads, https::EventSink forward)
      : rules_(rules), heads_(heads), forward_(forward) {}

  // The sink for the Client's events.
  https::EventSink events() { return https::EventSink{&ResponseGate::on_event, this}; }
  // The sink for the Client's body: `inner`'s, through the gate, which gets the head first
  // (at offset 0) and the body after it (its offsets moved by the head's size). Once per gate.
  https::ResponseSink sink(https::ResponseSink inner);
  // After the request: the head of a final response whose body had no bytes (a HEAD's, a
  // 204's) goes to the output now, as the rules say. False when writing it failed.
  bool finish();

  // The status of the last response head (0 before one).
  std::uint16_t status() const { return status_; }

 private:
  static void on_event(void* self, const https::ClientEvent& event);
  static bool write(void* self, std::uint64_t offset, https::ConstBytes data);
  static bool restart(void* self);
  // Whether the response under way may reach the output.
  bool passes() const { return !(rules_.drop_errors && status_ >= 400); }
  // Writes the head once, before anything else of the body.
  bool write_head();

  Rules rules_;
  const HeadTap* heads_;
  https::EventSink forward_;
  https::ResponseSink inner_;
  std::uint16_t status_ = 0;
  bool head_written_ = false;
  std::uint64_t head_bytes_ = 0;  // Of the head written before the body.
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_RESPONSE_GATE_HPP_
