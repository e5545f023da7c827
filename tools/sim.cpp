// `stepback sim`: argument parsing and the report of the fleet simulation (sim_model.cpp).
// The model is described in sim.hpp and in the --help text below.
#include "sim.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"
#include "stepback/profiles/profile.hpp"

namespace stepback::tools {
namespace {

constexpr const char kUsage[] =
    "usage: stepback sim [--profile desktop|mobile]\n"
    "                    [--strategy seed|full|equal|decorrelated|none|all]\n"
    "                    [--clients N] [--outage SECONDS] [--capacity PERCENT_PER_SECOND]\n"
    "                    [--retry-after off|fixed:S|spread:S] [--network-return]\n"
    "                    [--attempt-ms N] [--stagger SECONDS] [--defer on|off]\n"
    "                    [--seed N] [--json] [--svg FILE]\n";

constexpr const char kHelp[] =
    "\n"
    "Simulates a fleet of clients that failed together and measures how hard each jitter\n"
    "strategy hits the server when it comes back.\n"
    "\n"
    "Model:\n"
    "  - N clients each start one request at a moment uniform in the stagger (1 s).\n"
    "  - The server is down for the outage: every attempt fails with 503.\n"
    "  - After it, the server serves at most CAPACITY attempts in each second counted\n"
    "    from recovery; later attempts in that second fail with 503 (overload).\n"
    "  - Each client is a stepback::RetryMachine with the profile's policy and the\n"
    "    strategy overridden, no retry budget, and its own Xoshiro128 seeded from\n"
    "    (seed, client index).\n"
    "  - A client whose retries end on a retryable failure is deferred as the profile\n"
    "    says (a resumable transfer keeps its place and runs again later): it starts a\n"
    "    new retry loop after the profile's deferral. Lost clients gave up for good.\n"
    "\n"
    "Options:\n"
    "  --profile P       desktop or mobile (default mobile): initial delay, cap, retries,\n"
    "                    deadline and deferral come from the profile.\n"
    "  --strategy S      seed (the literal formula min(2^n s + U[0,1 s], cap)), full,\n"
    "                    equal, decorrelated, none, or all (default: one row each).\n"
    "  --clients N       fleet size, 1..1000000 (default 100000).\n"
    "  --outage S        seconds the server is down, 0..86400, decimals allowed\n"
    "                    (default 60).\n"
    "  --capacity P      attempts served per second after the outage, as a percentage of\n"
    "                    the fleet; must come to at least 1 attempt (default 2).\n"
    "  --retry-after R   what the down or overloaded server's 503 says: off (default),\n"
    "                    fixed:S (Retry-After: S on every 503) or spread:S (whole seconds\n"
    "                    uniform in [0, S] per response); S in 1..3600.\n"
    "  --network-return  the outage is the clients' network, not the server: attempts\n"
    "                    fail to connect, and the network comes back for every client at\n"
    "                    the same instant, each machine told by network_available()\n"
    "                    (default off).\n"
    "  --attempt-ms N    how long each attempt takes, 0..600000 ms (default 0).\n"
    "  --stagger S       clients start uniformly within S seconds, 0.001..86400\n"
    "                    (default 1).\n"
    "  --defer on|off    off: no deferral, every give-up is final (default on).\n"
    "  --seed N          seed of every client's generator (default 1); the same seed gives\n"
    "                    the same output.\n"
    "  --json            one JSON object per strategy per line instead of a table.\n"
    "  --svg FILE        also draw the runs into FILE, a standalone SVG.\n"
    "  -h, --help        this text.\n"
    "\n"
    "Columns:\n"
    "  peak/cap    most attempts in any second after recovery, over the capacity.\n"
    "  s>cap       seconds after recovery in which attempts exceeded the capacity.\n"
    "  succeeded   clients whose request succeeded.\n"
    "  gave up     clients whose retries ended at least once (deferred or lost).\n"
    "  deferred    clients deferred at least once; they still succeed later.\n"
    "  lost        clients that gave up for good.\n"
    "  median/p99  time from a client's start to its success.\n"
    "  last done   when the last client finished, seconds from the start.\n"
    "  attempts    attempts by the whole fleet.\n"
    "A '*' marks the profile's own strategy.\n";

constexpr Jitter kStrategies[] = {Jitter::kSeed, Jitter::kFull, Jitter::kEqual,
                                  Jitter::kDecorrelated, Jitter::kNone};
constexpr std::uint32_t kMaxClients = 1000000;
constexpr double kMaxSeconds = 86400;
constexpr double kMaxCapacityPercent = 1e6;
constexpr const char* kPrefix = "stepback sim: ";

// Everything the command line chose.
struct SimOptions {
  const profiles::DeviceProfile* profile = &profiles::mobile;
  std::optional<Jitter> strategy;  // One strategy; every strategy when unset.
  std::uint32_t clients = 100000;
  double outage_seconds = 60;
  double capacity_percent = 2;
  RetryAfterMode retry_after = RetryAfterMode::kOff;
  std::uint32_t retry_after_seconds = 0;
  bool network_return = false;
  std::uint32_t attempt_ms = 0;
  double stagger_seconds = 1;
  bool defer = true;
  std::uint64_t seed = 1;
  bool json = false;
  std::string_view svg;
  bool help = false;
};

// A plain decimal number ("60", "0.5", ".5"): digits with at most one point, no sign, no
// exponent; nullopt for anything else.
std::optional<double> parse_decimal(std::string_view text) {
  double value = 0;
  double scale = 0;  // 0 before the point, then the weight of the next digit.
  bool any_digit = false;
  for (const char c : text) {
    if (c == '.' && scale == 0) {
      scale = 0.1;
    } else if (c >= '0' && c <= '9') {
      any_digit = true;
      if (scale == 0) {
        value = value * 10 + (c - '0');
      } else {
        value += (c - '0') * scale;
        scale /= 10;
      }
      if (value > 1e15) return std::nullopt;  // Far beyond any allowed value.
    } else {
      return std::nullopt;
    }
  }
  if (!any_digit) return std::nullopt;
  return value;
}

// "off", "fixed:S" or "spread:S" into *o.
bool parse_retry_after(std::string_view value, SimOptions* o) {
  if (value == "off") {
    o->retry_after = RetryAfterMode::kOff;
    return true;
  }
  const std::size_t colon = value.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view mode = value.substr(0, colon);
  const std::optional<std::uint64_t> s = parse_u64(value.substr(colon + 1));
  if (!s || *s < 1 || *s > 3600) return false;
  if (mode == "fixed") {
    o->retry_after = RetryAfterMode::kFixed;
  } else if (mode == "spread") {
    o->retry_after = RetryAfterMode::kSpread;
  } else {
    return false;
  }
  o->retry_after_seconds = static_cast<std::uint32_t>(*s);
  return true;
}

// A flag whose value is decimal seconds in [low, kMaxSeconds], into *out.
Flag seconds_flag(std::string_view name, std::string expected, double low, double* out) {
  return value_flag(name, std::move(expected), [low, out](std::string_view value, std::string*) {
    const std::optional<double> v = parse_decimal(value);
    if (!v || *v < low || *v > kMaxSeconds) return false;
    *out = *v;
    return true;
  });
}

// Parses argv[1..argc) (argv[0] == "sim"); on failure returns nullopt and sets *error to a
// one-line message naming the bad argument and what is allowed.
std::optional<SimOptions> parse_sim_args(int argc, char** argv, std::string* error) {
  SimOptions o;
  const std::vector<Flag> flags = {
      profile_flag(&o.profile),
      value_flag("--strategy", "allowed: seed, full, equal, decorrelated, none, all",
                 [&o](std::string_view value, std::string*) {
                   o.strategy = find_strategy(value);
                   return o.strategy.has_value() || value == "all";
                 }),
      value_flag("--clients", "expected a decimal integer in 1..1000000",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> v = parse_u64(value);
                   if (!v || *v < 1 || *v > kMaxClients) return false;
                   o.clients = static_cast<std::uint32_t>(*v);
                   return true;
                 }),
      seconds_flag("--outage", "expected seconds in 0..86400, such as 60 or 2.5", 0,
                   &o.outage_seconds),
      value_flag("--capacity",
                 "expected a percentage of the fleet per second above 0 and at most 1000000, "
                 "such as 2 or 0.5",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<double> v = parse_decimal(value);
                   if (!v || *v <= 0 || *v > kMaxCapacityPercent) return false;
                   o.capacity_percent = *v;
                   return true;
                 }),
      value_flag(
          "--retry-after", "allowed: off, fixed:S, spread:S with S in 1..3600",
          [&o](std::string_view value, std::string*) { return parse_retry_after(value, &o); }),
      switch_flag("--network-return", &o.network_return),
      value_flag("--attempt-ms", "expected a decimal integer in 0..600000",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> v = parse_u64(value);
                   if (!v || *v > 600000) return false;
                   o.attempt_ms = static_cast<std::uint32_t>(*v);
                   return true;
                 }),
      seconds_flag("--stagger", "expected seconds in 0.001..86400, such as 1 or 30", 0.001,
                   &o.stagger_seconds),
      value_flag("--defer", "allowed: on, off",
                 [&o](std::string_view value, std::string*) {
                   o.defer = value == "on";
                   return value == "on" || value == "off";
                 }),
      value_flag("--seed", "expected a decimal integer in 0..18446744073709551615",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> v = parse_u64(value);
                   if (v) o.seed = *v;
                   return v.has_value();
                 }),
      switch_flag("--json", &o.json),
      text_flag("--svg", &o.svg),
  };
  return parsed_options(parse_flags(argc, argv, flags, nullptr, error), o);
}

