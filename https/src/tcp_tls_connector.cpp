#include "stepback/https/tcp_tls_connector.hpp"

#include <cstdio>

namespace stepback::https {

Status TcpTlsConnector::open(const Url& url, const char* host, Millis now,
                             const Timeouts& timeouts) {
  close();
  resumed_ = false;
  tls_failed_ = false;
  use_tls_ = url.tls;
  host_ = host == nullptr ? "" : host;
  handshake_timeout_ = timeouts.tls_handshake;
  handshake_deadline_ = Millis::max();
  const Status s = use_tls_ ? tcp_.tunnel(host, url.port, now, timeouts.connect)
                            : tcp_.open(url, host, now, timeouts);
  if (s != Status::kOk) return s;
  phase_ = Phase::kDialing;
  return Status::kOk;
}

Status TcpTlsConnector::step(Millis now) {
  if (phase_ == Phase::kDialing) {
    const Status s = tcp_.step(now);
    if (s != Status::kOk) {
      if (s != Status::kWouldBlock) phase_ = Phase::kIdle;  // The TCP connector closed.
      return s;
    }
    if (!use_tls_) {
      phase_ = Phase::kReady;
      return Status::kOk;
    }
    const Status started = tls_stream_.start(tcp_.transport(), tls_, host_, &session_);
    if (started != Status::kOk) return fail_tls(started);
    phase_ = Phase::kHandshaking;
    handshake_deadline_ = now + handshake_timeout_;
  }
  if (phase_ == Phase::kHandshaking) {
    const Status s = tls_stream_.handshake();
    if (s == Status::kWouldBlock) {
      if (now < handshake_deadline_) return s;
      std::snprintf(tls_message_, sizeof tls_message_, "TLS handshake timed out");
      tls_failed_ = true;
      close();
      return Status::kTimeout;
    }
    if (s != Status::kOk) return fail_tls(s);
    resumed_ = tls_stream_.resumed();
    (void)tls_stream_.save_session(&session_);
    phase_ = Phase::kReady;
  }
  return phase_ == Phase::kReady ? Status::kOk : Status::kInvalidArgument;
}

int TcpTlsConnector::fd() const { return use_tls_ && on_tls() ? tls_stream_.fd() : tcp_.fd(); }

IoInterest TcpTlsConnector::wants() const {
  return use_tls_ && on_tls() ? tls_stream_.wants() : tcp_.wants();
}

Transport& TcpTlsConnector::stream() {
  if (use_tls_) return tls_stream_;
  return tcp_.stream();
}

Millis TcpTlsConnector::deadline() const {
  return phase_ == Phase::kHandshaking ? handshake_deadline_ : tcp_.deadline();
}

const char* TcpTlsConnector::failure_message() const {
  return tls_failed_ ? tls_message_ : tcp_.failure_message();
}

void TcpTlsConnector::exchange_done() {
  if (use_tls_ && phase_ == Phase::kReady) (void)tls_stream_.save_session(&session_);
}

void TcpTlsConnector::close() {
  if (use_tls_) tls_stream_.close();
  tcp_.close();
  phase_ = Phase::kIdle;
}

void TcpTlsConnector::network_changed() {
  close();
  tcp_.network_changed();
}

Status TcpTlsConnector::fail_tls(Status s) {
  std::snprintf(tls_message_, sizeof tls_message_, "%s", tls_stream_.failure_message());
  tls_failed_ = true;
  close();
  return s;
}

}  // namespace stepback::https
