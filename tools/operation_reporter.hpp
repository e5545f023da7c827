// The progress of `stepback get --operation`: the plain get's Reporter for the requests, and
// the operation's own lines (a live line on a terminal) and --trace events (operation, poll,
// done). While polling, a poll's first attempt is shown only when it goes wrong, so a healthy
// operation reads as one line per poll, not two.
#ifndef STEPBACK_TOOLS_OPERATION_REPORTER_HPP_
#define STEPBACK_TOOLS_OPERATION_REPORTER_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "get_operation.hpp"
#include "line_meter.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/https/client.hpp"
#include "stepback/transfer/operation.hpp"

namespace stepback::tools {

class OperationReporter final : public Ticker {
 public:
  // `c` (its reporter, err, prefix, trace, countdown, start and polling) outlives this.
  explicit OperationReporter(const OperationCommand& c);

  // The sink for the requests' events (forwarded to the command's Reporter, some held).
  https::EventSink client_sink() { return https::EventSink{&OperationReporter::on_client, this}; }
  // The sink for the operation's events.
  transfer::OperationEventSink sink() {
    return transfer::OperationEventSink{&OperationReporter::on_operation, this};
  }
  // Both the command's Reporter's countdown and this one's.
  bool wants_ticks() const override;
  void tick(Millis now) override;

  // The closing lines, once the operation is done.
  void finish(const transfer::Operation& op);

 private:
  static void on_client(void* self, const https::ClientEvent& e) {
    static_cast<OperationReporter*>(self)->client(e);
  }
  static void on_operation(void* self, const transfer::OperationEvent& e) {
    static_cast<OperationReporter*>(self)->operation(e);
  }

  void forward(const https::ClientEvent& e);
  void client(const https::ClientEvent& e);
  void operation(const transfer::OperationEvent& e);
  // --trace: an operation or poll event, held until its wait (next_poll_ms) is known.
  void trace_answer(const transfer::OperationEvent& e);
  // Human: the wait before the next poll.
  void show_wait(const transfer::OperationEvent& e);
  // The line of an answer: "operation NAME (create): Creating instance" after the mutation,
  // "poll 3: not done (Creating instance)" after a poll.
  void headline(const transfer::OperationEvent& e);
  // Ends the live line (with the poll count in place of a countdown still on screen).
  void end_line();
  // The closing line of an operation that failed.
  void failed(const transfer::OperationResult& r, std::string_view name) const;
  // The closing line of an operation that ended without an answer of its own (a request
  // failed, a malformed answer, an existing resource).
  void request_failed(const transfer::OperationResult& r) const;
  void trace_done(const transfer::Operation& op);

  const OperationCommand& c_;
  const https::EventSink forward_;
  bool polling_ = false;  // The mutation is answered; requests now are polls.
  bool held_ = false;     // held_event_ is a poll's first kAttempt, not yet shown.
  https::ClientEvent held_event_;
  LineMeter meter_;  // The current answer's line.
  std::uint32_t polls_ = 0;
  LineBuffer pending_;  // --trace: an operation or poll event awaiting next_poll_ms.
  bool pending_open_ = false;
  char verb_text_[64] = {};
  // Decoded statusDetail: append_printable and append_json_string show no more of a field.
  char detail_text_[kMaxFieldBytes] = {};
  std::string_view verb_;
  std::string_view detail_;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_OPERATION_REPORTER_HPP_
