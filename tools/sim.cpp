// `stepback sim`: argument parsing, the event-driven fleet simulation, and its report.
// The model is described in sim.hpp and in the --help text below.
#include "sim.hpp"

#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "stepback/core/attempt.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"
#include "stepback/profiles/profile.hpp"

namespace stepback::tools {
namespace {

constexpr const char kUsage[] =
    "usage: stepback sim [--profile desktop|mobile]\n"
    "                    [--strategy seed|full|equal|decorrelated|none|all]\n"
    "                    [--clients N] [--outage SECONDS] [--capacity PERCENT_PER_SECOND]\n"
    "                    [--seed N] [--json]\n";

constexpr const char kHelp[] =
    "\n"
    "Simulates a fleet of clients that failed together and measures how hard each jitter\n"
    "strategy hits the server when it comes back.\n"
    "\n"
    "Model:\n"
    "  - N clients each start one request at a moment uniform in the first second.\n"
    "  - The server is down for the outage: every attempt fails with 503.\n"
    "  - After it, the server serves at most CAPACITY attempts in each second counted\n"
    "    from recovery; later attempts in that second fail with 503 (overload).\n"
    "  - Each client is a stepback::RetryMachine with the profile's policy and the\n"
    "    strategy overridden, no retry budget, and its own Xoshiro128 seeded from\n"
    "    (seed, client index). Attempts take no time; 503s carry no Retry-After.\n"
    "\n"
    "Options:\n"
    "  --profile P     desktop or mobile (default mobile): initial delay, cap, retries\n"
    "                  and deadline come from the profile.\n"
    "  --strategy S    seed (the literal formula min(2^n s + U[0,1 s], cap)), full,\n"
    "                  equal, decorrelated, none, or all (default: one row each).\n"
    "  --clients N     fleet size, 1..1000000 (default 100000).\n"
    "  --outage S      seconds the server is down, 0..86400, decimals allowed\n"
    "                  (default 60).\n"
    "  --capacity P    attempts served per second after the outage, as a percentage of\n"
    "                  the fleet; must come to at least 1 attempt (default 2).\n"
    "  --seed N        seed of every client's generator (default 1); the same seed gives\n"
    "                  the same output.\n"
    "  --json          one JSON object per strategy per line instead of a table.\n"
    "  -h, --help      this text.\n"
    "\n"
    "Columns:\n"
    "  peak/cap    most attempts in any second after recovery, over the capacity.\n"
    "  s>cap       seconds after recovery in which attempts exceeded the capacity.\n"
    "  succeeded   clients whose request succeeded.\n"
    "  exhausted   clients that gave up after the last retry (retries_exhausted).\n"
    "  deadline    clients that gave up at the total deadline (deadline).\n"
    "  last done   when the last client finished, seconds from the start.\n"
    "  attempts    attempts by the whole fleet.\n"
    "A '*' marks the profile's own strategy.\n";

constexpr Jitter kStrategies[] = {Jitter::kSeed, Jitter::kFull, Jitter::kEqual,
                                  Jitter::kDecorrelated, Jitter::kNone};
constexpr std::uint32_t kMaxClients = 1000000;
constexpr double kMaxOutageSeconds = 86400;
constexpr double kMaxCapacityPercent = 1e6;

// The seed of client `index`: output index + 1 of splitmix64 started at `seed`, so the
// clients' seeds differ in all 64 bits (Xoshiro128 mixes each 32-bit half separately).
std::uint64_t client_seed(std::uint64_t seed, std::uint32_t index) {
  return splitmix64_mix(seed + (std::uint64_t{index} + 1) * 0x9E3779B97F4A7C15ULL);
}

// The server of the model: down until `recovery`, then `capacity` attempts per second.
class Server {
 public:
  Server(Millis recovery, std::uint32_t capacity) : recovery_(recovery), capacity_(capacity) {}

