#include "stepback/https/tls/tls.hpp"

#include <mbedtls/error.h>
#include <mbedtls/x509.h>
#include <mbedtls/platform.h>
#include <psa/crypto.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "stepback/https/tls/trust_store.hpp"

#if defined(STEPBACK_CERTIFICATE_CLOCK)
#include "certificate_clock.hpp"
#endif

#if defined(MBEDTLS_GCM_ALT)
#include "stepback/gcm/gcm.hpp"
#endif

namespace stepback::https {
namespace {

constexpr char kPersonalization[] = "stepback tls client";

// The AEAD suites by cost on a CPU with AES and carry-less multiply, where the pipelined
// AES-GCM of https/mbedtls/gcm/ runs (AES-128-GCM cheapest, then AES-256-GCM, then
// ChaCha20-Poly1305 in software). Without them mbedTLS's own order, ChaCha20-Poly1305 first, is
// already right.
constexpr int kAesFirstSuites[] = {
    MBEDTLS_TLS1_3_AES_128_GCM_SHA256,
    MBEDTLS_TLS1_3_AES_256_GCM_SHA384,
    MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    0,
};

// mbedTLS's own list with RSA-PSS (which TLS 1.3 requires of an RSA certificate) after
// PKCS#1 v1.5: mbedTLS 3.6.6's TLS 1.2 client offers rsa_pss_rsae_* but rejects a
// ServerKeyExchange signed with one (fixed upstream after 3.6.6, Mbed-TLS/mbedtls c4738fab), so
// a TLS 1.2 server that follows the client's order must meet PKCS#1 v1.5 first.
constexpr std::uint16_t kSignatureSchemes[] = {
    MBEDTLS_TLS1_3_SIG_ECDSA_SECP256R1_SHA256,
    MBEDTLS_TLS1_3_SIG_ECDSA_SECP384R1_SHA384,
    MBEDTLS_TLS1_3_SIG_RSA_PKCS1_SHA512,
    MBEDTLS_TLS1_3_SIG_RSA_PKCS1_SHA384,
    MBEDTLS_TLS1_3_SIG_RSA_PKCS1_SHA256,
    MBEDTLS_TLS1_3_SIG_RSA_PSS_RSAE_SHA256,
    MBEDTLS_TLS1_3_SIG_RSA_PSS_RSAE_SHA384,
    MBEDTLS_TLS1_3_SIG_RSA_PSS_RSAE_SHA512,
    MBEDTLS_TLS1_3_SIG_NONE,
};

mbedtls_ssl_protocol_version to_mbedtls(TlsVersion v) {
  return v == TlsVersion::kTls13 ? MBEDTLS_SSL_VERSION_TLS1_3 : MBEDTLS_SSL_VERSION_TLS1_2;
}

// The key-exchange groups offered, cheapest first: a TLS 1.3 client sends a key share for the
// first. P-256 before X25519 because mbedTLS's P-256 (NIST reduction, a static comb table for the
// key) takes fewer instructions for the key share and the shared secret than its X25519
// (docs/performance.md), and every TLS 1.3 server must take P-256 (RFC 8446, 9.1), so it costs
// no HelloRetryRequest. mbedTLS's default order is X25519, P-256, P-384.
constexpr std::uint16_t kGroups[] = {
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
    MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1,
#endif
#if defined(MBEDTLS_ECP_DP_CURVE25519_ENABLED)
    MBEDTLS_SSL_IANA_TLS_GROUP_X25519,
#endif
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
    MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1,
#endif
    MBEDTLS_SSL_IANA_TLS_GROUP_NONE,
};

}  // namespace

TlsClientConfig::TlsClientConfig() {
  mbedtls_ssl_config_init(&conf_);
  mbedtls_x509_crt_init(&ca_);
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
}

TlsClientConfig::~TlsClientConfig() {
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_entropy_free(&entropy_);
  mbedtls_x509_crt_free(&ca_);
  mbedtls_ssl_config_free(&conf_);
}

Status TlsClientConfig::init() {
  if (ready_) return Status::kOk;
  if (psa_crypto_init() != PSA_SUCCESS) return Status::kError;
  if (mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_,
                            reinterpret_cast<const unsigned char*>(kPersonalization),
                            sizeof kPersonalization - 1) != 0) {
    return Status::kError;
  }
  if (mbedtls_ssl_config_defaults(&conf_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                  MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
    return Status::kError;
  }
  mbedtls_ssl_conf_rng(&conf_, mbedtls_ctr_drbg_random, &drbg_);
  mbedtls_ssl_conf_authmode(&conf_, MBEDTLS_SSL_VERIFY_REQUIRED);
  if (store_ != nullptr) {
    mbedtls_ssl_conf_ca_cb(&conf_, &TlsClientConfig::store_ca_callback, this);
  } else {
    mbedtls_ssl_conf_ca_chain(&conf_, &ca_, nullptr);
  }
  // Without this mbedTLS 3.6 drops TLS 1.3 tickets, and reconnections never resume.
  mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(
      &conf_, MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED);
  mbedtls_ssl_conf_sig_algs(&conf_, kSignatureSchemes);
  apply_versions();
  apply_early_data();
  mbedtls_ssl_conf_groups(&conf_, kGroups);
#if defined(MBEDTLS_GCM_ALT)
  if (stepback::gcm::engine() != stepback::gcm::Engine::kSoftware) {
    mbedtls_ssl_conf_ciphersuites(&conf_, kAesFirstSuites);
    suites_ = kAesFirstSuites;
  }
#endif
  ready_ = true;
  return Status::kOk;
}

Status TlsClientConfig::add_ca_file(const char* path) {
  if (store_ != nullptr) return Status::kInvalidArgument;
  const int ret = mbedtls_x509_crt_parse_file(&ca_, path);
  // A positive result counts certificates that failed to parse among others that did.
  if (ret < 0) return Status::kInvalidArgument;
  ++anchors_;
  return Status::kOk;
}

Status TlsClientConfig::add_ca_dir(const char* path) {
  if (store_ != nullptr) return Status::kInvalidArgument;
  const int ret = mbedtls_x509_crt_parse_path(&ca_, path);
  if (ret < 0 || ca_.version == 0) return Status::kInvalidArgument;
  ++anchors_;
  return Status::kOk;
}

Status TlsClientConfig::add_ca_pem(const char* pem, std::size_t size) {
  if (store_ != nullptr) return Status::kInvalidArgument;
  // mbedTLS wants PEM NUL-terminated and counted with the NUL; copy into the arena if not.
  if (size > 0 && pem[size - 1] == '\0') {
    if (mbedtls_x509_crt_parse(&ca_, reinterpret_cast<const unsigned char*>(pem), size) < 0) {
      return Status::kInvalidArgument;
    }
  } else {
    auto* copy = static_cast<unsigned char*>(mbedtls_calloc(1, size + 1));
    if (copy == nullptr) return Status::kBufferTooSmall;
    std::memcpy(copy, pem, size);
    const int ret = mbedtls_x509_crt_parse(&ca_, copy, size + 1);
    mbedtls_free(copy);
    if (ret < 0) return Status::kInvalidArgument;
  }
  ++anchors_;
  return Status::kOk;
}

// mbedTLS trusts a self-issued leaf that is byte for byte one of the anchors of its own list
// without checking the leaf's signature (x509_crt_check_ee_locally_trusted), but it has no list
// to compare with when a CA callback supplies the anchors: it then checks that signature against
// the anchor found, one ECDSA or RSA verification that proves nothing more. Giving such a
// certificate no candidates leaves mbedTLS's chain at it, marked not trusted, and
// TlsTransport::verify_certificate lifts that one flag for it: the same rule as mbedTLS's list.
int TlsClientConfig::store_ca_callback(void* self, const mbedtls_x509_crt* child,
                                       mbedtls_x509_crt** candidates) {
  auto* config = static_cast<TlsClientConfig*>(self);
  config->store_anchor_ = nullptr;
  const int ret = TrustStore::ca_callback(config->store_, child, candidates);
  const bool self_issued =
      child->issuer_raw.len == child->subject_raw.len &&
      std::memcmp(child->issuer_raw.p, child->subject_raw.p, child->issuer_raw.len) == 0;
  if (ret != 0 || !self_issued) return ret;
  for (const mbedtls_x509_crt* c = *candidates; c != nullptr; c = c->next) {
    if (c->version != 0 && c->raw.len == child->raw.len &&
        std::memcmp(c->raw.p, child->raw.p, child->raw.len) == 0) {
      mbedtls_x509_crt_free(*candidates);
      mbedtls_free(*candidates);
      *candidates = nullptr;
      config->store_anchor_ = child;
      break;
    }
  }
  return ret;
}

Status TlsClientConfig::use_trust_store(TrustStore& store) {
  if (store.source_count() == 0) return Status::kInvalidArgument;
  store_ = &store;
  // init() installs the callback if it has not run yet (mbedtls_ssl_config_defaults would
  // not keep it anyway).
  if (ready_) mbedtls_ssl_conf_ca_cb(&conf_, &TlsClientConfig::store_ca_callback, this);
  ++anchors_;
  return Status::kOk;
}

void TlsClientConfig::set_public_key_pins(const PublicKeyPin* pins, std::size_t count) {
  pins_ = count > 0 ? pins : nullptr;
  pin_count_ = pins != nullptr ? count : 0;
}

Status TlsClientConfig::set_max_fragment_length(std::size_t bytes) {
  unsigned char code = MBEDTLS_SSL_MAX_FRAG_LEN_NONE;
  switch (bytes) {
    case 0:
      break;
    case 512:
      code = MBEDTLS_SSL_MAX_FRAG_LEN_512;
      break;
    case 1024:
      code = MBEDTLS_SSL_MAX_FRAG_LEN_1024;
      break;
    case 2048:
      code = MBEDTLS_SSL_MAX_FRAG_LEN_2048;
      break;
    case 4096:
      code = MBEDTLS_SSL_MAX_FRAG_LEN_4096;
      break;
    default:
      return Status::kInvalidArgument;
  }
  if (bytes > 0 && min_version_ == TlsVersion::kTls13) return Status::kInvalidArgument;
  // mbedTLS refuses a length above either record buffer (MBEDTLS_TLS_EXT_ADV_CONTENT_LEN).
  if (mbedtls_ssl_conf_max_frag_len(&conf_, code) != 0) return Status::kInvalidArgument;
  max_fragment_ = bytes;
  apply_versions();
  return Status::kOk;
}

void TlsClientConfig::set_versions(TlsVersion min, TlsVersion max) {
  min_version_ = min;
  max_version_ = max;
  if (min == TlsVersion::kTls13 && max_fragment_ > 0) {
    (void)mbedtls_ssl_conf_max_frag_len(&conf_, MBEDTLS_SSL_MAX_FRAG_LEN_NONE);
    max_fragment_ = 0;
  }
  apply_versions();
}

void TlsClientConfig::apply_versions() {
  // mbedTLS writes max_fragment_length into a ClientHello that offers TLS 1.2, but its TLS 1.3
  // client takes the server's answer for an extension it never sent and ends the handshake
  // (unsupported_extension): with the extension on, TLS 1.3 is not offered.
  const TlsVersion max = max_fragment_ > 0 ? TlsVersion::kTls12 : max_version_;
  mbedtls_ssl_conf_min_tls_version(&conf_, to_mbedtls(min_version_));
  mbedtls_ssl_conf_max_tls_version(&conf_, to_mbedtls(max));
}

TlsSession::TlsSession() { mbedtls_ssl_session_init(&session_); }
TlsSession::~TlsSession() { mbedtls_ssl_session_free(&session_); }

void TlsSession::clear() {
  mbedtls_ssl_session_free(&session_);
  mbedtls_ssl_session_init(&session_);
  valid_ = false;
}

TlsTransport::TlsTransport() { mbedtls_ssl_init(&ssl_); }
TlsTransport::~TlsTransport() { mbedtls_ssl_free(&ssl_); }

Status TlsTransport::start(Transport& lower, TlsClientConfig& config, const char* host,
                           const TlsSession* session) {
  mbedtls_ssl_free(&ssl_);
  mbedtls_ssl_init(&ssl_);
  lower_ = &lower;
  config_ = &config;
  lower_status_ = Status::kOk;
  send_failure_ = Status::kOk;
  wants_ = IoInterest::kNone;
  record_header_seen_ = 0;
  record_length_ = 0;
  record_body_left_ = 0;
  last_record_length_ = 0;
  cut_inside_record_ = false;
  resumed_ = false;
  handshake_done_ = false;
  cert_seen_ = false;
  pin_matched_ = false;
  pin_mismatch_ = false;
  offered_session_ = false;
  early_ = ConstBytes{};
  early_written_ = 0;
  early_result_ = EarlyDataResult{};
  early_closed_ = false;
  message_[0] = '\0';
  if (mbedtls_ssl_setup(&ssl_, config.config()) != 0) {
    std::snprintf(message_, sizeof message_, "TLS set-up failed: the TLS arena is too small");
    return Status::kBufferTooSmall;
  }
  if (mbedtls_ssl_set_hostname(&ssl_, host) != 0) return Status::kInvalidArgument;
  mbedtls_ssl_set_bio(&ssl_, this, &TlsTransport::bio_send, &TlsTransport::bio_recv, nullptr);
  mbedtls_ssl_set_verify(&ssl_, &TlsTransport::verify_certificate, this);
  if (session != nullptr && session->valid_) {
    offered_session_ = mbedtls_ssl_set_session(&ssl_, &session->session_) == 0;
    early_closed_ = !may_carry_early_data(session->session_);
  }
  started_ = true;
  return Status::kOk;
}

Status TlsTransport::handshake() {
  if (!started_) return Status::kInvalidArgument;
#if defined(STEPBACK_CERTIFICATE_CLOCK)
  // Certificate validity is checked inside this step, against the configuration's clock.
  const detail::CertificateClockScope clock(config_->wall_clock());
#endif
  int ret = write_early();
  if (ret == 0) ret = mbedtls_ssl_handshake(&ssl_);
  if (ret == 0) {
    handshake_done_ = true;
    wants_ = IoInterest::kNone;
    resumed_ = offered_session_ && !cert_seen_;
    early_result_ = early_outcome();
    return Status::kOk;
  }
  if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
    const std::uint32_t flags = mbedtls_ssl_get_verify_result(&ssl_);
    if (pin_mismatch_ && (flags & ~static_cast<std::uint32_t>(MBEDTLS_X509_BADCERT_OTHER)) == 0) {
      std::snprintf(message_, sizeof message_,
                    "public-key pin mismatch: the chain verified, but none of its certificates "
                    "has a pinned key (SHA-256 of the SubjectPublicKeyInfo)");
      return Status::kTlsVerify;
    }
    pin_mismatch_ = false;  // Another check failed too: report that one.
    char info[sizeof message_ - 40];
    mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
    // verify_info ends each check with a newline; keep one line per check, joined by "; ".
    for (char* c = info; *c != '\0'; ++c) {
      if (*c == '\n') *c = (c[1] == '\0') ? '\0' : ';';
    }
    std::snprintf(message_, sizeof message_, "certificate verification failed: %s", info);
    return Status::kTlsVerify;
  }
  return from_mbedtls(ret);
}

