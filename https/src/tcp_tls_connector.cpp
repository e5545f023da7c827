#include "stepback/https/tcp_tls_connector.hpp"

#include <cstdio>
#include <cstring>

namespace stepback::https {

Status TcpTlsConnector::open(const Url& url, const char* host, Millis now,
                             const Timeouts& timeouts) {
  close();
  resumed_ = false;
  tls_failed_ = false;
  resumption_refused_ = false;
  early_ = ConstBytes{};
  early_result_ = EarlyDataResult{};
  use_tls_ = url.tls;
  host_ = host == nullptr ? "" : host;
  port_ = url.port;
  connect_timeout_ = timeouts.connect;
  handshake_timeout_ = timeouts.tls_handshake;
  handshake_deadline_ = Millis::max();
  if (session_.valid() && (port_ != session_port_ || std::strcmp(host_, session_host_) != 0)) {
    session_.clear();  // Made with another server: offered to this one, it would be refused.
  }
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
    if (tls_.early_data() && !early_failed_) tls_stream_.offer_early_data(early_);
    phase_ = Phase::kHandshaking;
    handshake_deadline_ = now + handshake_timeout_;
  }
  if (phase_ == Phase::kHandshaking) {
    const Status s = tls_stream_.handshake();
    if (s == Status::kWouldBlock) {
      if (now < handshake_deadline_) return s;
      set_tls_message("TLS handshake timed out");
      tls_failed_ = true;
      close();
      return Status::kTimeout;
    }
    // The request went as early data and the server may have acted on it: no silent redo,
    // which would send it once more. The attempt fails as a transport failure (only a request
    // that may be replayed rides early), and later connections offer no early data.
    if (s != Status::kOk && tls_stream_.wrote_early_data()) {
      early_failed_ = true;
      std::snprintf(
          tls_message_, sizeof tls_message_,
          "%.200s, after the request went in TLS early data (the server may have acted on "
          "it; this connection sends no more early data)",
          tls_stream_.failure_message());
      tls_failed_ = true;
      close();
      return s;
    }
    // A certificate that does not verify came with a full handshake (the server did not take
    // the session): it would come again. Any other failure may be the resumption's own.
    if (s != Status::kOk && s != Status::kTlsVerify && tls_stream_.offered_session()) {
      return redo_without_session(now);
    }
    if (s != Status::kOk) return fail_tls(s);
    resumed_ = tls_stream_.resumed();
    early_result_ = tls_stream_.early_data();
    if (tls_stream_.save_session(&session_) == Status::kOk) ++session_generation_;
    std::snprintf(session_host_, sizeof session_host_, "%s", host_);
    session_port_ = port_;
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

void TcpTlsConnector::exchange_done() { refresh_session(); }

void TcpTlsConnector::refresh_session() {
  if (use_tls_ && phase_ == Phase::kReady && tls_stream_.save_session(&session_) == Status::kOk) {
    ++session_generation_;  // A TLS 1.3 ticket that came after the handshake.
  }
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
  set_tls_message(tls_stream_.failure_message());
  tls_failed_ = true;
  close();
  return s;
}

void TcpTlsConnector::set_tls_message(const char* why) {
  if (resumption_refused_) {
    std::snprintf(tls_message_, sizeof tls_message_,
                  "the server refused the resumed TLS session, and the full handshake after it "
                  "failed too: %s",
                  why);
  } else {
    std::snprintf(tls_message_, sizeof tls_message_, "%s", why);
  }
}

// mbedTLS offers only the saved session's TLS version when it resumes, so a server behind the
// same address that now speaks another version (mixed backends behind one load balancer, a
// rollback, another TLS-terminating proxy) refuses the handshake, where a full one would
// succeed. The connection is dialed again at once without the session, inside this open():
// no retry is spent and no backoff waited on a failure the client brought on itself, and
// the retry machine keeps its rule that a refused handshake is terminal. The session is
// forgotten first, so this happens at most once per open(); the lookup, connect and
// handshake timeouts apply to the new connection as to the first.
Status TcpTlsConnector::redo_without_session(Millis now) {
  session_.clear();
  resumption_refused_ = true;
  close();
  const Status s = tcp_.tunnel(host_, port_, now, connect_timeout_);
  if (s != Status::kOk) return s;
  phase_ = Phase::kDialing;
  return step(now);
}

TlsSessionRecordError TcpTlsConnector::export_session(Millis wall_now, MutableBytes out,
                                                      std::size_t* written) const {
  return save_tls_session_record(session_, tls_, session_host_, session_port_, wall_now, out,
                                 written);
}

TlsSessionRecordError TcpTlsConnector::import_session(ConstBytes record, const char* host,
                                                      std::uint16_t port, Millis wall_now) {
  const TlsSessionRecordError error =
      load_tls_session_record(record, tls_, host, port, wall_now, &session_);
  if (error != TlsSessionRecordError::kNone) return error;
  std::snprintf(session_host_, sizeof session_host_, "%s", host);
  session_port_ = port;
  ++session_generation_;
  return TlsSessionRecordError::kNone;
}

}  // namespace stepback::https
