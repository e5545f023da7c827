// TcpTransport on POSIX sockets: Linux, Android and Apple.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__ANDROID__) && __ANDROID_API__ >= 23
#include <android/multinetwork.h>
#endif

#if defined(__linux__)
#include <sys/epoll.h>
#define STEPBACK_TCP_EPOLL 1
#else
#define STEPBACK_TCP_EPOLL 0
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "socket_length.hpp"
#include "stepback/https/tcp/binding.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"
#include "tcp/no_path.hpp"

namespace stepback::https {
namespace {

static_assert(sizeof(sockaddr_in6) <= sizeof(SocketAddress::bytes) &&
                  sizeof(sockaddr_in) <= sizeof(SocketAddress::bytes),
              "SocketAddress cannot hold a sockaddr_in6 or a sockaddr_in");
static_assert(alignof(sockaddr_in6) <= alignof(SocketAddress) &&
                  alignof(sockaddr_in) <= alignof(SocketAddress),
              "SocketAddress is less aligned than sockaddr_in6 or sockaddr_in");

const sockaddr* as_sockaddr(const SocketAddress& a) {
  return reinterpret_cast<const sockaddr*>(a.bytes);
}

// The status of a failed connect() or SO_ERROR value.
Status connect_status(int error) {
  switch (error) {
    case ETIMEDOUT:
      return Status::kConnectTimeout;
    case ECONNREFUSED:
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
    case ECONNRESET:
    case ECONNABORTED:
    case EADDRNOTAVAIL:
    case EAFNOSUPPORT:
    case EPROTONOSUPPORT:
    case EACCES:
    case EPERM:
    case ENODEV:  // A bound device that is gone (NetworkBinding): it may come back.
      return Status::kConnectFailed;
    default:
      return Status::kError;
  }
}

// The status of a failed send() or recv() on an established connection.
Status io_status(int error) {
  if (error == EAGAIN || error == EWOULDBLOCK) return Status::kWouldBlock;
  switch (error) {
    case ECONNRESET:
    case EPIPE:
    case ECONNABORTED:
    case ETIMEDOUT:
    case ENETRESET:
    case ENETDOWN:
    case ENETUNREACH:
    case EHOSTUNREACH:
    case EHOSTDOWN:
      return Status::kReset;
    default:
      return Status::kError;
  }
}

// Opens a non-blocking, close-on-exec TCP socket for `family` with the options every
// connection needs; -1 with errno set on failure.
int open_socket(int family) {
#if defined(SOCK_CLOEXEC) && defined(SOCK_NONBLOCK)
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
  if (fd < 0) return -1;
#else
  // Apple has no SOCK_CLOEXEC: another thread's fork() between these calls leaks the fd.
  const int fd = ::socket(family, SOCK_STREAM, IPPROTO_TCP);
  if (fd < 0) return -1;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
#endif
#ifdef SO_NOSIGPIPE
  const int on_nosigpipe = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on_nosigpipe, sizeof on_nosigpipe) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
#endif
  // Best effort: without it only latency suffers.
  const int on = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return fd;
}

#ifdef MSG_NOSIGNAL
constexpr int kSendFlags = MSG_NOSIGNAL;
#else
constexpr int kSendFlags = 0;  // SO_NOSIGPIPE on the socket does the same.
#endif

}  // namespace

TcpTransport::~TcpTransport() { close(); }

