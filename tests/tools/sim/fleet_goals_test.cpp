// The fleet goal of the profiles (docs/retry.md, "Safe for a fleet"), as the simulator measures
// it: after a 60 s outage, and after a network that returns for the whole fleet at once, the
// profile's own strategy peaks at or under 1.5x the capacity and nobody gives up; after
// 300 s and 1,800 s outages nobody is lost (clients whose retries run out are deferred).
// Each with the server's Retry-After off, fixed and spread. 20,000 clients (the goal's
// figures at 100,000 are in docs/retry.md); the capacity is 2% of the fleet per second.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>

#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"
#include "stepback/profiles/profile.hpp"
#include "tools/sim.hpp"

namespace stepback::tools {
namespace {

constexpr std::uint32_t kClients = 20000;

struct RetryAfter {
  RetryAfterMode mode;
  std::uint32_t seconds;
  const char* name;
};
constexpr RetryAfter kRetryAfters[] = {{RetryAfterMode::kOff, 0, "off"},
                                       {RetryAfterMode::kFixed, 10, "fixed:10"},
                                       {RetryAfterMode::kSpread, 30, "spread:30"}};

FleetScenario scenario(const profiles::DeviceProfile& p, std::uint64_t outage_s, bool network,
                       const RetryAfter& ra) {
  FleetScenario s;
  s.policy = p.retry;
  s.clients = kClients;
  s.capacity = kClients / 50;
  s.outage = Millis::seconds(outage_s);
  s.network_return = network;
  s.retry_after = ra.mode;
  s.retry_after_delay = Millis::seconds(ra.seconds);
  s.defer = p.defer.delay;
  s.defer_spread = p.defer.spread;
  return s;
}

double peak(const FleetScenario& s, const FleetReport& r) {
  return static_cast<double>(r.peak_attempts) / static_cast<double>(s.capacity);
}

// A profile as the test's parameter, printed by its name: ctest lists the parameter's printed
// value in each test's name, and a pointer's differs between builds (test_cross compares the
// names of the host's and the targets' passed tests).
struct Profile {
  const profiles::DeviceProfile* profile;
  friend void PrintTo(const Profile& p, std::ostream* os) { *os << p.profile->name; }
};

class FleetGoals : public testing::TestWithParam<Profile> {};

TEST_P(FleetGoals, SixtySecondOutageAndNetworkReturn) {
  const profiles::DeviceProfile& p = *GetParam().profile;
  for (const RetryAfter& ra : kRetryAfters) {
    for (const bool network : {false, true}) {
      SCOPED_TRACE(std::string(p.name) + (network ? " network return" : " outage") +
                   ", retry-after " + ra.name);
      const FleetScenario s = scenario(p, 60, network, ra);
      const FleetReport r = simulate_fleet(s);
      EXPECT_LE(peak(s, r), 1.5);
      EXPECT_EQ(r.gave_up(), 0U);
      EXPECT_EQ(r.succeeded, s.clients);
    }
  }
}

TEST_P(FleetGoals, LongOutagesLoseNobody) {
  const profiles::DeviceProfile& p = *GetParam().profile;
  for (const RetryAfter& ra : kRetryAfters) {
    for (const std::uint64_t outage : {std::uint64_t{300}, std::uint64_t{1800}}) {
      SCOPED_TRACE(std::string(p.name) + " outage " + std::to_string(outage) + " s, retry-after " +
                   ra.name);
      const FleetScenario s = scenario(p, outage, false, ra);
      const FleetReport r = simulate_fleet(s);
      EXPECT_EQ(r.lost, 0U);
      EXPECT_EQ(r.succeeded, s.clients);
    }
  }
}

// The goal can fail: without deferral a long outage loses clients, which the test above
// would catch.
TEST(FleetGoalsCanFail, WithoutDeferralALongOutageLosesClients) {
  FleetScenario s = scenario(profiles::mobile, 1800, false, kRetryAfters[0]);
  s.defer = Millis(0);
  EXPECT_GT(simulate_fleet(s).lost, 0U);
}

INSTANTIATE_TEST_SUITE_P(Profiles, FleetGoals,
                         testing::Values(Profile{&profiles::desktop}, Profile{&profiles::mobile}),
                         [](const testing::TestParamInfo<Profile>& param) {
                           return std::string(param.param.profile->name);
                         });

}  // namespace
}  // namespace stepback::tools
