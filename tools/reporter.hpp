// The progress of a request for the person at the terminal, or for a program: one line per
// attempt with a live countdown of each wait, or (--trace) one JSON object per event. Shared
// by the subcommands that make requests (get, upload, demo).
#ifndef STEPBACK_TOOLS_REPORTER_HPP_
#define STEPBACK_TOOLS_REPORTER_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/core/progress.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"
#include "words.hpp"

namespace stepback::tools {

// Longest string copied into one trace field or progress line, in bytes; the reason phrase
// can be as long as the response head buffer.
constexpr std::size_t kMaxFieldBytes = 200;

// How often a countdown or meter on screen is redrawn.
constexpr Millis kTick{100};

// A bounded text buffer for output lines: what does not fit is cut, nothing is allocated.
class LineBuffer {
 public:
  // Empties the buffer.
  void clear() {
    size_ = 0;
    text_[0] = '\0';
  }
  // Appends `s`, cut to the room left.
  void append(std::string_view s);
  // Appends printf-style text, cut to the room left.
  void appendf(const char* format, ...) __attribute__((format(printf, 2, 3)));
  // The text, NUL-terminated, and its length.
  const char* c_str() const { return text_; }
  std::size_t size() const { return size_; }

 private:
  char text_[2048] = {};
  std::size_t size_ = 0;
};

// Turns a Client's events into progress for a person (one line per attempt, with a live
// countdown of the wait when stderr is a terminal) or, with `trace`, one JSON object per
// event. Writes to `err` only, from fixed buffers: no heap while the request runs.
class Reporter {
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
  // How often the Client's kProgress events should come: four times a second for the meter
  // on a terminal, every 5 s for plain lines and --trace.
  ProgressPolicy progress_policy() const;
  // Whether the main loop should call tick() every 100 ms (a countdown is on screen).
  bool wants_ticks() const { return countdown_ && waiting_; }
  // Redraws the countdown if 100 ms have passed since the last drawing.
  void tick(Millis now);

 private:
  static void on_event(void* self, const https::ClientEvent& event);
  void human(const https::ClientEvent& event);
  // The closing line of a request that did not succeed.
  void stopped(const https::ClientEvent& event);
  void trace(const https::ClientEvent& event);
  void end_line();
  void draw_countdown(Millis now);
  // The meter (terminal) or a plain progress line, from a kProgress event.
  void progress(const https::ClientEvent& event);

  std::FILE* err_;
  bool trace_;
  bool countdown_;
  const char* prefix_;
  Millis start_;
  const https::Client* client_ = nullptr;
  std::optional<Millis> time_limit_;
  Failure last_failure_ = Failure::kNone;  // Of the last error event: why a request ended.
  LineBuffer line_;                        // The current attempt's line, without its newline.
  bool line_open_ = false;                 // line_ is started and not yet ended with a newline.
  bool line_has_status_ = false;           // line_ already shows this attempt's status.
  bool metering_ = false;                  // A meter is on screen, after line_ (terminal).
  std::uint64_t meter_from_ = 0;  // Bytes the sink had when the response began (a resumed offset).
  // Plain mode: line_ was printed up to its status when a progress line came, and holds only
  // "attempt N: " again; end_line() prints it only if more came after (line_base_ bytes).
  std::size_t line_base_ = 0;
  bool waiting_ = false;  // A countdown is on screen (terminal mode only).
  Millis wait_end_{};
  Millis last_draw_{};
};

// Appends `s` as a JSON string (at most kMaxFieldBytes of it), valid whatever the bytes.
void append_json_string(LineBuffer* out, std::string_view s);
// Appends `s` (at most kMaxFieldBytes) with every byte outside printable ASCII shown as '?'.
void append_printable(LineBuffer* out, std::string_view s);
// The meter's words: "12.3 MB (from 4.0 MB) of 50.0 MB (24%), 8.1 MB/s, 5 s left", with
// "sent " before when `sending`; `from` 0 and `total` empty leave their parts out.
void append_meter(LineBuffer* out, bool sending, std::uint64_t bytes, std::uint64_t from,
                  std::optional<std::uint64_t> total, std::uint64_t rate);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_REPORTER_HPP_
