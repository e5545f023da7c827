// Fixtures of the resolver's integration tests: the scripted DNS server (dns_server.py) on an
// ephemeral 127.0.0.1 port, a CaresResolver pointed at it, and poll() loops that drive a
// resolver or a Client while timing every step() call.
#ifndef STEPBACK_TESTS_INTEGRATION_RESOLVER_SUPPORT_HPP_
#define STEPBACK_TESTS_INTEGRATION_RESOLVER_SUPPORT_HPP_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "integration_support.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::integration {

// dns_server.py, answering by the first label of the name (see its docstring).
class DnsServer {
 public:
  // Starts the server (replies of "slow" names come after `delay_seconds`) and waits for
  // its port.
  ::testing::AssertionResult start(double delay_seconds = 2.0) {
    const std::vector<std::string> argv = {
        python_path(), std::string(source_dir()) + "/dns_server.py",
        "--port-file", dir_.file("port"),
        "--log-file",  dir_.file("queries.log"),
        "--delay",     std::to_string(delay_seconds),
        "--lifetime",  "120"};
    if (!process_.start(argv, dir_.file("output.txt"))) {
      return ::testing::AssertionFailure() << "could not start " << python_path();
    }
    const bool ready =
        wait_for([this] { return !read_file(dir_.file("port")).empty() || !process_.running(); },
                 kStartTimeoutMs);
    port_ = static_cast<std::uint16_t>(std::atoi(read_file(dir_.file("port")).c_str()));
    if (!ready || port_ == 0) {
      process_.stop();
      return ::testing::AssertionFailure()
             << "dns_server.py did not start: " << read_file(dir_.file("output.txt"));
    }
    return ::testing::AssertionSuccess();
  }
  std::uint16_t port() const { return port_; }
  // "127.0.0.1:PORT", for CaresOptions::servers.
  std::string servers() const { return "127.0.0.1:" + std::to_string(port_); }
  // One line per query ("query proto=udp name=ok.test type=A from=127.0.0.1").
  std::string log() const { return read_file(dir_.file("queries.log")); }

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
};

// Resolver options for tests: the given server only, no hosts file, short tries.
inline https::CaresOptions test_resolver_options(const std::string& servers) {
  https::CaresOptions o;
  static std::string kept;  // c-ares copies it, but keep it alive for the call.
  kept = servers;
  o.servers = kept.c_str();
  o.hosts_file = false;
  o.try_timeout = Millis(300);
  o.max_try = Millis(600);
  o.tries = 2;
  return o;
}

// Sleeps in poll() on `fd` (or on nothing when fd < 0) until it is ready or `at` passes,
// a second at the most.
inline void wait_io(int fd, https::IoInterest interest, Millis at) {
  (void)https::poll_wait(fd, interest, at, platform::monotonic_now(), Millis(1000));
}

// How a resolver loop went.
struct ResolveRun {
  https::ResolveError error = https::ResolveError::kInternal;
  std::string message;
  std::vector<std::string> addresses;  // "127.0.0.1:443", "[::1]:443".
  Millis elapsed{};
  Millis longest_step{};
  std::uint32_t steps = 0;
  std::uint32_t io_waits = 0;  // kWaitIo answers (each with fd >= 0).
  std::uint32_t io_waits_without_fd = 0;
  bool hit_wall_limit = false;
  bool unreachable = false;  // ResolveResult::unreachable.
};

// "127.0.0.1:443" or "[::1]:443".
inline std::string address_text(const https::SocketAddress& a) {
  char text[INET6_ADDRSTRLEN] = {};
  const auto* sa = reinterpret_cast<const sockaddr*>(a.bytes);
  if (sa->sa_family == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, a.bytes, sizeof sin);
    (void)inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(sin.sin_port));
  }
  sockaddr_in6 sin6{};
  std::memcpy(&sin6, a.bytes, sizeof sin6);
  (void)inet_ntop(AF_INET6, &sin6.sin6_addr, text, sizeof text);
  return "[" + std::string(text) + "]:" + std::to_string(ntohs(sin6.sin6_port));
}

// Resolves `host` with `resolver` in a poll() loop, at most `wall_limit`, timing each step.
inline ResolveRun resolve(https::Resolver& resolver, const char* host, std::uint16_t port,
                          Millis wall_limit = Millis(15000)) {
  ResolveRun run;
  const Millis begin = platform::monotonic_now();
  resolver.start(host, port, begin);
  for (;;) {
    const Millis before = platform::monotonic_now();
    if (before - begin >= wall_limit) {
      resolver.cancel();
      run.hit_wall_limit = true;
      break;
    }
    const https::ResolverNext next = resolver.step(before);
    const Millis took = platform::monotonic_now() - before;
    ++run.steps;
    if (took > run.longest_step) run.longest_step = took;
    if (next.kind == https::ResolverNext::Kind::kDone) break;
    if (next.kind == https::ResolverNext::Kind::kWaitIo) {
      ++run.io_waits;
      if (next.fd < 0 || next.interest == https::IoInterest::kNone) ++run.io_waits_without_fd;
    }
    wait_io(next.kind == https::ResolverNext::Kind::kWaitIo ? next.fd : -1, next.interest, next.at);
  }
  run.elapsed = platform::monotonic_now() - begin;
  const https::ResolveResult& r = resolver.result();
  run.error = r.error;
  run.message = r.message;
  run.unreachable = r.unreachable;
  for (std::size_t i = 0; i < r.count; ++i) run.addresses.push_back(address_text(r.addresses[i]));
  return run;
}

}  // namespace stepback::integration

#endif  // STEPBACK_TESTS_INTEGRATION_RESOLVER_SUPPORT_HPP_