  // Serves an attempt at `now`: 503 while down or beyond this second's capacity, else 200.
  AttemptResult serve(Millis now) {
    if (now < recovery_) return AttemptResult::http(503);
    const std::uint64_t second = (now - recovery_).count() / 1000;
    if (second >= load_.size()) load_.resize(static_cast<std::size_t>(second) + 1, 0);
    std::uint32_t& load = load_[static_cast<std::size_t>(second)];
    ++load;
    return AttemptResult::http(load <= capacity_ ? 200 : 503);
  }

  // Attempts in each second after recovery.
  const std::vector<std::uint32_t>& load() const { return load_; }

 private:
  Millis recovery_;
  std::uint32_t capacity_;
  std::vector<std::uint32_t> load_;
};

// A binary min-heap of events packed as (time << kIndexBits) | client, so ties in time
// go to the lower index and the order (and so who gets the capacity) is deterministic.
// Written out by hand because std::priority_queue dominated the run time of unoptimized
// builds.
class EventQueue {
 public:
  static constexpr unsigned kIndexBits = 20;  // Clients < 2^20.
  static constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kIndexBits) - 1;
  static constexpr std::uint64_t kMaxTime = (std::uint64_t{1} << (64 - kIndexBits)) - 1;

  explicit EventQueue(std::size_t capacity) { heap_.reserve(capacity); }

  bool empty() const { return heap_.empty(); }

  // The client of the earliest event; needs !empty().
  std::uint32_t peek_index() const {
    return static_cast<std::uint32_t>(heap_.front() & kIndexMask);
  }

  // Adds client `index` at `time` (<= kMaxTime).
  void push(std::uint64_t time, std::uint32_t index) {
    heap_.push_back(0);
    std::uint64_t* h = heap_.data();
    const std::uint64_t key = (time << kIndexBits) | index;
    std::size_t i = heap_.size() - 1;
    while (i > 0 && h[(i - 1) / 2] > key) {
      h[i] = h[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    h[i] = key;
  }

  // Removes the earliest event; needs !empty().
  void pop(std::uint64_t& time, std::uint32_t& index) {
    std::uint64_t* h = heap_.data();
    const std::uint64_t top = h[0];
    const std::uint64_t last = h[heap_.size() - 1];
    heap_.pop_back();
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && h[child + 1] < h[child]) ++child;
      if (h[child] >= last) break;
      h[i] = h[child];
      i = child;
    }
    if (n > 0) h[i] = last;
    time = top >> kIndexBits;
    index = static_cast<std::uint32_t>(top & kIndexMask);
  }

 private:
  std::vector<std::uint64_t> heap_;
};

// One simulated client: its generator, its context and its machine.
struct Client {
  Client(const Policy& policy, std::uint64_t seed)
      : random(seed), context{policy, random, nullptr}, machine(context) {}
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Xoshiro128 random;
  RetryContext context;
  RetryMachine machine;
};

// Counts a client that finished at `now` with `outcome`.
void record(FleetReport& report, Outcome outcome, Millis now) {
  switch (outcome) {
    case Outcome::kSuccess:
      ++report.succeeded;
      break;
    case Outcome::kRetriesExhausted:
      ++report.retries_exhausted;
      break;
    case Outcome::kDeadline:
      ++report.deadline;
      break;
    default:
      ++report.other;
      break;
  }
  report.last_done = max(report.last_done, now);
}

}  // namespace

static_assert(kMaxClients <= EventQueue::kIndexMask, "every client index must fit an event key");

