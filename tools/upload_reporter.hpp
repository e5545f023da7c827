// `stepback upload`'s progress on stderr: one line per exchange, with a countdown of each
// wait and the rate and time left on a terminal, or (--trace) one JSON object per event.
#ifndef STEPBACK_TOOLS_UPLOAD_REPORTER_HPP_
#define STEPBACK_TOOLS_UPLOAD_REPORTER_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "reporter.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::tools {

// Turns the upload's events into one line per exchange (with a countdown of each wait and
// the rate and time left when stderr is a terminal) or, with `trace`, one JSON object per
// event. Writes to `err` only, from fixed buffers.
class UploadReporter final : public Ticker {
 public:
  // `prefix` ("stepback upload: ") starts the lines that are not an exchange's; `size` is the
  // file's; `start` is the monotonic time t_ms counts from.
  UploadReporter(std::FILE* err, bool trace, bool terminal, const char* prefix, std::uint64_t size,
                 Millis start);

  // The sink to give the Upload.
  transfer::UploadEventSink sink() { return transfer::UploadEventSink{&on_event, this}; }
  // The upload whose session URI, counts and result the lines show.
  void attach(const transfer::Upload* upload) { upload_ = upload; }
  // With --state: where the state is kept, for the closing words and the done event.
  void attach_state(const char* path, const std::uint32_t* writes) {
    state_path_ = path;
    state_writes_ = writes;
  }
  // Announces an upload taken up from a state file.
  void restored(const transfer::TransferState& state, Millis wait);
  // Waits begun so far (the state is saved before each).
  std::uint32_t waits() const { return waits_; }
  // How often the upload's kProgress events should come: four times a second for the meter
  // on a terminal, every 5 s for plain lines and --trace.
  ProgressPolicy progress_policy() const {
    return ProgressPolicy{1, meter_.live() ? Millis(250) : Millis::seconds(5)};
  }
  bool wants_ticks() const override { return meter_.wants_ticks(); }
  void tick(Millis now) override { meter_.tick(now); }
  // Says that the upload stopped at `now` (paused, its session kept: a signal's
  // "interrupted", --defer-after's "saved") and how to go on: the same command again (with
  // --state), or with --session. With --trace, an event named `what`.
  void interrupted(Millis now, const char* what = "interrupted");

 private:
  static void on_event(void* self, const transfer::UploadEvent& e);
  void show_session();
  void human(const transfer::UploadEvent& e);
  void done(const transfer::UploadEvent& e);
  void trace(const transfer::UploadEvent& e);
  // The line of an exchange (kSession, kChunk, kQuery).
  void begin_exchange(const transfer::UploadEvent& e);

  std::FILE* err_;
  bool trace_;
  const char* prefix_;
  std::uint64_t size_;
  Millis start_;
  const transfer::Upload* upload_ = nullptr;
  LineMeter meter_;  // The current exchange's line.
  bool has_status_ = false;
  char shown_session_[256] = {};
  std::size_t shown_size_ = 0;
  std::uint32_t waits_ = 0;
  const char* state_path_ = nullptr;
  const std::uint32_t* state_writes_ = nullptr;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_UPLOAD_REPORTER_HPP_