Status TcpTransport::start(const SocketAddress* addresses, std::size_t count, Millis now,
                           Millis connect_timeout) {
  close();
  address_count_ = 0;
  next_address_ = 0;
  ever_connected_ = false;
  last_error_ = 0;
  failure_ = Status::kInvalidArgument;
  state_ = State::kFailed;
  if (addresses == nullptr || count == 0) return failure_;
  for (std::size_t i = 0; i < count; ++i) {
    const SocketAddress& a = addresses[i];
    if (a.size == 0 || a.size > sizeof a.bytes) return failure_;
    const int family = address_family(a);
    if ((family == AF_INET && a.size < sizeof(sockaddr_in)) ||
        (family == AF_INET6 && a.size < sizeof(sockaddr_in6)) ||
        (family != AF_INET && family != AF_INET6)) {
      return failure_;
    }
  }
  // RFC 8305 section 4: IPv6 first, then the families alternate, each in the given order.
  // The order is made over every given address and then cut to kMaxAddresses: cut first, a
  // list with kMaxAddresses IPv6 addresses ahead of its IPv4 ones never tried IPv4.
  address_count_ = count < kMaxAddresses ? count : kMaxAddresses;
  std::size_t v6 = 0;
  std::size_t v4 = 0;
  for (std::size_t n = 0; n < address_count_; ++n) {
    const bool want_v6 = n % 2 == 0;
    std::size_t* cursor = want_v6 ? &v6 : &v4;
    const int family = want_v6 ? AF_INET6 : AF_INET;
    while (*cursor < count && address_family(addresses[*cursor]) != family) ++*cursor;
    if (*cursor == count) {
      // This family has no address left: take the other one's next.
      cursor = want_v6 ? &v4 : &v6;
      const int other = want_v6 ? AF_INET : AF_INET6;
      while (*cursor < count && address_family(addresses[*cursor]) != other) ++*cursor;
    }
    addresses_[n] = addresses[*cursor];
    ++*cursor;
  }
  connect_timeout_ = connect_timeout;
  return begin_race(now);
}

Status TcpTransport::begin_race(Millis now) {
  for (std::size_t i = 0; i < address_count_; ++i) {
    attempt_fd_[i] = -1;
    attempt_error_[i] = 0;
  }
  next_address_ = 0;
  failure_ = Status::kConnectFailed;
  deadline_ = now + connect_timeout_;
  next_attempt_at_ = now;
  state_ = State::kConnecting;
  const Status s = advance(now);
  return s == Status::kWouldBlock ? Status::kOk : s;
}

Status TcpTransport::start_attempt(Millis now) {
  const std::size_t i = next_address_++;
  next_attempt_at_ = now + kConnectionAttemptDelay;
  const SocketAddress& a = addresses_[i];
  const int fd = open_socket(address_family(a));
  if (fd < 0) {
    // EAFNOSUPPORT (no IPv6 on this device) lands here and moves on like a refusal.
    const int error = errno;
    fail_attempt(i, error);
    return connect_status(error);
  }
  attempt_fd_[i] = fd;
  if (binding_ != nullptr) {
    const int error = apply_binding(*binding_, fd);
    if (error != 0) {
      fail_attempt(i, error);
      return connect_status(error);
    }
  }
  if (::connect(fd, as_sockaddr(a), detail::to_socket_length<socklen_t>(a.size)) == 0) {
    return win(i);
  }
  // After EINTR the connect goes on asynchronously, exactly as after EINPROGRESS.
  if (errno == EINPROGRESS || errno == EINTR) {
#if STEPBACK_TCP_EPOLL
    if (poll_fd_ >= 0) {
      epoll_event e{};
      e.events = EPOLLOUT;
      e.data.fd = fd;
      if (::epoll_ctl(poll_fd_, EPOLL_CTL_ADD, fd, &e) != 0) {
        // Without the set, the loop polls the newest socket and wakes to check the others.
        ::close(poll_fd_);
        poll_fd_ = -1;
      }
    }
#endif
    return Status::kWouldBlock;
  }
  const int error = errno;
  fail_attempt(i, error);
  return connect_status(error);
}

bool TcpTransport::unreachable() const {
  if (state_ != State::kFailed || next_address_ == 0) return false;
  for (std::size_t i = 0; i < next_address_ && i < address_count_; ++i) {
    if (!detail::no_path(attempt_error_[i])) return false;
  }
  return true;
}

