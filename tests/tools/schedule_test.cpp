#include "tools/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "stepback/core/backoff.hpp"
#include "tests/tools/captured_file.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"
#include "tools/args.hpp"

// The suite is called `tools` so that CTest lists these tests as tools.* (ctest -R tools).
namespace stepback::tools {
namespace {

constexpr Jitter kAllJitters[] = {Jitter::kSeed, Jitter::kFull, Jitter::kEqual,
                                  Jitter::kDecorrelated, Jitter::kNone};

// The argv of `stepback schedule args...` from "schedule" on; lives as long as the object.
class Argv {
 public:
  Argv(std::initializer_list<const char*> args) : strings_{"schedule"} {
    strings_.insert(strings_.end(), args.begin(), args.end());
    for (std::string& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(strings_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

Policy with_jitter(Policy p, Jitter j) {
  p.jitter = j;
  return p;
}

// Policies with the seeds' numbers (1 s doubling; cap 32 s, 6 retries, 120 s; and cap 64 s,
// 10 retries, 600 s), so the formula tests below do not move with the profiles' values.
Policy seeds_short() {
  Policy p = profiles::desktop.retry;
  p.max_backoff = Millis::seconds(32);
  p.max_retries = 6;
  p.total_deadline = Millis::seconds(120);
  return p;
}
Policy seeds_long() {
  Policy p = profiles::mobile.retry;
  p.max_backoff = Millis::seconds(64);
  p.max_retries = 10;
  p.total_deadline = Millis::seconds(600);
  return p;
}

// The schedule computed without the machine: backoff_wait() for each retry, stopping at
// max_retries or when a wait would end past the deadline.
Schedule expected_schedule(const Policy& p, std::uint64_t seed) {
  Xoshiro128 random(seed);
  Schedule s;
  Millis previous = p.initial_delay;
  Millis cumulative{0};
  for (std::uint32_t n = 0; n < p.max_retries; ++n) {
    const Millis wait = backoff_wait(p, n, previous, random);
    if (p.total_deadline.count() != 0 && cumulative + wait > p.total_deadline) {
      s.stop = Outcome::kDeadline;
      return s;
    }
    cumulative = cumulative + wait;
    s.rows.push_back(ScheduleRow{n, wait, cumulative});
    previous = wait;
  }
  s.stop = Outcome::kRetriesExhausted;
  return s;
}

Schedule seeded(const Policy& p, std::uint64_t seed) {
  Xoshiro128 random(seed);
  return compute_schedule(p, random);
}

void expect_same(const Schedule& actual, const Schedule& expected) {
  ASSERT_EQ(actual.rows.size(), expected.rows.size());
  for (std::size_t i = 0; i < actual.rows.size(); ++i) {
    EXPECT_EQ(actual.rows[i].n, expected.rows[i].n) << "row " << i;
    EXPECT_EQ(actual.rows[i].wait, expected.rows[i].wait) << "row " << i;
    EXPECT_EQ(actual.rows[i].cumulative, expected.rows[i].cumulative) << "row " << i;
  }
  EXPECT_EQ(actual.stop, expected.stop);
}

TEST(tools, ScheduleDesktopSeedStrategyFollowsTheFormula) {
  const Policy p = with_jitter(seeds_short(), Jitter::kSeed);
  const Schedule s = seeded(p, 42);

  // wait(n) = min(2^n s + U[0, 1000] ms, 32 s), drawn from the same generator.
  Xoshiro128 random(42);
  std::uint64_t cumulative = 0;
  ASSERT_EQ(s.rows.size(), 6U);
  for (std::uint32_t n = 0; n < 6; ++n) {
    const std::uint64_t expected =
        std::min<std::uint64_t>((std::uint64_t{1000} << n) + uniform(random, 1000), 32000);
    cumulative += expected;
    EXPECT_EQ(s.rows[n].n, n);
    EXPECT_EQ(s.rows[n].wait.count(), expected) << "n=" << n;
    EXPECT_EQ(s.rows[n].cumulative.count(), cumulative) << "n=" << n;
  }
  EXPECT_EQ(s.stop, Outcome::kRetriesExhausted);
}

TEST(tools, ScheduleMatchesBackoffWaitForEveryProfileStrategyAndSeed) {
  for (const profiles::DeviceProfile* profile : {&profiles::desktop, &profiles::mobile}) {
    for (const Jitter j : kAllJitters) {
      for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, 18446744073709551615ULL}) {
        SCOPED_TRACE(std::string(profile->name) + " " + to_string(j) + " seed " +
                     std::to_string(seed));
        const Policy p = with_jitter(profile->retry, j);
        expect_same(seeded(p, seed), expected_schedule(p, seed));
      }
    }
  }
}

TEST(tools, ScheduleMobileSeedStrategyWaitsExactlyTheCapOnceReached) {
  const Schedule s = seeded(with_jitter(seeds_long(), Jitter::kSeed), 7);
  ASSERT_EQ(s.rows.size(), 10U);
  // 2^6 s = 64 s reaches the cap: from then on the documented formula adds no spread.
  for (std::size_t n = 6; n < 10; ++n) EXPECT_EQ(s.rows[n].wait, Millis(64000)) << n;
  EXPECT_EQ(s.stop, Outcome::kRetriesExhausted);
}

TEST(tools, ScheduleNoneStrategyIsTheBareExponential) {
  const Schedule s = seeded(with_jitter(seeds_short(), Jitter::kNone), 3);
  const std::uint64_t waits[] = {1000, 2000, 4000, 8000, 16000, 32000};
  const std::uint64_t sums[] = {1000, 3000, 7000, 15000, 31000, 63000};
  ASSERT_EQ(s.rows.size(), 6U);
  for (std::size_t n = 0; n < 6; ++n) {
    EXPECT_EQ(s.rows[n].wait.count(), waits[n]);
    EXPECT_EQ(s.rows[n].cumulative.count(), sums[n]);
  }
  EXPECT_EQ(s.stop, Outcome::kRetriesExhausted);
}

TEST(tools, ScheduleEndsWithDeadlineWhenTheDeadlineCutsFirst) {
  // Desktop with a 20 s deadline: 1 + 2 + 4 + 8 = 15 s, and 16 s more would end at 31 s.
  profiles::DeviceProfile short_deadline = profiles::desktop;
  short_deadline.retry.jitter = Jitter::kNone;
  short_deadline.retry.total_deadline = Millis::seconds(20);
  const Schedule s = seeded(short_deadline.retry, 1);
  ASSERT_EQ(s.rows.size(), 4U);
  EXPECT_EQ(s.rows.back().cumulative, Millis(15000));
  EXPECT_EQ(s.stop, Outcome::kDeadline);
}

TEST(tools, ScheduleAllowsAWaitEndingExactlyAtTheDeadline) {
  Policy p = with_jitter(profiles::desktop.retry, Jitter::kNone);
  p.total_deadline = Millis(7000);  // 1 + 2 + 4 s ends exactly there.
  const Schedule s = seeded(p, 1);
  ASSERT_EQ(s.rows.size(), 3U);
  EXPECT_EQ(s.rows.back().cumulative, Millis(7000));
  EXPECT_EQ(s.stop, Outcome::kDeadline);
}

TEST(tools, ScheduleWithoutRetriesHasNoRows) {
  Policy p = profiles::desktop.retry;
  p.max_retries = 0;
  const Schedule s = seeded(p, 1);
  EXPECT_TRUE(s.rows.empty());
  EXPECT_EQ(s.stop, Outcome::kRetriesExhausted);
}

TEST(tools, ScheduleWaitsStayWithinEachStrategysBounds) {
  for (const profiles::DeviceProfile* profile : {&profiles::desktop, &profiles::mobile}) {
    for (const Jitter j : kAllJitters) {
      const Policy p = with_jitter(profile->retry, j);
      for (std::uint64_t seed = 0; seed < 200; ++seed) {
        const Schedule s = seeded(p, seed);
        Millis previous = p.initial_delay;
        Millis sum{0};
        for (const ScheduleRow& row : s.rows) {
          const Millis t = exponential(p, row.n);
          const Millis w = row.wait;
          switch (j) {
            case Jitter::kSeed:
              EXPECT_GE(w, t);
              EXPECT_LE(w, min(t + p.jitter_range, p.max_backoff));
              break;
            case Jitter::kFull:
              EXPECT_LE(w, t);
              break;
            case Jitter::kEqual:
              EXPECT_GE(w.count(), t.count() / 2);
              EXPECT_LE(w, t);
              break;
            case Jitter::kDecorrelated:
              EXPECT_GE(w, p.initial_delay);
              EXPECT_LE(w, min(p.max_backoff, Millis(previous.count() * 3)));
              break;
            case Jitter::kNone:
              EXPECT_EQ(w, t);
              break;
          }
          sum = sum + w;
          EXPECT_EQ(row.cumulative, sum);
          previous = w;
        }
        EXPECT_LE(s.rows.size(), p.max_retries);
        EXPECT_LE(sum, p.total_deadline);
        if (s.stop == Outcome::kRetriesExhausted) {
          EXPECT_EQ(s.rows.size(), p.max_retries);
        } else {
          EXPECT_EQ(s.stop, Outcome::kDeadline);
        }
      }
    }
  }
}

TEST(tools, ScheduleParseDefaultsToTheActiveProfile) {
  Argv a{};
  std::string error;
  const auto o = parse_schedule_args(a.argc(), a.argv(), &error);
  ASSERT_TRUE(o.has_value()) << error;
  EXPECT_EQ(o->profile, &profiles::active);
  EXPECT_FALSE(o->strategy.has_value());
  EXPECT_FALSE(o->seed.has_value());
  EXPECT_FALSE(o->json);
  EXPECT_FALSE(o->help);
  EXPECT_EQ(effective_policy(*o).jitter, profiles::active.retry.jitter);
}

TEST(tools, ScheduleParseReadsEveryFlagInBothSpellings) {
  Argv a{"--profile", "mobile", "--strategy=decorrelated", "--seed", "18446744073709551615",
         "--json"};
  std::string error;
  const auto o = parse_schedule_args(a.argc(), a.argv(), &error);
  ASSERT_TRUE(o.has_value()) << error;
  EXPECT_EQ(o->profile, &profiles::mobile);
  EXPECT_EQ(o->strategy, Jitter::kDecorrelated);
  EXPECT_EQ(o->seed, 18446744073709551615ULL);
  EXPECT_TRUE(o->json);
  const Policy p = effective_policy(*o);
  EXPECT_EQ(p.jitter, Jitter::kDecorrelated);
  EXPECT_EQ(p.max_backoff, profiles::mobile.retry.max_backoff);
}

TEST(tools, ScheduleParseRejectsBadArgumentsNamingThemAndTheAllowedValues) {
  struct Case {
    std::vector<const char*> args;
    std::vector<std::string> message_parts;
  };
  const std::string seeds = "0..18446744073709551615";
  const Case cases[] = {
      {{"--bogus"}, {"'--bogus'", "--profile, --strategy, --seed, --json, --help"}},
      {{"extra"}, {"unexpected argument 'extra'", "--profile"}},
      {{"--strategy", "nope"}, {"'nope'", "seed, full, equal, decorrelated, none"}},
      {{"--strategy"}, {"--strategy needs a value", "seed, full"}},
      {{"--profile", "tablet"}, {"'tablet'", "desktop, mobile"}},
      {{"--profile", "--json"}, {"--profile needs a value", "desktop, mobile"}},
      {{"--seed", "abc"}, {"'abc'", seeds}},
      {{"--seed", "-1"}, {"'-1'", seeds}},
      {{"--seed", "18446744073709551616"}, {"'18446744073709551616'", seeds}},
      {{"--seed="}, {"invalid --seed ''", seeds}},
      {{"--seed"}, {"--seed needs a value", seeds}},
      {{"--json=yes"}, {"--json takes no value"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> strings{"schedule"};
    strings.insert(strings.end(), c.args.begin(), c.args.end());
    std::vector<char*> argv;
    for (std::string& s : strings) argv.push_back(s.data());
    std::string error;
    const auto o = parse_schedule_args(static_cast<int>(argv.size()), argv.data(), &error);
    EXPECT_FALSE(o.has_value()) << c.args[0];
    for (const std::string& part : c.message_parts) {
      EXPECT_NE(error.find(part), std::string::npos) << "'" << error << "' lacks '" << part << "'";
    }
  }
}

TEST(tools, ScheduleParseStopsAtHelp) {
  Argv a{"--json", "--help", "--bogus"};
  std::string error;
  const auto o = parse_schedule_args(a.argc(), a.argv(), &error);
  ASSERT_TRUE(o.has_value()) << error;
  EXPECT_TRUE(o->help);
}

TEST(tools, ArgsParseU64AcceptsExactlyDecimalsThatFit) {
  EXPECT_EQ(parse_u64("0"), 0U);
  EXPECT_EQ(parse_u64("007"), 7U);
  EXPECT_EQ(parse_u64("18446744073709551615"), 18446744073709551615ULL);
  EXPECT_FALSE(parse_u64("18446744073709551616").has_value());
  EXPECT_FALSE(parse_u64("99999999999999999999").has_value());
  EXPECT_FALSE(parse_u64("").has_value());
  EXPECT_FALSE(parse_u64("+1").has_value());
  EXPECT_FALSE(parse_u64(" 1").has_value());
  EXPECT_FALSE(parse_u64("0x10").has_value());
  EXPECT_FALSE(parse_u64("1e3").has_value());
}

TEST(tools, ScheduleJsonIsOneObjectPerLine) {
  Schedule s;
  s.rows = {ScheduleRow{0, Millis(734), Millis(734)}, ScheduleRow{1, Millis(1500), Millis(2234)}};
  s.stop = Outcome::kDeadline;
  CapturedFile out;
  print_schedule_json(out.get(), s);
  EXPECT_EQ(out.text(),
            "{\"n\":0,\"wait_ms\":734,\"cumulative_ms\":734}\n"
            "{\"n\":1,\"wait_ms\":1500,\"cumulative_ms\":2234}\n"
            "{\"stop\":\"deadline\"}\n");
}

TEST(tools, ScheduleTextAlignsItsColumns) {
  ScheduleOptions o;
  o.profile = &profiles::mobile;
  o.seed = 9;
  Schedule s;
  for (std::uint32_t n = 0; n < 11; ++n) {
    s.rows.push_back(ScheduleRow{n, Millis(n == 10 ? 12345678 : 5), Millis(100000000000ULL + n)});
  }
  s.stop = Outcome::kRetriesExhausted;
  CapturedFile out;
  print_schedule_text(out.get(), o, profiles::mobile.retry, s);
  const std::string text = out.text();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "profile mobile, strategy full, cap 128000 ms, max retries 16, deadline 900000 ms, "
            "seed 9");
  EXPECT_NE(text.find("\n n   wait_ms  cumulative_ms\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n 0         5   100000000000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n10  12345678   100000000010\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nstop after 11 retries: retries_exhausted (the last allowed retry "
                      "failed too)\n"),
            std::string::npos)
      << text;
}

TEST(tools, ScheduleRunIsDeterministicForASeed) {
  const auto run = [](std::initializer_list<const char*> args, std::string* err) {
    Argv a(args);
    CapturedFile out;
    CapturedFile errs;
    const int code = run_schedule(a.argc(), a.argv(), out.get(), errs.get());
    *err = errs.text();
    return std::to_string(code) + "\n" + out.text();
  };
  std::string err;
  const std::string first = run({"--profile", "mobile", "--seed", "5"}, &err);
  EXPECT_EQ(first, run({"--profile", "mobile", "--seed", "5"}, &err));
  EXPECT_NE(first, run({"--profile", "mobile", "--seed", "6"}, &err));
  EXPECT_EQ(first.substr(0, 2), "0\n");
  EXPECT_EQ(err, "");

  EXPECT_EQ(run({"--strategy", "nope"}, &err), "2\n");
  EXPECT_EQ(
      err,
      "stepback schedule: invalid --strategy 'nope' (allowed: seed, full, equal, decorrelated, "
      "none)\n");
}

}  // namespace
}  // namespace stepback::tools
