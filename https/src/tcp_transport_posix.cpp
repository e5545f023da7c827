// TcpTransport on POSIX sockets: Linux, Android and Apple.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "socket_length.hpp"
#include "stepback/https/tcp_transport.hpp"

namespace stepback::https {
namespace {

static_assert(sizeof(sockaddr_storage) <= sizeof(SocketAddress::bytes),
              "SocketAddress cannot hold a sockaddr_storage");
static_assert(alignof(sockaddr_storage) <= alignof(SocketAddress),
              "SocketAddress is less aligned than sockaddr_storage");

// Longest numeric host accepted: an IPv6 literal with brackets and a scope id.
constexpr std::size_t kMaxNumericHost = 64;

const sockaddr* as_sockaddr(const SocketAddress& a) {
  return reinterpret_cast<const sockaddr*>(a.bytes);
}

int family_of(const SocketAddress& a) { return as_sockaddr(a)->sa_family; }

// Whether a host is meant as a numeric address. Names never contain ':', and no top-level
// domain is all digits (RFC 3696 section 2), so digits and dots alone are an IPv4 literal.
bool looks_numeric(const char* host) {
  if (host[0] == '[' || std::strchr(host, ':') != nullptr) return true;
  for (const char* c = host; *c != '\0'; ++c) {
    if ((*c < '0' || *c > '9') && *c != '.') return false;
  }
  return true;
}

void set_port(SocketAddress* a, std::uint16_t port) {
  if (family_of(*a) == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, a->bytes, sizeof sin);
    sin.sin_port = htons(port);
    std::memcpy(a->bytes, &sin, sizeof sin);
  } else {
    sockaddr_in6 sin6{};
    std::memcpy(&sin6, a->bytes, sizeof sin6);
    sin6.sin6_port = htons(port);
    std::memcpy(a->bytes, &sin6, sizeof sin6);
  }
}

// Copies the IPv4 and IPv6 entries of `list` into `out` (at most `capacity`), with `port`.
std::size_t copy_addresses(const addrinfo* list, std::uint16_t port, SocketAddress* out,
                           std::size_t capacity) {
  std::size_t n = 0;
  for (const addrinfo* ai = list; ai != nullptr && n < capacity; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    const auto length = detail::checked_socket_length(ai->ai_addrlen, sizeof(SocketAddress::bytes));
    if (ai->ai_addr == nullptr || !length) continue;
    out[n] = SocketAddress{};
    std::memcpy(out[n].bytes, ai->ai_addr, *length);
    out[n].size = *length;
    set_port(&out[n], port);
    ++n;
  }
  return n;
}

// Resolves the name `host` into `out`; returns the EAI_* code (0 on success) and the number
// of addresses in *count.
int resolve(const char* host, std::uint16_t port, SocketAddress* out,
            std::size_t capacity, std::size_t* count) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  addrinfo* list = nullptr;
  const int rc = ::getaddrinfo(host, nullptr, &hints, &list);
  if (rc != 0) return rc;
  *count = copy_addresses(list, port, out, capacity);
  ::freeaddrinfo(list);
  return *count == 0 ? EAI_NONAME : 0;
}

// Copies a numeric host into `buf` without the brackets of an IPv6 literal; false if it
// does not fit or the brackets do not match.
bool strip_brackets(const char* host, char (&buf)[kMaxNumericHost + 1]) {
  std::size_t len = std::strlen(host);
  if (len > kMaxNumericHost) return false;
  if (host[0] == '[') {
    if (len < 2 || host[len - 1] != ']') return false;
    ++host;
    len -= 2;
  }
  std::memcpy(buf, host, len);
  buf[len] = '\0';
  return true;
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

Status parse_numeric_address(const char* host, std::uint16_t port, SocketAddress* out) {
  if (host == nullptr || out == nullptr || !looks_numeric(host)) return Status::kInvalidArgument;
  char buf[kMaxNumericHost + 1];
  if (!strip_brackets(host, buf) || buf[0] == '\0') return Status::kInvalidArgument;
  // inet_aton / inet_pton rather than getaddrinfo(AI_NUMERICHOST): the same answers without
  // the allocations getaddrinfo makes inside libc, so a request's step loop stays heap-free.
  *out = SocketAddress{};
  if (std::strchr(buf, ':') == nullptr) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    if (::inet_aton(buf, &sin.sin_addr) == 0) return Status::kInvalidArgument;  // Also "127.1".
    std::memcpy(out->bytes, &sin, sizeof sin);
    out->size = sizeof sin;
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    char* zone = std::strchr(buf, '%');
    if (zone != nullptr) {
      *zone++ = '\0';
      char* end = nullptr;
      const unsigned long index = std::strtoul(zone, &end, 10);
      sin6.sin6_scope_id = (*zone != '\0' && *end == '\0') ? static_cast<std::uint32_t>(index)
                                                            : ::if_nametoindex(zone);
      if (sin6.sin6_scope_id == 0) return Status::kInvalidArgument;
    }
    if (::inet_pton(AF_INET6, buf, &sin6.sin6_addr) != 1) return Status::kInvalidArgument;
    std::memcpy(out->bytes, &sin6, sizeof sin6);
    out->size = sizeof sin6;
  }
  set_port(out, port);
  return Status::kOk;
}

