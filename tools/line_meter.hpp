// The one line of progress a reporter keeps open on stderr (Reporter, UploadReporter,
// OperationReporter): built up as an attempt, an exchange or a poll goes, then ended with a
// newline; on a terminal, redrawn in place while it is open, with a countdown of a wait or a
// meter after it. With the bounded text buffer the lines are made in and its helpers.
#ifndef STEPBACK_TOOLS_LINE_METER_HPP_
#define STEPBACK_TOOLS_LINE_METER_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string_view>

#include "stepback/core/millis.hpp"

namespace stepback::tools {

// Longest string copied into one trace field or progress line, in bytes; the reason phrase
// can be as long as the response head buffer.
constexpr std::size_t kMaxFieldBytes = 200;

// How often a countdown or meter on screen is redrawn.
constexpr Millis kTick{100};

// A duration in seconds, for "%.2f s".
constexpr double seconds(Millis d) { return static_cast<double>(d.count()) / 1000.0; }

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

// Appends `s` as a JSON string (at most kMaxFieldBytes of it), valid whatever the bytes.
void append_json_string(LineBuffer* out, std::string_view s);
// Appends `s` (at most kMaxFieldBytes) with every byte outside printable ASCII shown as '?'.
void append_printable(LineBuffer* out, std::string_view s);
// The meter's words: "12.3 MB (from 4.0 MB) of 50.0 MB (24%), 8.1 MB/s, 5 s left", with
// "sent " before when `sending`; `from` 0 and `total` empty leave their parts out.
void append_meter(LineBuffer* out, bool sending, std::uint64_t bytes, std::uint64_t from,
                  std::optional<std::uint64_t> total, std::uint64_t rate);

// What the main loop redraws between steps: a countdown on screen.
class Ticker {
 public:
  // Whether the main loop should call tick() every kTick (a countdown is on screen).
  virtual bool wants_ticks() const = 0;
  // Redraws the countdown if kTick has passed since the last drawing.
  virtual void tick(Millis now) = 0;

 protected:
  ~Ticker() = default;
};

// The open line of a reporter, on `err`. Live (a terminal): a countdown or a meter is drawn
// after the line with "\r" and erased to the end of the screen's line, and the line ends
// in place; else lines are printed whole, once.
class LineMeter final : public Ticker {
 public:
  LineMeter(std::FILE* err, bool live) : err_(err), live_(live) {}

  bool live() const { return live_; }
  // Whether a line is open (begun and not yet ended).
  bool open() const { return open_; }
  // The open line's words so far, without the newline; the reporter appends to them.
  LineBuffer& line() { return line_; }

  // Starts a line, empty. `in_place`: on a terminal it ends in place even when nothing was
  // drawn after it (a line that a countdown or "polling..." may follow).
  void begin(bool in_place = false);
  // Ends the open line, if any: in place when something was drawn after it (`closing` after
  // the line when that was a countdown), else printed.
  void end(std::string_view closing = {});
  // Closes the open line without printing it: its words are on the screen already.
  void drop();
  // Draws `words` after the line, in place of what was there (a countdown stops).
  void draw(std::string_view words);
  // Counts down from `at` to `end` after the line: `before`, the seconds left ("%.1f") and
  // `after`, redrawn by tick().
  void count_down(Millis at, Millis end, std::string_view before, std::string_view after);

  bool wants_ticks() const override { return waiting_; }
  void tick(Millis now) override;

 private:
  void draw_countdown(Millis now);

  std::FILE* err_;
  bool live_;
  LineBuffer line_;
  bool open_ = false;
  bool drawn_ = false;    // Something is drawn after line_ (a countdown, a meter).
  bool waiting_ = false;  // A countdown is on screen.
  Millis wait_end_{};
  Millis last_draw_{};
  char before_[64] = {};
  char after_[16] = {};
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_LINE_METER_HPP_