double seconds(Millis t) { return static_cast<double>(t.count()) / 1000.0; }

Millis millis(double s) { return Millis(static_cast<std::uint64_t>(std::llround(s * 1000))); }

double percent(std::uint32_t part, std::uint32_t whole) {
  return 100 * static_cast<double>(part) / static_cast<double>(whole);
}

double peak_multiple(const FleetScenario& s, const FleetReport& r) {
  return static_cast<double>(r.peak_attempts) / static_cast<double>(s.capacity);
}

// Clients that gave up at least once: deferred (and later succeeded) or lost.
std::uint32_t gave_up_clients(const FleetReport& r) { return r.deferred_clients + r.lost; }

void print_header(std::FILE* out, const SimOptions& o, const FleetScenario& s) {
  const Policy& p = o.profile->retry;
  std::fprintf(out, "profile %s: initial %g s, cap %g s, %u retries, deadline ", o.profile->name,
               seconds(p.initial_delay), seconds(p.max_backoff), p.max_retries);
  if (p.total_deadline.count() == 0) {
    std::fputs("none", out);
  } else {
    std::fprintf(out, "%g s", seconds(p.total_deadline));
  }
  if (s.defer.count() > 0) {
    std::fprintf(out, ", deferral %g s + U[0, %g s]", seconds(s.defer), seconds(s.defer_spread));
  }
  std::fprintf(out,
               "\nfleet: %u clients, outage %g s, capacity %u attempts/s (%g%% of the fleet), "
               "seed %llu\n",
               s.clients, o.outage_seconds, s.capacity, o.capacity_percent,
               static_cast<unsigned long long>(s.seed));
  static constexpr const char* kRetryAfter[] = {"off", "fixed", "spread"};
  std::fprintf(out, "scenario: retry-after %s", kRetryAfter[static_cast<int>(s.retry_after)]);
  if (s.retry_after != RetryAfterMode::kOff) std::fprintf(out, ":%g", seconds(s.retry_after_delay));
  std::fprintf(out, ", network return %s, attempts take %llu ms, stagger %g s\n\n",
               s.network_return ? "on" : "off", static_cast<unsigned long long>(s.attempt.count()),
               o.stagger_seconds);
  std::fprintf(out, "%-14s %9s %6s %10s %8s %8s %7s %8s %8s %9s %9s\n", "strategy", "peak/cap",
               "s>cap", "succeeded", "gave up", "deferred", "lost", "median", "p99", "last done",
               "attempts");
}

