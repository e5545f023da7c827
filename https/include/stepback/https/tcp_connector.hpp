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
#include "stepback/https/http/response_parser.hpp"
#include "stepback/https/proxy/proxy.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"

namespace stepback::https {

// The room a connector needs to go through a proxy: the proxy's name and Basic credentials as
// the requests carry them, the CONNECT request and the proxy's answer (proxy/tunnel.hpp
// writes the one and reads the other). The app owns it (a static, or beside the connector)
// and gives it with the ProxyConfig, so a connector that never uses a proxy carries none of it.
class ProxyRoom {
 public:
  ProxyRoom() = default;
  ProxyRoom(const ProxyRoom&) = delete;
  ProxyRoom& operator=(const ProxyRoom&) = delete;

 private:
  friend class TcpConnector;
  char host_[254] = {};
  char authorization_[352] = {};  // "Basic " and the base64 of user:password.
  char request_[1024] = {};       // CONNECT host:port, Host, Proxy-Authorization.
  std::uint8_t head_[1024] = {};  // The proxy's answer head, for parser_.
  ResponseParser parser_{MutableBytes{head_, sizeof head_}, BodySink{}, 0};
};

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
//
// Proxies (set_proxy). A host the proxy applies to (proxy/proxy.hpp's uses_proxy) is reached
// through it: the proxy's name is looked up and connected to as above; an http:// request
// goes to the proxy as is (forwards(): the Client writes an absolute-form target and the
// Proxy-Authorization); tunnel() sends `CONNECT host:port` and reads the proxy's answer
// within the same connect timeout. A 2xx answer hands over the tunnel; 407 is kProxyAuth
// (never retried); 502, 503, 504, a cut answer or none is kConnectFailed (retried: the
// request never reached the origin); any other answer or one that is not HTTP is kProtocol.
// The messages name the proxy and its answer, never the credentials.
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
  bool unreachable() const override { return unreachable_; }
  void exchange_done() override {}
  void close() override;
  // Closes, and lets the resolver re-read the new network's configuration.
  void network_changed() override;
  bool forwards(const Url& url, std::string_view* proxy_authorization) const override;

  // Sends later connections through `proxy` (nullptr or an empty host: none), whose views must
  // outlive the connector, using `room` (required with a proxy; it must outlive the connector
  // too). kInvalidArgument (and no proxy) without a room, for a host longer than 253
  // characters, or for credentials longer than 255 bytes together.
  [[nodiscard]] Status set_proxy(const ProxyConfig* proxy, ProxyRoom* room);
  // Sends later connections and lookups over `binding` (tcp/binding.hpp; null: the OS's
  // choice), which must outlive the connector: a transfer kept on cellular while Wi-Fi has
  // no internet. kInvalidArgument (and no binding) for a device name longer than the OS takes.
  [[nodiscard]] Status set_binding(const NetworkBinding* binding);

  // The lookup and connect alone, for a connector that builds on this one: begins reaching
  // `host` (NUL-terminated) on `port` within `connect_timeout` of `now`; then step() until
  // kOk, when stream() is connected. kOk to go on, or the failure.
  [[nodiscard]] Status dial(const char* host, std::uint16_t port, Millis now,
                            Millis connect_timeout);
  // As dial(), through a CONNECT tunnel when the proxy applies to `host`; step() answers kOk
  // once the tunnel stands.
  [[nodiscard]] Status tunnel(const char* host, std::uint16_t port, Millis now,
                              Millis connect_timeout);
  TcpTransport& transport() { return tcp_; }
  const TcpTransport& transport() const { return tcp_; }

 private:
  enum class Phase : std::uint8_t {
    kIdle,
    kResolving,
    kConnecting,
    kTunnelSending,  // The CONNECT request to the proxy.
    kTunnelReading,  // The proxy's answer.
    kConnected
  };

  Status fail(Status s, const char* what);
  // dial(), to the proxy when `proxy`.
  Status dial_to(const char* host, std::uint16_t port, Millis now, Millis connect_timeout,
                 bool proxy);
  // Fails with `s` and a message naming every address the TCP connect tried.
  Status connect_failed(Status s);
  Status step_resolve(Millis now);
  Status start_connect(const SocketAddress* addresses, std::size_t count, Millis now);
  Status step_tunnel(Millis now);
  Status tunnel_failed(Status s, const char* what);

  Resolver& resolver_;
  ResolverNext resolving_;  // The resolver's last wait, while kResolving.
  Millis deadline_ = Millis::max();
  Millis connect_timeout_{};
  TcpTransport tcp_;
  const char* host_ = "";
  Phase phase_ = Phase::kIdle;
  char message_[512] = {};
  bool unreachable_ = false;  // The last failure was for lack of a path (see unreachable()).

  const ProxyConfig* proxy_ = nullptr;
  ProxyRoom* room_ = nullptr;  // With proxy_.
  bool via_proxy_ = false;     // The connection under way goes to the proxy.
  std::size_t tunnel_size_ = 0;
  std::size_t tunnel_sent_ = 0;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_CONNECTOR_HPP_
