// The event-driven fleet simulation behind `stepback sim`; the model is described in sim.hpp.
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim.hpp"
#include "stepback/core/attempt.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"

namespace stepback::tools {
namespace {

// The seed of client `index`: output index + 1 of splitmix64 started at `seed`, so the
// clients' seeds differ in all 64 bits (Xoshiro128 mixes each 32-bit half separately).
std::uint64_t client_seed(std::uint64_t seed, std::uint32_t index) {
  return splitmix64_mix(seed + (std::uint64_t{index} + 1) * 0x9E3779B97F4A7C15ULL);
}

// The server of the model: down until `recovery`, then `capacity` attempts per second; its
// 503s carry the scenario's Retry-After, drawn from its own generator.
class Server {
 public:
  explicit Server(const FleetScenario& s)
      : s_(s), random_(splitmix64_mix(s.seed ^ 0x5EB7E5EB7E5EB7E5ULL)) {}

  // Serves an attempt at `now`: 503 while down or beyond this second's capacity, else 200.
  AttemptResult serve(Millis now) {
    if (now < s_.outage) return unavailable();
    const std::uint64_t second = (now - s_.outage).count() / 1000;
    if (second >= load_.size()) load_.resize(static_cast<std::size_t>(second) + 1, 0);
    std::uint32_t& load = load_[static_cast<std::size_t>(second)];
    ++load;
    return load <= s_.capacity ? AttemptResult::http(200) : unavailable();
  }

  // Attempts in each second after recovery.
  const std::vector<std::uint32_t>& load() const { return load_; }

 private:
  AttemptResult unavailable() {
    if (s_.retry_after == RetryAfterMode::kOff) return AttemptResult::http(503);
    std::uint64_t seconds = s_.retry_after_delay.count() / 1000;
    if (s_.retry_after == RetryAfterMode::kSpread) {
      seconds = uniform(random_, static_cast<std::uint32_t>(seconds));
    }
    return AttemptResult::http(503, Millis::seconds(seconds), DelaySource::kRetryAfter);
  }

  const FleetScenario& s_;
  Xoshiro128 random_;
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

  // The earliest event's time and client; need !empty().
  std::uint64_t peek_time() const { return heap_.front() >> kIndexBits; }
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

// Where a client is between events.
enum class State : std::uint8_t { kIdle, kWaiting, kInFlight, kDeferred, kDone };

// One simulated client: its generator, its context, its machine and its pending event.
struct Client {
  Client(const Policy& policy, std::uint64_t seed)
      : random(seed), context{policy, random, nullptr}, machine(context) {}
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Xoshiro128 random;
  RetryContext context;
  RetryMachine machine;
  AttemptResult result;  // The answer of the attempt in flight.
  std::uint64_t at = 0;  // The time of its pending event; older events are stale.
  std::uint64_t start = 0;
  State state = State::kIdle;
  bool deferred = false;  // Deferred at least once.
};

// Whether a loop that ended with `o` gave up on a failure that a later loop may get past.
bool retryable_give_up(Outcome o) {
  return o == Outcome::kRetriesExhausted || o == Outcome::kDeadline ||
         o == Outcome::kServerDelayTooLong || o == Outcome::kBudgetExhausted;
}

// The run of one scenario: the fleet, the queue, the server and the report being filled.
class Fleet {
 public:
  explicit Fleet(const FleetScenario& s)
      : s_(s), clients_(s.clients), queue_(s.clients), server_(s) {
    const auto stagger = static_cast<std::uint32_t>(s.stagger.count() - 1);
    for (std::uint32_t i = 0; i < s.clients; ++i) {
      Client& c = clients_[i].emplace(s.policy, client_seed(s.seed, i));
      // The client's first draw places its request within the stagger; the same seed
      // therefore starts every strategy from the same moments.
      c.start = uniform(c.random, stagger);
      schedule(c, i, c.start);
    }
  }

  FleetReport run() {
    std::uint64_t time = 0;
    std::uint32_t index = 0;
    bool returned = !s_.network_return;
    while (!queue_.empty()) {
      if (!returned && queue_.peek_time() >= s_.outage.count()) {
        returned = true;
        network_returns();
        continue;
      }
      queue_.pop(time, index);
      Client& c = *clients_[index];
      if (time != c.at || c.state == State::kDone) continue;  // Moved by network_returns().
#if defined(__GNUC__) || defined(__clang__)
      // The next client is known now; fetching it overlaps the miss with this one's work.
      if (!queue_.empty()) __builtin_prefetch(&clients_[queue_.peek_index()]);
#endif
      const Millis now(time);
      if (c.state == State::kInFlight) {
        c.state = State::kWaiting;
        handle(c, index, now, c.machine.report(now, c.result));
      } else {
        if (c.state == State::kDeferred) c.machine = RetryMachine(c.context);
        c.state = State::kWaiting;
        handle(c, index, now, c.machine.step(now));
      }
    }
    return finish();
  }