void TcpTransport::fail_attempt(std::size_t i, int error) {
  if (attempt_fd_[i] >= 0) ::close(attempt_fd_[i]);  // Also leaves the epoll set.
  attempt_fd_[i] = -1;
  attempt_error_[i] = error != 0 ? error : EIO;
  last_error_ = attempt_error_[i];
  // The newest attempt failed: the next address need not wait out the attempt delay, even
  // while older attempts still run.
  if (i + 1 == next_address_ && error != ETIMEDOUT) next_attempt_at_ = Millis(0);
  const Status s = connect_status(attempt_error_[i]);
  // kError (an unexpected OS error) outranks a refusal in the final verdict.
  if (s == Status::kError || failure_ != Status::kError) failure_ = s;
}

Status TcpTransport::win(std::size_t i) {
  fd_ = attempt_fd_[i];
  attempt_fd_[i] = -1;
  close_attempts();
  state_ = State::kConnected;
  ever_connected_ = true;
  wants_ = IoInterest::kNone;
  deadline_ = Millis::max();
  wake_ = Millis::max();
  return Status::kOk;
}

void TcpTransport::close_attempts() {
  for (std::size_t i = 0; i < next_address_ && i < address_count_; ++i) {
    if (attempt_fd_[i] >= 0) ::close(attempt_fd_[i]);
    attempt_fd_[i] = -1;
  }
  if (poll_fd_ >= 0) ::close(poll_fd_);
  poll_fd_ = -1;
}

std::size_t TcpTransport::attempts_in_flight() const {
  if (state_ != State::kConnecting) return 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < next_address_; ++i) n += attempt_fd_[i] >= 0 ? 1 : 0;
  return n;
}

Status TcpTransport::advance(Millis now) {
  // Starts what is due: the first address, the next one after the attempt delay, and the
  // next one at once when the newest attempt failed or nothing is in flight.
  while (next_address_ < address_count_ && now < deadline_ &&
         (now >= next_attempt_at_ || attempts_in_flight() == 0)) {
#if STEPBACK_TCP_EPOLL
    if (attempts_in_flight() == 1 && poll_fd_ < 0) {
      // A second connect is about to run beside the first: watch both through one epoll fd.
      poll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
      for (std::size_t i = 0; poll_fd_ >= 0 && i < next_address_; ++i) {
        if (attempt_fd_[i] < 0) continue;
        epoll_event e{};
        e.events = EPOLLOUT;
        e.data.fd = attempt_fd_[i];
        if (::epoll_ctl(poll_fd_, EPOLL_CTL_ADD, attempt_fd_[i], &e) != 0) {
          ::close(poll_fd_);
          poll_fd_ = -1;
        }
      }
    }
#endif
    const Status s = start_attempt(now);
    if (s == Status::kOk) return s;
  }
  const std::size_t in_flight = attempts_in_flight();
  if (in_flight > 0 && now >= deadline_) {
    for (std::size_t i = 0; i < next_address_; ++i) {
      if (attempt_fd_[i] >= 0) fail_attempt(i, ETIMEDOUT);
    }
  } else if (in_flight > 0) {
    expose_attempts(now);
    return Status::kWouldBlock;
  }
  // Every address failed (or the time ran out before the rest could start).
  bool all_timed_out = true;
  for (std::size_t i = 0; i < next_address_; ++i) {
    all_timed_out = all_timed_out && attempt_error_[i] == ETIMEDOUT;
  }
  if (next_address_ > 0 && all_timed_out) failure_ = Status::kConnectTimeout;
  close_attempts();
  state_ = State::kFailed;
  fd_ = -1;
  deadline_ = Millis::max();
  wake_ = Millis::max();
  wants_ = IoInterest::kNone;
  return failure_;
}

