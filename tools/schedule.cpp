#include "schedule.hpp"

#include <algorithm>
#include <cstddef>
#include <iomanip>

#include "args.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

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

const char* describe_stop(Outcome o) {
  switch (o) {
    case Outcome::kSuccess:
      return "an attempt succeeded";
    case Outcome::kRetriesExhausted:
      return "the last allowed retry failed too";
    case Outcome::kDeadline:
      return "the next wait would pass the total deadline";
    case Outcome::kTerminalStatus:
      return "the server answered with a status that is not retried";
    case Outcome::kTerminalFailure:
      return "the transport failed in a way that is not retried";
    case Outcome::kNotIdempotent:
      return "the request may have been processed and is not idempotent";
    case Outcome::kBudgetExhausted:
      return "the client's retry budget fell to half";
    case Outcome::kServerDelayTooLong:
      return "the server asked for a wait beyond max_server_delay";
    case Outcome::kCancelled:
      return "the loop was cancelled";
  }
  return "unknown";
}

void print_schedule_text(std::ostream& out, const ScheduleOptions& options, const Policy& policy,
                         const Schedule& schedule) {
  out << "profile " << options.profile->name << ", strategy " << to_string(policy.jitter)
      << ", cap " << policy.max_backoff.count() << " ms, max retries " << policy.max_retries
      << ", deadline ";
  if (policy.total_deadline.count() == 0) {
    out << "none";
  } else {
    out << policy.total_deadline.count() << " ms";
  }
  out << ", seed ";
  if (options.seed) {
    out << *options.seed;
  } else {
    out << "from the OS";
  }
  out << '\n';

  // Columns as wide as their header or their widest value, whichever is wider.
  std::size_t n_width = 1;
  std::size_t wait_width = 7;         // "wait_ms"
  std::size_t cumulative_width = 13;  // "cumulative_ms"
  for (const ScheduleRow& row : schedule.rows) {
    n_width = std::max(n_width, digits(row.n));
    wait_width = std::max(wait_width, digits(row.wait.count()));
    cumulative_width = std::max(cumulative_width, digits(row.cumulative.count()));
  }
  const auto w = [](std::size_t width) { return std::setw(static_cast<int>(width)); };
  out << w(n_width) << "n"
      << "  " << w(wait_width) << "wait_ms"
      << "  " << w(cumulative_width) << "cumulative_ms" << '\n';
  for (const ScheduleRow& row : schedule.rows) {
    out << w(n_width) << row.n << "  " << w(wait_width) << row.wait.count() << "  "
        << w(cumulative_width) << row.cumulative.count() << '\n';
  }
  out << "stop after " << schedule.rows.size()
      << (schedule.rows.size() == 1 ? " retry" : " retries") << ": " << to_string(schedule.stop)
      << " (" << describe_stop(schedule.stop) << ")\n";
}

void print_schedule_json(std::ostream& out, const Schedule& schedule) {
  // Every value is a number or a fixed lower-case name, so nothing needs escaping.
  for (const ScheduleRow& row : schedule.rows) {
    out << "{\"n\":" << row.n << ",\"wait_ms\":" << row.wait.count()
        << ",\"cumulative_ms\":" << row.cumulative.count() << "}\n";
  }
  out << "{\"stop\":\"" << to_string(schedule.stop) << "\"}\n";
}

void print_schedule_usage(std::ostream& out) {
  out << "usage: stepback schedule [--profile desktop|mobile]\n"
         "                         [--strategy seed|full|equal|decorrelated|none]\n"
         "                         [--seed N] [--json]\n"
         "\n"
         "Prints the retry schedule a device profile yields: every attempt fails with\n"
         "HTTP 503 at once and every wait passes exactly, until the retry machine stops.\n"
         "\n"
         "  --profile NAME    desktop or mobile (default: "
      << profiles::active.name
      << ", chosen at build time)\n"
         "  --strategy NAME   jitter strategy replacing the profile's: seed (the documented\n"
         "                    formula), full, equal, decorrelated or none\n"
         "  --seed N          seed the generator (decimal, 0..2^64-1) for a repeatable\n"
         "                    schedule; without it the OS seeds it and runs differ\n"
         "  --json            one JSON object per line instead of a table\n"
         "  --help            print this help\n";
}

int run_schedule(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::string error;
  const std::optional<ScheduleOptions> options = parse_schedule_args(argc, argv, &error);
  if (!options) {
    err << kPrefix << error << '\n';
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
    err << kPrefix << "warning: " << platform::to_string(status)
        << "; the generator is seeded from the clocks\n";
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
