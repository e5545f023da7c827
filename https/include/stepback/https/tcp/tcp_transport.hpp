// A non-blocking TCP transport and its connect state machine, for POSIX systems (Linux,
// Android, Apple). Windows needs a winsock variant of the source file (WSAPoll, closesocket,
// WSAGetLastError, ioctlsocket(FIONBIO)); it is not written yet.
//
// Addresses. The transport connects to addresses it is given (SocketAddress, address.hpp);
// it never resolves a name. TcpConnector (tcp_connector.hpp) resolves through a non-blocking
// Resolver and hands the addresses over; numeric hosts are parsed by parse_numeric_address.
// The addresses are copied into a fixed array inside the object: nothing is on the heap.
#ifndef STEPBACK_HTTPS_TCP_TCP_TRANSPORT_HPP_
#define STEPBACK_HTTPS_TCP_TCP_TRANSPORT_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/https/tcp/address.hpp"
#include "stepback/https/tcp/binding.hpp"
#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// A TCP connection that never blocks after start(): connect, send and receive report
// kWouldBlock and say what to poll for. The descriptor is close-on-exec, non-blocking, has
// TCP_NODELAY (a TLS handshake must not stall on Nagle plus delayed ACKs) and never raises
// SIGPIPE (MSG_NOSIGNAL on Linux and Android, SO_NOSIGPIPE on Apple). Not thread-safe.
//
// Connecting races the addresses per Happy Eyeballs v2 (RFC 8305): they are ordered IPv6
// first, the families alternating (each family keeping the resolver's order); the first
// connect starts at once, and the next one when the previous failed or after
// kConnectionAttemptDelay without a connection, the earlier ones left running. The first to
// connect wins and the others are closed. The connect timeout bounds the whole race (curl's
// --connect-timeout does the same), so a black-holed IPv6 costs 250 ms, not a timeout. When
// every address failed, step_connect() reports one failure and describe_failure() names
// each address and what happened to it.
//
// The wait contract with several connects in flight: fd() is one descriptor the loop polls
// for wants(). On Linux and Android it is an epoll instance holding every connecting socket
// (readable when any of them is ready); elsewhere it is the newest socket, and deadline()
// comes at most kOtherAttemptsPoll later so the older ones are checked too. deadline() is
// also never later than the start of the next attempt.
class TcpTransport final : public Transport {
 public:
  // The most addresses one start() tries: the first ones of the race's order (below), so a
  // longer list still has both families tried. Four in the small-RAM build (two of each
  // family when both answer): each address costs its SocketAddress and two ints here, and a
  // SocketAddress in every resolver (36 + 28 bytes on 32-bit ARM).
  static constexpr std::size_t kMaxAddresses = kSmallRamBuild ? 4 : 8;
  // How long a connect runs alone before the next address is tried too (RFC 8305 section 5
  // recommends 250 ms).
  static constexpr Millis kConnectionAttemptDelay{250};
  // Without epoll, how long the loop may sleep on the newest socket while older ones connect.
  static constexpr Millis kOtherAttemptsPoll{10};

  // A transport with no connection; fd() is -1 until start().
  TcpTransport() = default;
  // Closes the descriptor, if any.
  ~TcpTransport();
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  // Closes any previous connection and begins a non-blocking connect race over `count`
  // addresses (at most kMaxAddresses are used: the first ones in the race's order, so both
  // families are kept), the `connect_timeout` counting from `now`. kOk means "call step_connect()";
  // otherwise kInvalidArgument (count 0, an empty or too large address), or the failure of the last
  // address when every address failed at once (kConnectFailed, ...), which step_connect() then
  // keeps returning.
  [[nodiscard]] Status start(const SocketAddress* addresses, std::size_t count, Millis now,
                             Millis connect_timeout);

  // Advances the connect at monotonic time `now`: kOk once connected (also on later calls),
  // kWouldBlock while waiting (poll fd() for wants() until deadline()), or, once every address
  // failed: kConnectTimeout when none of them answered within the timeout, else
  // kConnectFailed (refused, unreachable) or kError (an unexpected OS error). kError also when
  // start() was not called or close() was.
  [[nodiscard]] Status step_connect(Millis now);

  // While connecting, when step_connect() must run again even if fd() stays quiet (the
  // timeout, the next attempt, a check of older attempts); Millis::max() when not connecting.
  Millis deadline() const;
  // After a failed connect, each address tried and what happened to it, into `out` (always
  // NUL-terminated): "[::1]:443 (no answer), 127.0.0.1:443 (Connection refused)". How many
  // addresses were tried.
  std::size_t describe_failure(char* out, std::size_t size) const;
  // After a failed connect, whether it failed for lack of a path rather than at the far end:
  // every address tried was unreachable from here (no route, network or host unreachable,
  // network down, no such address or device), none refused or timed out. The Client waits
  // for a network on this only when the platform also says it is offline.
  bool unreachable() const;
  // How many connects are under way now (0 when not connecting).
  std::size_t attempts_in_flight() const;
  // Whether a connection is established now (step_connect() returned kOk and no close()).
  bool connected() const { return state_ == State::kConnected; }
  // Whether a connection was established at any point since the last start(), even if it
  // has been closed or reset since: false proves the request never reached the server.
  bool ever_connected() const { return ever_connected_; }
  // The errno of the last OS failure (connect, send, recv); 0 when nothing failed since
  // start(). For messages only.
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
  // Binds the sockets of later connects to `binding` (binding.hpp; null: none), which must
  // outlive the transport. A socket it cannot bind fails like a refused connect, with the
  // reason (ENODEV: "No such device") in describe_failure().
  void set_binding(const NetworkBinding* binding) { binding_ = binding; }

 private:
  enum class State : std::uint8_t { kIdle, kConnecting, kConnected, kFailed, kClosed };

  // Starts the race over addresses_, already in its order; the start() result.
  Status begin_race(Millis now);
  // Starts attempts that are due; the step_connect() result.
  Status advance(Millis now);
  // Starts a connect to the next address: kOk when it connected at once, kWouldBlock when
  // under way, or its failure (recorded).
  Status start_attempt(Millis now);
  // Closes attempt `i` (an index into addresses_) and records why it failed.
  void fail_attempt(std::size_t i, int error);
  // Keeps attempt `i`'s socket as the connection and closes every other one.
  Status win(std::size_t i);
  // Sets fd_, wants_ and wake_ from the attempts in flight.
  void expose_attempts(Millis now);
  void close_attempts();

  SocketAddress addresses_[kMaxAddresses];
  int attempt_fd_[kMaxAddresses] = {};     // The socket of each address while its connect runs.
  int attempt_error_[kMaxAddresses] = {};  // errno of each failed address; 0 when none.
  std::size_t address_count_ = 0;
  std::size_t next_address_ = 0;
  Millis connect_timeout_{};
  Millis deadline_ = Millis::max();  // The end of the whole race.
  Millis next_attempt_at_ = Millis::max();
  Millis wake_ = Millis::max();  // What deadline() answers while connecting.
  int fd_ = -1;
  int poll_fd_ = -1;  // The epoll instance over the attempts (Linux).
  int last_error_ = 0;
  Status failure_ = Status::kError;
  State state_ = State::kIdle;
  IoInterest wants_ = IoInterest::kNone;
  const NetworkBinding* binding_ = nullptr;
  bool ever_connected_ = false;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_TCP_TRANSPORT_HPP_
