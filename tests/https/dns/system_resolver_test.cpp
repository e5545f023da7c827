// SystemResolver's hand-over between the loop and its worker threads, with a scripted
// getaddrinfo (answers by name; one that blocks until the test opens a gate), and once with
// the real one on "localhost" (the hosts file: no DNS traffic). The real resolver against a
// DNS server is in tests/integration/system_resolver_netns_test.sh.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/heap_trap.hpp"
#include "stepback/https/dns/system_resolver.hpp"
#include "stepback/https/tcp/address.hpp"

namespace stepback::https {
namespace {

// A prepared answer: addrinfo entries over sockaddr storage, made before a test runs so the
// scripted lookup allocates nothing.
struct Answer {
  std::vector<addrinfo> entries;
  std::vector<sockaddr_in6> storage;  // Large enough for either family.

  explicit Answer(const std::vector<std::string>& addresses)
      : entries(addresses.size()), storage(addresses.size()) {
    for (std::size_t i = 0; i < addresses.size(); ++i) {
      addrinfo& a = entries[i];
      a = addrinfo{};
      sockaddr_in6& s = storage[i];
      s = sockaddr_in6{};
      if (addresses[i].find(':') != std::string::npos) {
        s.sin6_family = AF_INET6;
        EXPECT_EQ(inet_pton(AF_INET6, addresses[i].c_str(), &s.sin6_addr), 1);
        a.ai_family = AF_INET6;
        a.ai_addrlen = sizeof(sockaddr_in6);
      } else {
        auto* sin = reinterpret_cast<sockaddr_in*>(&s);
        sin->sin_family = AF_INET;
        EXPECT_EQ(inet_pton(AF_INET, addresses[i].c_str(), &sin->sin_addr), 1);
        a.ai_family = AF_INET;
        a.ai_addrlen = sizeof(sockaddr_in);
      }
      a.ai_socktype = SOCK_STREAM;
      a.ai_addr = reinterpret_cast<sockaddr*>(&s);
      a.ai_next = i + 1 < addresses.size() ? &entries[i + 1] : nullptr;
    }
  }
  addrinfo* list() { return entries.empty() ? nullptr : entries.data(); }
};

// The script, shared with the worker threads.
struct Script {
  std::mutex mutex;
  std::condition_variable changed;
  bool gate_open = true;  // "block.*" names wait for it.
  int blocked = 0;        // Lookups waiting at the gate now.
  int calls = 0;
  int released = 0;           // release() calls.
  std::uint64_t network = 0;  // The last lookup's network.
  Answer* dual = nullptr;     // "dual.test", and "block.*" names once the gate opens.
  Answer* other = nullptr;    // "other.test".
  int error_status = 0;       // "error.test": this EAI_* code ...
  int error_errno = 0;        // ... with this errno.
};
Script* script = nullptr;

int scripted_lookup(std::uint64_t network, const char* host, const addrinfo* hints,
                    addrinfo** out) {
  std::unique_lock<std::mutex> lock(script->mutex);
  ++script->calls;
  script->network = network;
  EXPECT_EQ(hints->ai_family, AF_UNSPEC);
  EXPECT_EQ(hints->ai_flags & AI_ADDRCONFIG, 0);
  if (std::strncmp(host, "block.", 6) == 0) {
    ++script->blocked;
    script->changed.notify_all();
    script->changed.wait(lock, [] { return script->gate_open; });
    --script->blocked;
    *out = script->dual->list();
    return 0;
  }
  if (std::strcmp(host, "dual.test") == 0) {
    *out = script->dual->list();
    return 0;
  }
  if (std::strcmp(host, "other.test") == 0) {
    *out = script->other->list();
    return 0;
  }
  if (std::strcmp(host, "error.test") == 0) {
    errno = script->error_errno;
    return script->error_status;
  }
  return EAI_NONAME;
}

void scripted_release(addrinfo* /*list*/) {
  std::lock_guard<std::mutex> lock(script->mutex);
  ++script->released;
  script->changed.notify_all();
}

std::string text(const SocketAddress& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  sockaddr_storage s{};
  std::memcpy(&s, a.bytes, a.size);
  if (s.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&s);
    inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof buf);
    return std::string("[") + buf + "]:" + std::to_string(ntohs(sin6->sin6_port));
  }
  const auto* sin = reinterpret_cast<const sockaddr_in*>(&s);
  inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(sin->sin_port));
}

std::vector<std::string> texts(const ResolveResult& r) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.count; ++i) out.push_back(text(r.addresses[i]));
  return out;
}

class SystemResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    script = &script_;
    script_.dual = &dual_;
    script_.other = &other_;
  }
  void TearDown() override {
    open_gate();
    resolver_.reset();
    // Every scripted lookup has returned before the script goes (a worker left busy by a
    // destroyed resolver included): bounded wait.
    std::unique_lock<std::mutex> lock(script_.mutex);
    script_.changed.wait_for(lock, std::chrono::seconds(10),
                             [this] { return script_.blocked == 0; });
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    script = nullptr;
  }

  SystemResolver& make(std::size_t workers = 2, Millis limit = Millis(5000)) {
    resolver_ = std::make_unique<SystemResolver>();
    SystemResolverOptions o;
    o.workers = workers;
    o.limit = limit;
    o.lookup = scripted_lookup;
    o.release = scripted_release;
    EXPECT_EQ(resolver_->init(o), Status::kOk) << resolver_->message();
    return *resolver_;
  }

  void close_gate() {
    std::lock_guard<std::mutex> lock(script_.mutex);
    script_.gate_open = false;
  }
  void open_gate() {
    std::lock_guard<std::mutex> lock(script_.mutex);
    script_.gate_open = true;
    script_.changed.notify_all();
  }
  // Waits (at most 10 s) until `n` lookups are blocked at the gate.
  bool wait_blocked(int n) {
    std::unique_lock<std::mutex> lock(script_.mutex);
    return script_.changed.wait_for(lock, std::chrono::seconds(10),
                                    [&] { return script_.blocked == n; });
  }

  // Steps `r` at `now` until done, polling its descriptor; at most 200 rounds of 50 ms.
  static ResolverNext run(SystemResolver& r, Millis now) {
    ResolverNext next;
    for (int i = 0; i < 200; ++i) {
      next = r.step(now);
      if (next.kind == ResolverNext::Kind::kDone) return next;
      EXPECT_EQ(next.kind, ResolverNext::Kind::kWaitIo);
      EXPECT_GE(next.fd, 0);
      pollfd p{next.fd, POLLIN, 0};
      poll(&p, 1, 50);
    }
    return next;
  }

  Script script_;
  Answer dual_{{"::1", "127.0.0.1", "::1", "10.0.0.1"}};
  Answer other_{{"192.0.2.7"}};
  std::unique_ptr<SystemResolver> resolver_;
};

TEST_F(SystemResolverTest, AnswersWithThePortEachAddressOnceInTheSystemsOrder) {
  SystemResolver& r = make();
  r.start("dual.test", 8443, Millis(1000));
  ASSERT_EQ(run(r, Millis(1000)).kind, ResolverNext::Kind::kDone);
  const ResolveResult& result = r.result();
  EXPECT_EQ(result.error, ResolveError::kNone) << result.message;
  EXPECT_EQ(texts(result),
            (std::vector<std::string>{"[::1]:8443", "127.0.0.1:8443", "10.0.0.1:8443"}));
}

TEST_F(SystemResolverTest, ALongAnswerKeepsBothFamilies) {
  std::vector<std::string> many;
  for (int i = 1; i <= 10; ++i) many.push_back("2001:db8::" + std::to_string(i));
  many.push_back("192.0.2.1");
  Answer ten_and_one(many);
  script_.dual = &ten_and_one;
  SystemResolver& r = make();
  r.start("dual.test", 443, Millis(0));
  ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
  const std::vector<std::string> got = texts(r.result());
  ASSERT_EQ(got.size(), Resolver::kMaxAddresses);
  EXPECT_EQ(got.back(), "192.0.2.1:443");
}