Status TlsTransport::save_session(TlsSession* out) {
  if (out == nullptr) return Status::kInvalidArgument;
  // mbedTLS exports a session once (until a TLS 1.3 ticket renews it): a second call fails,
  // and must not wipe the session saved by the first.
  mbedtls_ssl_session fresh;
  mbedtls_ssl_session_init(&fresh);
  if (mbedtls_ssl_get_session(&ssl_, &fresh) != 0) {
    mbedtls_ssl_session_free(&fresh);
    return Status::kError;
  }
  out->clear();
  out->session_ = fresh;  // Takes ownership of what `fresh` points to.
  out->valid_ = true;
  return Status::kOk;
}

const char* TlsTransport::version() const {
  return handshake_done_ ? mbedtls_ssl_get_version(&ssl_) : "";
}

Status TlsTransport::send(ConstBytes data, std::size_t* sent) {
  *sent = 0;
  if (send_failure_ != Status::kOk) {
    return send_failure_ == Status::kClosed ? Status::kReset : send_failure_;
  }
  for (;;) {
    const int ret = mbedtls_ssl_write(&ssl_, data.data, data.size);
    if (ret >= 0) {
      *sent = static_cast<std::size_t>(ret);
      return Status::kOk;
    }
    // A ticket the last read left half-handled (a server that sends it after its first
    // response, as after early data) is finished by the write, which says so: write on.
    if (ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) continue;
    return from_mbedtls(ret);
  }
}