TcpTransport::~TcpTransport() { close(); }

Status TcpTransport::start(const char* host, std::uint16_t port, Millis now,
                           Millis connect_timeout) {
  close();
  address_count_ = 0;
  ever_connected_ = false;
  last_error_ = 0;
  failure_ = Status::kInvalidArgument;
  state_ = State::kFailed;
  if (host == nullptr || host[0] == '\0' || port == 0) return failure_;
  if (looks_numeric(host)) {
    // Numeric hosts yield one address; a malformed one is the caller's error, not a lookup.
    if (parse_numeric_address(host, port, &addresses_[0]) != Status::kOk) return failure_;
    address_count_ = 1;
  } else {
    const int rc = resolve(host, port, addresses_, kMaxAddresses, &address_count_);
    if (rc != 0) {
      address_count_ = 0;
      last_error_ = rc;
      failure_ = Status::kDnsFailed;
      return failure_;
    }
  }
  next_address_ = 0;
  connect_timeout_ = connect_timeout;
  state_ = State::kConnecting;
  const Status s = connect_next(now);
  return s == Status::kWouldBlock ? Status::kOk : s;
}

Status TcpTransport::start(const SocketAddress* addresses, std::size_t count, Millis now,
                           Millis connect_timeout) {
  close();
  address_count_ = 0;
  ever_connected_ = false;
  last_error_ = 0;
  failure_ = Status::kInvalidArgument;
  state_ = State::kFailed;
  if (addresses == nullptr || count == 0) return failure_;
  if (count > kMaxAddresses) count = kMaxAddresses;
  for (std::size_t i = 0; i < count; ++i) {
    const SocketAddress& a = addresses[i];
    if (a.size == 0 || a.size > sizeof a.bytes) return failure_;
    const int family = family_of(a);
    if ((family == AF_INET && a.size < sizeof(sockaddr_in)) ||
        (family == AF_INET6 && a.size < sizeof(sockaddr_in6)) ||
        (family != AF_INET && family != AF_INET6)) {
      return failure_;
    }
  }
  for (std::size_t i = 0; i < count; ++i) addresses_[i] = addresses[i];
  address_count_ = count;
  next_address_ = 0;
  connect_timeout_ = connect_timeout;
  state_ = State::kConnecting;
  const Status s = connect_next(now);
  return s == Status::kWouldBlock ? Status::kOk : s;
}

Status TcpTransport::connect_next(Millis now) {
  while (next_address_ < address_count_) {
    const SocketAddress& a = addresses_[next_address_++];
    fd_ = open_socket(family_of(a));
    if (fd_ < 0) {
      // EAFNOSUPPORT (no IPv6 on this device) lands here and moves on like a refusal.
      abandon_address(connect_status(errno), errno);
      continue;
    }
    if (::connect(fd_, as_sockaddr(a), detail::to_socket_length<socklen_t>(a.size)) == 0) {
      state_ = State::kConnected;
      ever_connected_ = true;
      wants_ = IoInterest::kNone;
      deadline_ = Millis::max();
      return Status::kOk;
    }
    // After EINTR the connect goes on asynchronously, exactly as after EINPROGRESS.
    if (errno == EINPROGRESS || errno == EINTR) {
      deadline_ = now + connect_timeout_;
      wants_ = IoInterest::kWrite;
      return Status::kWouldBlock;
    }
    abandon_address(connect_status(errno), errno);
  }
  state_ = State::kFailed;
  deadline_ = Millis::max();
  wants_ = IoInterest::kNone;
  return failure_;
}

void TcpTransport::abandon_address(Status failure, int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  failure_ = failure;
  last_error_ = error;
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
  pollfd p{};
  p.fd = fd_;
  p.events = POLLOUT;
  int ready = 0;
  do {
    ready = ::poll(&p, 1, 0);
  } while (ready < 0 && errno == EINTR);
  if (ready < 0) {
    abandon_address(Status::kError, errno);
    return connect_next(now);
  }
  if (ready == 0) {
    if (now < deadline_) return Status::kWouldBlock;
    abandon_address(Status::kConnectTimeout, ETIMEDOUT);
    return connect_next(now);
  }
  int error = 0;
  auto len = detail::to_socket_length<socklen_t>(sizeof error);
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
  if (error != 0) {
    abandon_address(connect_status(error), error);
    return connect_next(now);
  }
  state_ = State::kConnected;
  ever_connected_ = true;
  wants_ = IoInterest::kNone;
  deadline_ = Millis::max();
  return Status::kOk;
}

Millis TcpTransport::deadline() const {
  return state_ == State::kConnecting ? deadline_ : Millis::max();
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
  if (fd_ >= 0) {
    // Never retried after EINTR: on Linux the descriptor is gone either way.
    ::close(fd_);
    fd_ = -1;
  }
  if (state_ != State::kIdle) state_ = State::kClosed;
  wants_ = IoInterest::kNone;
  deadline_ = Millis::max();
}

}  // namespace stepback::https
