// TcpTlsConnector: the built-in Connector: a name lookup through a Resolver (numeric hosts
// parsed, never looked up), TCP, and TLS over it (mbedTLS) for https:// URLs. Nothing in it
// blocks: while it resolves, fd()/wants()/deadline() name the resolver's socket, so the
// Client's kWaitIo hands that socket to the app's loop.
#ifndef STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_
#define STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_

#include <cstdint>

#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"
#include "stepback/https/tls/tls.hpp"

namespace stepback::https {

// Names, TCP and TLS over it for https:// URLs, with the session saved and offered again on
// reconnection.
//
// Names. A host that is an IPv4 or IPv6 literal is parsed and connected to directly (one
// made only of digits and dots that does not parse fails with kInvalidArgument). Any other
// host goes to the resolver: the one given to the constructor, or else the connector's own
// CaresResolver with the system's servers and CaresOptions' defaults, initialized at the
// first name (that reads /etc/resolv.conf once; give a resolver you initialized before the
// loop to keep that file read out of step()). The lookup and the TCP connect share the
// connect timeout (a lookup that outlasts it is kDnsFailed), and the addresses are raced per
// Happy Eyeballs (TcpTransport); when all fail, the message names each address tried and
// what happened to it. How lookups end:
//   - a definite answer about the name (NXDOMAIN, no A/AAAA record, an invalid name):
//     kInvalidArgument, which the Client does not retry, with a message naming the host and
//     what the resolver said ("no such host 'exampel.com': the DNS server answered NXDOMAIN");
//   - anything else (timeout, SERVFAIL/REFUSED, malformed answers, no server reachable, out of
//     pool): kDnsFailed, retried as a request that provably never left.
// The blocking system resolver is available only when chosen: pass a GetaddrinfoResolver.
class TcpTlsConnector final : public Connector {
 public:
  // `tls` may be null when only http:// URLs are used; `resolver` null for the connector's
  // own CaresResolver. Both must outlive the connector.
  explicit TcpTlsConnector(TlsClientConfig* tls, Resolver* resolver = nullptr)
      : tls_(tls), resolver_(resolver) {}
  ~TcpTlsConnector() { close(); }
  TcpTlsConnector(const TcpTlsConnector&) = delete;
  TcpTlsConnector& operator=(const TcpTlsConnector&) = delete;

  [[nodiscard]] Status open(const Url& url, const char* host, Millis now,
                            const Timeouts& timeouts) override;
  [[nodiscard]] Status step(Millis now) override;
  int fd() const override;
  IoInterest wants() const override;
  Transport& stream() override;
  Millis deadline() const override;
  bool resumed() const override { return resumed_; }
  const char* failure_message() const override { return message_; }
  void exchange_done() override;
  void close() override;
  // Re-reads the system's DNS configuration when the connector uses its own resolver (an
  // app's resolver is the app's to reconfigure: CaresResolver::init() again).
  void network_changed() override;

 private:
  enum class Phase : std::uint8_t { kIdle, kResolving, kConnecting, kHandshaking, kReady };

  Status fail(Status s, const char* what);
  // Fails with `s` and a message naming every address the TCP connect tried.
  Status connect_failed(Status s);
  Status step_resolve(Millis now);
  Status start_connect(const SocketAddress* addresses, std::size_t count, Millis now);
  Resolver& resolver();

  TlsClientConfig* tls_;
  Resolver* resolver_;
  CaresResolver own_resolver_;  // Used when no resolver was given; initialized on first use.
  ResolverNext resolving_;      // The resolver's last wait, while kResolving.
  Millis resolve_deadline_ = Millis::max();
  Millis connect_timeout_{};
  std::uint16_t port_ = 0;
  bool own_resolver_tried_ = false;
  TcpTransport tcp_;
  TlsTransport tls_stream_;
  TlsSession session_;
  const char* host_ = "";
  Millis handshake_timeout_{};
  Millis handshake_deadline_ = Millis::max();
  Phase phase_ = Phase::kIdle;
  bool use_tls_ = false;
  bool resumed_ = false;
  char message_[512] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_
