// The progress of a request for the person at the terminal, or for a program: one line per
// attempt with a live countdown of each wait, or (--trace) one JSON object per event (get,
// demo, and the requests of get --operation).
#ifndef STEPBACK_TOOLS_REPORTER_HPP_
#define STEPBACK_TOOLS_REPORTER_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string_view>

#include "line_meter.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/progress.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"

namespace stepback::tools {

// Turns a Client's events into progress for a person (one line per attempt, with a live
// countdown of the wait when stderr is a terminal) or, with `trace`, one JSON object per
// event. Writes to `err` only, from fixed buffers: no heap while the request runs.
class Reporter final : public Ticker {
 public:
  // `prefix` starts the closing message of a failed request ("stepback get: "); `start` is
  // the monotonic time t_ms counts from.
  Reporter(std::FILE* err, bool trace, bool countdown, const char* prefix, Millis start);

  // The sink to give the Client.
  https::EventSink sink() { return https::EventSink{&Reporter::on_event, this}; }
  // Lets the done event carry the client's connection count and resumption.
  void attach(const https::Client* client) { client_ = client; }
  // The --max-time the closing message names when that limit ended the request.
  void set_time_limit(std::optional<Millis> max_time) { time_limit_ = max_time; }
  // -s: no progress lines, meter or countdown; the closing message of a request that did not
  // succeed is still written (not with --trace, which is written whole).
  void set_quiet(bool quiet) { quiet_ = quiet && !trace_; }
  // How often the Client's kProgress events should come: four times a second for the meter
  // on a terminal, every 5 s for plain lines and --trace.
  ProgressPolicy progress_policy() const;
  bool wants_ticks() const override { return meter_.wants_ticks(); }
  void tick(Millis now) override { meter_.tick(now); }

 private:
  static void on_event(void* self, const https::ClientEvent& event);
  void human(const https::ClientEvent& event);
  // The closing line of a request that did not succeed.
  void stopped(const https::ClientEvent& event);
  void trace(const https::ClientEvent& event);
  void end_line();
  // The meter (terminal) or a plain progress line, from a kProgress event.
  void progress(const https::ClientEvent& event);

  std::FILE* err_;
  bool trace_;
  bool quiet_ = false;
  const char* prefix_;
  Millis start_;
  const https::Client* client_ = nullptr;
  std::optional<Millis> time_limit_;
  Failure last_failure_ = Failure::kNone;  // Of the last error event: why a request ended.
  LineMeter meter_;                        // The current attempt's line.
  bool line_has_status_ = false;           // The line already shows this attempt's status.
  std::uint64_t meter_from_ = 0;  // Bytes the sink had when the response began (a resumed offset).
  // Plain mode: the line was printed up to its status when a progress line came, and holds
  // only "attempt N: " again; end_line() prints it only if more came after (line_base_ bytes).
  std::size_t line_base_ = 0;
};

// Appends an answer's status and reason phrase ("503 Service Unavailable") to a line.
void append_status(LineBuffer* line, std::uint16_t status, std::string_view reason);
// Appends ", retrying in 1.50 s (Retry-After)" to the open line of `meter`, then counts the
// wait down after it from `at` on a terminal, or ends the line.
void show_retry_wait(LineMeter* meter, Millis at, Millis wait, WaitReason reason);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_REPORTER_HPP_