FleetReport simulate_fleet(const FleetScenario& scenario) {
  assert(valid(scenario.policy) && scenario.clients >= 1 && scenario.clients <= kMaxClients &&
         scenario.capacity >= 1);
  const std::uint32_t n = scenario.clients;
  // Built in place and never moved: each machine points at its context, and the context
  // at the generator beside it. One client's state shares a cache line or two, which
  // matters since events visit clients in random order.
  std::vector<std::optional<Client>> clients(n);
  EventQueue queue(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    Client& c = clients[i].emplace(scenario.policy, client_seed(scenario.seed, i));
    // The client's first draw places its request in the first second; the same seed
    // therefore starts every strategy from the same moments.
    queue.push(uniform(c.random, 999), i);
  }

  Server server(scenario.outage, scenario.capacity);
  FleetReport report;
  std::uint64_t time = 0;
  std::uint32_t index = 0;
  while (!queue.empty()) {
    queue.pop(time, index);
    const Millis now(time);
    RetryMachine& machine = clients[index]->machine;
#if defined(__GNUC__) || defined(__clang__)
    // The next client is known now; fetching it overlaps the miss with this one's work.
    if (!queue.empty()) __builtin_prefetch(&clients[queue.peek_index()]);
#endif
    Next next = machine.step(now);
    while (next.kind == Next::Kind::kSend) {
      ++report.attempts;
      next = machine.report(now, server.serve(now));
    }
    if (next.kind == Next::Kind::kWaitUntil && next.at.count() <= EventQueue::kMaxTime) {
      queue.push(next.at.count(), index);
    } else if (next.kind == Next::Kind::kWaitUntil) {
      // Beyond half a millennium: only an absurd policy gets here; count it as other.
      machine.cancel();
      record(report, Outcome::kCancelled, now);
    } else {
      record(report, next.outcome, now);
    }
  }

  for (const std::uint32_t load : server.load()) {
    if (load > report.peak_attempts) report.peak_attempts = load;
    if (load > scenario.capacity) ++report.seconds_over_capacity;
  }
  return report;
}

namespace {

constexpr const char* kPrefix = "stepback sim: ";

// Everything the command line chose.
struct SimOptions {
  const profiles::DeviceProfile* profile = &profiles::mobile;
  std::optional<Jitter> strategy;  // One strategy; every strategy when unset.
  std::uint32_t clients = 100000;
  double outage_seconds = 60;
  double capacity_percent = 2;
  std::uint64_t seed = 1;
  bool json = false;
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
      value_flag("--outage", "expected seconds in 0..86400, such as 60 or 2.5",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<double> v = parse_decimal(value);
                   if (!v || *v > kMaxOutageSeconds) return false;
                   o.outage_seconds = *v;
                   return true;
                 }),
      value_flag("--capacity",
                 "expected a percentage of the fleet per second above 0 and at most 1000000, "
                 "such as 2 or 0.5",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<double> v = parse_decimal(value);
                   if (!v || *v <= 0 || *v > kMaxCapacityPercent) return false;
                   o.capacity_percent = *v;
                   return true;
                 }),
      value_flag("--seed", "expected a decimal integer in 0..18446744073709551615",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> v = parse_u64(value);
                   if (v) o.seed = *v;
                   return v.has_value();
                 }),
      switch_flag("--json", &o.json),
  };
  return parsed_options(parse_flags(argc, argv, flags, nullptr, error), o);
}

double seconds(Millis t) { return static_cast<double>(t.count()) / 1000.0; }

double fraction(std::uint32_t part, std::uint32_t whole) {
  return static_cast<double>(part) / static_cast<double>(whole);
}

double peak_multiple(const FleetScenario& s, const FleetReport& r) {
  return fraction(r.peak_attempts, s.capacity);
}

void print_usage(std::FILE* out) {
  std::fputs(kUsage, out);
  std::fputs(kHelp, out);
}

void print_header(std::FILE* out, const SimOptions& o, const FleetScenario& s) {
  const Policy& p = o.profile->retry;
  std::fprintf(out, "profile %s: initial %g s, cap %g s, %u retries, deadline ", o.profile->name,
               seconds(p.initial_delay), seconds(p.max_backoff), p.max_retries);
  if (p.total_deadline.count() == 0) {
    std::fputs("none", out);
  } else {
    std::fprintf(out, "%g s", seconds(p.total_deadline));
  }
  std::fprintf(out,
               "\nfleet: %u clients, outage %g s, capacity %u attempts/s (%g%% of the fleet), "
               "seed %llu\n\n",
               s.clients, o.outage_seconds, s.capacity, o.capacity_percent,
               static_cast<unsigned long long>(s.seed));
  std::fprintf(out, "%-14s %9s %6s %10s %10s %9s %10s %10s\n", "strategy", "peak/cap", "s>cap",
               "succeeded", "exhausted", "deadline", "last done", "attempts");
}