void TcpTransport::expose_attempts(Millis now) {
  std::size_t newest = 0;
  std::size_t in_flight = 0;
  for (std::size_t i = 0; i < next_address_; ++i) {
    if (attempt_fd_[i] < 0) continue;
    newest = i;
    ++in_flight;
  }
  wake_ = deadline_;
  if (next_address_ < address_count_) wake_ = min(wake_, next_attempt_at_);
  if (in_flight > 1 && poll_fd_ >= 0) {
    fd_ = poll_fd_;
    wants_ = IoInterest::kRead;  // An epoll fd is readable when a member is ready.
    return;
  }
  fd_ = attempt_fd_[newest];
  wants_ = IoInterest::kWrite;
  if (in_flight > 1) wake_ = min(wake_, now + kOtherAttemptsPoll);
}

Status TcpTransport::step_connect(Millis now) {
  switch (state_) {
    case State::kConnected:
      return Status::kOk;
    case State::kFailed:
      return failure_;
    case State::kIdle:
    case State::kClosed:
      return Status::kError;
    case State::kConnecting:
      break;
  }
  // One poll() over every connect in flight, without waiting.
  pollfd p[kMaxAddresses];
  std::size_t which[kMaxAddresses];
  nfds_t n = 0;
  for (std::size_t i = 0; i < next_address_; ++i) {
    if (attempt_fd_[i] < 0) continue;
    p[n].fd = attempt_fd_[i];
    p[n].events = POLLOUT;
    p[n].revents = 0;
    which[n++] = i;
  }
  int ready = 0;
  do {
    ready = ::poll(p, n, 0);
  } while (ready < 0 && errno == EINTR);
  if (ready < 0) {
    const int error = errno;
    for (nfds_t k = 0; k < n; ++k) fail_attempt(which[k], error);
    return advance(now);
  }
  for (nfds_t k = 0; ready > 0 && k < n; ++k) {
    if (p[k].revents == 0) continue;
    int error = 0;
    auto len = detail::to_socket_length<socklen_t>(sizeof error);
    if (::getsockopt(p[k].fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
    if (error == 0) return win(which[k]);
    fail_attempt(which[k], error);
  }
  return advance(now);
}

Millis TcpTransport::deadline() const {
  return state_ == State::kConnecting ? wake_ : Millis::max();
}

std::size_t TcpTransport::describe_failure(char* out, std::size_t size) const {
  if (size == 0) return 0;
  out[0] = '\0';
  std::size_t used = 0;
  std::size_t tried = 0;
  for (std::size_t i = 0; i < next_address_ && i < address_count_; ++i) {
    if (attempt_error_[i] == 0) continue;
    char host[INET6_ADDRSTRLEN] = "?";
    std::uint16_t port = 0;
    const bool v6 = address_family(addresses_[i]) == AF_INET6;
    if (v6) {
      sockaddr_in6 sin6{};
      std::memcpy(&sin6, addresses_[i].bytes, sizeof sin6);
      (void)::inet_ntop(AF_INET6, &sin6.sin6_addr, host, sizeof host);
      port = ntohs(sin6.sin6_port);
    } else {
      sockaddr_in sin{};
      std::memcpy(&sin, addresses_[i].bytes, sizeof sin);
      (void)::inet_ntop(AF_INET, &sin.sin_addr, host, sizeof host);
      port = ntohs(sin.sin_port);
    }
    const char* why =
        attempt_error_[i] == ETIMEDOUT ? "no answer" : std::strerror(attempt_error_[i]);
    const int w =
        std::snprintf(out + used, size - used, "%s%s%s%s:%u (%s)", tried > 0 ? ", " : "",
                      v6 ? "[" : "", host, v6 ? "]" : "", static_cast<unsigned>(port), why);
    ++tried;
    if (w < 0 || static_cast<std::size_t>(w) >= size - used) break;  // Cut, still terminated.
    used += static_cast<std::size_t>(w);
  }
  if (tried > 0 && binding_ != nullptr && binding_->interface != nullptr &&
      binding_->interface[0] != '\0') {
    used = std::strlen(out);
    (void)std::snprintf(out + used, size - used, " over device '%s'", binding_->interface);
  }
  return tried;
}

Status TcpTransport::send(ConstBytes data, std::size_t* sent) {
  *sent = 0;
  if (state_ != State::kConnected) return Status::kError;
  if (data.size == 0) return Status::kOk;
  ssize_t n = 0;
  do {
    n = ::send(fd_, data.data, data.size, kSendFlags);
  } while (n < 0 && errno == EINTR);
  if (n >= 0) {
    *sent = static_cast<std::size_t>(n);
    wants_ = IoInterest::kNone;
    return Status::kOk;
  }
  const Status s = io_status(errno);
  if (s == Status::kWouldBlock) {
    wants_ = IoInterest::kWrite;
  } else {
    last_error_ = errno;
    wants_ = IoInterest::kNone;
  }
  return s;
}

Status TcpTransport::recv(MutableBytes out, std::size_t* received) {
  *received = 0;
  if (state_ != State::kConnected) return Status::kError;
  if (out.size == 0) return Status::kOk;
  ssize_t n = 0;
  do {
    n = ::recv(fd_, out.data, out.size, 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    *received = static_cast<std::size_t>(n);
    wants_ = IoInterest::kNone;
    return Status::kOk;
  }
  if (n == 0) {
    wants_ = IoInterest::kNone;
    return Status::kClosed;
  }
  const Status s = io_status(errno);
  if (s == Status::kWouldBlock) {
    wants_ = IoInterest::kRead;
  } else {
    last_error_ = errno;
    wants_ = IoInterest::kNone;
  }
  return s;
}

void TcpTransport::close() {
  // While connecting, fd_ is one of the attempts or the epoll set: close_attempts() owns them.
  if (state_ == State::kConnecting) fd_ = -1;
  close_attempts();
  if (fd_ >= 0) {
    // Never retried after EINTR: on Linux the descriptor is gone either way.
    ::close(fd_);
    fd_ = -1;
  }
  if (state_ != State::kIdle) state_ = State::kClosed;
  wants_ = IoInterest::kNone;
  deadline_ = Millis::max();
  wake_ = Millis::max();
}

bool binds(const NetworkBinding& binding) {
  return (binding.interface != nullptr && binding.interface[0] != '\0') || binding.network != 0 ||
         binding.configure != nullptr;
}

int apply_binding(const NetworkBinding& binding, int fd) {
  if (binding.interface != nullptr && binding.interface[0] != '\0') {
#if defined(SO_BINDTODEVICE)
    const std::size_t n = std::strlen(binding.interface);
    if (n >= kInterfaceNameCapacity) return ENODEV;
    if (::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, binding.interface,
                     detail::to_socket_length<socklen_t>(n + 1)) != 0) {
      return errno;
    }
#elif defined(IP_BOUND_IF)
    const unsigned index = ::if_nametoindex(binding.interface);
    if (index == 0) return ENODEV;
    sockaddr_storage self{};
    auto size = detail::to_socket_length<socklen_t>(sizeof self);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &size) != 0) return errno;
    const int rc = self.ss_family == AF_INET6
                       ? ::setsockopt(fd, IPPROTO_IPV6, IPV6_BOUND_IF, &index,
                                      detail::to_socket_length<socklen_t>(sizeof index))
                       : ::setsockopt(fd, IPPROTO_IP, IP_BOUND_IF, &index,
                                      detail::to_socket_length<socklen_t>(sizeof index));
    if (rc != 0) return errno;
#else
    return EOPNOTSUPP;
#endif
  }
  if (binding.network != 0) {
#if defined(__ANDROID__) && __ANDROID_API__ >= 23
    if (::android_setsocknetwork(static_cast<net_handle_t>(binding.network), fd) != 0) {
      return errno != 0 ? errno : EOPNOTSUPP;
    }
#else
    return EOPNOTSUPP;
#endif
  }
  if (binding.configure != nullptr && !binding.configure(fd, binding.context)) return EPERM;
  return 0;
}

}  // namespace stepback::https
