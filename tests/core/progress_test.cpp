// ProgressMeter: a report is due only after both its bytes and its interval, the rate is
// taken over the last samples (it follows a stall and a speed-up), and a count that goes back
// (the body started over) is reported at once and starts the meter over.
#include "stepback/core/progress.hpp"

#include <gtest/gtest.h>

namespace stepback {
namespace {

TEST(ProgressMeter, DueOnlyAfterBothBytesAndInterval) {
  ProgressMeter m;
  m.start(Millis(1000), 0, ProgressPolicy{1000, Millis(250)});
  EXPECT_FALSE(m.due(Millis(1100), 5000));  // Bytes, not the interval.
  EXPECT_FALSE(m.due(Millis(1300), 999));   // The interval, not the bytes.
  EXPECT_TRUE(m.due(Millis(1250), 1000));   // Both, exactly.
  EXPECT_EQ(m.report(Millis(1250), 1000), 4000U);
  EXPECT_FALSE(m.due(Millis(1499), 5000));
  EXPECT_TRUE(m.due(Millis(1500), 2000));
}

TEST(ProgressMeter, TheRateFollowsTheLastSamplesNotTheWholeAverage) {
  ProgressMeter m;
  m.start(Millis(0), 0, ProgressPolicy{1, Millis(250)});
  std::uint64_t bytes = 0;
  Millis now(0);
  // Ten seconds at 1 MB/s...
  for (int i = 0; i < 40; ++i) {
    now = now + Millis(250);
    bytes += 250000;
    EXPECT_EQ(m.report(now, bytes), 1000000U);
  }
  // ...then 10 kB/s: after kSamples reports the older pace has left the window.
  std::uint64_t rate = 0;
  for (int i = 0; i < ProgressMeter::kSamples; ++i) {
    now = now + Millis(250);
    bytes += 2500;
    rate = m.report(now, bytes);
  }
  EXPECT_EQ(rate, 10000U);
}

TEST(ProgressMeter, ACountThatGoesBackIsDueAndStartsOver) {
  ProgressMeter m;
  m.start(Millis(0), 500000, ProgressPolicy{65536, Millis(250)});  // A resumed offset.
  EXPECT_TRUE(m.due(Millis(10), 0));                               // The sink started over.
  EXPECT_EQ(m.report(Millis(10), 0), 0U);
  EXPECT_FALSE(m.due(Millis(200), 70000));
  EXPECT_TRUE(m.due(Millis(260), 70000));
  EXPECT_EQ(m.report(Millis(260), 70000), 280000U);
}

TEST(ProgressMeter, HugeCountsDoNotOverflowTheRate) {
  ProgressMeter m;
  m.start(Millis(0), 0, ProgressPolicy{1, Millis(0)});
  EXPECT_EQ(m.report(Millis(1000), UINT64_MAX), UINT64_MAX / 1000 * 1000);
}

TEST(ProgressPolicy, Validity) {
  EXPECT_TRUE(valid(ProgressPolicy{}));
  EXPECT_FALSE(valid(ProgressPolicy{0, Millis(250)}));
  EXPECT_FALSE(valid(ProgressPolicy{1, Millis::seconds(3601)}));
}

}  // namespace
}  // namespace stepback
