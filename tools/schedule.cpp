#include "schedule.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>

#include "args.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "words.hpp"

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback schedule: ";

constexpr const char* kSeedRange = "a decimal integer in 0..18446744073709551615";

std::size_t digits(std::uint64_t v) {
  std::size_t d = 1;
  for (; v >= 10; v /= 10) ++d;
  return d;
}

}  // namespace

Schedule compute_schedule(const Policy& policy, RandomSource& random) {
  Schedule schedule;
  const RetryContext context{policy, random, nullptr};
  RetryMachine machine(context);
  const Millis start{0};
  Millis now = start;
  Next next = machine.step(now);
  while (next.kind != Next::Kind::kDone) {
    if (next.kind == Next::Kind::kSend) {
      next = machine.report(now, AttemptResult::http(503));
      continue;
    }
    // kWaitUntil: the simulated clock jumps straight to the end of the wait.
    const auto n = static_cast<std::uint32_t>(schedule.rows.size());
    schedule.rows.push_back(ScheduleRow{n, next.at - now, next.at - start});
    now = next.at;
    next = machine.step(now);
  }
  schedule.stop = next.outcome;
  return schedule;
}

std::optional<ScheduleOptions> parse_schedule_args(int argc, char** argv, std::string* error) {
  ScheduleOptions options;
  options.profile = &profiles::active;
  const std::vector<Flag> flags = {
      profile_flag(&options.profile),
      strategy_flag("--strategy", &options.strategy),
      value_flag("--seed", std::string("expected ") + kSeedRange,
                 [&options](std::string_view value, std::string*) {
                   options.seed = parse_u64(value);
                   return options.seed.has_value();
                 }),
      switch_flag("--json", &options.json),
  };
  return parsed_options(parse_flags(argc, argv, flags, nullptr, error), options);
}

Policy effective_policy(const ScheduleOptions& options) {
  Policy policy = options.profile->retry;
  if (options.strategy) policy.jitter = *options.strategy;
  return policy;
}

void print_schedule_text(std::FILE* out, const ScheduleOptions& options, const Policy& policy,
                         const Schedule& schedule) {
  std::fprintf(out, "profile %s, strategy %s, cap %llu ms, max retries %u, deadline ",
               options.profile->name, to_string(policy.jitter),
               static_cast<unsigned long long>(policy.max_backoff.count()), policy.max_retries);
  if (policy.total_deadline.count() == 0) {
    std::fputs("none", out);
  } else {
    std::fprintf(out, "%llu ms", static_cast<unsigned long long>(policy.total_deadline.count()));
  }
  if (options.seed) {
    std::fprintf(out, ", seed %llu\n", static_cast<unsigned long long>(*options.seed));
  } else {
    std::fputs(", seed from the OS\n", out);
  }

  // Columns as wide as their header or their widest value, whichever is wider.
  std::size_t n_width = 1;
  std::size_t wait_width = 7;         // "wait_ms"
  std::size_t cumulative_width = 13;  // "cumulative_ms"
  for (const ScheduleRow& row : schedule.rows) {
    n_width = std::max(n_width, digits(row.n));
    wait_width = std::max(wait_width, digits(row.wait.count()));
    cumulative_width = std::max(cumulative_width, digits(row.cumulative.count()));
  }
  const auto w = [](std::size_t width) { return static_cast<int>(width); };
  std::fprintf(out, "%*s  %*s  %*s\n", w(n_width), "n", w(wait_width), "wait_ms",
               w(cumulative_width), "cumulative_ms");
  for (const ScheduleRow& row : schedule.rows) {
    std::fprintf(out, "%*u  %*llu  %*llu\n", w(n_width), row.n, w(wait_width),
                 static_cast<unsigned long long>(row.wait.count()), w(cumulative_width),
                 static_cast<unsigned long long>(row.cumulative.count()));
  }
  std::fprintf(out, "stop after %zu %s: %s (%s)\n", schedule.rows.size(),
               schedule.rows.size() == 1 ? "retry" : "retries", to_string(schedule.stop),
               describe_stop(schedule.stop));
}

void print_schedule_json(std::FILE* out, const Schedule& schedule) {
  // Every value is a number or a fixed lower-case name, so nothing needs escaping.
  for (const ScheduleRow& row : schedule.rows) {
    std::fprintf(out, "{\"n\":%u,\"wait_ms\":%llu,\"cumulative_ms\":%llu}\n", row.n,
                 static_cast<unsigned long long>(row.wait.count()),
                 static_cast<unsigned long long>(row.cumulative.count()));
  }
  std::fprintf(out, "{\"stop\":\"%s\"}\n", to_string(schedule.stop));
}

void print_schedule_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: stepback schedule [--profile desktop|mobile]\n"
               "                         [--strategy seed|full|equal|decorrelated|none]\n"
               "                         [--seed N] [--json]\n"
               "\n"
               "Prints the retry schedule a device profile yields: every attempt fails with\n"
               "HTTP 503 at once and every wait passes exactly, until the retry machine stops.\n"
               "\n"
               "  --profile NAME    desktop or mobile (default: %s, chosen at build time)\n"
               "  --strategy NAME   jitter strategy replacing the profile's: seed (the documented\n"
               "                    formula), full, equal, decorrelated or none\n"
               "  --seed N          seed the generator (decimal, 0..2^64-1) for a repeatable\n"
               "                    schedule; without it the OS seeds it and runs differ\n"
               "  --json            one JSON object per line instead of a table\n"
               "  --help            print this help\n",
               profiles::active.name);
}

int run_schedule(int argc, char** argv, std::FILE* out, std::FILE* err) {
  std::string error;
  const std::optional<ScheduleOptions> options = parse_schedule_args(argc, argv, &error);
  if (!options) {
    std::fprintf(err, "%s%s\n", kPrefix, error.c_str());
    return 2;
  }
  if (options->help) {
    print_schedule_usage(out);
    return 0;
  }
  platform::Status status = platform::Status::kOk;
  Xoshiro128 random =
      options->seed ? Xoshiro128(*options->seed) : platform::make_os_random(&status);
  if (status != platform::Status::kOk) {
    std::fprintf(err, "%swarning: %s; the generator is seeded from the clocks\n", kPrefix,
                 platform::to_string(status));
  }
  const Policy policy = effective_policy(*options);
  const Schedule schedule = compute_schedule(policy, random);
  if (options->json) {
    print_schedule_json(out, schedule);
  } else {
    print_schedule_text(out, *options, policy, schedule);
  }
  return 0;
}

}  // namespace stepback::tools