void print_row(std::FILE* out, const SimOptions& o, const FleetScenario& s, const FleetReport& r) {
  const Jitter j = s.policy.jitter;
  std::fprintf(
      out, "%-12s %s %8.2fx %6u %9.2f%% %7.2f%% %7.2f%% %6.2f%% %6.1f s %6.1f s %7.1f s %9llu\n",
      to_string(j), j == o.profile->retry.jitter ? "*" : " ", peak_multiple(s, r),
      r.seconds_over_capacity, percent(r.succeeded, s.clients),
      percent(gave_up_clients(r), s.clients), percent(r.deferred_clients, s.clients),
      percent(r.lost, s.clients), seconds(r.median_success), seconds(r.p99_success),
      seconds(r.last_done), static_cast<unsigned long long>(r.attempts));
}

void print_json(std::FILE* out, const SimOptions& o, const FleetScenario& s, const FleetReport& r) {
  // Every value is a number or a fixed lower-case name, so nothing needs escaping.
  std::fprintf(out,
               "{\"profile\":\"%s\",\"strategy\":\"%s\",\"profile_strategy\":%s,"
               "\"clients\":%u,\"outage_s\":%g,\"capacity_per_s\":%u,\"seed\":%llu,"
               "\"network_return\":%s,",
               o.profile->name, to_string(s.policy.jitter),
               s.policy.jitter == o.profile->retry.jitter ? "true" : "false", s.clients,
               o.outage_seconds, s.capacity, static_cast<unsigned long long>(s.seed),
               s.network_return ? "true" : "false");
  std::fprintf(out, "\"peak_load\":%.6g,\"peak_attempts_per_s\":%u,\"seconds_over_capacity\":%u,",
               peak_multiple(s, r), r.peak_attempts, r.seconds_over_capacity);
  const double n = s.clients;
  std::fprintf(out,
               "\"succeeded\":%.6g,\"gave_up\":%.6g,\"deferred\":%.6g,\"lost\":%.6g,"
               "\"retries_exhausted\":%u,\"deadline\":%u,\"other\":%u,\"deferrals\":%u,",
               r.succeeded / n, gave_up_clients(r) / n, r.deferred_clients / n, r.lost / n,
               r.retries_exhausted, r.deadline, r.other, r.deferrals);
  std::fprintf(out,
               "\"median_success_s\":%.3f,\"p99_success_s\":%.3f,\"last_done_s\":%.3f,"
               "\"attempts\":%llu}\n",
               seconds(r.median_success), seconds(r.p99_success), seconds(r.last_done),
               static_cast<unsigned long long>(r.attempts));
}

