// A non-blocking TCP transport and its connect state machine, for POSIX systems (Linux,
// Android, Apple). Windows needs a winsock variant of the source file (WSAPoll, closesocket,
// WSAGetLastError, ioctlsocket(FIONBIO)); it is not written yet.
//
// Name resolution. A numeric host (an IPv4 dotted quad, or an IPv6 literal with or without
// brackets) is parsed by getaddrinfo(AI_NUMERICHOST) and never reaches DNS; a host made only
// of digits and dots that does not parse is rejected as kInvalidArgument, not looked up. Any
// other name goes through getaddrinfo(), which BLOCKS the calling thread for as long as the
// system resolver takes (seconds when the network is bad). An application that must never
// block resolves names itself (on a worker thread, or with an asynchronous resolver such as
// Android's DnsResolver or Apple's Network framework) and passes numeric addresses, either
// as the host or through the SocketAddress overload of start().
//
// Memory. Resolved addresses are copied into a fixed array inside the object; after
// getaddrinfo's own list is freed nothing is kept on the heap. getaddrinfo itself allocates
// inside libc (also for numeric hosts); that is its only heap use, and it happens in start().
#ifndef STEPBACK_HTTPS_TCP_TRANSPORT_HPP_
#define STEPBACK_HTTPS_TCP_TRANSPORT_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// One IPv4 or IPv6 socket address with its port, held in the OS's sockaddr layout.
struct SocketAddress {
  // The sockaddr_in or sockaddr_in6 bytes; 128 is the size of sockaddr_storage.
  alignas(8) std::uint8_t bytes[128] = {};
  // How many of `bytes` are in use; 0 for no address.
  std::uint32_t size = 0;
};

// Parses a numeric IPv4 or IPv6 literal ("192.0.2.1", "::1", "[::1]", "fe80::1%eth0") with
// `port` into *out without touching DNS; kInvalidArgument when `host` is not such a literal.
[[nodiscard]] Status parse_numeric_address(const char* host, std::uint16_t port,
                                           SocketAddress* out);

// A TCP connection that never blocks after start(): connect, send and receive report
// kWouldBlock and say what to poll for. The descriptor is close-on-exec, non-blocking, has
// TCP_NODELAY (a TLS handshake must not stall on Nagle plus delayed ACKs) and never raises
// SIGPIPE (MSG_NOSIGNAL on Linux and Android, SO_NOSIGPIPE on Apple). Not thread-safe.
//
// Connecting: start() resolves the host and begins a connect to its first address;
// step_connect() is called again whenever fd() is writable or deadline() has passed. The
// addresses (IPv6 and IPv4, in the resolver's order) are tried one after the other: a refused
// or unreachable address is left at once for the next, and the connect timeout applies to
// each address separately, so the worst case is count x timeout.
class TcpTransport final : public Transport {
 public:
  // The most addresses one start() tries; further resolver results are ignored.
  static constexpr std::size_t kMaxAddresses = 8;

  // A transport with no connection; fd() is -1 until start().
  TcpTransport() = default;
  // Closes the descriptor, if any.
  ~TcpTransport();
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  // Closes any previous connection, resolves `host` (see the file comment: names block in
  // getaddrinfo) and begins a non-blocking connect to `port` on the first address, the
  // `connect_timeout` counting from `now`. kOk means "call step_connect()"; otherwise
  // kInvalidArgument (null or empty host, port 0, malformed numeric host), kDnsFailed, or
  // the failure of the last address when every address failed at once (kConnectFailed, ...),
  // which step_connect() then keeps returning.
  [[nodiscard]] Status start(const char* host, std::uint16_t port, Millis now,
                             Millis connect_timeout);
  // As above for `count` addresses the caller resolved itself (at most kMaxAddresses are
  // used; the rest are ignored); never calls the resolver. kInvalidArgument if count is 0 or
  // an address is empty or too large.
  [[nodiscard]] Status start(const SocketAddress* addresses, std::size_t count, Millis now,
                             Millis connect_timeout);

  // Advances the connect at monotonic time `now`: kOk once connected (also on later calls),
  // kWouldBlock while waiting (poll fd() for writing until deadline()), or the failure of the
  // last address tried once every address failed: kConnectFailed (refused, unreachable),
  // kConnectTimeout (no answer within the timeout), kError (an unexpected OS error). kError
  // also when start() was not called or close() was.
  [[nodiscard]] Status step_connect(Millis now);

  // When the current address's connect times out; Millis::max() when not connecting.
  Millis deadline() const;
  // Whether a connection is established now (step_connect() returned kOk and no close()).
  bool connected() const { return state_ == State::kConnected; }
  // Whether a connection was established at any point since the last start(), even if it
  // has been closed or reset since: false proves the request never reached the server.
  bool ever_connected() const { return ever_connected_; }
  // The errno of the last OS failure (connect, send, recv), or the getaddrinfo EAI_* code
  // after kDnsFailed; 0 when nothing failed since start(). For messages only.
  int last_error() const { return last_error_; }

  // Sends a prefix of `data` when connected: kOk with *sent > 0 (or 0 for empty data),
  // kWouldBlock (wants() is kWrite), kReset (reset or broken pipe, no SIGPIPE), or kError.
  [[nodiscard]] Status send(ConstBytes data, std::size_t* sent) override;
  // Receives into a prefix of `out` when connected: kOk with *received > 0 (or 0 for an
  // empty `out`), kWouldBlock (wants() is kRead), kClosed on orderly end of stream, kReset
  // when the peer reset the connection, or kError.
  [[nodiscard]] Status recv(MutableBytes out, std::size_t* received) override;
  // The socket descriptor while connecting or connected; -1 otherwise. Owned by this object.
  int fd() const override { return fd_; }
  // kWrite while connecting; after kWouldBlock from send() or recv(), what that call waits
  // for; kNone otherwise.
  IoInterest wants() const override { return wants_; }
  // Closes the descriptor; safe to call twice. ever_connected() keeps its value.
  void close() override;

 private:
  enum class State : std::uint8_t { kIdle, kConnecting, kConnected, kFailed, kClosed };

  // Tries addresses from next_address_ on until one connects or waits; returns the
  // step_connect() result.
  Status connect_next(Millis now);
  // Closes the descriptor of a failed address and records `failure` as the latest result.
  void abandon_address(Status failure, int error);

  SocketAddress addresses_[kMaxAddresses];
  std::size_t address_count_ = 0;
  std::size_t next_address_ = 0;
  Millis connect_timeout_{};
  Millis deadline_ = Millis::max();
  int fd_ = -1;
  int last_error_ = 0;
  Status failure_ = Status::kError;
  State state_ = State::kIdle;
  IoInterest wants_ = IoInterest::kNone;
  bool ever_connected_ = false;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_TRANSPORT_HPP_
