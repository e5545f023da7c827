// TcpTlsConnector: the built-in Connector, TCP (numeric hosts parsed, names through
// getaddrinfo) with TLS over it (mbedTLS) for https:// URLs.
#ifndef STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_
#define STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_

#include <cstdint>

#include "stepback/https/connector.hpp"
#include "stepback/https/tcp_transport.hpp"
#include "stepback/https/tls.hpp"

namespace stepback::https {

// TCP (numeric hosts parsed, names through getaddrinfo, which blocks) and TLS over it for
// https:// URLs, with the session saved and offered again on reconnection.
class TcpTlsConnector final : public Connector {
 public:
  // `tls` may be null when only http:// URLs are used; it must outlive the connector.
  explicit TcpTlsConnector(TlsClientConfig* tls) : tls_(tls) {}
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

 private:
  enum class Phase : std::uint8_t { kIdle, kConnecting, kHandshaking, kReady };

  Status fail(Status s, const char* what);

  TlsClientConfig* tls_;
  TcpTransport tcp_;
  TlsTransport tls_stream_;
  TlsSession session_;
  const char* host_ = "";
  Millis handshake_timeout_{};
  Millis handshake_deadline_ = Millis::max();
  Phase phase_ = Phase::kIdle;
  bool use_tls_ = false;
  bool resumed_ = false;
  char message_[320] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_TLS_CONNECTOR_HPP_
