#include "stepback/profiles/active.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace stepback::profiles {
namespace {

// The parameter sets, checked at compile time.
static_assert(valid(desktop) && valid(mobile));
// The retry sets meet the fleet goal (docs/retry.md, "Safe for a fleet"; tools.sim.fleet_goals).
static_assert(desktop.retry.max_backoff == Millis::seconds(100) &&
              desktop.retry.max_retries == 14 &&
              desktop.retry.total_deadline == Millis::seconds(480));
static_assert(mobile.retry.max_backoff == Millis::seconds(128) && mobile.retry.max_retries == 16 &&
              mobile.retry.total_deadline == Millis::seconds(900));
static_assert(desktop.retry.jitter == Jitter::kFull && mobile.retry.jitter == Jitter::kFull);
// A resumable transfer whose retries ran out is deferred, later on mobile, with a spread.
static_assert(desktop.defer.delay > Millis(0) && desktop.defer.spread > Millis(0));
static_assert(mobile.defer.delay > desktop.defer.delay);
static_assert(mobile.retry.total_deadline > desktop.retry.total_deadline);
// Mobile retries more times, with longer intervals and longer transport timeouts.
static_assert(mobile.retry.max_retries > desktop.retry.max_retries);
static_assert(mobile.retry.max_backoff > desktop.retry.max_backoff);
static_assert(mobile.timeouts.connect > desktop.timeouts.connect);
static_assert(mobile.timeouts.tls_handshake > desktop.timeouts.tls_handshake);
static_assert(mobile.timeouts.read > desktop.timeouts.read);
// A throughput floor in both (a trickling body cannot hold a client forever), lower and more
// patient on mobile.
static_assert(desktop.timeouts.speed_limit == 1024 &&
              desktop.timeouts.speed_time == Millis::seconds(30));
static_assert(mobile.timeouts.speed_limit == 100 &&
              mobile.timeouts.speed_time == Millis::seconds(60));
static_assert(mobile.timeouts.speed_limit < desktop.timeouts.speed_limit);
static_assert(mobile.timeouts.speed_time > desktop.timeouts.speed_time);
// A server delay is never accepted past the profile's own deadline.
static_assert(desktop.retry.max_server_delay <= desktop.retry.total_deadline);
static_assert(mobile.retry.max_server_delay <= mobile.retry.total_deadline);
// Polling a long-running operation: never sooner than 0.5 s, doubling to a 60 s cap with equal
// jitter (so no poll comes before half its schedule), within a total polling deadline; mobile
// starts later (each poll wakes the radio).
static_assert(desktop.polling.min_delay >= Millis(500) && mobile.polling.min_delay >= Millis(500));
static_assert(desktop.polling.initial_delay == Millis(1000) &&
              mobile.polling.initial_delay == Millis(2000));
static_assert(desktop.polling.multiplier == 2 && mobile.polling.multiplier == 2);
static_assert(desktop.polling.max_delay == Millis::seconds(60) &&
              mobile.polling.max_delay == Millis::seconds(60));
static_assert(desktop.polling.jitter == Jitter::kEqual && mobile.polling.jitter == Jitter::kEqual);
static_assert(desktop.polling.total_deadline == Millis::seconds(1800) &&
              mobile.polling.total_deadline == Millis::seconds(1800));

TEST(Profiles, ActiveIsTheOneSelectedAtBuildTime) {
  EXPECT_STREQ(active.name, STEPBACK_EXPECTED_PROFILE);
}

TEST(Profiles, LiteralFormulaIsOneFlagAway) {
  Policy literal = active.retry;
  literal.jitter = Jitter::kSeed;
  EXPECT_TRUE(valid(literal));
}

TEST(Profiles, ValidityRejectsBrokenProfiles) {
  DeviceProfile p = desktop;
  p.timeouts.read = Millis(0);
  EXPECT_FALSE(valid(p));
  p = desktop;
  p.timeouts.speed_time = Millis(0);  // A floor without a window.
  EXPECT_FALSE(valid(p));
  p.timeouts.speed_limit = 0;  // No floor: no window needed.
  EXPECT_TRUE(valid(p));
  p = desktop;
  p.name = "";
  EXPECT_FALSE(valid(p));
  p = desktop;
  p.budget.max_tokens = 0;
  EXPECT_FALSE(valid(p));
  p = desktop;
  p.polling.min_delay = Millis::seconds(61);  // A floor above the cap.
  EXPECT_FALSE(valid(p));
}

}  // namespace
}  // namespace stepback::profiles
