#include "stepback/core/policy.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace stepback {
namespace {

// The documented defaults, checked at compile time.
constexpr Policy kDefault{};
static_assert(valid(kDefault));
static_assert(kDefault.initial_delay == Millis(1000) && kDefault.multiplier == 2);
static_assert(kDefault.jitter == Jitter::kSeed && kDefault.jitter_range == Millis(1000));
static_assert(kDefault.retryable.contains(408) && kDefault.retryable.contains(429));
static_assert(kDefault.retryable.contains(500) && kDefault.retryable.contains(599));
static_assert(!kDefault.retryable.contains(404) && !kDefault.retryable.contains(200));

template <typename Mutate>
constexpr bool valid_after(Mutate m) {
  Policy p;
  m(p);
  return valid(p);
}

static_assert(!valid_after([](Policy& p) { p.initial_delay = Millis(0); }));
static_assert(!valid_after([](Policy& p) { p.max_backoff = Millis(500); }));
static_assert(!valid_after([](Policy& p) { p.multiplier = 1; }));
static_assert(!valid_after([](Policy& p) { p.multiplier = 17; }));
static_assert(!valid_after([](Policy& p) { p.max_backoff = kMaxBackoffLimit + Millis(1); }));
static_assert(!valid_after([](Policy& p) { p.jitter_range = kMaxBackoffLimit + Millis(1); }));
static_assert(!valid_after([](Policy& p) { p.max_server_delay = Millis::max(); }));
static_assert(!valid_after([](Policy& p) { p.total_deadline = Millis(999); }));
static_assert(valid_after([](Policy& p) { p.total_deadline = Millis(1000); }));
static_assert(valid_after([](Policy& p) { p.total_deadline = kMaxDeadlineLimit; }));
static_assert(!valid_after([](Policy& p) { p.total_deadline = kMaxDeadlineLimit + Millis(1); }));
static_assert(valid_after([](Policy& p) { p.max_retries = 0; }));

TEST(Policy, ValidityIsAlsoARuntimeCheck) {
  Policy p;
  EXPECT_TRUE(valid(p));
  p.multiplier = 0;
  EXPECT_FALSE(valid(p));
}

TEST(StatusSet, HoldsOnlyWhatWasAdded) {
  constexpr StatusSet s = StatusSet().add(418).add_range(502, 504);
  EXPECT_TRUE(s.contains(418));
  EXPECT_TRUE(s.contains(503));
  EXPECT_FALSE(s.contains(501));
  EXPECT_FALSE(s.contains(505));
  EXPECT_FALSE(s.contains(0));
  EXPECT_FALSE(s.contains(399));
  EXPECT_FALSE(s.contains(65535));
  EXPECT_FALSE(StatusSet().add(200).contains(200));  // Outside [400, 655]: never a member.
  EXPECT_TRUE(StatusSet().add(655).contains(655));
}

TEST(Policy, JitterNames) {
  EXPECT_STREQ(to_string(Jitter::kSeed), "seed");
  EXPECT_STREQ(to_string(Jitter::kFull), "full");
  EXPECT_STREQ(to_string(Jitter::kEqual), "equal");
  EXPECT_STREQ(to_string(Jitter::kDecorrelated), "decorrelated");
  EXPECT_STREQ(to_string(Jitter::kNone), "none");
  EXPECT_STREQ(to_string(static_cast<Jitter>(99)), "unknown");
}

// The limits above are checked at compile time; a policy built at run time (from flags or a
// file) goes through the same checks.
TEST(Policy, EachLimitOfValidIsCheckedAtRunTime) {
  using Mutation = void (*)(Policy&);
  const Mutation invalid[] = {
      [](Policy& p) { p.initial_delay = Millis(0); },
      [](Policy& p) { p.max_backoff = Millis(999); },  // Below initial_delay.
      [](Policy& p) { p.max_backoff = kMaxBackoffLimit + Millis(1); },
      [](Policy& p) { p.multiplier = 1; },
      [](Policy& p) { p.multiplier = 17; },
      [](Policy& p) { p.jitter_range = kMaxBackoffLimit + Millis(1); },
      [](Policy& p) { p.max_server_delay = kMaxBackoffLimit + Millis(1); },
      [](Policy& p) { p.jitter = static_cast<Jitter>(5); },
      [](Policy& p) { p.total_deadline = kMaxDeadlineLimit + Millis(1); },
      [](Policy& p) { p.total_deadline = Millis(999); },  // Shorter than initial_delay.
  };
  for (std::size_t i = 0; i < sizeof invalid / sizeof invalid[0]; ++i) {
    Policy p;
    invalid[i](p);
    EXPECT_FALSE(valid(p)) << i;
  }
  const Mutation fine[] = {
      [](Policy&) {},  // The defaults: no deadline.
      [](Policy& p) { p.total_deadline = Millis(1000); },
      [](Policy& p) { p.total_deadline = kMaxDeadlineLimit; },
      [](Policy& p) {
        p.max_backoff = kMaxBackoffLimit;
        p.jitter_range = kMaxBackoffLimit;
        p.max_server_delay = kMaxBackoffLimit;
        p.multiplier = 16;
        p.jitter = Jitter::kNone;
      },
  };
  for (std::size_t i = 0; i < sizeof fine / sizeof fine[0]; ++i) {
    Policy p;
    fine[i](p);
    EXPECT_TRUE(valid(p)) << i;
  }
}

TEST(StatusSet, ARangeReachingPast655KeepsOnlyItsCodesInRange) {
  StatusSet s;
  s = s.add_range(650, 700);
  EXPECT_TRUE(s.contains(650));
  EXPECT_TRUE(s.contains(655));
  EXPECT_FALSE(s.contains(656));
  EXPECT_FALSE(s.contains(700));
  EXPECT_FALSE(s.contains(649));
  s = StatusSet().add(656);
  for (std::uint16_t c = 400; c <= 700; ++c) EXPECT_FALSE(s.contains(c)) << c;
}

}  // namespace
}  // namespace stepback
