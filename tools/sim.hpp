// `stepback sim`: the fleet simulator that compares jitter strategies.
//
// The model: `clients` clients each start one request at a moment uniform in the first
// second (a fleet that failed together). The server is down for `outage`: every attempt
// fails with 503. From then on it serves at most `capacity` attempts in each second
// counted from recovery; later attempts in the same second fail with 503 (overload).
// Each client is a real RetryMachine with `policy`, no retry budget and its own
// Xoshiro128 seeded from (seed, client index); attempts take no time and no 503 carries
// a Retry-After. The literal formula's weakness (docs/architecture.md, "The algorithm") shows up as
// a peak load many times the capacity once 2^n reaches the cap.
#ifndef STEPBACK_TOOLS_SIM_HPP_
#define STEPBACK_TOOLS_SIM_HPP_

#include <cstdint>
#include <cstdio>

#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"

namespace stepback::tools {

// One simulated incident; the defaults are those of `stepback sim` with 100000 clients.
struct FleetScenario {
  Policy policy;                        // Every client's policy (jitter included); valid().
  std::uint32_t clients = 100000;       // Fleet size, 1..1000000.
  Millis outage = Millis::seconds(60);  // From time 0 until the server recovers.
  std::uint32_t capacity = 2000;        // Attempts served per second after recovery, >= 1.
  std::uint64_t seed = 1;               // Seeds every client's generator.
};

// What one simulated incident produced. Counts are exact, so equal seeds compare equal.
struct FleetReport {
  std::uint32_t peak_attempts = 0;          // Most attempts in one second after recovery.
  std::uint32_t seconds_over_capacity = 0;  // Seconds after recovery with load > capacity.
  std::uint32_t succeeded = 0;              // Clients whose request succeeded.
  std::uint32_t retries_exhausted = 0;      // Clients that ended with kRetriesExhausted.
  std::uint32_t deadline = 0;               // Clients that ended with kDeadline.
  std::uint32_t other = 0;                  // Any other outcome; 0 in this model.
  Millis last_done{};                       // When the last client finished.
  std::uint64_t attempts = 0;               // Attempts by the whole fleet.

  // Clients that gave up, for whatever reason.
  std::uint32_t gave_up() const { return retries_exhausted + deadline + other; }
};

// Runs `scenario` to the end (every client done); deterministic for a given scenario.
FleetReport simulate_fleet(const FleetScenario& scenario);

// Runs `stepback sim` with argv[0] == "sim", writing results to stdout and diagnostics to
// stderr; returns 0, or 2 for a bad flag or value.
int run_sim(int argc, char** argv);

// As above, writing results to `out` and diagnostics to `err`.
int run_sim(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_SIM_HPP_
