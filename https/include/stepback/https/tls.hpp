// TLS on mbedTLS 3.6: the client configuration shared by a client's connections, saved
// sessions for resumption, and TlsTransport, a Transport that runs TLS over another one.
// All mbedTLS memory comes from the TLS arena (tls_arena.hpp) once it is installed.
#ifndef STEPBACK_HTTPS_TLS_HPP_
#define STEPBACK_HTTPS_TLS_HPP_

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include <cstddef>
#include <cstdint>

#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Protocol versions a configuration may negotiate.
enum class TlsVersion : std::uint8_t { kTls12, kTls13 };

// The trust anchors, DRBG and mbedTLS configuration of one client; set up once, then
// shared by every connection of the client. Not copyable or movable (mbedTLS keeps
// pointers into it).
class TlsClientConfig {
 public:
  TlsClientConfig();
  ~TlsClientConfig();
  TlsClientConfig(const TlsClientConfig&) = delete;
  TlsClientConfig& operator=(const TlsClientConfig&) = delete;

  // Seeds the DRBG from the OS and selects TLS 1.2-1.3 with verification required;
  // kError if the crypto library or the entropy source fails.
  [[nodiscard]] Status init();
  // Adds the PEM or DER certificates of `path` as trust anchors; kInvalidArgument if none parse.
  [[nodiscard]] Status add_ca_file(const char* path);
  // Adds every certificate file in directory `path`; kInvalidArgument if none parse.
  [[nodiscard]] Status add_ca_dir(const char* path);
  // Adds PEM certificates from memory (`size` bytes, NUL not required).
  [[nodiscard]] Status add_ca_pem(const char* pem, std::size_t size);
  // Limits the negotiated versions (both inclusive).
  void set_versions(TlsVersion min, TlsVersion max);
  // Whether at least one trust anchor is loaded.
  bool has_trust_anchors() const { return anchors_ > 0; }

  // The mbedTLS configuration, for TlsTransport.
  mbedtls_ssl_config* config() { return &conf_; }

 private:
  mbedtls_ssl_config conf_;
  mbedtls_x509_crt ca_;
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  int anchors_ = 0;
  bool ready_ = false;
};

// A session saved after a handshake, offered on the next connection to skip the full
// handshake (TLS 1.2 tickets or session IDs, TLS 1.3 tickets).
class TlsSession {
 public:
  TlsSession();
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Whether a session is saved.
  bool valid() const { return valid_; }
  // Forgets the saved session.
  void clear();

 private:
  friend class TlsTransport;
  mbedtls_ssl_session session_;
  bool valid_ = false;
};

// TLS over a connected lower transport (usually TcpTransport), step-driven like it.
class TlsTransport final : public Transport {
 public:
  TlsTransport();
  ~TlsTransport();
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  // Prepares a handshake over `lower` with `host` as SNI and the name to verify, offering
  // `session` if it holds one; `lower`, `config` and `session` must outlive the transport.
  [[nodiscard]] Status start(Transport& lower, TlsClientConfig& config, const char* host,
                             const TlsSession* session);
  // Advances the handshake: kOk when done, kWouldBlock (poll fd() for wants()),
  // kTlsVerify (failure_message() says which check failed), kTlsHandshake, or kReset.
  [[nodiscard]] Status handshake();
  // Saves the current session into *out for the next connection.
  [[nodiscard]] Status save_session(TlsSession* out);
  // Whether the handshake resumed a saved session.
  bool resumed() const { return resumed_; }
  // The negotiated version, e.g. "TLSv1.3", or "" before the handshake.
  const char* version() const;
  // Why the last failure happened, in words (e.g. the certificate checks that failed).
  const char* failure_message() const { return message_; }

  [[nodiscard]] Status send(ConstBytes data, std::size_t* sent) override;
  [[nodiscard]] Status recv(MutableBytes out, std::size_t* received) override;
  int fd() const override;
  IoInterest wants() const override { return wants_; }
  // Sends close_notify if it can without blocking, then closes the lower transport.
  void close() override;

 private:
  static int bio_send(void* self, const unsigned char* buf, std::size_t len);
  static int bio_recv(void* self, unsigned char* buf, std::size_t len);
  Status from_mbedtls(int ret);

  mbedtls_ssl_context ssl_;
  Transport* lower_ = nullptr;
  Status lower_status_ = Status::kOk;  // What the lower transport last reported.
  IoInterest wants_ = IoInterest::kNone;
  bool started_ = false;
  bool resumed_ = false;
  bool handshake_done_ = false;
  bool offered_session_ = false;
  bool cert_seen_ = false;  // Set by the verify callback: a full handshake presents one.
  char message_[256] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TLS_HPP_