TEST_F(SystemResolverTest, AWaitingLookupNamesItsWorkersDescriptorAndNoStepBlocks) {
  close_gate();
  SystemResolver& r = make();
  r.start("block.test", 443, Millis(0));
  ASSERT_TRUE(wait_blocked(1));
  // The lookup is stuck in the system's call; step() answers at once.
  const ResolverNext next = r.step(Millis(10));
  EXPECT_EQ(next.kind, ResolverNext::Kind::kWaitIo);
  EXPECT_EQ(next.interest, IoInterest::kRead);
  EXPECT_EQ(next.at, Millis(5000));
  pollfd p{next.fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "readable before the answer";
  open_gate();
  EXPECT_EQ(poll(&p, 1, 10000), 1) << "the answer did not wake the loop";
  EXPECT_EQ(r.step(Millis(20)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(r.result().count, 3u);
}

TEST_F(SystemResolverTest, ATimedOutLookupIsAbandonedAndTheNextGoesToTheOtherWorker) {
  close_gate();
  SystemResolver& r = make(2, Millis(100));
  r.start("block.test", 443, Millis(0));
  ASSERT_TRUE(wait_blocked(1));
  EXPECT_EQ(r.step(Millis(100)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(r.result().error, ResolveError::kTimeout);
  EXPECT_NE(std::string(r.result().message).find("did not answer within 100 ms"), std::string::npos)
      << r.result().message;
  EXPECT_EQ(r.busy_workers(), 1u);
  // The first worker is still blocked; the second answers.
  r.start("other.test", 443, Millis(200));
  ASSERT_EQ(run(r, Millis(200)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(texts(r.result()), (std::vector<std::string>{"192.0.2.7:443"}));
  open_gate();
  for (int i = 0; i < 1000 && r.busy_workers() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(r.busy_workers(), 0u);
}

// The abandoned lookup's answer (dual.test's addresses) must never be taken for the next
// lookup's, which waits for the same, only, worker.
TEST_F(SystemResolverTest, WithEveryWorkerBusyALookupWaitsAndGetsItsOwnAnswer) {
  close_gate();
  SystemResolver& r = make(1);
  r.start("block.test", 443, Millis(0));
  ASSERT_TRUE(wait_blocked(1));
  r.cancel();
  EXPECT_EQ(r.result().error, ResolveError::kCancelled);
  r.start("other.test", 443, Millis(10));
  const ResolverNext waiting = r.step(Millis(10));
  ASSERT_EQ(waiting.kind, ResolverNext::Kind::kWaitIo);
  EXPECT_LE(waiting.at, Millis(60)) << "the busy workers are looked at again soon";
  open_gate();
  ASSERT_EQ(run(r, Millis(20)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(texts(r.result()), (std::vector<std::string>{"192.0.2.7:443"}));
  std::lock_guard<std::mutex> lock(script_.mutex);
  EXPECT_EQ(script_.calls, 2);
}

TEST_F(SystemResolverTest, WithEveryWorkerBusyPastTheLimitTheLookupTimesOut) {
  close_gate();
  SystemResolver& r = make(1, Millis(100));
  r.start("block.test", 443, Millis(0));
  ASSERT_TRUE(wait_blocked(1));
  r.cancel();
  r.start("other.test", 443, Millis(10));
  EXPECT_EQ(r.step(Millis(10)).kind, ResolverNext::Kind::kWaitIo);
  EXPECT_EQ(r.step(Millis(110)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(r.result().error, ResolveError::kTimeout);
  EXPECT_NE(std::string(r.result().message).find("all 1 workers"), std::string::npos)
      << r.result().message;
}

TEST_F(SystemResolverTest, ALookupCancelledBeforeItsWorkerTookItIsWithdrawn) {
  SystemResolver& r = make(1);
  for (int i = 0; i < 50; ++i) {
    r.start("dual.test", 443, Millis(0));
    r.cancel();
  }
  r.start("other.test", 443, Millis(0));
  ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(texts(r.result()), (std::vector<std::string>{"192.0.2.7:443"}));
}

TEST_F(SystemResolverTest, DestroyedWhileItsWorkerIsBlockedItReturnsAtOnce) {
  close_gate();
  SystemResolver& r = make(2);
  r.start("block.test", 443, Millis(0));
  ASSERT_TRUE(wait_blocked(1));
  resolver_.reset();  // Would hang here if it joined the blocked worker.
  {
    std::lock_guard<std::mutex> lock(script_.mutex);
    EXPECT_EQ(script_.blocked, 1);
    EXPECT_EQ(script_.released, 0);
  }
  open_gate();
  // The worker finishes, releases its answer and frees its own state (ASan checks the rest).
  std::unique_lock<std::mutex> lock(script_.mutex);
  EXPECT_TRUE(script_.changed.wait_for(lock, std::chrono::seconds(10),
                                       [this] { return script_.released == 1; }));
}

TEST_F(SystemResolverTest, FailuresAreClassifiedAndNamed) {
  struct Case {
    int status;
    int os_error;
    ResolveError error;
    bool unreachable;
  };
  const Case cases[] = {
    {EAI_AGAIN, 0, ResolveError::kTimeout, false},
    {EAI_FAIL, 0, ResolveError::kServerFailure, false},
    {EAI_MEMORY, 0, ResolveError::kOutOfMemory, false},
    {EAI_SYSTEM, ENETUNREACH, ResolveError::kNoNetwork, true},
    {EAI_SYSTEM, ECONNREFUSED, ResolveError::kNoNetwork, false},
#if defined(EAI_NODATA)
    {EAI_NODATA, 0, ResolveError::kNoData, false},
#endif
    {EAI_SERVICE, 0, ResolveError::kInternal, false},
  };
  SystemResolver& r = make();
  for (const Case& c : cases) {
    script_.error_status = c.status;
    script_.error_errno = c.os_error;
    r.start("error.test", 443, Millis(0));
    ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
    EXPECT_EQ(r.result().error, c.error) << c.status;
    EXPECT_EQ(r.result().unreachable, c.unreachable) << c.status;
    EXPECT_EQ(r.result().count, 0u);
    EXPECT_NE(std::string(r.result().message).find("'error.test'"), std::string::npos);
  }
  r.start("nosuch.test", 443, Millis(0));
  ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(r.result().error, ResolveError::kNxDomain);
  EXPECT_TRUE(is_definite(r.result().error));
  EXPECT_NE(std::string(r.result().message).find("no such host 'nosuch.test'"), std::string::npos)
      << r.result().message;
}

TEST_F(SystemResolverTest, AnAnswerWithoutAnAddressIsNoData) {
  Answer none({});
  script_.dual = &none;
  SystemResolver& r = make();
  r.start("dual.test", 443, Millis(0));
  ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(r.result().error, ResolveError::kNoData);
}

TEST_F(SystemResolverTest, BadNamesAndAMissingInitEndAtOnce) {
  SystemResolver& r = make();
  r.start("", 443, Millis(0));
  EXPECT_EQ(r.step(Millis(0)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(r.result().error, ResolveError::kInvalidName);
  r.start(std::string(300, 'a').c_str(), 443, Millis(0));
  EXPECT_EQ(r.result().error, ResolveError::kInvalidName);
  EXPECT_EQ(script_.calls, 0);

  SystemResolver bare;
  bare.start("dual.test", 443, Millis(0));
  EXPECT_EQ(bare.step(Millis(0)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(bare.result().error, ResolveError::kInternal);
  EXPECT_NE(std::string(bare.result().message).find("init() was not called"), std::string::npos);

  SystemResolverOptions bad;
  bad.workers = 0;
  EXPECT_EQ(bare.init(bad), Status::kInvalidArgument);
  EXPECT_NE(std::string(bare.message()), "");
}

TEST_F(SystemResolverTest, TheLookupAsksOnTheGivenNetwork) {
  SystemResolver& r = make();
  r.set_network(42);
  r.start("dual.test", 443, Millis(0));
  ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(script_.network, 42u);
  NetworkBinding binding;
  binding.network = 7;
  r.set_binding(&binding);
  r.start("dual.test", 443, Millis(0));
  ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
  EXPECT_EQ(script_.network, 7u);
}

TEST_F(SystemResolverTest, StartStepAndCancelMakeNoHeapCallOnTheLoopsThread) {
  if (!testing::heap_trap_available()) GTEST_SKIP() << "no heap trap in this build";
  SystemResolver& r = make(2);
  r.start("dual.test", 443, Millis(0));  // Warm-up outside the trap.
  ASSERT_EQ(run(r, Millis(0)).kind, ResolverNext::Kind::kDone);
  long calls = 0;
  {
    testing::HeapTrap trap;
    for (int i = 0; i < 20; ++i) {
      r.start("dual.test", 443, Millis(0));
      if (run(r, Millis(0)).kind != ResolverNext::Kind::kDone) break;
      if (r.result().count != 3) break;
      r.start("other.test", 443, Millis(0));
      r.cancel();
    }
    calls = trap.calls();
  }
  // The scripted lookup allocates nothing either, so any call is the resolver's.
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
}

// The real getaddrinfo (the hosts file answers "localhost": no DNS traffic).
TEST(SystemResolverReal, LooksUpLocalhostThroughTheSystem) {
  SystemResolver r;
  ASSERT_EQ(r.init(), Status::kOk) << r.message();
  r.start("localhost", 8080, Millis(0));
  ResolverNext next;
  for (int i = 0; i < 200; ++i) {
    next = r.step(Millis(0));
    if (next.kind == ResolverNext::Kind::kDone) break;
    pollfd p{next.fd, POLLIN, 0};
    poll(&p, 1, 50);
  }
  ASSERT_EQ(next.kind, ResolverNext::Kind::kDone);
  ASSERT_EQ(r.result().error, ResolveError::kNone) << r.result().message;
  bool loopback = false;
  for (std::size_t i = 0; i < r.result().count; ++i) {
    const std::string t = text(r.result().addresses[i]);
    loopback = loopback || t == "127.0.0.1:8080" || t == "[::1]:8080";
  }
  EXPECT_TRUE(loopback) << ::testing::PrintToString(texts(r.result()));
}

}  // namespace
}  // namespace stepback::https
