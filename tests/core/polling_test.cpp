#include "stepback/core/polling.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace stepback {
namespace {

static_assert(valid(PollingPolicy{}));

// valid() at run time, as for a polling policy read from flags or a file: each limit alone
// makes the policy invalid.
TEST(PollingPolicy, EachLimitOfValidIsCheckedAtRunTime) {
  using Mutation = void (*)(PollingPolicy&);
  const Mutation invalid[] = {
      [](PollingPolicy& p) { p.initial_delay = Millis(0); },
      [](PollingPolicy& p) { p.initial_delay = Millis(60001); },  // Above max_delay.
      [](PollingPolicy& p) { p.min_delay = Millis(60001); },      // Above max_delay.
      [](PollingPolicy& p) { p.max_delay = kMaxBackoffLimit + Millis(1); },
      [](PollingPolicy& p) { p.multiplier = 1; },
      [](PollingPolicy& p) { p.multiplier = 17; },
      [](PollingPolicy& p) { p.jitter = static_cast<Jitter>(5); },
      [](PollingPolicy& p) { p.total_deadline = kMaxDeadlineLimit + Millis(1); },
  };
  for (std::size_t i = 0; i < sizeof invalid / sizeof invalid[0]; ++i) {
    PollingPolicy p;
    invalid[i](p);
    EXPECT_FALSE(valid(p)) << i;
  }
  const Mutation fine[] = {
      [](PollingPolicy&) {},  // The defaults.
      [](PollingPolicy& p) {  // Every limit at its bound.
        p.initial_delay = kMaxBackoffLimit;
        p.min_delay = kMaxBackoffLimit;
        p.max_delay = kMaxBackoffLimit;
        p.multiplier = 16;
        p.jitter = Jitter::kNone;
        p.total_deadline = kMaxDeadlineLimit;
      },
      [](PollingPolicy& p) {
        p.initial_delay = Millis(1);
        p.min_delay = Millis(0);
        p.multiplier = 2;
      },
  };
  for (std::size_t i = 0; i < sizeof fine / sizeof fine[0]; ++i) {
    PollingPolicy p;
    fine[i](p);
    EXPECT_TRUE(valid(p)) << i;
  }
}

}  // namespace
}  // namespace stepback
