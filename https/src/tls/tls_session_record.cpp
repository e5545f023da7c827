// The TLS session record (tls_session_record.hpp) and the verification fingerprint it is bound to.
// mbedTLS keeps a TLS 1.3 ticket's reception time and lifetime in private fields of the session;
// they are read and rebased here, so this file reaches them through MBEDTLS_PRIVATE.
#include "stepback/https/tls/tls_session_record.hpp"

#include <mbedtls/platform_time.h>
#include <mbedtls/sha256.h>
#include <mbedtls/ssl.h>

#include <cstring>

#include "stepback/https/integrity/crc32c.hpp"
#include "stepback/https/tls/pins.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/trust_store.hpp"

namespace stepback::https {
namespace detail {

struct TlsSessionAccess {
  static mbedtls_ssl_session& of(TlsSession& s) { return s.session_; }
  static const mbedtls_ssl_session& of(const TlsSession& s) { return s.session_; }
  static void set_valid(TlsSession& s) { s.valid_ = true; }
};

}  // namespace detail

namespace {

constexpr std::uint8_t kMagic[4] = {'S', 'B', 'T', 'S'};
// Magic, version, total length, port, host length: then the host.
constexpr std::size_t kHeadBytes = 4 + 2 + 4 + 2 + 1;
// Fingerprint, saved at, issued at, lifetime, session length: then the session, then the CRC.
constexpr std::size_t kMiddleBytes = 32 + 8 + 8 + 4 + 4;
constexpr std::size_t kCrcBytes = 4;
constexpr std::size_t kMaxHost = 255;

void put(std::uint8_t*& p, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) *p++ = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get(const std::uint8_t*& p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | *p++;
  return v;
}

void hash_u32(mbedtls_sha256_context* sha, std::uint32_t v) {
  const std::uint8_t b[4] = {static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16),
                             static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
  mbedtls_sha256_update(sha, b, sizeof b);
}

// Each item goes in with its length first, so that no two sequences of items hash alike.
void hash_item(mbedtls_sha256_context* sha, const void* data, std::size_t size) {
  hash_u32(sha, static_cast<std::uint32_t>(size));
  if (size > 0) mbedtls_sha256_update(sha, static_cast<const unsigned char*>(data), size);
}

}  // namespace

void TlsClientConfig::verification_fingerprint(std::uint8_t (&out)[32]) const {
  mbedtls_sha256_context sha;
  mbedtls_sha256_init(&sha);
  (void)mbedtls_sha256_starts(&sha, 0);
  hash_item(&sha, "stepback verification 1", 23);
  hash_u32(&sha, static_cast<std::uint32_t>(min_version_));
  hash_u32(&sha, static_cast<std::uint32_t>(max_version_));
  hash_u32(&sha, static_cast<std::uint32_t>(pin_count_));
  for (std::size_t i = 0; i < pin_count_; ++i) hash_item(&sha, pins_[i].sha256, 32);
  if (store_ != nullptr) {
    // A store's directories and bundles count by path: their files are read on demand, so a
    // certificate added to a system folder later is not seen here (docs/https.md).
    hash_u32(&sha, static_cast<std::uint32_t>(store_->source_count()));
    for (std::size_t i = 0; i < store_->source_count(); ++i) {
      const char* path = store_->source_path(i);
      hash_item(&sha, path, std::strlen(path));
      const ConstBytes memory = store_->source_memory(i);
      hash_item(&sha, memory.data, memory.size);
    }
  } else {
    hash_u32(&sha, 0xFFFFFFFFu);  // Anchors added one by one, not a store.
    for (const mbedtls_x509_crt* c = &ca_; c != nullptr; c = c->next) {
      if (c->raw.len > 0) hash_item(&sha, c->raw.p, c->raw.len);
    }
  }
  (void)mbedtls_sha256_finish(&sha, out);
  mbedtls_sha256_free(&sha);
}

const char* describe(TlsSessionRecordError error) {
  switch (error) {
    case TlsSessionRecordError::kNone:
      return "ok";
    case TlsSessionRecordError::kNoSession:
      return "there is no TLS session to save";
    case TlsSessionRecordError::kBufferTooSmall:
      return "the TLS session does not fit the record buffer";
    case TlsSessionRecordError::kBadHost:
      return "the host is empty or longer than 255 bytes";
    case TlsSessionRecordError::kTruncated:
      return "the TLS session record is cut short (fewer bytes than it says it has)";
    case TlsSessionRecordError::kTooBig:
      return "the TLS session record is too big to be one";
    case TlsSessionRecordError::kNotARecord:
      return "the file is not a TLS session record";
    case TlsSessionRecordError::kUnknownVersion:
      return "the TLS session record has a format version this build does not read";
    case TlsSessionRecordError::kCorrupt:
      return "the TLS session record is corrupt (its integrity check failed)";
    case TlsSessionRecordError::kOtherServer:
      return "the TLS session record was saved for another host or port";
    case TlsSessionRecordError::kOtherVerification:
      return "the TLS session record was made under other trust anchors, pins or TLS versions";
    case TlsSessionRecordError::kExpired:
      return "the TLS session record's lifetime is over";
    case TlsSessionRecordError::kClockBeforeSave:
      return "the wall clock stands before the time the TLS session record was saved";
    case TlsSessionRecordError::kUnusable:
      return "the TLS library refused the saved session (another build or configuration)";
  }
  return "unknown TLS session record error";
}

TlsSessionRecordError encode_tls_session_record(const TlsSessionRecordFields& fields,
                                                MutableBytes out, std::size_t* written) {
  *written = 0;
  if (fields.host_size == 0 || fields.host_size > kMaxHost) return TlsSessionRecordError::kBadHost;
  const std::size_t total =
      kHeadBytes + fields.host_size + kMiddleBytes + fields.session.size + kCrcBytes;
  if (total > out.size || total > kTlsSessionRecordMaxBytes) {
    return TlsSessionRecordError::kBufferTooSmall;
  }
  std::uint8_t* p = out.data;
  std::memcpy(p, kMagic, sizeof kMagic);
  p += sizeof kMagic;
  put(p, kTlsSessionRecordVersion, 2);
  put(p, total, 4);
  put(p, fields.port, 2);
  put(p, fields.host_size, 1);
  std::memcpy(p, fields.host, fields.host_size);
  p += fields.host_size;
  std::memcpy(p, fields.verification, 32);
  p += 32;
  put(p, fields.saved_at.count(), 8);
  put(p, fields.issued_at.count(), 8);
  put(p, fields.lifetime_seconds, 4);
  put(p, fields.session.size, 4);
  // The session bytes may already be in place (save_tls_session_record writes them there).
  if (fields.session.size > 0 && fields.session.data != p) {
    std::memmove(p, fields.session.data, fields.session.size);
  }
  p += fields.session.size;
  put(p, crc32c(ConstBytes{out.data, static_cast<std::size_t>(p - out.data)}), 4);
  *written = total;
  return TlsSessionRecordError::kNone;
}

TlsSessionRecordError decode_tls_session_record(ConstBytes record, TlsSessionRecordFields* fields) {
  if (record.size > kTlsSessionRecordMaxBytes) return TlsSessionRecordError::kTooBig;
  if (record.size < sizeof kMagic || std::memcmp(record.data, kMagic, sizeof kMagic) != 0) {
    return record.size < sizeof kMagic ? TlsSessionRecordError::kTruncated
                                       : TlsSessionRecordError::kNotARecord;
  }
  if (record.size < kHeadBytes) return TlsSessionRecordError::kTruncated;
  const std::uint8_t* p = record.data + sizeof kMagic;
  if (get(p, 2) != kTlsSessionRecordVersion) return TlsSessionRecordError::kUnknownVersion;
  const std::uint64_t total = get(p, 4);
  if (total > record.size) return TlsSessionRecordError::kTruncated;
  // Bytes beyond the stated length, or a length too short for the fixed parts, are damage.
  if (total < record.size || total < kHeadBytes + kMiddleBytes + kCrcBytes) {
    return TlsSessionRecordError::kCorrupt;
  }
  const std::size_t body = record.size - kCrcBytes;
  const std::uint8_t* crc_at = record.data + body;
  if (crc32c(ConstBytes{record.data, body}) != get(crc_at, 4)) {
    return TlsSessionRecordError::kCorrupt;
  }
  fields->port = static_cast<std::uint16_t>(get(p, 2));
  fields->host_size = static_cast<std::size_t>(get(p, 1));
  if (kHeadBytes + fields->host_size + kMiddleBytes > body) return TlsSessionRecordError::kCorrupt;
  fields->host = reinterpret_cast<const char*>(p);
  p += fields->host_size;
  std::memcpy(fields->verification, p, 32);
  p += 32;
  fields->saved_at = Millis(get(p, 8));
  fields->issued_at = Millis(get(p, 8));
  fields->lifetime_seconds = static_cast<std::uint32_t>(get(p, 4));
  const std::uint64_t session_size = get(p, 4);
  if (session_size != static_cast<std::uint64_t>(record.data + body - p)) {
    return TlsSessionRecordError::kCorrupt;
  }
  fields->session = ConstBytes{p, static_cast<std::size_t>(session_size)};
  return TlsSessionRecordError::kNone;
}

TlsSessionRecordError check_tls_session_record(const TlsSessionRecordFields& fields,
                                               const char* host, std::uint16_t port,
                                               const std::uint8_t (&verification)[32],
                                               Millis wall_now) {
  const std::size_t host_size = host == nullptr ? 0 : std::strlen(host);
  // A record is always bound to a host: no host matches none.
  if (host_size == 0 || host_size != fields.host_size || fields.port != port ||
      std::memcmp(host, fields.host, host_size) != 0) {
    return TlsSessionRecordError::kOtherServer;
  }
  if (std::memcmp(verification, fields.verification, 32) != 0) {
    return TlsSessionRecordError::kOtherVerification;
  }
  if (wall_now + kTlsSessionClockMargin < fields.saved_at) {
    return TlsSessionRecordError::kClockBeforeSave;
  }
  if (wall_now >= fields.issued_at + Millis::seconds(fields.lifetime_seconds)) {
    return TlsSessionRecordError::kExpired;
  }
  return TlsSessionRecordError::kNone;
}

TlsSessionRecordError save_tls_session_record(const TlsSession& session,
                                              const TlsClientConfig& config, const char* host,
                                              std::uint16_t port, Millis wall_now, MutableBytes out,
                                              std::size_t* written) {
  *written = 0;
  if (!session.valid()) return TlsSessionRecordError::kNoSession;
  TlsSessionRecordFields fields;
  fields.host = host == nullptr ? "" : host;
  fields.host_size = std::strlen(fields.host);
  if (fields.host_size == 0 || fields.host_size > kMaxHost) return TlsSessionRecordError::kBadHost;
  fields.port = port;
  config.verification_fingerprint(fields.verification);
  fields.saved_at = wall_now;
  const mbedtls_ssl_session& s = detail::TlsSessionAccess::of(session);
  if (s.MBEDTLS_PRIVATE(tls_version) == MBEDTLS_SSL_VERSION_TLS1_3) {
    // The ticket's age so far is on mbedTLS's boot-time clock; it moves to the wall clock here.
    const mbedtls_ms_time_t age = mbedtls_ms_time() - s.MBEDTLS_PRIVATE(ticket_reception_time);
    fields.issued_at = wall_now - Millis(age > 0 ? static_cast<std::uint64_t>(age) : 0);
    fields.lifetime_seconds = s.MBEDTLS_PRIVATE(ticket_lifetime);
  } else {
    // A TLS 1.2 session starts at its handshake (mbedTLS's wall-clock time()); a ticket's hint
    // may shorten the kept lifetime, never lengthen it beyond the bound.
    const mbedtls_time_t start = s.MBEDTLS_PRIVATE(start);
    const Millis started =
        start > 0 ? Millis::seconds(static_cast<std::uint64_t>(start)) : wall_now;
    fields.issued_at = started < wall_now ? started : wall_now;
    const std::uint32_t hint = s.MBEDTLS_PRIVATE(ticket_lifetime);
    fields.lifetime_seconds =
        hint > 0 && hint < kTls12SessionLifetimeSeconds ? hint : kTls12SessionLifetimeSeconds;
  }
  // mbedTLS writes the session where the frame puts it; the frame is written around it.
  const std::size_t offset = kHeadBytes + fields.host_size + kMiddleBytes;
  const std::size_t limit =
      out.size < kTlsSessionRecordMaxBytes ? out.size : kTlsSessionRecordMaxBytes;
  if (limit < offset + kCrcBytes) return TlsSessionRecordError::kBufferTooSmall;
  std::size_t size = 0;
  const int ret =
      mbedtls_ssl_session_save(&s, out.data + offset, limit - offset - kCrcBytes, &size);
  if (ret == MBEDTLS_ERR_SSL_BUFFER_TOO_SMALL) return TlsSessionRecordError::kBufferTooSmall;
  if (ret != 0) return TlsSessionRecordError::kNoSession;
  fields.session = ConstBytes{out.data + offset, size};
  return encode_tls_session_record(fields, out, written);
}

TlsSessionRecordError load_tls_session_record(ConstBytes record, const TlsClientConfig& config,
                                              const char* host, std::uint16_t port, Millis wall_now,
                                              TlsSession* session) {
  session->clear();
  TlsSessionRecordFields fields;
  TlsSessionRecordError error = decode_tls_session_record(record, &fields);
  if (error != TlsSessionRecordError::kNone) return error;
  std::uint8_t verification[32];
  config.verification_fingerprint(verification);
  error = check_tls_session_record(fields, host, port, verification, wall_now);
  if (error != TlsSessionRecordError::kNone) return error;
  mbedtls_ssl_session& s = detail::TlsSessionAccess::of(*session);
  if (mbedtls_ssl_session_load(&s, fields.session.data, fields.session.size) != 0) {
    session->clear();
    return TlsSessionRecordError::kUnusable;
  }
  if (s.MBEDTLS_PRIVATE(tls_version) == MBEDTLS_SSL_VERSION_TLS1_3) {
    // The saved reception time is on another boot's clock: rebase it so that the ticket's age
    // (sent obfuscated to the server, and checked against its lifetime) is its wall-clock age.
    const Millis age = wall_now - fields.issued_at;
    s.MBEDTLS_PRIVATE(ticket_reception_time) =
        mbedtls_ms_time() - static_cast<mbedtls_ms_time_t>(age.count());
  }
  detail::TlsSessionAccess::set_valid(*session);
  return TlsSessionRecordError::kNone;
}

}  // namespace stepback::https
