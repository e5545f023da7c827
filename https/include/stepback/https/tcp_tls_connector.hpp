// TcpTlsConnector: the built-in Connector for https:// URLs: names and TCP as TcpConnector
// (tcp_connector.hpp) reaches them, and TLS over the connection (mbedTLS), with the session
// saved and offered again on reconnection. http:// URLs it serves without TLS, so one
// connector takes both schemes. Nothing in it blocks: while it resolves, connects or shakes
// hands, fd()/wants()/deadline() name the socket the Client's kWaitIo hands to the app's loop.
#ifndef STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_
#define STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_

#include <cstdint>

#include "stepback/https/connector.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_session_record.hpp"

namespace stepback::https {

// Names, TCP and TLS. How names, addresses and the connect timeout are handled, and how
// lookups end, is TcpConnector's (tcp_connector.hpp); the handshake has its own timeout
// (Timeouts::tls_handshake), and its failures carry mbedTLS's reason in failure_message().
// Through a proxy (set_proxy), https:// goes through TcpConnector's CONNECT tunnel and TLS
// runs over it to the origin, its certificate verified against the origin's name as always.
// A handshake that offered the saved session and failed, other than by its certificate or
// its timeout (mbedTLS offers only the saved session's TLS version then, which a server behind
// the same address may no longer speak), forgets the session and connects again at once,
// within the same open(), for a full handshake; its failure, if it fails too, says so.
class TcpTlsConnector final : public Connector {
 public:
  // `tls` (trust, pins, the wall clock certificates are checked against) and `resolver` must
  // outlive the connector.
  TcpTlsConnector(TlsClientConfig& tls, Resolver& resolver) : tls_(tls), tcp_(resolver) {}
  TcpTlsConnector(TlsClientConfig&&, Resolver&) = delete;
  TcpTlsConnector(TlsClientConfig&, Resolver&&) = delete;
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
  void offer_early_data(ConstBytes bytes) override { early_ = bytes; }
  EarlyDataResult early_data() const override { return early_result_; }
  const char* failure_message() const override;
  bool unreachable() const override { return !tls_failed_ && tcp_.unreachable(); }
  void exchange_done() override;
  void close() override;
  // Closes, and lets the resolver re-read the new network's configuration.
  void network_changed() override;
  bool forwards(const Url& url, std::string_view* proxy_authorization) const override {
    return tcp_.forwards(url, proxy_authorization);
  }
  // Sends later connections through `proxy`; as TcpConnector::set_proxy.
  [[nodiscard]] Status set_proxy(const ProxyConfig* proxy, ProxyRoom* room) {
    return tcp_.set_proxy(proxy, room);
  }
  // Sends later connections and lookups over `binding`; as TcpConnector::set_binding.
  [[nodiscard]] Status set_binding(const NetworkBinding* binding) {
    return tcp_.set_binding(binding);
  }
  // Saves the open connection's session if mbedTLS has a new one to give: a TLS 1.3 ticket
  // the server sent after the handshake, read with the response. exchange_done() does it after
  // each exchange; a caller that keeps the session on disk calls it before export_session(),
  // so that a download stopped in its first exchange (killed, cancelled) has one. Cheap when
  // there is nothing new (mbedTLS exports a session once per ticket).
  void refresh_session();
  // Whether a TLS handshake saved a session (or import_session() took one) to offer next.
  bool has_session() const { return session_.valid(); }
  // Counts the sessions saved (a handshake, a ticket after it) or imported: when it has not
  // changed, the session to offer is the same one.
  std::uint32_t session_generation() const { return session_generation_; }
  // Writes the saved session, bound to the host and port it was made with, as a record
  // (tls_session_record.hpp) at `wall_now` (ms since the Unix epoch), for a later process:
  // kNoSession before a TLS handshake saved one.
  TlsSessionRecordError export_session(Millis wall_now, MutableBytes out,
                                       std::size_t* written) const;
  // Takes a record export_session() wrote, for `host`:`port` under this connector's TLS
  // configuration at `wall_now`, in place of the saved session; on a refusal no session is
  // kept and the caller should delete the record. open() offers a session
  // only to the host and port it was made with.
  TlsSessionRecordError import_session(ConstBytes record, const char* host, std::uint16_t port,
                                       Millis wall_now);

 private:
  enum class Phase : std::uint8_t { kIdle, kDialing, kHandshaking, kReady };

  Status fail_tls(Status s);
  // Keeps `why` as failure_message(), after a note of the refused resumption if there was one.
  void set_tls_message(const char* why);
  // A handshake that offered the session failed: forgets it and dials again for a full one.
  Status redo_without_session(Millis now);
  bool on_tls() const { return phase_ == Phase::kHandshaking || phase_ == Phase::kReady; }

  TlsClientConfig& tls_;
  TcpConnector tcp_;
  TlsTransport tls_stream_;
  TlsSession session_;
  const char* host_ = "";
  std::uint16_t port_ = 0;
  Millis connect_timeout_{};
  Millis handshake_timeout_{};
  Millis handshake_deadline_ = Millis::max();
  ConstBytes early_;  // Offered for this open()'s handshake (TLS only).
  EarlyDataResult early_result_;
  // A handshake that wrote early data failed (a server that answers the early request and
  // closes can reset the connection before the handshake ends): this connector offers no more.
  bool early_failed_ = false;
  Phase phase_ = Phase::kIdle;
  bool use_tls_ = false;
  bool resumed_ = false;
  bool tls_failed_ = false;  // failure_message() is tls_message_, not the TCP connector's.
  // This open() redid a handshake whose resumption the server refused (at most once: the
  // session is gone then).
  bool resumption_refused_ = false;
  char tls_message_[352] = {};
  // The host and port session_ was made with (or imported for); open() drops it for others.
  char session_host_[256] = {};
  std::uint16_t session_port_ =
      0;  // Room for the TLS transport's 256 after set_tls_message's note.
  std::uint32_t session_generation_ = 0;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_