void print_row(std::FILE* out, const SimOptions& o, const FleetScenario& s, const FleetReport& r) {
  const Jitter j = s.policy.jitter;
  std::fprintf(out, "%-12s %s %8.2fx %6u %9.2f%% %9.2f%% %8.2f%% %8.1f s %10llu\n", to_string(j),
               j == o.profile->retry.jitter ? "*" : " ", peak_multiple(s, r),
               r.seconds_over_capacity, 100 * fraction(r.succeeded, s.clients),
               100 * fraction(r.retries_exhausted, s.clients),
               100 * fraction(r.deadline, s.clients), seconds(r.last_done),
               static_cast<unsigned long long>(r.attempts));
}

void print_json(std::FILE* out, const SimOptions& o, const FleetScenario& s, const FleetReport& r) {
  // Every value is a number or a fixed lower-case name, so nothing needs escaping.
  std::fprintf(out,
               "{\"profile\":\"%s\",\"strategy\":\"%s\",\"profile_strategy\":%s,"
               "\"clients\":%u,\"outage_s\":%g,\"capacity_per_s\":%u,\"seed\":%llu,",
               o.profile->name, to_string(s.policy.jitter),
               s.policy.jitter == o.profile->retry.jitter ? "true" : "false", s.clients,
               o.outage_seconds, s.capacity, static_cast<unsigned long long>(s.seed));
  std::fprintf(out, "\"peak_load\":%.6g,\"peak_attempts_per_s\":%u,\"seconds_over_capacity\":%u,",
               peak_multiple(s, r), r.peak_attempts, r.seconds_over_capacity);
  std::fprintf(out,
               "\"succeeded\":%.6g,\"retries_exhausted\":%.6g,\"deadline\":%.6g,"
               "\"other\":%.6g,",
               fraction(r.succeeded, s.clients), fraction(r.retries_exhausted, s.clients),
               fraction(r.deadline, s.clients), fraction(r.other, s.clients));
  std::fprintf(out, "\"last_done_s\":%.3f,\"attempts\":%llu}\n", seconds(r.last_done),
               static_cast<unsigned long long>(r.attempts));
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
    print_usage(out);
    return 0;
  }

  FleetScenario s;
  s.policy = o.profile->retry;
  s.clients = o.clients;
  s.outage = Millis(static_cast<std::uint64_t>(std::llround(o.outage_seconds * 1000)));
  s.seed = o.seed;
  const double capacity = std::round(o.clients * o.capacity_percent / 100);
  if (capacity < 1) {
    std::fprintf(err,
                 "%s--capacity %g%% of %u clients is under 1 attempt per second; raise "
                 "--capacity or --clients\n",
                 kPrefix, o.capacity_percent, o.clients);
    return 2;
  }
  // More capacity than clients changes nothing (every attempt within it succeeds, so no
  // client makes two in one second) and keeps the count in 32 bits.
  s.capacity = capacity >= o.clients ? o.clients : static_cast<std::uint32_t>(capacity);

  if (!o.json) print_header(out, o, s);
  for (const Jitter j : kStrategies) {
    if (o.strategy && j != *o.strategy) continue;
    s.policy.jitter = j;
    const FleetReport r = simulate_fleet(s);
    if (o.json) {
      print_json(out, o, s, r);
    } else {
      print_row(out, o, s, r);
    }
    std::fflush(out);
  }
  if (!o.json) std::fputs("\n* the profile's own strategy\n", out);
  return 0;
}

}  // namespace stepback::tools
