// TLS on mbedTLS 3.6: the client configuration shared by a client's connections, saved
// sessions for resumption, and TlsTransport, a Transport that runs TLS over another one.
// All mbedTLS memory comes from the TLS arena (tls_arena.hpp) once it is installed.
#ifndef STEPBACK_HTTPS_TLS_TLS_HPP_
#define STEPBACK_HTTPS_TLS_TLS_HPP_

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include <cstddef>
#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

class TrustStore;
struct PublicKeyPin;

// The plaintext bytes of the largest TLS record this build can receive: mbedTLS's input
// buffer (MBEDTLS_SSL_IN_CONTENT_LEN, set by the CMake option STEPBACK_TLS_IN_CONTENT_LEN).
// A full TLS record is 16384 bytes; a smaller buffer needs servers that honour
// max_fragment_length (TlsClientConfig::set_max_fragment_length).
inline constexpr std::size_t kTlsInputBufferBytes = MBEDTLS_SSL_IN_CONTENT_LEN;

namespace detail {
constexpr std::size_t largest_max_fragment(std::size_t in, std::size_t out) {
  const std::size_t room = in < out ? in : out;
  std::size_t n = 4096;
  while (n > room && n > 512) n /= 2;
  return n <= room ? n : 0;
}
}  // namespace detail