Status TlsTransport::recv(MutableBytes out, std::size_t* received) {
  *received = 0;
  for (;;) {
    const int ret = mbedtls_ssl_read(&ssl_, out.data, out.size);
    if (ret > 0) {
      *received = static_cast<std::size_t>(ret);
      return Status::kOk;
    }
    if (ret == 0 || ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) return Status::kClosed;
    // TLS 1.3 post-handshake messages carry no application data; read on.
    if (ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) continue;
    return from_mbedtls(ret);
  }
}

int TlsTransport::fd() const { return lower_ != nullptr ? lower_->fd() : -1; }

void TlsTransport::close() {
  if (handshake_done_) (void)mbedtls_ssl_close_notify(&ssl_);
  started_ = false;
  handshake_done_ = false;
  if (lower_ != nullptr) lower_->close();
}

// Called by mbedTLS for each certificate of the chain it built, the trust anchor first and
// the leaf (depth 0) last, whether or not the chain verified. Notes that a certificate was
// presented (so a handshake without one is known resumed) and checks the public-key pins.
int TlsTransport::verify_certificate(void* self, mbedtls_x509_crt* crt, int depth,
                                     std::uint32_t* flags) {
  auto* t = static_cast<TlsTransport*>(self);
  t->cert_seen_ = true;
  // One of the trust store's anchors itself (TlsClientConfig::store_ca_callback).
  if (t->config_ != nullptr && crt == t->config_->store_anchor_) {
    *flags &= ~static_cast<std::uint32_t>(MBEDTLS_X509_BADCERT_NOT_TRUSTED);
  }
  // The leaf comes last: no later verification may meet a stale pointer at the same address.
  if (t->config_ != nullptr && depth == 0) t->config_->store_anchor_ = nullptr;
  if (t->config_ == nullptr || t->config_->public_key_pin_count() == 0) return 0;
  if (!t->pin_matched_ &&
      matches_pin(*crt, t->config_->public_key_pins(), t->config_->public_key_pin_count())) {
    t->pin_matched_ = true;
  }
  if (depth == 0 && !t->pin_matched_) {
    *flags |= MBEDTLS_X509_BADCERT_OTHER;
    t->pin_mismatch_ = true;
  }
  return 0;
}

