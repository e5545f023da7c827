// `stepback schedule`: the retry schedule a device profile yields when every attempt
// fails with HTTP 503 at once, computed by driving a real RetryMachine on a simulated clock.
#ifndef STEPBACK_TOOLS_SCHEDULE_HPP_
#define STEPBACK_TOOLS_SCHEDULE_HPP_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "stepback/core/attempt.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/profiles/profile.hpp"

namespace stepback::tools {

// One retry of the schedule: its index, its wait, and the total waited up to it.
struct ScheduleRow {
  std::uint32_t n = 0;  // Retry index, from 0.
  Millis wait{};        // The wait before retry n.
  Millis cumulative{};  // Sum of the waits of retries 0..n.
};

// A whole schedule: the retries the machine granted, then why it stopped.
struct Schedule {
  std::vector<ScheduleRow> rows;
  Outcome stop = Outcome::kCancelled;
};

// Drives a RetryMachine with `policy` (which must be valid) and `random`, no budget, on a
// clock that starts at 0; each attempt fails with HTTP 503 instantly and each wait passes
// exactly. Makes at most policy.max_retries + 1 attempts.
Schedule compute_schedule(const Policy& policy, RandomSource& random);

// What `stepback schedule` was asked for.
struct ScheduleOptions {
  const profiles::DeviceProfile* profile = nullptr;  // Never null after parsing.
  std::optional<Jitter> strategy;                    // Overrides the profile's jitter when set.
  std::optional<std::uint64_t> seed;                 // Seeds Xoshiro128; OS randomness when unset.
  bool json = false;
  bool help = false;
};

// Parses argv[1..argc) (argv[0] == "schedule"); on failure returns nullopt and sets *error to a
// one-line message naming the bad argument and the allowed values.
std::optional<ScheduleOptions> parse_schedule_args(int argc, char** argv, std::string* error);

// The profile's retry policy with the strategy override of `options` applied.
Policy effective_policy(const ScheduleOptions& options);

// Writes the header, one aligned row per retry, and the stop line.
void print_schedule_text(std::FILE* out, const ScheduleOptions& options, const Policy& policy,
                         const Schedule& schedule);

// Writes one JSON object per line: {"n":..,"wait_ms":..,"cumulative_ms":..} per retry,
// then {"stop":"<outcome>"}.
void print_schedule_json(std::FILE* out, const Schedule& schedule);

// Writes the usage of `stepback schedule`.
void print_schedule_usage(std::FILE* out);

// Runs `stepback schedule` with argv[0] == "schedule"; returns the exit code (0, or 2 for
// a usage error, reported on `err`).
int run_schedule(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_SCHEDULE_HPP_