// The largest max_fragment_length this build can ask for (TlsClientConfig::
// set_max_fragment_length): the largest of 4096, 2048, 1024 and 512 bytes that both record
// buffers take (mbedTLS holds the peer to it in both directions).
inline constexpr std::size_t kTlsLargestMaxFragment =
    detail::largest_max_fragment(MBEDTLS_SSL_IN_CONTENT_LEN, MBEDTLS_SSL_OUT_CONTENT_LEN);

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

  // Seeds the DRBG from the OS and selects TLS 1.2-1.3 with verification required, and the
  // cipher suites by hardware: AES-128-GCM first when the CPU runs the pipelined AES-GCM
  // (stepback/gcm/gcm.hpp), mbedTLS's default order (ChaCha20-Poly1305 first) otherwise;
  // kError if the crypto library or the entropy source fails.
  [[nodiscard]] Status init();
  // Adds the PEM or DER certificates of `path` as trust anchors; kInvalidArgument if none parse
  // (or once use_trust_store() was called).
  [[nodiscard]] Status add_ca_file(const char* path);
  // Adds every certificate file in directory `path`; kInvalidArgument if none parse.
  [[nodiscard]] Status add_ca_dir(const char* path);
  // Adds PEM certificates from memory (`size` bytes, NUL not required).
  [[nodiscard]] Status add_ca_pem(const char* pem, std::size_t size);
  // Finds the trust anchors through `store` when a handshake needs them (mbedTLS's CA
  // callback; trust_store.hpp) instead of keeping them parsed: mbedTLS consults either the
  // callback or the list add_ca_* builds, so add_ca_* fail from now on and anchors they
  // added are no longer used (put extra anchors in the store: TrustStore::add_memory or
  // add_bundle). Before or after init(). `store` must outlive the configuration;
  // kInvalidArgument when it has no source.
  [[nodiscard]] Status use_trust_store(TrustStore& store);
  // Requires one of `count` public-key pins (SHA-256 of a SubjectPublicKeyInfo; see
  // trust_store.hpp) on some certificate of every verified chain: leaf, intermediate or
  // trust anchor. A full handshake whose chain has none fails with kTlsVerify and the
  // failure message "public-key pin mismatch: ..."; resumed sessions were pinned when they
  // were made. `pins` must outlive the configuration; count 0 ends pinning.
  void set_public_key_pins(const PublicKeyPin* pins, std::size_t count);
  const PublicKeyPin* public_key_pins() const { return pins_; }
  std::size_t public_key_pin_count() const { return pin_count_; }
  // Limits the negotiated versions (both inclusive; TLS 1.2 to 1.3 unless set, before or
  // after init()). A TLS 1.3 minimum ends a max_fragment_length request (see below).
  void set_versions(TlsVersion min, TlsVersion max);
  // Asks servers for records of at most `bytes` of plaintext (RFC 6066 max_fragment_length:
  // 512, 1024, 2048 or 4096), for a TLS input buffer below a full record; 0 (the default)
  // asks nothing. mbedTLS 3.6 negotiates it in TLS 1.2 only, and fails a TLS 1.3 handshake
  // whose server honours it (OpenSSL's does), so while it is asked for, TLS 1.2 is the highest
  // version offered. A server may still ignore it: a record larger than the input buffer
  // (kTlsInputBufferBytes) then fails the exchange, not retried, with a message that names
  // the buffer. kInvalidArgument for another size, for one above kTlsInputBufferBytes or the
  // output buffer, or under a TLS 1.3 minimum; nothing changes then.
  [[nodiscard]] Status set_max_fragment_length(std::size_t bytes);
  // The max_fragment_length asked for, in bytes; 0 when none is.
  std::size_t max_fragment_length() const { return max_fragment_; }
  // The wall clock (Millis since the Unix epoch) certificate validity is checked against, so
  // that a device whose clock the app corrects verifies with the corrected time; nullptr (the
  // default) for the C library's time(). Ignored when mbedTLS comes from an installed package.
  void set_wall_clock(Millis (*wall_now)()) { wall_now_ = wall_now; }
  Millis (*wall_clock() const)() { return wall_now_; }
  // Offers TLS 1.3 early data (0-RTT) on a resumed session whose ticket allows it, for the
  // bytes a connection is handed (TlsTransport::offer_early_data; the Client hands only
  // requests that may be replayed). On by default; off, the client never indicates early
  // data. Before or after init(), for the handshakes that start after it. Always off when
  // mbedTLS is built without MBEDTLS_SSL_EARLY_DATA.
  void set_early_data(bool on);
  bool early_data() const;
  // Whether at least one trust anchor is loaded.
  bool has_trust_anchors() const { return anchors_ > 0; }
  // SHA-256 over what verifying a server depends on here: the TLS versions, the public-key
  // pins, and the trust anchors (the certificates added, or the trust store's sources). A
  // session saved to disk is bound to it (tls_session_record.hpp), so that a change drops it.
  void verification_fingerprint(std::uint8_t (&out)[32]) const;
  // The cipher suites offered, in order, 0-terminated, as init() chose them; nullptr for
  // mbedTLS's default list (mbedtls_ssl_list_ciphersuites()).
  const int* ciphersuites() const { return suites_; }

  // The mbedTLS configuration, for TlsTransport.
  mbedtls_ssl_config* config() { return &conf_; }

 private:
  friend class TlsTransport;  // Reads store_anchor_ in its verify callback.

  // Hands mbedTLS the versions asked for, capped at TLS 1.2 while max_fragment_length is on.
  void apply_versions();
  // Hands mbedTLS the early data setting.
  void apply_early_data();
  // mbedTLS's CA callback over store_: TrustStore::ca_callback's candidates, except that a
  // self-issued certificate that is one of the anchors byte for byte gets none and is noted in
  // store_anchor_, for TlsTransport::verify_certificate to trust as the anchor it is.
  static int store_ca_callback(void* self, const mbedtls_x509_crt* child,
                               mbedtls_x509_crt** candidates);

  // Zeroed here, then set up by their mbedtls_*_init() in the constructor.
  mbedtls_ssl_config conf_{};
  mbedtls_x509_crt ca_{};
  mbedtls_entropy_context entropy_{};
  mbedtls_ctr_drbg_context drbg_{};
  TrustStore* store_ = nullptr;
  // The certificate store_ca_callback last found to be an anchor in the verification under way
  // (each callback call clears it first, and the verification of the leaf after it).
  mutable const mbedtls_x509_crt* store_anchor_ = nullptr;
  const PublicKeyPin* pins_ = nullptr;
  std::size_t pin_count_ = 0;
  const int* suites_ = nullptr;
  Millis (*wall_now_)() = nullptr;
  std::size_t max_fragment_ = 0;
  int anchors_ = 0;
  TlsVersion min_version_ = TlsVersion::kTls12;
  TlsVersion max_version_ = TlsVersion::kTls13;  // As asked; TLS 1.2 while max_fragment_ > 0.
  bool ready_ = false;
  bool early_data_ = true;
};