int TlsTransport::bio_send(void* self, const unsigned char* buf, std::size_t len) {
  auto* t = static_cast<TlsTransport*>(self);
  if (t->send_failure_ != Status::kOk) return static_cast<int>(len);  // Can never arrive.
  std::size_t sent = 0;
  t->lower_status_ = t->lower_->send(ConstBytes{buf, len}, &sent);
  if (t->lower_status_ == Status::kOk) return static_cast<int>(sent);
  if (t->lower_status_ == Status::kWouldBlock) return MBEDTLS_ERR_SSL_WANT_WRITE;
  t->send_failure_ = t->lower_status_;
  return MBEDTLS_ERR_SSL_INTERNAL_ERROR;  // from_mbedtls() reports lower_status_.
}

int TlsTransport::bio_recv(void* self, unsigned char* buf, std::size_t len) {
  auto* t = static_cast<TlsTransport*>(self);
  std::size_t received = 0;
  t->lower_status_ = t->lower_->recv(MutableBytes{buf, len}, &received);
  if (t->lower_status_ == Status::kOk) {
    t->track_records(buf, received);
    return static_cast<int>(received);
  }
  if (t->lower_status_ == Status::kWouldBlock) return MBEDTLS_ERR_SSL_WANT_READ;
  if (t->lower_status_ == Status::kClosed) {
    // mbedTLS reads a 0 as an orderly end (mbedtls_ssl_read returns 0) wherever it comes; one
    // inside a record has lost that record, and is a reset.
    if (t->record_header_seen_ == 0 && t->record_body_left_ == 0) return 0;
    t->cut_inside_record_ = true;
    t->lower_status_ = Status::kReset;
  }
  return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
}