// The scenario the options describe, or nullopt after a message on `err`.
std::optional<FleetScenario> scenario_of(const SimOptions& o, std::FILE* err) {
  FleetScenario s;
  s.policy = o.profile->retry;
  s.clients = o.clients;
  s.outage = millis(o.outage_seconds);
  s.seed = o.seed;
  s.retry_after = o.retry_after;
  s.retry_after_delay = Millis::seconds(o.retry_after_seconds);
  s.network_return = o.network_return;
  s.attempt = Millis(o.attempt_ms);
  s.stagger = millis(o.stagger_seconds);
  if (o.defer) {
    s.defer = o.profile->defer.delay;
    s.defer_spread = o.profile->defer.spread;
  }
  s.series = !o.svg.empty();
  const double capacity = std::round(o.clients * o.capacity_percent / 100);
  if (capacity < 1) {
    std::fprintf(err,
                 "%s--capacity %g%% of %u clients is under 1 attempt per second; raise "
                 "--capacity or --clients\n",
                 kPrefix, o.capacity_percent, o.clients);
    return std::nullopt;
  }
  // More capacity than clients changes nothing (every attempt within it succeeds, so no
  // client makes two in one second) and keeps the count in 32 bits.
  s.capacity = capacity >= o.clients ? o.clients : static_cast<std::uint32_t>(capacity);
  return s;
}

// Writes the SVG of `runs` to o.svg; false after a message on `err`.
bool write_svg(const SimOptions& o, const FleetScenario& s, const std::vector<FleetRun>& runs,
               std::FILE* err) {
  const std::string path(o.svg);
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(err, "%scannot write --svg %s\n", kPrefix, path.c_str());
    return false;
  }
  char title[160];
  std::snprintf(title, sizeof title, "%s profile, %u clients, %s %g s, capacity %g%%/s%s",
                o.profile->name, s.clients, s.network_return ? "network down" : "outage",
                o.outage_seconds, o.capacity_percent,
                s.retry_after == RetryAfterMode::kOff ? "" : ", Retry-After");
  write_fleet_svg(file, title, s, runs);
  const bool ok = std::fclose(file) == 0;
  if (!ok) std::fprintf(err, "%scannot write --svg %s\n", kPrefix, path.c_str());
  return ok;
}

}  // namespace

int run_sim(int argc, char** argv) { return run_sim(argc, argv, stdout, stderr); }

int run_sim(int argc, char** argv, std::FILE* out, std::FILE* err) {
  std::string error;
  const std::optional<SimOptions> options = parse_sim_args(argc, argv, &error);
  if (!options) {
    std::fprintf(err, "%s%s\n", kPrefix, error.c_str());
    return 2;
  }
  const SimOptions& o = *options;
  if (o.help) {
    std::fputs(kUsage, out);
    std::fputs(kHelp, out);
    return 0;
  }
  std::optional<FleetScenario> scenario = scenario_of(o, err);
  if (!scenario) return 2;
  FleetScenario& s = *scenario;

  if (!o.json) print_header(out, o, s);
  std::vector<FleetRun> runs;
  for (const Jitter j : kStrategies) {
    if (o.strategy && j != *o.strategy) continue;
    s.policy.jitter = j;
    FleetReport r = simulate_fleet(s);
    if (o.json) {
      print_json(out, o, s, r);
    } else {
      print_row(out, o, s, r);
    }
    std::fflush(out);
    if (s.series)
      runs.push_back(FleetRun{to_string(j), j == o.profile->retry.jitter, std::move(r)});
  }
  if (!o.json) std::fputs("\n* the profile's own strategy\n", out);
  if (s.series && !write_svg(o, s, runs, err)) return 1;
  return 0;
}

}  // namespace stepback::tools
