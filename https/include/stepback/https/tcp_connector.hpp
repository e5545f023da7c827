// TcpConnector: the built-in Connector for http:// URLs: a name lookup through a Resolver
// (numeric hosts parsed, never looked up) and a TCP connection raced over the addresses
// (Happy Eyeballs, TcpTransport). It needs no TLS library; TcpTlsConnector
// (tcp_tls_connector.hpp) puts TLS over it for https:// URLs. Nothing in it blocks: while it
// resolves, fd()/wants()/deadline() name the resolver's socket, so the Client's kWaitIo
// hands that socket to the app's loop.
#ifndef STEPBACK_HTTPS_TCP_CONNECTOR_HPP_
#define STEPBACK_HTTPS_TCP_CONNECTOR_HPP_

#include <cstdint>

#include "stepback/https/connector.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"

namespace stepback::https {

// Names and TCP.
//
// Names. A host that is an IPv4 or IPv6 literal is parsed and connected to directly (one
// made only of digits and dots that does not parse fails with kInvalidArgument). Any other
// host goes to the resolver (CaresResolver, AndroidResolver, or a FixedResolver with
// addresses the app resolved itself). The lookup and the TCP connect share the connect
// timeout (a lookup that outlasts it is kDnsFailed), and the addresses are raced per Happy
// Eyeballs; when all fail, the message names each address tried and what happened to it.
// How lookups end:
//   - a definite answer about the name (NXDOMAIN, no A/AAAA record, an invalid name):
//     kInvalidArgument, which the Client does not retry, with a message naming the host and
//     what the resolver said ("no such host 'exampel.com': the DNS server answered NXDOMAIN");
//   - anything else (timeout, SERVFAIL/REFUSED, malformed answers, no server reachable, out of
//     pool): kDnsFailed, retried as a request that provably never left.
class TcpConnector final : public Connector {
 public:
  // `resolver` must outlive the connector.
  explicit TcpConnector(Resolver& resolver) : resolver_(resolver) {}
  explicit TcpConnector(Resolver&&) = delete;
  ~TcpConnector() { close(); }
  TcpConnector(const TcpConnector&) = delete;
  TcpConnector& operator=(const TcpConnector&) = delete;

  // kInvalidArgument for an https:// URL (TcpTlsConnector serves those).
  [[nodiscard]] Status open(const Url& url, const char* host, Millis now,
                            const Timeouts& timeouts) override;
  [[nodiscard]] Status step(Millis now) override;
  int fd() const override;
  IoInterest wants() const override;
  Transport& stream() override { return tcp_; }
  Millis deadline() const override;
  bool resumed() const override { return false; }
  const char* failure_message() const override { return message_; }
  void exchange_done() override {}
  void close() override;
  // Closes, and lets the resolver re-read the new network's configuration.
  void network_changed() override;

  // The lookup and connect alone, for a connector that builds on this one: begins reaching
  // `host` (NUL-terminated) on `port` within `connect_timeout` of `now`; then step() until
  // kOk, when stream() is connected. kOk to go on, or the failure.
  [[nodiscard]] Status dial(const char* host, std::uint16_t port, Millis now,
                            Millis connect_timeout);
  TcpTransport& transport() { return tcp_; }
  const TcpTransport& transport() const { return tcp_; }

 private:
  enum class Phase : std::uint8_t { kIdle, kResolving, kConnecting, kConnected };

  Status fail(Status s, const char* what);
  // Fails with `s` and a message naming every address the TCP connect tried.
  Status connect_failed(Status s);
  Status step_resolve(Millis now);
  Status start_connect(const SocketAddress* addresses, std::size_t count, Millis now);

  Resolver& resolver_;
  ResolverNext resolving_;  // The resolver's last wait, while kResolving.
  Millis deadline_ = Millis::max();
  Millis connect_timeout_{};
  TcpTransport tcp_;
  const char* host_ = "";
  Phase phase_ = Phase::kIdle;
  char message_[512] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_CONNECTOR_HPP_