void TlsTransport::track_records(const unsigned char* data, std::size_t size) {
  constexpr std::uint8_t kHeaderBytes = 5;  // Content type, version (2), length (2).
  while (size > 0) {
    if (record_body_left_ > 0) {
      const std::size_t n = size < record_body_left_ ? size : record_body_left_;
      record_body_left_ -= n;
      data += n;
      size -= n;
      continue;
    }
    if (record_header_seen_ >= 3) {
      record_length_ = static_cast<std::uint16_t>(record_length_ << 8 | *data);
    }
    ++data;
    --size;
    if (++record_header_seen_ == kHeaderBytes) {
      record_body_left_ = record_length_;
      last_record_length_ = record_length_;
      record_header_seen_ = 0;
      record_length_ = 0;
    }
  }
}

bool TlsTransport::record_beyond_buffer() {
  // mbedTLS refuses a record whose length field passes the buffer (MBEDTLS_ERR_SSL_BAD_INPUT_DATA)
  // or whose plaintext does (MBEDTLS_ERR_SSL_INVALID_RECORD); either needs a length field above
  // the buffer's plaintext size.
  if (last_record_length_ <= kTlsInputBufferBytes) return false;
  const std::size_t asked = config_ != nullptr ? config_->max_fragment_length() : 0;
  char why[96];
  if (asked == 0) {
    std::snprintf(why, sizeof why, "max_fragment_length was not asked for");
  } else {
    std::snprintf(why, sizeof why, "the server ignored max_fragment_length %zu", asked);
  }
  std::snprintf(message_, sizeof message_,
                "the server sent a TLS record of %u bytes, more than the TLS input buffer takes "
                "(%zu bytes: STEPBACK_TLS_IN_CONTENT_LEN); %s",
                static_cast<unsigned>(last_record_length_), kTlsInputBufferBytes, why);
  return true;
}