 private:
  void schedule(Client& c, std::uint32_t index, std::uint64_t at) {
    c.at = at;
    queue_.push(at, index);
  }

  FleetSecond& second(Millis now) {
    const auto i = static_cast<std::size_t>(now.count() / 1000);
    if (i >= report_.per_second.size()) report_.per_second.resize(i + 1);
    return report_.per_second[i];
  }

  // The network comes back for every client at once: each waiting machine hears it.
  void network_returns() {
    for (std::uint32_t i = 0; i < s_.clients; ++i) {
      Client& c = *clients_[i];
      if (c.state != State::kWaiting) continue;
      c.machine.network_available(s_.outage);
      const Next next = c.machine.step(s_.outage);
      // An unchanged wait keeps its queued event.
      if (next.kind == Next::Kind::kWaitUntil && next.at.count() == c.at) continue;
      handle(c, i, s_.outage, next);
    }
  }

  // Performs attempts while `next` asks for them, then waits or ends the client.
  void handle(Client& c, std::uint32_t index, Millis now, Next next) {
    while (next.kind == Next::Kind::kSend) {
      ++report_.attempts;
      if (s_.series) ++second(now).attempts;
      const AttemptResult result = s_.network_return && now < s_.outage
                                       ? AttemptResult::transport(Failure::kConnect)
                                       : server_.serve(now);
      if (s_.attempt.count() > 0) {
        c.result = result;
        c.state = State::kInFlight;
        return schedule(c, index, now.count() + s_.attempt.count());
      }
      next = c.machine.report(now, result);
    }
    if (next.kind == Next::Kind::kWaitUntil && next.at.count() <= EventQueue::kMaxTime) {
      return schedule(c, index, next.at.count());
    }
    if (next.kind == Next::Kind::kWaitUntil) next.outcome = Outcome::kCancelled;  // Absurd policy.
    end(c, index, now, next.outcome);
  }

  void end(Client& c, std::uint32_t index, Millis now, Outcome outcome) {
    if (outcome == Outcome::kSuccess) {
      ++report_.succeeded;
      if (s_.series) ++second(now).successes;
      durations_.push_back(static_cast<std::uint32_t>(now.count() - c.start));
      return done(c, now);
    }
    if (outcome == Outcome::kRetriesExhausted) {
      ++report_.retries_exhausted;
    } else if (outcome == Outcome::kDeadline) {
      ++report_.deadline;
    } else {
      ++report_.other;
    }
    if (retryable_give_up(outcome) && s_.defer.count() > 0) {
      ++report_.deferrals;
      if (!c.deferred) ++report_.deferred_clients;
      c.deferred = true;
      if (s_.series) ++second(now).deferred;
      c.state = State::kDeferred;
      const auto spread = static_cast<std::uint32_t>(s_.defer_spread.count());
      return schedule(c, index, now.count() + s_.defer.count() + uniform(c.random, spread));
    }
    ++report_.lost;
    if (s_.series) ++second(now).lost;
    done(c, now);
  }

  void done(Client& c, Millis now) {
    c.state = State::kDone;
    report_.last_done = max(report_.last_done, now);
  }

  FleetReport finish() {
    for (const std::uint32_t load : server_.load()) {
      if (load > report_.peak_attempts) report_.peak_attempts = load;
      if (load > s_.capacity) ++report_.seconds_over_capacity;
    }
    if (!durations_.empty()) {
      report_.median_success = percentile(50);
      report_.p99_success = percentile(99);
    }
    return std::move(report_);
  }

  Millis percentile(std::size_t p) {
    const std::size_t k = (durations_.size() - 1) * p / 100;
    std::nth_element(durations_.begin(), durations_.begin() + static_cast<std::ptrdiff_t>(k),
                     durations_.end());
    return Millis(durations_[k]);
  }

  const FleetScenario& s_;
  // Built in place and never moved: each machine points at its context, and the context
  // at the generator beside it. One client's state shares a cache line or two, which
  // matters since events visit clients in random order.
  std::vector<std::optional<Client>> clients_;
  EventQueue queue_;
  Server server_;
  FleetReport report_;
  std::vector<std::uint32_t> durations_;
};

}  // namespace

static_assert(1000000 <= EventQueue::kIndexMask, "every client index must fit an event key");

FleetReport simulate_fleet(const FleetScenario& scenario) {
  assert(valid(scenario.policy) && scenario.clients >= 1 && scenario.clients <= 1000000 &&
         scenario.capacity >= 1 && scenario.stagger.count() >= 1);
  return Fleet(scenario).run();
}

}  // namespace stepback::tools