// A session saved after a handshake, offered on the next connection to skip the full
// handshake (TLS 1.2 tickets or session IDs, TLS 1.3 tickets).
namespace detail {
struct TlsSessionAccess;  // tls_session_record.cpp: saves and loads the session's bytes.
}  // namespace detail

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
  friend struct detail::TlsSessionAccess;
  mbedtls_ssl_session session_{};
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
  // kTlsVerify (failure_message() says which check failed, or that no public-key pin
  // matched), kTlsHandshake, or kReset.
  [[nodiscard]] Status handshake();
  // Offers `bytes` as TLS 1.3 early data for the handshake start() prepared: handshake()
  // writes in the first flight as many of them as the offered session's ticket allows, when
  // the configuration has early data on. They must stay unchanged until handshake() answers
  // kOk. After start(), before the first handshake().
  void offer_early_data(ConstBytes bytes) { early_ = bytes; }
  // After the handshake: what became of the bytes offered (kNone when none were written).
  EarlyDataResult early_data() const { return early_result_; }
  // Whether this handshake wrote any early data: the server may have acted on the request
  // even if the handshake then failed.
  bool wrote_early_data() const { return early_written_ > 0; }
  // Saves the current session into *out for the next connection.
  [[nodiscard]] Status save_session(TlsSession* out);
  // Whether the handshake resumed a saved session.
  bool resumed() const { return resumed_; }
  // Whether start() offered a saved session to the server.
  bool offered_session() const { return offered_session_; }
  // Whether the last handshake failed only because no certificate matched a public-key pin.
  bool pin_mismatch() const { return pin_mismatch_; }
  // The negotiated version, e.g. "TLSv1.3", or "" before the handshake.
  const char* version() const;
  // Why the last failure happened, in words (e.g. the certificate checks that failed, or a
  // record larger than the input buffer).
  const char* failure_message() const override { return message_; }

  [[nodiscard]] Status send(ConstBytes data, std::size_t* sent) override;
  // kClosed at the end of the stream between two records, whether or not close_notify came
  // first (many servers send none); an end inside a record, which loses its bytes, is kReset.
  [[nodiscard]] Status recv(MutableBytes out, std::size_t* received) override;
  int fd() const override;
  IoInterest wants() const override { return wants_; }
  // Sends close_notify if it can without blocking, then closes the lower transport.
  void close() override;

 private:
  static int bio_send(void* self, const unsigned char* buf, std::size_t len);
  static int bio_recv(void* self, unsigned char* buf, std::size_t len);
  static int verify_certificate(void* self, mbedtls_x509_crt* crt, int depth, std::uint32_t* flags);
  Status from_mbedtls(int ret);
  // Follows the record framing of the bytes received (header: type, version, 2-byte length).
  void track_records(const unsigned char* data, std::size_t size);
  // Whether the record mbedTLS is reading is longer than its input buffer takes; then
  // message_ says so, naming the buffer and max_fragment_length.
  bool record_beyond_buffer();
  // Writes what is left of the offered early data: 0 once there is nothing (more) to write
  // early, else mbedTLS's answer (want read or write, or a failure), as a handshake step's.
  int write_early();
  // After the handshake: what the server did with the bytes written early.
  EarlyDataResult early_outcome();
  // Whether early data may ride on `session`: only a TLS 1.3 session's ticket carries it.
  static bool may_carry_early_data(const mbedtls_ssl_session& session);

  mbedtls_ssl_context ssl_{};
  Transport* lower_ = nullptr;
  const TlsClientConfig* config_ = nullptr;
  Status lower_status_ = Status::kOk;  // What the lower transport last reported.
  // A send of the lower transport failed for good (reset, closed): what it reported. Later
  // sends report it at once, and the bytes mbedTLS flushes by itself while reading (TLS 1.3
  // flushes pending output after a NewSessionTicket) are dropped, so that the records the
  // server sent before it closed can still be read (an early 413).
  Status send_failure_ = Status::kOk;
  IoInterest wants_ = IoInterest::kNone;
  // Where the received bytes stand in the current record: header bytes seen (0 to 4), the
  // length read from them so far, and the body bytes still to come. All 0 between records.
  std::uint8_t record_header_seen_ = 0;
  std::uint16_t record_length_ = 0;
  std::size_t record_body_left_ = 0;
  // The length of the latest record whose header came whole: the one mbedTLS is reading,
  // since it asks the lower transport for no byte beyond the record it needs.
  std::uint16_t last_record_length_ = 0;
  ConstBytes early_;                // Offered as early data (offer_early_data).
  std::size_t early_written_ = 0;   // Of those, written early.
  EarlyDataResult early_result_;    // Set when the handshake completes.
  bool early_closed_ = false;       // mbedTLS can write no (more) early data on this handshake.
  bool cut_inside_record_ = false;  // The stream ended inside a record.
  bool started_ = false;
  bool resumed_ = false;
  bool handshake_done_ = false;
  bool offered_session_ = false;
  bool cert_seen_ = false;     // Set by the verify callback: a full handshake presents one.
  bool pin_matched_ = false;   // Some certificate of the verified chain has a pinned key.
  bool pin_mismatch_ = false;  // None had: the verify callback failed the chain.
  char message_[256] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TLS_TLS_HPP_