namespace {

// Handshake failures the same peer will give again: a fatal alert it sent, no common version
// or cipher, or a reply that is not TLS at all. Resets, timeouts and lower-layer failures are
// not among them, and stay retryable.
bool handshake_cannot_heal(int ret) {
  switch (ret) {
    case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
    case MBEDTLS_ERR_SSL_HANDSHAKE_FAILURE:
    case MBEDTLS_ERR_SSL_BAD_PROTOCOL_VERSION:
    case MBEDTLS_ERR_SSL_INVALID_RECORD:
    case MBEDTLS_ERR_SSL_DECODE_ERROR:
    case MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE:
    case MBEDTLS_ERR_SSL_ILLEGAL_PARAMETER:
    case MBEDTLS_ERR_SSL_UNSUPPORTED_EXTENSION:
    case MBEDTLS_ERR_SSL_BAD_CERTIFICATE:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status TlsTransport::from_mbedtls(int ret) {
  if (ret == MBEDTLS_ERR_SSL_WANT_READ) {
    wants_ = IoInterest::kRead;
    return Status::kWouldBlock;
  }
  if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
    wants_ = IoInterest::kWrite;
    return Status::kWouldBlock;
  }
  wants_ = IoInterest::kNone;
  if (cut_inside_record_) {
    std::snprintf(message_, sizeof message_,
                  "connection closed inside a TLS record: what the peer sent is cut short");
    return Status::kReset;
  }
  if (lower_status_ != Status::kOk && lower_status_ != Status::kWouldBlock) {
    std::snprintf(message_, sizeof message_, "connection failed: %s", to_string(lower_status_));
    return lower_status_ == Status::kClosed ? Status::kReset : lower_status_;
  }
  if (ret == MBEDTLS_ERR_SSL_CONN_EOF) {
    std::snprintf(message_, sizeof message_, "connection closed during the TLS exchange");
    return Status::kReset;
  }
  if ((ret == MBEDTLS_ERR_SSL_BAD_INPUT_DATA || ret == MBEDTLS_ERR_SSL_INVALID_RECORD) &&
      record_beyond_buffer()) {
    // The same server sends the same records again: not retried.
    return handshake_done_ ? Status::kBufferTooSmall : Status::kTlsRefused;
  }
  char text[160];
  mbedtls_strerror(ret, text, sizeof text);
  if (!handshake_done_ && ret == MBEDTLS_ERR_SSL_BAD_INPUT_DATA) {
    // A handshake message (in practice the server's certificate chain) larger than the
    // input buffer: mbedTLS reassembles fragments only within it. The same server sends it
    // again: not retried, and said plainly.
    std::snprintf(message_, sizeof message_,
                  "TLS handshake refused (not retried): a handshake message from the server "
                  "(its certificate chain?) exceeds the TLS input buffer of %d bytes",
                  MBEDTLS_SSL_IN_CONTENT_LEN);
    return Status::kTlsRefused;
  }
  if (!handshake_done_ && handshake_cannot_heal(ret)) {
    std::snprintf(message_, sizeof message_, "TLS handshake refused (not retried): -0x%04X: %s",
                  static_cast<unsigned>(-ret), text);
    return Status::kTlsRefused;
  }
  std::snprintf(message_, sizeof message_, "TLS error -0x%04X: %s", static_cast<unsigned>(-ret),
                text);
  return handshake_done_ ? Status::kProtocol : Status::kTlsHandshake;
}

}  // namespace stepback::https
