#include "stepback/core/progress.hpp"

namespace stepback {

void ProgressMeter::start(Millis now, std::uint64_t bytes, const ProgressPolicy& policy) {
  policy_ = policy;
  samples_[0] = Sample{now, bytes};
  count_ = 1;
  next_ = 1;
}

bool ProgressMeter::due(Millis now, std::uint64_t bytes) const {
  const Sample& last = samples_[(next_ + kSamples - 1) % kSamples];
  if (bytes < last.bytes) return true;
  return bytes - last.bytes >= policy_.bytes && now >= last.at && now - last.at >= policy_.interval;
}

std::uint64_t ProgressMeter::report(Millis now, std::uint64_t bytes) {
  const Sample& last = samples_[(next_ + kSamples - 1) % kSamples];
  if (bytes < last.bytes || now < last.at) {
    start(now, bytes, policy_);
    return 0;
  }
  samples_[next_] = Sample{now, bytes};
  next_ = (next_ + 1) % kSamples;
  if (count_ < kSamples) ++count_;
  // The oldest sample kept: the one the next report overwrites once the ring is full.
  const Sample& oldest = samples_[count_ < kSamples ? 0 : next_];
  const std::uint64_t ms = (now - oldest.at).count();
  if (ms == 0) return 0;
  const std::uint64_t moved = bytes - oldest.bytes;
  // moved x 1000 overflows only past 16 EiB / 1000: then the rate is as good without it.
  return moved > UINT64_MAX / 1000 ? moved / ms * 1000 : moved * 1000 / ms;
}

}  // namespace stepback
