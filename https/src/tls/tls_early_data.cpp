// TLS 1.3 early data (0-RTT) in the TLS client configuration and transport: whether it is
// offered, writing the bytes offered in the handshake's first flight, and what the server did
// with them (docs/https.md, "Early data (0-RTT)").
#include "stepback/https/tls/tls.hpp"

namespace stepback::https {

void TlsClientConfig::set_early_data(bool on) {
  early_data_ = on;
  if (ready_) apply_early_data();
}

bool TlsClientConfig::early_data() const {
#if defined(MBEDTLS_SSL_EARLY_DATA)
  return early_data_;
#else
  return false;
#endif
}

void TlsClientConfig::apply_early_data() {
#if defined(MBEDTLS_SSL_EARLY_DATA)
  mbedtls_ssl_conf_early_data(
      &conf_, early_data_ ? MBEDTLS_SSL_EARLY_DATA_ENABLED : MBEDTLS_SSL_EARLY_DATA_DISABLED);
#endif
}

// mbedTLS writes early data only on a handshake that offers a TLS 1.3 session whose ticket
// allows it, and no more than the ticket's max_early_data_size; it answers "cannot write"
// otherwise, and from then on for this handshake, which then goes on as usual.
int TlsTransport::write_early() {
#if defined(MBEDTLS_SSL_EARLY_DATA)
  while (!early_closed_ && early_written_ < early_.size && offered_session_) {
    const int ret = mbedtls_ssl_write_early_data(&ssl_, early_.data + early_written_,
                                                 early_.size - early_written_);
    if (ret > 0) {
      early_written_ += static_cast<std::size_t>(ret);
      continue;
    }
    if (ret == 0 || ret == MBEDTLS_ERR_SSL_CANNOT_WRITE_EARLY_DATA) {
      early_closed_ = true;
      break;
    }
    return ret;
  }
#endif
  return 0;
}

// mbedtls_ssl_write_early_data() steps the handshake until the early-data exchange has begun
// (a TLS 1.3 ClientHello offering early data) or is known not to (one that does not). A
// ClientHello resuming a TLS 1.2 session is neither, and mbedTLS steps on: when the server's
// whole flight is already there to read (a fast server, a slow client), through the end of
// the handshake and past it, where it answers "bad input data" and the handshake fails. So a
// TLS 1.2 session gets no early data offered (the session's version is a private field;
// tls_session_record.cpp reads it the same way).
bool TlsTransport::may_carry_early_data(const mbedtls_ssl_session& session) {
#if defined(MBEDTLS_SSL_EARLY_DATA)
  return session.MBEDTLS_PRIVATE(tls_version) == MBEDTLS_SSL_VERSION_TLS1_3;
#else
  (void)session;
  return false;
#endif
}

EarlyDataResult TlsTransport::early_outcome() {
  EarlyDataResult r;
#if defined(MBEDTLS_SSL_EARLY_DATA)
  if (early_written_ == 0) return r;
  const int status = mbedtls_ssl_get_early_data_status(&ssl_);
  if (status == MBEDTLS_SSL_EARLY_DATA_STATUS_ACCEPTED) {
    r.state = EarlyData::kAccepted;
    r.sent = early_written_;
  } else {
    // Rejected (the server did not take the ticket, or takes no early data): it read none
    // of the bytes, which go again after the handshake.
    r.state = EarlyData::kRejected;
  }
#endif
  return r;
}

}  // namespace stepback::https
