// How long the app's loop is held by one Client::step() while a name is looked up and the
// addresses are raced, and the time to the first body byte. Runs whole plain-HTTP GETs from
// a poll() loop, timing every step() call with CLOCK_MONOTONIC in nanoseconds; the resolver
// is set up before the loop (as an app does). Driven by bench/resolver_bench.sh, which makes
// the network (a namespace, the DNS and HTTP servers, the black holes).
//
//   resolver_bench --dns IP:PORT --host NAME --port PORT [--runs N] [--connect-ms MS]
//                  [--deadline-ms MS]
//
// Prints one line per run and a summary: the longest step of each run in wall time (median
// and maximum over runs; on a loaded machine the maximum includes time the scheduler gave
// other processes), the most thread CPU time one step used, the run's length, and its time to
// first byte.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "stepback/platform/clock.hpp"

namespace {

using stepback::Millis;
namespace https = stepback::https;

std::int64_t ns_of(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
std::int64_t now_ns() { return ns_of(CLOCK_MONOTONIC); }
// This thread's CPU time: a step's own work, without the time the scheduler gave others.
std::int64_t cpu_ns() { return ns_of(CLOCK_THREAD_CPUTIME_ID); }

struct Options {
  const char* dns = nullptr;
  const char* host = nullptr;
  int port = 0;
  int runs = 10;
  std::uint64_t connect_ms = 10000;
  std::uint64_t deadline_ms = 0;
};

struct RunResult {
  std::int64_t longest_step_ns = 0;
  std::uint32_t longest_at = 0;     // Which step (1-based) it was.
  std::int64_t longest_cpu_ns = 0;  // The most CPU time one step used.
  std::int64_t total_ns = 0;
  std::int64_t first_byte_ns = -1;
  std::uint32_t steps = 0;
  std::string outcome;
  std::string message;
};

struct Sink {
  std::int64_t begin = 0;
  std::int64_t first_byte = -1;
};

bool on_body(void* context, std::uint64_t /*offset*/, https::ConstBytes data) {
  auto* sink = static_cast<Sink*>(context);
  if (sink->first_byte < 0 && data.size > 0) sink->first_byte = now_ns() - sink->begin;
  return true;
}

RunResult run_once(const Options& o) {
  RunResult r;
  https::CaresOptions dns;
  dns.servers = o.dns;
  dns.hosts_file = false;
  https::CaresResolver resolver;
  if (resolver.init(dns) != https::Status::kOk) {
    r.outcome = "resolver_init_failed";
    r.message = resolver.message();
    return r;
  }
  const std::string text = std::string("http://") + o.host + ":" + std::to_string(o.port) + "/";
  https::Url url;
  if (https::parse_url(text, &url) != https::Status::kOk) {
    r.outcome = "bad_url";
    return r;
  }
  https::RequestSpec spec;
  spec.head.url = url;
  spec.head.user_agent = "stepback-resolver-bench";
  static std::uint8_t request[2048], head[8192], io[16384], error_body[1024];
  stepback::Policy policy;
  policy.initial_delay = Millis(200);
  policy.max_backoff = Millis(1000);
  policy.max_retries = 100;
  policy.total_deadline = Millis(o.deadline_ms);
  stepback::Xoshiro128 random(1);
  const stepback::RetryContext context{policy, random, nullptr};
  https::TcpConnector connector(resolver);
  Sink sink;
  https::ClientOptions options;
  options.timeouts.connect = Millis(o.connect_ms);
  options.timeouts.tls_handshake = Millis(10000);
  options.timeouts.read = Millis(10000);
  options.buffers = {{request, sizeof request},
                     {head, sizeof head},
                     {io, sizeof io},
                     {error_body, sizeof error_body}};
  options.body = https::ResponseSink{&on_body, nullptr, &sink};
  options.wall_now = &stepback::platform::wall_now;
  https::Client client(connector, context, options);
  if (client.start(spec) != https::Status::kOk) {
    r.outcome = "start_failed";
    return r;
  }
  const std::int64_t begin = now_ns();
  sink.begin = begin;
  for (;;) {
    const std::int64_t before = now_ns();
    const std::int64_t cpu_before = cpu_ns();
    const https::ClientNext next = client.step(stepback::platform::monotonic_now());
    const std::int64_t took = now_ns() - before;
    r.longest_cpu_ns = std::max(r.longest_cpu_ns, cpu_ns() - cpu_before);
    ++r.steps;
    if (took > r.longest_step_ns) {
      r.longest_step_ns = took;
      r.longest_at = r.steps;
    }
    if (next.kind == https::ClientNext::Kind::kDone) break;
    (void)https::poll_wait(next, stepback::platform::monotonic_now());
  }
  r.total_ns = now_ns() - begin;
  r.first_byte_ns = sink.first_byte;
  r.outcome = stepback::to_string(client.result().outcome);
  r.message = client.result().message;
  return r;
}

std::int64_t median(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--dns")
      o.dns = value;
    else if (flag == "--host")
      o.host = value;
    else if (flag == "--port")
      o.port = std::atoi(value);
    else if (flag == "--runs")
      o.runs = std::atoi(value);
    else if (flag == "--connect-ms")
      o.connect_ms = std::strtoull(value, nullptr, 10);
    else if (flag == "--deadline-ms")
      o.deadline_ms = std::strtoull(value, nullptr, 10);
    else {
      std::fprintf(stderr, "resolver_bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (o.dns == nullptr || o.host == nullptr || o.port <= 0 || o.runs <= 0) {
    std::fprintf(stderr,
                 "usage: resolver_bench --dns IP:PORT --host NAME --port PORT [--runs N] "
                 "[--connect-ms MS] [--deadline-ms MS]\n");
    return 2;
  }
  std::vector<std::int64_t> longest, cpu, total, first_byte;
  std::int64_t worst = 0;
  for (int i = 0; i < o.runs; ++i) {
    const RunResult r = run_once(o);
    char first[32] = "none";
    if (r.first_byte_ns >= 0) {
      std::snprintf(first, sizeof first, "%.1f ms", static_cast<double>(r.first_byte_ns) / 1e6);
    }
    std::printf(
        "run %d: %s, %u steps, longest step %.1f us (step %u; most CPU in a step %.1f us), total "
        "%.1f ms, first byte %s%s%s\n",
        i + 1, r.outcome.c_str(), r.steps, static_cast<double>(r.longest_step_ns) / 1e3,
        r.longest_at, static_cast<double>(r.longest_cpu_ns) / 1e3,
        static_cast<double>(r.total_ns) / 1e6, first, r.message.empty() ? "" : " -- ",
        r.message.c_str());
    longest.push_back(r.longest_step_ns);
    cpu.push_back(r.longest_cpu_ns);
    total.push_back(r.total_ns);
    if (r.first_byte_ns >= 0) first_byte.push_back(r.first_byte_ns);
    worst = std::max(worst, r.longest_step_ns);
  }
  std::printf(
      "summary: %d runs of %s; longest step per run: median %.1f us, max %.1f us; "
      "most CPU in one step: median %.1f us, max %.1f us; run length median %.1f ms",
      o.runs, o.host, static_cast<double>(median(longest)) / 1e3, static_cast<double>(worst) / 1e3,
      static_cast<double>(median(cpu)) / 1e3,
      static_cast<double>(*std::max_element(cpu.begin(), cpu.end())) / 1e3,
      static_cast<double>(median(total)) / 1e6);
  if (!first_byte.empty()) {
    std::printf("; first byte median %.1f ms (min %.1f, max %.1f)",
                static_cast<double>(median(first_byte)) / 1e6,
                static_cast<double>(*std::min_element(first_byte.begin(), first_byte.end())) / 1e6,
                static_cast<double>(*std::max_element(first_byte.begin(), first_byte.end())) / 1e6);
  }
  std::printf("\n");
  return 0;
}
