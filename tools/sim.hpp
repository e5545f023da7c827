// `stepback sim`: the fleet simulator that compares jitter strategies.
//
// The model: `clients` clients each start one request at a moment uniform in the first
// `stagger` (a fleet that failed together). The server is down for `outage`: every attempt
// fails with 503 (or, with `network_return`, the clients' network is down and every attempt
// fails to connect, and it comes back for every client at the same instant). From then on
// the server serves at most `capacity` attempts in each second counted from recovery; later
// attempts in the same second fail with 503 (overload). A 503 may carry a Retry-After.
// Each client is a real RetryMachine with `policy`, no retry budget and its own Xoshiro128
// seeded from (seed, client index). A client that gives up with a retryable outcome is
// deferred when `defer` allows it: it keeps its place (a download's checkpoint, an upload's
// session) and starts a new retry loop later, as the library's run hint says. The literal
// formula's weakness (docs/architecture.md, "The algorithm") shows up as a peak load many
// times the capacity once 2^n reaches the cap.
#ifndef STEPBACK_TOOLS_SIM_HPP_
#define STEPBACK_TOOLS_SIM_HPP_

#include <cstdint>
#include <cstdio>
#include <vector>

#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"

namespace stepback::tools {

// What an overloaded or down server says with its 503.
enum class RetryAfterMode : std::uint8_t {
  kOff,     // No Retry-After.
  kFixed,   // Retry-After: the same number of seconds on every 503.
  kSpread,  // Retry-After: whole seconds uniform in [0, S], drawn per response.
};

// One simulated incident; the defaults are those of `stepback sim` with 100000 clients.
struct FleetScenario {
  Policy policy;                        // Every client's policy (jitter included); valid().
  std::uint32_t clients = 100000;       // Fleet size, 1..1000000.
  Millis outage = Millis::seconds(60);  // From time 0 until the server (or network) recovers.
  std::uint32_t capacity = 2000;        // Attempts served per second after recovery, >= 1.
  std::uint64_t seed = 1;               // Seeds every client's generator.
  RetryAfterMode retry_after = RetryAfterMode::kOff;
  Millis retry_after_delay{};   // S of kFixed and kSpread, whole seconds.
  bool network_return = false;  // The outage is the network's; it returns for all at once.
  Millis attempt{};             // How long each attempt takes.
  Millis stagger{1000};         // Clients start uniformly within this span (>= 1 ms).
  Millis defer{};               // After a retryable give-up: a new loop after defer plus
  Millis defer_spread{};        // U[0, defer_spread]; defer 0: the client is lost instead.
  bool series = false;          // Whether to fill FleetReport::per_second.
};

// Counts in one second from time 0.
struct FleetSecond {
  std::uint32_t attempts = 0;   // Attempts started (reaching the server or not).
  std::uint32_t successes = 0;  // Clients that succeeded.
  std::uint32_t deferred = 0;   // Retry loops that gave up and were deferred.
  std::uint32_t lost = 0;       // Clients that gave up for good.
};

// What one simulated incident produced. Counts are exact, so equal seeds compare equal.
struct FleetReport {
  std::uint32_t peak_attempts = 0;          // Most attempts in one second after recovery.
  std::uint32_t seconds_over_capacity = 0;  // Seconds after recovery with load > capacity.
  std::uint32_t succeeded = 0;              // Clients whose request succeeded.
  std::uint32_t retries_exhausted = 0;      // Loops that ended with kRetriesExhausted.
  std::uint32_t deadline = 0;               // Loops that ended with kDeadline.
  std::uint32_t other = 0;                  // Loops that ended otherwise (a server delay too long).
  std::uint32_t deferred_clients = 0;       // Clients deferred at least once.
  std::uint32_t deferrals = 0;              // Deferrals by the whole fleet.
  std::uint32_t lost = 0;                   // Clients that gave up for good.
  Millis last_done{};                       // When the last client finished.
  Millis median_success{};                  // Time from a client's start to its success:
  Millis p99_success{};                     // the median and the 99th percentile.
  std::uint64_t attempts = 0;               // Attempts by the whole fleet.
  std::vector<FleetSecond> per_second;      // With FleetScenario::series, seconds from 0.

  // Retry loops that gave up, for whatever reason (deferred or lost).
  std::uint32_t gave_up() const { return retries_exhausted + deadline + other; }
};

// Runs `scenario` to the end (every client done); deterministic for a given scenario.
FleetReport simulate_fleet(const FleetScenario& scenario);

// One row of a run, for the SVG: what ran and what it produced.
struct FleetRun {
  const char* label = "";  // The strategy's name.
  bool own = false;        // Whether it is the profile's own strategy.
  FleetReport report;
};

// Writes a standalone SVG of `runs` (each with per_second filled): attempts per second
// against the capacity, and successes and give-ups over time. `title` is plain text.
void write_fleet_svg(std::FILE* out, const char* title, const FleetScenario& scenario,
                     const std::vector<FleetRun>& runs);

// Runs `stepback sim` with argv[0] == "sim", writing results to stdout and diagnostics to
// stderr; returns 0, or 2 for a bad flag or value.
int run_sim(int argc, char** argv);

// As above, writing results to `out` and diagnostics to `err`.
int run_sim(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_SIM_HPP_
