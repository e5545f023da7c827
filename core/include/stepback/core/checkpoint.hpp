// CheckpointPolicy: how often a download's position is saved where a later process finds it,
// beside Policy (retries) and PollingPolicy (operations). Saving costs a flush of the data and
// a write of the record, so a flash device is not asked for one per buffer.
#ifndef STEPBACK_CORE_CHECKPOINT_HPP_
#define STEPBACK_CORE_CHECKPOINT_HPP_

#include <cstdint>

#include "stepback/core/millis.hpp"

namespace stepback {

// A checkpoint is due once `bytes` more have been delivered since the last one and `interval`
// has passed since it (both: a fast link saves every `interval`, a slow one every `bytes`),
// and before every backoff wait and at the end of a transfer that did not finish. A kill then
// costs at most what arrived since the last checkpoint.
struct CheckpointPolicy {
  std::uint64_t bytes = std::uint64_t{1} << 20;  // 1 MiB.
  Millis interval{2000};
};

// Whether `p` is usable: a positive byte step and an interval of at most an hour.
constexpr bool valid(const CheckpointPolicy& p) {
  return p.bytes > 0 && p.interval <= Millis::seconds(3600);
}

}  // namespace stepback

#endif  // STEPBACK_CORE_CHECKPOINT_HPP_
