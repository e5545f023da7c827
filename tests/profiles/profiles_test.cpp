#include "stepback/profiles/active.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace stepback::profiles {
namespace {

// The parameter sets, checked at compile time.
static_assert(valid(desktop) && valid(mobile));
static_assert(desktop.retry.max_backoff == Millis::seconds(32) && desktop.retry.max_retries == 6 &&
              desktop.retry.total_deadline == Millis::seconds(120));
static_assert(mobile.retry.max_backoff == Millis::seconds(64) && mobile.retry.max_retries == 10 &&
              mobile.retry.total_deadline == Millis::seconds(600));
static_assert(desktop.retry.jitter == Jitter::kEqual && mobile.retry.jitter == Jitter::kEqual);
// Mobile retries more times, with longer intervals and longer transport timeouts.
static_assert(mobile.retry.max_retries > desktop.retry.max_retries);
static_assert(mobile.retry.max_backoff > desktop.retry.max_backoff);
static_assert(mobile.timeouts.connect > desktop.timeouts.connect);
static_assert(mobile.timeouts.tls_handshake > desktop.timeouts.tls_handshake);
static_assert(mobile.timeouts.read > desktop.timeouts.read);
// A server delay is never accepted past the profile's own deadline.
static_assert(desktop.retry.max_server_delay <= desktop.retry.total_deadline);
static_assert(mobile.retry.max_server_delay <= mobile.retry.total_deadline);

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
  p.name = "";
  EXPECT_FALSE(valid(p));
  p = desktop;
  p.budget.max_tokens = 0;
  EXPECT_FALSE(valid(p));
}

}  // namespace
}  // namespace stepback::profiles
