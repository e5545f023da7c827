#include "stepback/https/tcp_tls_connector.hpp"

#include <cstdio>
#include <cstring>

namespace stepback::https {

Status TcpTlsConnector::open(const Url& url, const char* host, Millis now,
                             const Timeouts& timeouts) {
  close();
  message_[0] = '\0';
  resumed_ = false;
  use_tls_ = url.tls;
  host_ = host;
  handshake_timeout_ = timeouts.tls_handshake;
  handshake_deadline_ = Millis::max();
  if (use_tls_ && tls_ == nullptr) return fail(Status::kInvalidArgument, "https needs a TLS configuration");
  phase_ = Phase::kConnecting;
  const Status s = tcp_.start(host, url.port, now, timeouts.connect);
  if (s != Status::kOk && s != Status::kWouldBlock) {
    return fail(s, s == Status::kDnsFailed ? "name lookup failed" : "could not connect");
  }
  return Status::kOk;
}

Status TcpTlsConnector::step(Millis now) {
  if (phase_ == Phase::kConnecting) {
    const Status s = tcp_.step_connect(now);
    if (s == Status::kWouldBlock) return s;
    if (s != Status::kOk) return fail(s, s == Status::kConnectTimeout ? "connect timed out" : "could not connect");
    if (!use_tls_) {
      phase_ = Phase::kReady;
      return Status::kOk;
    }
    const Status started = tls_stream_.start(tcp_, *tls_, host_, &session_);
    if (started != Status::kOk) return fail(started, tls_stream_.failure_message());
    phase_ = Phase::kHandshaking;
    handshake_deadline_ = now + handshake_timeout_;
  }
  if (phase_ == Phase::kHandshaking) {
    const Status s = tls_stream_.handshake();
    if (s == Status::kWouldBlock) {
      if (now >= handshake_deadline_) return fail(Status::kTimeout, "TLS handshake timed out");
      return s;
    }
    if (s != Status::kOk) return fail(s, tls_stream_.failure_message());
    resumed_ = tls_stream_.resumed();
    (void)tls_stream_.save_session(&session_);
    phase_ = Phase::kReady;
  }
  return phase_ == Phase::kReady ? Status::kOk : Status::kInvalidArgument;
}

int TcpTlsConnector::fd() const {
  // While TCP connects, the TLS transport has no descriptor yet: the socket is the TCP one.
  return phase_ == Phase::kHandshaking || (phase_ == Phase::kReady && use_tls_) ? tls_stream_.fd()
                                                                                : tcp_.fd();
}

IoInterest TcpTlsConnector::wants() const {
  return phase_ == Phase::kHandshaking || (phase_ == Phase::kReady && use_tls_)
             ? tls_stream_.wants()
             : tcp_.wants();
}

Transport& TcpTlsConnector::stream() {
  if (use_tls_) return tls_stream_;
  return tcp_;
}

Millis TcpTlsConnector::deadline() const {
  return phase_ == Phase::kHandshaking ? handshake_deadline_ : tcp_.deadline();
}

void TcpTlsConnector::exchange_done() {
  if (use_tls_ && phase_ == Phase::kReady) (void)tls_stream_.save_session(&session_);
}

void TcpTlsConnector::close() {
  if (use_tls_) tls_stream_.close();
  tcp_.close();
  phase_ = Phase::kIdle;
}

Status TcpTlsConnector::fail(Status s, const char* what) {
  // Keeps the OS's words for socket failures ("Connection refused"), which say more than ours.
  if (tcp_.last_error() > 0 && (s == Status::kConnectFailed || s == Status::kConnectTimeout)) {
    std::snprintf(message_, sizeof message_, "%s: %s", what, std::strerror(tcp_.last_error()));
  } else if (what != message_) {
    std::snprintf(message_, sizeof message_, "%s", what);
  }
  close();
  return s;
}

}  // namespace stepback::https
