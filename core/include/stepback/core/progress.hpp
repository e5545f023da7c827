// ProgressPolicy and ProgressMeter: how often a transfer tells the app how far it is, and the
// rate it tells. A UI or a JNI bridge wants a few reports a second, not one per buffer.
#ifndef STEPBACK_CORE_PROGRESS_HPP_
#define STEPBACK_CORE_PROGRESS_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"

namespace stepback {

// A report is due once `bytes` more have moved since the last one and `interval` has passed
// since it (both). bytes = 1 reports on time alone; interval = 0 on bytes alone.
struct ProgressPolicy {
  std::uint64_t bytes = std::uint64_t{64} * 1024;
  Millis interval{250};
};

// Whether `p` is usable: a positive byte step and an interval of at most an hour.
constexpr bool valid(const ProgressPolicy& p) {
  return p.bytes > 0 && p.interval <= Millis::seconds(3600);
}

// The throttle and the current rate of one flow of bytes; value type, no heap. The rate is
// taken over the last few reports (at most kSamples, about two seconds at the default
// interval), so it follows a link that speeds up or stalls rather than the whole average.
class ProgressMeter {
 public:
  static constexpr int kSamples = 8;

  // Starts over at `now` with `bytes` already there (a resumed offset), under `policy`.
  void start(Millis now, std::uint64_t bytes, const ProgressPolicy& policy);
  // Whether a report of `bytes` is due at `now`. A count below the last (the flow began
  // again from an earlier byte) is due at once, and starts the meter over from it.
  bool due(Millis now, std::uint64_t bytes) const;
  // Records a report of `bytes` at `now` and returns the rate, in bytes a second, over the
  // samples kept (0 until time has passed since the first).
  std::uint64_t report(Millis now, std::uint64_t bytes);

 private:
  struct Sample {
    Millis at{};
    std::uint64_t bytes = 0;
  };
  ProgressPolicy policy_;
  Sample samples_[kSamples] = {};
  int count_ = 0;  // Samples kept, at most kSamples.
  int next_ = 0;   // Where the next one goes.
};

}  // namespace stepback

#endif  // STEPBACK_CORE_PROGRESS_HPP_
