// The TCP transport against real sockets on loopback (127.0.0.1 and ::1) with listeners the
// tests create. Every wait is a bounded poll() loop, so a broken transport fails a test
// instead of hanging it. The transport is given addresses; it never resolves a name.
#include "stepback/https/tcp/tcp_transport.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "stepback/core/millis.hpp"
#include "stepback/platform/clock.hpp"

// Apple lacks these; the test's own sockets do without.
#ifndef SOCK_CLOEXEC
#define SOCK_CLOEXEC 0
#endif
#ifndef SOCK_NONBLOCK
#define SOCK_NONBLOCK 0
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

namespace stepback::testing {
namespace {

using https::IoInterest;
using https::SocketAddress;
using https::Status;
using https::TcpTransport;

// The most wall time any one loop below may take before the test fails.
inline constexpr Millis kWallBudget{5000};

// An owned descriptor, closed on destruction.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  OwnedFd& operator=(OwnedFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  ~OwnedFd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A loopback socket bound to `port` (0: any) on 127.0.0.1 or ::1, listening with `backlog`
// unless backlog < 0 (bound only: connections to it are refused). fd -1 on failure.
struct LoopbackSocket {
  OwnedFd fd;
  std::uint16_t port = 0;
};

inline LoopbackSocket loopback_socket(int family, int backlog, std::uint16_t port = 0) {
  LoopbackSocket s;
  OwnedFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return s;
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::memcpy(&ss, &sin, sizeof sin);
    len = sizeof sin;
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(port);
    sin6.sin6_addr = in6addr_loopback;
    std::memcpy(&ss, &sin6, sizeof sin6);
    len = sizeof sin6;
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return s;
  if (backlog >= 0 && ::listen(fd.get(), backlog) != 0) return s;
  len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return s;
  if (family == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, &ss, sizeof sin);
    s.port = ntohs(sin.sin_port);
  } else {
    sockaddr_in6 sin6{};
    std::memcpy(&sin6, &ss, sizeof sin6);
    s.port = ntohs(sin6.sin6_port);
  }
  s.fd = std::move(fd);
  return s;
}

// Whether ::1 can be bound here (false on hosts with IPv6 disabled).
inline bool has_ipv6_loopback() { return loopback_socket(AF_INET6, 1).fd.get() >= 0; }

// Waits up to `ms` for `events` (POLLIN, POLLOUT) on `fd`; whether anything happened.
inline bool wait_for(int fd, int events, int ms) {
  pollfd p{};
  p.fd = fd;
  p.events = static_cast<decltype(p.events)>(events);
  return ::poll(&p, 1, ms) > 0;
}

// Accepts one connection on `listener` within the wall budget; -1 if none came.
inline OwnedFd accept_within(int listener) {
  if (!wait_for(listener, POLLIN, static_cast<int>(kWallBudget.count()))) return OwnedFd();
  return OwnedFd(::accept(listener, nullptr, nullptr));
}

// What to poll t.fd() for while it connects: POLLOUT on a socket, POLLIN on the epoll set
// that stands for several racing connects.
inline int connect_events(const https::TcpTransport& t) {
  return t.wants() == https::IoInterest::kRead ? POLLIN : POLLOUT;
}

// Steps `t` on the real monotonic clock, polling its fd, until it stops waiting or the
// wall budget runs out (then kWouldBlock).
inline https::Status connect_within(https::TcpTransport& t) {
  const Millis give_up = platform::monotonic_now() + kWallBudget;
  for (;;) {
    const Millis now = platform::monotonic_now();
    const https::Status s = t.step_connect(now);
    if (s != https::Status::kWouldBlock || now >= give_up) return s;
    const Millis until = min(t.deadline(), give_up);
    wait_for(t.fd(), connect_events(t), static_cast<int>((until - now).count()) + 1);
  }
}

// As connect_within(), but every step sees the same `now`: only readiness can end it.
inline https::Status connect_frozen(https::TcpTransport& t, Millis now) {
  const Millis give_up = platform::monotonic_now() + kWallBudget;
  for (;;) {
    const https::Status s = t.step_connect(now);
    if (s != https::Status::kWouldBlock || platform::monotonic_now() >= give_up) return s;
    wait_for(t.fd(), connect_events(t), 50);
  }
}

// Sends all of `bytes` through `t` within the wall budget; false if it could not.
inline bool send_all(https::TcpTransport& t, const std::string& bytes) {
  const Millis give_up = platform::monotonic_now() + kWallBudget;
  std::size_t done = 0;
  while (done < bytes.size() && platform::monotonic_now() < give_up) {
    std::size_t n = 0;
    const https::Status s = t.send(
        {reinterpret_cast<const std::uint8_t*>(bytes.data()) + done, bytes.size() - done}, &n);
    if (s == https::Status::kWouldBlock) {
      wait_for(t.fd(), POLLOUT, 50);
    } else if (s != https::Status::kOk) {
      return false;
    }
    done += n;
  }
  return done == bytes.size();
}

// Receives from `t` until `count` bytes came, a non-kOk status other than kWouldBlock, or
// the wall budget ran out; *last is the last status seen.
inline std::string recv_some(https::TcpTransport& t, std::size_t count, https::Status* last) {
  const Millis give_up = platform::monotonic_now() + kWallBudget;
  std::string got;
  std::uint8_t buf[4096];
  *last = https::Status::kWouldBlock;
  while (got.size() < count && platform::monotonic_now() < give_up) {
    std::size_t n = 0;
    *last = t.recv({buf, sizeof buf}, &n);
    got.append(reinterpret_cast<const char*>(buf), n);
    if (*last == https::Status::kWouldBlock) {
      wait_for(t.fd(), POLLIN, 50);
    } else if (*last != https::Status::kOk) {
      break;
    }
  }
  return got;
}

// Reads up to `count` bytes from a raw socket within the wall budget.
inline std::string read_raw(int fd, std::size_t count) {
  const Millis give_up = platform::monotonic_now() + kWallBudget;
  std::string got;
  char buf[4096];
  while (got.size() < count && platform::monotonic_now() < give_up) {
    if (!wait_for(fd, POLLIN, 50)) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

// Resets the connection on `fd` (SO_LINGER 0, then close): the peer sees RST.
inline void reset_and_close(OwnedFd& fd) {
  linger l{};
  l.l_onoff = 1;
  l.l_linger = 0;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
  fd.reset();
}

// A numeric SocketAddress for `host` and `port`; empty (size 0) if `host` does not parse.
inline https::SocketAddress numeric(const char* host, std::uint16_t port) {
  https::SocketAddress a;
  if (https::parse_numeric_address(host, port, &a) != https::Status::kOk) a.size = 0;
  return a;
}

// Starts `t` towards the one numeric address `host`:`port`.
Status start_at(TcpTransport& t, const char* host, std::uint16_t port, Millis now,
                Millis connect_timeout) {
  const SocketAddress a = numeric(host, port);
  return t.start(&a, 1, now, connect_timeout);
}

// A connected pair: `client` is the transport under test, `server` the accepted socket.
struct Pair {
  TcpTransport client;
  OwnedFd server;
};

// Connects `p.client` to a fresh listener on `host`; false (with a test failure) if it fails.
bool connect_pair(Pair& p, const char* host, int family) {
  LoopbackSocket l = loopback_socket(family, 4);
  if (l.fd.get() < 0) {
    ADD_FAILURE() << "no listener";
    return false;
  }
  const Status started = start_at(p.client, host, l.port, platform::monotonic_now(), Millis(2000));
  EXPECT_EQ(started, Status::kOk) << https::to_string(started);
  const Status s = connect_within(p.client);
  EXPECT_EQ(s, Status::kOk) << https::to_string(s);
  p.server = accept_within(l.fd.get());
  EXPECT_GE(p.server.get(), 0);
  return s == Status::kOk && p.server.get() >= 0;
}

void expect_echo(Pair& p) {
  const std::string ping = "ping over tcp";
  ASSERT_TRUE(send_all(p.client, ping));
  const std::string at_server = read_raw(p.server.get(), ping.size());
  ASSERT_EQ(at_server, ping);
  ASSERT_EQ(::send(p.server.get(), at_server.data(), at_server.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(at_server.size()));
  Status last = Status::kError;
  EXPECT_EQ(recv_some(p.client, ping.size(), &last), ping);
  EXPECT_EQ(last, Status::kOk) << https::to_string(last);
}

// Fills the accept queue of a backlog-0 listener so that a further connect hangs in
// SYN_SENT (Linux drops SYNs while the queue is full). `filler` keeps the queue full.
struct HangingListener {
  LoopbackSocket listener;
  OwnedFd filler;
};

bool make_hanging_listener(HangingListener* h) {
  h->listener = loopback_socket(AF_INET, 0);
  if (h->listener.fd.get() < 0) return false;
  h->filler = OwnedFd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  const SocketAddress a = numeric("127.0.0.1", h->listener.port);
  if (::connect(h->filler.get(), reinterpret_cast<const sockaddr*>(a.bytes), a.size) != 0 &&
      errno != EINPROGRESS) {
    return false;
  }
  return wait_for(h->filler.get(), POLLOUT, 2000);
}

// Whether a connect to `port` right now stays pending for 200 ms (the trick above works).
bool connect_hangs(std::uint16_t port) {
  TcpTransport probe;
  if (start_at(probe, "127.0.0.1", port, Millis(0), Millis::max()) != Status::kOk) return false;
  if (probe.step_connect(Millis(0)) != Status::kWouldBlock) return false;
  wait_for(probe.fd(), POLLOUT, 200);
  return probe.step_connect(Millis(0)) == Status::kWouldBlock;
}

TEST(TcpTransport, EchoRoundTripOverIPv4) {
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  EXPECT_TRUE(p.client.connected());
  EXPECT_TRUE(p.client.ever_connected());
  EXPECT_EQ(p.client.deadline(), Millis::max());
  EXPECT_EQ(p.client.step_connect(platform::monotonic_now()), Status::kOk);  // Stays connected.
  expect_echo(p);
}

TEST(TcpTransport, EchoRoundTripOverIPv6) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  Pair p;
  ASSERT_TRUE(connect_pair(p, "::1", AF_INET6));
  expect_echo(p);
}

TEST(TcpTransport, BracketedIPv6LiteralConnects) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  Pair p;
  ASSERT_TRUE(connect_pair(p, "[::1]", AF_INET6));
  expect_echo(p);
}

TEST(TcpTransport, RecvWithNothingToReadWouldBlockAndWantsRead) {
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  std::uint8_t buf[16];
  std::size_t n = 99;
  EXPECT_EQ(p.client.recv({buf, sizeof buf}, &n), Status::kWouldBlock);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(p.client.wants(), IoInterest::kRead);
}

TEST(TcpTransport, SocketIsNoDelayNonBlockingAndCloseOnExec) {
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  int nodelay = 0;
  socklen_t len = sizeof nodelay;
  ASSERT_EQ(::getsockopt(p.client.fd(), IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
  EXPECT_NE(nodelay, 0);
  EXPECT_NE(::fcntl(p.client.fd(), F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(p.client.fd(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(TcpTransport, ConnectingWantsWriteUntilTheDeadline) {
  HangingListener h;
  ASSERT_TRUE(make_hanging_listener(&h));
  if (!connect_hangs(h.listener.port)) GTEST_SKIP() << "this kernel does not hang the connect";
  TcpTransport t;
  ASSERT_EQ(start_at(t, "127.0.0.1", h.listener.port, Millis(1000), Millis(100)), Status::kOk);
  EXPECT_EQ(t.wants(), IoInterest::kWrite);
  EXPECT_GE(t.fd(), 0);
  EXPECT_EQ(t.deadline(), Millis(1100));
  EXPECT_FALSE(t.connected());
}

TEST(TcpTransport, RefusedPortIsConnectFailed) {
  // Bound but not listening: the port stays ours, and connects to it are refused.
  LoopbackSocket closed = loopback_socket(AF_INET, -1);
  ASSERT_GE(closed.fd.get(), 0);
  TcpTransport t;
  const Status started =
      start_at(t, "127.0.0.1", closed.port, platform::monotonic_now(), Millis(2000));
  EXPECT_TRUE(started == Status::kOk || started == Status::kConnectFailed)
      << https::to_string(started);
  EXPECT_EQ(connect_within(t), Status::kConnectFailed);
  EXPECT_EQ(t.last_error(), ECONNREFUSED);
  EXPECT_FALSE(t.ever_connected());
  EXPECT_EQ(t.fd(), -1);
  EXPECT_EQ(t.wants(), IoInterest::kNone);
  EXPECT_EQ(t.step_connect(platform::monotonic_now()), Status::kConnectFailed);  // Sticky.
}

// NetworkBinding (binding.hpp): the device and the app's hook apply to each socket before it
// connects.
struct HookLog {
  int calls = 0;
  int last_fd = -1;
  bool allow = true;
};

bool record_socket(int fd, void* context) {
  auto* log = static_cast<HookLog*>(context);
  ++log->calls;
  log->last_fd = fd;
  return log->allow;
}

#if defined(__linux__)
TEST(TcpTransport, BoundToTheLoopbackDeviceItConnectsAndTheHookSeesTheSocket) {
  LoopbackSocket l = loopback_socket(AF_INET, 4);
  ASSERT_GE(l.fd.get(), 0);
  HookLog log;
  https::NetworkBinding binding;
  binding.interface = "lo";
  binding.configure = &record_socket;
  binding.context = &log;
  TcpTransport t;
  t.set_binding(&binding);
  ASSERT_EQ(start_at(t, "127.0.0.1", l.port, platform::monotonic_now(), Millis(2000)), Status::kOk);
  ASSERT_EQ(connect_within(t), Status::kOk);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.last_fd, t.fd());
  OwnedFd server = accept_within(l.fd.get());
  EXPECT_GE(server.get(), 0);
}

TEST(TcpTransport, AMissingDeviceFailsTheConnectNamingIt) {
  LoopbackSocket l = loopback_socket(AF_INET, 4);
  ASSERT_GE(l.fd.get(), 0);
  HookLog log;
  https::NetworkBinding binding;
  binding.interface = "sbnosuch0";
  binding.configure = &record_socket;
  binding.context = &log;
  TcpTransport t;
  t.set_binding(&binding);
  const Status started = start_at(t, "127.0.0.1", l.port, platform::monotonic_now(), Millis(2000));
  EXPECT_EQ(started, Status::kConnectFailed) << https::to_string(started);
  EXPECT_EQ(t.last_error(), ENODEV);
  EXPECT_EQ(log.calls, 0);  // The device failed first: the hook never saw the socket.
  char why[256];
  ASSERT_EQ(t.describe_failure(why, sizeof why), 1U);
  EXPECT_NE(std::strstr(why, "No such device"), nullptr) << why;
  EXPECT_NE(std::strstr(why, "over device 'sbnosuch0'"), nullptr) << why;
}
#endif

TEST(TcpTransport, AHookThatRefusesTheSocketFailsItsConnectAsEPERM) {
  LoopbackSocket l = loopback_socket(AF_INET, 4);
  ASSERT_GE(l.fd.get(), 0);
  HookLog log;
  log.allow = false;
  https::NetworkBinding binding;
  binding.configure = &record_socket;
  binding.context = &log;
  TcpTransport t;
  t.set_binding(&binding);
  const Status started = start_at(t, "127.0.0.1", l.port, platform::monotonic_now(), Millis(2000));
  EXPECT_EQ(started, Status::kConnectFailed) << https::to_string(started);
  EXPECT_EQ(t.last_error(), EPERM);
  EXPECT_EQ(log.calls, 1);
  t.set_binding(nullptr);  // Unbound again: the next connect goes.
  ASSERT_EQ(start_at(t, "127.0.0.1", l.port, platform::monotonic_now(), Millis(2000)), Status::kOk);
  EXPECT_EQ(connect_within(t), Status::kOk);
  EXPECT_EQ(log.calls, 1);
}

TEST(TcpTransport, ConnectTimeoutOnAFakeClock) {
  HangingListener h;
  ASSERT_TRUE(make_hanging_listener(&h));
  if (!connect_hangs(h.listener.port)) GTEST_SKIP() << "this kernel does not hang the connect";
  TcpTransport t;
  ASSERT_EQ(start_at(t, "127.0.0.1", h.listener.port, Millis(1000), Millis(100)), Status::kOk);
  EXPECT_EQ(t.step_connect(Millis(1000)), Status::kWouldBlock);
  EXPECT_EQ(t.step_connect(Millis(1099)), Status::kWouldBlock);
  EXPECT_EQ(t.deadline(), Millis(1100));
  EXPECT_EQ(t.step_connect(Millis(1100)), Status::kConnectTimeout);
  EXPECT_EQ(t.fd(), -1);
  EXPECT_FALSE(t.ever_connected());
  EXPECT_EQ(t.deadline(), Millis::max());
  EXPECT_EQ(t.step_connect(Millis(5000)), Status::kConnectTimeout);
}

TEST(TcpTransport, ConnectTimeoutInRealTime) {
  HangingListener h;
  ASSERT_TRUE(make_hanging_listener(&h));
  if (!connect_hangs(h.listener.port)) GTEST_SKIP() << "this kernel does not hang the connect";
  TcpTransport t;
  const Millis begin = platform::monotonic_now();
  ASSERT_EQ(start_at(t, "127.0.0.1", h.listener.port, begin, Millis(50)), Status::kOk);
  EXPECT_EQ(connect_within(t), Status::kConnectTimeout);
  const Millis took = platform::monotonic_now() - begin;
  EXPECT_GE(took, Millis(50));
  EXPECT_LT(took, Millis(4000));
}

TEST(TcpTransport, ARefusedAddressIsLeftAtOnceForTheNext) {
  LoopbackSocket closed = loopback_socket(AF_INET, -1);
  LoopbackSocket open = loopback_socket(AF_INET, 4);
  ASSERT_GE(closed.fd.get(), 0);
  ASSERT_GE(open.fd.get(), 0);
  const SocketAddress addresses[] = {numeric("127.0.0.1", closed.port),
                                     numeric("127.0.0.1", open.port)};
  TcpTransport t;
  // The clock never moves and the timeout is an hour: only moving on at once can connect.
  const Status started = t.start(addresses, 2, Millis(1000), Millis(3600000));
  ASSERT_EQ(started, Status::kOk) << https::to_string(started);
  EXPECT_EQ(connect_frozen(t, Millis(1000)), Status::kOk);
  EXPECT_TRUE(t.ever_connected());
  EXPECT_GE(accept_within(open.fd.get()).get(), 0);
}

TEST(TcpTransport, IPv6RefusedThenIPv4Connects) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  LoopbackSocket open = loopback_socket(AF_INET, 4);
  ASSERT_GE(open.fd.get(), 0);
  LoopbackSocket closed6 = loopback_socket(AF_INET6, -1, open.port);
  if (closed6.fd.get() < 0) closed6 = loopback_socket(AF_INET6, -1);
  ASSERT_GE(closed6.fd.get(), 0);
  const SocketAddress addresses[] = {numeric("::1", closed6.port), numeric("127.0.0.1", open.port)};
  TcpTransport t;
  ASSERT_EQ(t.start(addresses, 2, Millis(1000), Millis(3600000)), Status::kOk);
  EXPECT_EQ(connect_frozen(t, Millis(1000)), Status::kOk);
}

// Regression: the list was cut to kMaxAddresses in the given order before the families
// were interleaved, so a name with eight IPv6 addresses ahead of its IPv4 one never had
// IPv4 tried: every IPv6 connect failed at once and the attempt failed with them.
TEST(TcpTransport, ALongerListThanTheRaceStillTriesTheOtherFamily) {
  LoopbackSocket open = loopback_socket(AF_INET, 4);
  ASSERT_GE(open.fd.get(), 0);
  // Refused where there is an IPv6 loopback (bound, not listening), unreachable elsewhere:
  // either way an immediate failure.
  LoopbackSocket closed6 = loopback_socket(AF_INET6, -1, open.port);
  const std::uint16_t port6 = closed6.fd.get() >= 0 ? closed6.port : open.port;
  std::vector<SocketAddress> addresses(TcpTransport::kMaxAddresses, numeric("::1", port6));
  addresses.push_back(numeric("127.0.0.1", open.port));
  TcpTransport t;
  const Status started = t.start(addresses.data(), addresses.size(), Millis(1000), Millis(3600000));
  ASSERT_EQ(started, Status::kOk) << https::to_string(started);
  EXPECT_EQ(connect_frozen(t, Millis(1000)), Status::kOk);
  EXPECT_GE(accept_within(open.fd.get()).get(), 0);
}

TEST(TcpTransport, EveryAddressRefusedReportsConnectFailed) {
  LoopbackSocket a = loopback_socket(AF_INET, -1);
  LoopbackSocket b = loopback_socket(AF_INET, -1);
  const SocketAddress addresses[] = {numeric("127.0.0.1", a.port), numeric("127.0.0.1", b.port)};
  TcpTransport t;
  const Status started = t.start(addresses, 2, Millis(1000), Millis(3600000));
  EXPECT_TRUE(started == Status::kOk || started == Status::kConnectFailed);
  EXPECT_EQ(connect_frozen(t, Millis(1000)), Status::kConnectFailed);
}

TEST(TcpTransport, AHangingAddressCostsTheAttemptDelayNotTheTimeout) {
  HangingListener h;
  ASSERT_TRUE(make_hanging_listener(&h));
  if (!connect_hangs(h.listener.port)) GTEST_SKIP() << "this kernel does not hang the connect";
  LoopbackSocket open = loopback_socket(AF_INET, 4);
  const SocketAddress addresses[] = {numeric("127.0.0.1", h.listener.port),
                                     numeric("127.0.0.1", open.port)};
  TcpTransport t;
  ASSERT_EQ(t.start(addresses, 2, Millis(1000), Millis(3600000)), Status::kOk);
  // The first connect runs alone for the attempt delay; the loop is woken when it ends.
  EXPECT_EQ(t.attempts_in_flight(), 1u);
  EXPECT_EQ(t.wants(), IoInterest::kWrite);
  EXPECT_EQ(t.deadline(), Millis(1000) + TcpTransport::kConnectionAttemptDelay);
  EXPECT_EQ(t.step_connect(Millis(1249)), Status::kWouldBlock);
  EXPECT_EQ(t.attempts_in_flight(), 1u);
  // Then the second starts beside it and wins; the hanging one is closed.
  const Status s = t.step_connect(Millis(1250));
  ASSERT_TRUE(s == Status::kOk || s == Status::kWouldBlock) << https::to_string(s);
  if (s == Status::kWouldBlock) {
    EXPECT_EQ(t.attempts_in_flight(), 2u);
#if defined(__linux__)
    // Both sockets are watched through one epoll descriptor, readable when either is ready.
    EXPECT_EQ(t.wants(), IoInterest::kRead);
#endif
    EXPECT_LE(t.deadline(), Millis(3601000));
  }
  EXPECT_EQ(connect_frozen(t, Millis(1250)), Status::kOk);
  EXPECT_EQ(t.attempts_in_flight(), 0u);
  EXPECT_GE(accept_within(open.fd.get()).get(), 0);
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  ASSERT_EQ(::getpeername(t.fd(), reinterpret_cast<sockaddr*>(&peer), &len), 0);
  EXPECT_EQ(ntohs(peer.sin_port), open.port);
}

TEST(TcpTransport, WhenTheNewestAttemptFailsTheNextStartsAtOnce) {
  HangingListener h;
  ASSERT_TRUE(make_hanging_listener(&h));
  if (!connect_hangs(h.listener.port)) GTEST_SKIP() << "this kernel does not hang the connect";
  LoopbackSocket closed = loopback_socket(AF_INET, -1);
  LoopbackSocket open = loopback_socket(AF_INET, 4);
  const SocketAddress addresses[] = {numeric("127.0.0.1", h.listener.port),
                                     numeric("127.0.0.1", closed.port),
                                     numeric("127.0.0.1", open.port)};
  TcpTransport t;
  ASSERT_EQ(t.start(addresses, 3, Millis(1000), Millis(3600000)), Status::kOk);
  // At 1250 the second starts beside the hanging first and is refused; the third must not
  // wait until 1500 for it. The clock stays at 1250: only starting at once can connect.
  EXPECT_EQ(connect_frozen(t, Millis(1250)), Status::kOk);
  EXPECT_GE(accept_within(open.fd.get()).get(), 0);
}

TEST(TcpTransport, TheConnectTimeoutBoundsTheWholeRace) {
  HangingListener h;
  ASSERT_TRUE(make_hanging_listener(&h));
  if (!connect_hangs(h.listener.port)) GTEST_SKIP() << "this kernel does not hang the connect";
  const SocketAddress addresses[] = {numeric("127.0.0.1", h.listener.port),
                                     numeric("127.0.0.1", h.listener.port)};
  TcpTransport t;
  ASSERT_EQ(t.start(addresses, 2, Millis(1000), Millis(600)), Status::kOk);
  EXPECT_EQ(t.step_connect(Millis(1250)), Status::kWouldBlock);
  EXPECT_EQ(t.attempts_in_flight(), 2u);
  EXPECT_EQ(t.deadline(), Millis(1600));  // No further attempt: the timeout is next.
  EXPECT_EQ(t.step_connect(Millis(1599)), Status::kWouldBlock);
  EXPECT_EQ(t.step_connect(Millis(1600)), Status::kConnectTimeout);
  EXPECT_EQ(t.fd(), -1);
  char words[256];
  EXPECT_EQ(t.describe_failure(words, sizeof words), 2u);
  const std::string expected = "127.0.0.1:" + std::to_string(h.listener.port) + " (no answer)";
  EXPECT_EQ(std::string(words), expected + ", " + expected);
}

TEST(TcpTransport, IPv6GoesFirstAndTheFamiliesAlternate) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  // Every address is refused, so the race tries them all at once, in its order.
  LoopbackSocket a = loopback_socket(AF_INET, -1);
  LoopbackSocket b = loopback_socket(AF_INET, -1);
  LoopbackSocket c = loopback_socket(AF_INET6, -1);
  LoopbackSocket d = loopback_socket(AF_INET6, -1);
  const SocketAddress addresses[] = {numeric("127.0.0.1", a.port), numeric("127.0.0.1", b.port),
                                     numeric("::1", c.port), numeric("::1", d.port)};
  TcpTransport t;
  const Status started = t.start(addresses, 4, Millis(1000), Millis(3600000));
  EXPECT_TRUE(started == Status::kOk || started == Status::kConnectFailed);
  EXPECT_EQ(connect_frozen(t, Millis(1000)), Status::kConnectFailed);
  char words[512];
  EXPECT_EQ(t.describe_failure(words, sizeof words), 4u);
  const auto refused = [](const char* host, std::uint16_t port, bool v6) {
    return std::string(v6 ? "[" : "") + host + (v6 ? "]" : "") + ":" + std::to_string(port) + " (" +
           std::strerror(ECONNREFUSED) + ")";
  };
  EXPECT_EQ(std::string(words),
            refused("::1", c.port, true) + ", " + refused("127.0.0.1", a.port, false) + ", " +
                refused("::1", d.port, true) + ", " + refused("127.0.0.1", b.port, false));
}

TEST(TcpTransport, DualStackListenersTheIPv6OneWins) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  LoopbackSocket v4 = loopback_socket(AF_INET, 4);
  ASSERT_GE(v4.fd.get(), 0);
  LoopbackSocket v6 = loopback_socket(AF_INET6, 4, v4.port);
  if (v6.fd.get() < 0) GTEST_SKIP() << "port " << v4.port << " is taken on ::1";
  const SocketAddress addresses[] = {numeric("127.0.0.1", v4.port), numeric("::1", v6.port)};
  TcpTransport t;
  ASSERT_EQ(t.start(addresses, 2, Millis(1000), Millis(3600000)), Status::kOk);
  EXPECT_EQ(connect_frozen(t, Millis(1000)), Status::kOk);
  EXPECT_GE(accept_within(v6.fd.get()).get(), 0);
  // The IPv4 address was never tried: no connection waits on its listener.
  EXPECT_FALSE(wait_for(v4.fd.get(), POLLIN, 0));
}

TEST(TcpTransport, PeerResetMidStreamIsReset) {
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  ASSERT_EQ(::send(p.server.get(), "partial", 7, MSG_NOSIGNAL), 7);
  Status last = Status::kError;
  EXPECT_EQ(recv_some(p.client, 7, &last), "partial");
  reset_and_close(p.server);
  recv_some(p.client, 1, &last);
  EXPECT_EQ(last, Status::kReset) << https::to_string(last);
  EXPECT_EQ(p.client.last_error(), ECONNRESET);
  EXPECT_TRUE(p.client.ever_connected());
}

TEST(TcpTransport, OrderlyCloseIsClosed) {
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  ASSERT_EQ(::send(p.server.get(), "bye", 3, MSG_NOSIGNAL), 3);
  p.server.reset();
  Status last = Status::kError;
  EXPECT_EQ(recv_some(p.client, 100, &last), "bye");
  EXPECT_EQ(last, Status::kClosed) << https::to_string(last);
}

// Sends until the transport reports a failure (bounded); the status it reported.
Status send_until_failure(TcpTransport& t) {
  const Millis give_up = platform::monotonic_now() + kWallBudget;
  const std::uint8_t data[1024] = {};
  while (platform::monotonic_now() < give_up) {
    std::size_t n = 0;
    const Status s = t.send({data, sizeof data}, &n);
    if (s != Status::kOk && s != Status::kWouldBlock) return s;
    wait_for(t.fd(), POLLOUT, 10);
  }
  return Status::kOk;
}

TEST(TcpTransport, SendToAClosedPeerIsResetWithoutSigpipe) {
  // With the default disposition a SIGPIPE would kill the test binary.
  struct sigaction old_action {};
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ASSERT_EQ(::sigaction(SIGPIPE, &dfl, &old_action), 0);
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  p.server.reset();  // Orderly close: the next sends meet an RST, then EPIPE.
  EXPECT_EQ(send_until_failure(p.client), Status::kReset);
  Pair q;
  ASSERT_TRUE(connect_pair(q, "127.0.0.1", AF_INET));
  reset_and_close(q.server);
  EXPECT_EQ(send_until_failure(q.client), Status::kReset);
  ::sigaction(SIGPIPE, &old_action, nullptr);
}

TEST(TcpTransport, CloseIsIdempotentAndEndsTheConnection) {
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  p.client.close();
  p.client.close();
  EXPECT_EQ(p.client.fd(), -1);
  EXPECT_FALSE(p.client.connected());
  EXPECT_TRUE(p.client.ever_connected());
  EXPECT_EQ(p.client.step_connect(platform::monotonic_now()), Status::kError);
  std::size_t n = 1;
  const std::uint8_t byte = 0;
  EXPECT_EQ(p.client.send({&byte, 1}, &n), Status::kError);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(read_raw(p.server.get(), 1), "");  // The server sees end of stream.
}

TEST(TcpTransport, UnstartedTransportRefusesToWork) {
  TcpTransport t;
  EXPECT_EQ(t.fd(), -1);
  EXPECT_EQ(t.wants(), IoInterest::kNone);
  EXPECT_EQ(t.deadline(), Millis::max());
  EXPECT_EQ(t.step_connect(Millis(0)), Status::kError);
  std::uint8_t buf[4];
  std::size_t n = 1;
  EXPECT_EQ(t.recv({buf, sizeof buf}, &n), Status::kError);
  EXPECT_EQ(n, 0u);
  t.close();
}

TEST(TcpTransport, StartingAgainReplacesTheConnection) {
  Pair p;
  ASSERT_TRUE(connect_pair(p, "127.0.0.1", AF_INET));
  LoopbackSocket closed = loopback_socket(AF_INET, -1);
  ASSERT_GE(closed.fd.get(), 0);
  EXPECT_NE(start_at(p.client, "127.0.0.1", closed.port, Millis(0), Millis(1000)), Status::kError);
  EXPECT_FALSE(p.client.ever_connected());
  EXPECT_EQ(connect_frozen(p.client, Millis(0)), Status::kConnectFailed);
  EXPECT_EQ(read_raw(p.server.get(), 1), "");  // The old connection was closed.
}

TEST(TcpTransport, InvalidArguments) {
  TcpTransport t;
  EXPECT_EQ(t.step_connect(Millis(0)), Status::kError);  // Never started.
  EXPECT_EQ(t.start(static_cast<const SocketAddress*>(nullptr), 1, Millis(0), Millis(10)),
            Status::kInvalidArgument);
  EXPECT_EQ(t.step_connect(Millis(0)), Status::kInvalidArgument);  // What start() said.
  const SocketAddress empty;
  EXPECT_EQ(t.start(&empty, 1, Millis(0), Millis(10)), Status::kInvalidArgument);
  const SocketAddress good = numeric("127.0.0.1", 80);
  EXPECT_EQ(t.start(&good, 0, Millis(0), Millis(10)), Status::kInvalidArgument);
}

TEST(ParseNumericAddress, ParsesBothFamiliesWithThePort) {
  SocketAddress a;
  ASSERT_EQ(https::parse_numeric_address("127.0.0.1", 8443, &a), Status::kOk);
  sockaddr_in sin{};
  ASSERT_EQ(a.size, sizeof sin);
  std::memcpy(&sin, a.bytes, sizeof sin);
  EXPECT_EQ(sin.sin_family, AF_INET);
  EXPECT_EQ(ntohs(sin.sin_port), 8443);
  EXPECT_EQ(ntohl(sin.sin_addr.s_addr), INADDR_LOOPBACK);

  ASSERT_EQ(https::parse_numeric_address("[::1]", 443, &a), Status::kOk);
  sockaddr_in6 sin6{};
  ASSERT_EQ(a.size, sizeof sin6);
  std::memcpy(&sin6, a.bytes, sizeof sin6);
  EXPECT_EQ(sin6.sin6_family, AF_INET6);
  EXPECT_EQ(ntohs(sin6.sin6_port), 443);
  EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&sin6.sin6_addr));
}

TEST(ParseNumericAddress, RejectsNamesAndGarbage) {
  SocketAddress a;
  EXPECT_EQ(https::parse_numeric_address("localhost", 80, &a), Status::kInvalidArgument);
  EXPECT_EQ(https::parse_numeric_address("example.com", 80, &a), Status::kInvalidArgument);
  EXPECT_EQ(https::parse_numeric_address("", 80, &a), Status::kInvalidArgument);
  EXPECT_EQ(https::parse_numeric_address(nullptr, 80, &a), Status::kInvalidArgument);
  EXPECT_EQ(https::parse_numeric_address("256.0.0.1", 80, &a), Status::kInvalidArgument);
  EXPECT_EQ(https::parse_numeric_address("::1", 80, nullptr), Status::kInvalidArgument);
  const std::string long_host(100, '1');
  EXPECT_EQ(https::parse_numeric_address(long_host.c_str(), 80, &a), Status::kInvalidArgument);
  for (const char* host :
       {"256.1.1.1", "1.2.3.4.5", "1..2", "[::1", "::g", "[]", "1:2:3:4:5:6:7:8:9", "[127.0.0.1"}) {
    EXPECT_EQ(https::parse_numeric_address(host, 443, &a), Status::kInvalidArgument) << host;
  }
}

}  // namespace
}  // namespace stepback::testing
