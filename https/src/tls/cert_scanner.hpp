// The trust store's scanner: certificates in PEM text (BEGIN/END CERTIFICATE blocks among any
// other text) or concatenated DER, fed in chunks of any size. For each certificate it decodes
// only as far as the subject; when the subject is not the one looked up, the rest of the
// block is skipped without decoding, so a bundle costs one pass of memchr() for most of its
// bytes.
#ifndef STEPBACK_HTTPS_SRC_TLS_CERT_SCANNER_HPP_
#define STEPBACK_HTTPS_SRC_TLS_CERT_SCANNER_HPP_

#include <mbedtls/x509_crt.h>

#include <cstddef>
#include <cstdint>

#include "stepback/https/tls/trust_store.hpp"
#include "stepback/https/types.hpp"
#include "tls/pem_stream.hpp"

namespace stepback::https {
namespace detail {

// Where an indexing scan records each certificate: its offset and its subject's index key.
struct IndexBuild {
  std::uint32_t* offset = nullptr;
  std::uint32_t* key = nullptr;
  std::size_t capacity = 0;
  std::size_t count = 0;
  bool overflow = false;
};

}  // namespace detail

// The scanner of one lookup (or of one source's indexing), over the files and buffers fed to
// it one after another; it decodes into the store's buffers.
class TrustStore::Scan {
 public:
  // `issuer` empty: count certificates only. `issuer_canonical` null: byte-for-byte only.
  Scan(TrustStore& store, ConstBytes issuer, const std::uint8_t* issuer_canonical,
       std::size_t issuer_canonical_len, mbedtls_x509_crt** out)
      : store_(store),
        issuer_(issuer),
        issuer_canonical_(issuer_canonical),
        issuer_canonical_len_(issuer_canonical_len),
        out_(out) {}

  // Records every certificate into `index` instead of matching (set-up of bundles).
  void set_index(detail::IndexBuild* index) { index_ = index; }

  // Starts a new file or buffer; `first_only` stops after its first certificate.
  void begin(bool first_only);

  // Scans the next `n` bytes `d` of the current file or buffer.
  void feed(const std::uint8_t* d, std::size_t n);

  // Whether this source needs no more bytes.
  bool done() const { return done_ || full(); }
  // Whether kMaxCandidates were found or the arena ran out.
  bool full() const { return parsed_ >= kMaxCandidates || status_ != Status::kOk; }
  Status status() const { return status_; }
  // Certificates whose subject was read, over all sources.
  std::uint32_t seen() const { return seen_; }

 private:
  enum class Mode : std::uint8_t { kDetect, kDer, kPemOutside, kPemBody };

  // Resets the state of the certificate being decoded.
  void start_certificate();

  // Decides as soon as the subject has been decoded.
  void check_subject();

  // Whether `subject` is the issuer looked up, byte-for-byte or canonically.
  bool matches(ConstBytes subject);

  // The certificate ended: parse it if it matched.
  void finish_certificate();

  // Parses the certificate in the store's DER buffer onto the candidates at *out_.
  void parse();

  // Concatenated DER certificates: each one's length comes from its first header, so only
  // the header is taken before the length is known, and never more than one certificate.
  void feed_der(const std::uint8_t* d, std::size_t n);

  // PEM text, line by line: marker lines collected, data lines of a wanted block decoded,
  // every other line skipped with memchr().
  void feed_pem(const std::uint8_t* d, std::size_t n);

  // Acts on the marker line just collected: a block begins, ends or is cut short.
  void end_marker_line();

  // Base64 of a data line into the store's DER buffer.
  void decode(const std::uint8_t* s, std::size_t n);

  TrustStore& store_;
  const ConstBytes issuer_;
  const std::uint8_t* const issuer_canonical_;
  const std::size_t issuer_canonical_len_;
  mbedtls_x509_crt** const out_;
  detail::IndexBuild* index_ = nullptr;
  Status status_ = Status::kOk;
  unsigned parsed_ = 0;
  std::uint32_t seen_ = 0;

  // The source.
  std::size_t base_ = 0;  // Bytes of the source fed before the current chunk.
  Mode mode_ = Mode::kDetect;
  bool first_only_ = false;
  bool done_ = false;
  bool line_start_ = true;
  bool skip_line_ = false;
  bool in_marker_ = false;
  bool in_data_ = false;
  char marker_[detail::kMarkerBytes] = {};
  std::size_t marker_len_ = 0;
  std::size_t marker_offset_ = 0;  // Where the marker line starts in the source.

  // The certificate.
  std::size_t cert_offset_ = 0;  // Where it starts in the source (its BEGIN line for PEM).
  std::size_t der_len_ = 0;
  std::size_t total_ = 0;  // Its whole DER length, once the subject is known.
  bool subject_known_ = false;
  bool rejected_ = false;  // Not wanted (or malformed, or too big): skip the rest.
  bool matched_ = false;
  bool padded_ = false;
  unsigned bits_ = 0;
  std::uint32_t acc_ = 0;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_SRC_TLS_CERT_SCANNER_HPP_
