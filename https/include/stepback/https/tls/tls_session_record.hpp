// A TLS session saved to bytes the caller keeps (a file next to a checkpoint), so that a later
// process resumes it instead of running a full handshake: mbedTLS's serialized session
// (mbedtls_ssl_session_save) framed with what it may be used for and until when.
//
// The record holds a resumption secret: whoever reads it can resume the session as this client
// would (docs/https.md, "Sessions kept on disk"). A record is taken only for the host and port it
// was saved for, only while the verification it was made under is unchanged (trust anchors,
// public-key pins, TLS versions: TlsClientConfig::verification_fingerprint), only within the
// ticket's lifetime by the wall clock, and only when its integrity check (CRC-32C) passes; any
// other record is refused with a reason, and the caller should delete it.
//
// Layout (big-endian, sizes in bytes in brackets): "SBTS", format version (2), total length (4),
// port (2), host length (1), host, verification fingerprint (32), saved at (8, ms since the Unix
// epoch), ticket issued at (8, same), lifetime (4, seconds), session length (4), mbedTLS's session
// bytes, CRC-32C of all that came before (4). Allocation-free: the caller gives the buffer.
#ifndef STEPBACK_HTTPS_TLS_TLS_SESSION_RECORD_HPP_
#define STEPBACK_HTTPS_TLS_TLS_SESSION_RECORD_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

class TlsClientConfig;
class TlsSession;

// The largest record written or read. A TLS 1.3 session is a ticket (servers send a few hundred
// bytes) and its secret; a TLS 1.2 one also holds the server's certificate (this build keeps
// it: MBEDTLS_SSL_KEEP_PEER_CERTIFICATE), which is the bulk. Larger records are refused.
inline constexpr std::size_t kTlsSessionRecordMaxBytes = 8192;
// The format version written; another is refused.
inline constexpr std::uint16_t kTlsSessionRecordVersion = 1;
// How long a TLS 1.2 session is kept when its ticket names no lifetime, and the most any TLS 1.2
// session is kept (TLS 1.3 tickets carry their own lifetime, at most 7 days by RFC 8446).
inline constexpr std::uint32_t kTls12SessionLifetimeSeconds = 24 * 3600;
// How far the wall clock may stand before the time a record was saved at (a clock corrected
// backwards by a little) before the record is refused.
inline constexpr Millis kTlsSessionClockMargin = Millis::seconds(300);

// Why a record was not written or not taken.
enum class TlsSessionRecordError : std::uint8_t {
  kNone,
  kNoSession,          // Save: no session to save.
  kBufferTooSmall,     // Save: the record does not fit the buffer.
  kBadHost,            // Save or load: no host, or a host longer than 255 bytes.
  kTruncated,          // Load: fewer bytes than the record says it has.
  kTooBig,             // Load: more than kTlsSessionRecordMaxBytes.
  kNotARecord,         // Load: no magic.
  kUnknownVersion,     // Load: another format version.
  kCorrupt,            // Load: the integrity check failed, or a length does not add up.
  kOtherServer,        // Load: saved for another host or port.
  kOtherVerification,  // Load: the trust anchors, pins or TLS versions changed since.
  kExpired,            // Load: the ticket's lifetime is over by the wall clock.
  kClockBeforeSave,    // Load: the wall clock stands before the save, beyond the margin.
  kUnusable,           // Load: mbedTLS refused the session bytes (another build or config).
};

// A sentence saying what `error` means, for a log line.
const char* describe(TlsSessionRecordError error);

// The fields of a record around mbedTLS's session bytes.
struct TlsSessionRecordFields {
  const char* host = "";  // Not NUL-terminated when read from a record: see host_size.
  std::size_t host_size = 0;
  std::uint16_t port = 0;
  std::uint8_t verification[32] = {};
  Millis saved_at{};   // Wall clock, ms since the Unix epoch.
  Millis issued_at{};  // When the ticket or session came, by the same clock.
  std::uint32_t lifetime_seconds = 0;
  ConstBytes session;  // mbedtls_ssl_session_save's bytes.
};

// Frames `fields` into `out`; *written is the record's size. kBufferTooSmall or kBadHost.
TlsSessionRecordError encode_tls_session_record(const TlsSessionRecordFields& fields,
                                                MutableBytes out, std::size_t* written);
// Reads the frame of `record` into *fields (pointing into `record`), checking the size, the
// magic, the version, the lengths and the CRC-32C; not what it is bound to.
TlsSessionRecordError decode_tls_session_record(ConstBytes record, TlsSessionRecordFields* fields);
// Whether a decoded record may be used for `host`:`port` under `verification` at `wall_now`.
TlsSessionRecordError check_tls_session_record(const TlsSessionRecordFields& fields,
                                               const char* host, std::uint16_t port,
                                               const std::uint8_t (&verification)[32],
                                               Millis wall_now);

// Saves `session`, made under `config` with `host`:`port`, as a record at `wall_now` (ms since
// the Unix epoch). The session stays as it was.
TlsSessionRecordError save_tls_session_record(const TlsSession& session,
                                              const TlsClientConfig& config, const char* host,
                                              std::uint16_t port, Millis wall_now, MutableBytes out,
                                              std::size_t* written);
// Loads a record into *session for `host`:`port` under `config` at `wall_now`; on any error
// *session is cleared. The TLS 1.3 ticket's age is carried over by the wall clock, so a
// record saved before a reboot keeps its true age.
TlsSessionRecordError load_tls_session_record(ConstBytes record, const TlsClientConfig& config,
                                              const char* host, std::uint16_t port, Millis wall_now,
                                              TlsSession* session);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TLS_TLS_SESSION_RECORD_HPP_
