#include "tls/pem_stream.hpp"

#include <mbedtls/asn1.h>

#include <cstring>

namespace stepback::https::detail {
namespace {

// The DER tag of a SEQUENCE (x509_name.cpp has the same constant).
constexpr unsigned char kTagSequence = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE;

// Reads a DER header (tag and length) at der[*at] without requiring its contents: kOk,
// kWouldBlock when more bytes are needed, kInvalidArgument when malformed.
Status read_header(const std::uint8_t* der, std::size_t avail, std::size_t* at, std::uint8_t tag,
                   std::size_t* len) {
  if (*at >= avail) return Status::kWouldBlock;
  if (der[*at] != tag) return Status::kInvalidArgument;
  if (*at + 1 >= avail) return Status::kWouldBlock;
  const std::uint8_t first = der[*at + 1];
  std::size_t pos = *at + 2;
  if (first < 0x80) {
    *len = first;
  } else {
    const std::size_t n = first & 0x7Fu;
    if (n == 0 || n > 3) return Status::kInvalidArgument;  // Certificates stay under 16 MB.
    if (pos + n > avail) return Status::kWouldBlock;
    std::size_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | der[pos + i];
    *len = v;
    pos += n;
  }
  *at = pos;
  return Status::kOk;
}

// Skips the whole TLV with `tag` at der[*at]; its contents must be available.
Status skip_tlv(const std::uint8_t* der, std::size_t avail, std::size_t* at, std::uint8_t tag) {
  std::size_t pos = *at;
  std::size_t len = 0;
  const Status s = read_header(der, avail, &pos, tag, &len);
  if (s != Status::kOk) return s;
  if (pos + len > avail) return Status::kWouldBlock;
  *at = pos + len;
  return Status::kOk;
}

}  // namespace

Status locate_subject(const std::uint8_t* der, std::size_t avail, ConstBytes* subject,
                      std::size_t* total) {
  std::size_t at = 0;
  std::size_t len = 0;
  Status s = read_header(der, avail, &at, kTagSequence, &len);  // Certificate.
  if (s != Status::kOk) return s;
  *total = at + len;
  s = read_header(der, avail, &at, kTagSequence, &len);  // TBSCertificate.
  if (s != Status::kOk) return s;
  if (at >= avail) return Status::kWouldBlock;
  if (der[at] == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 0)) {
    s = skip_tlv(der, avail, &at, der[at]);  // [0] version.
    if (s != Status::kOk) return s;
  }
  const std::uint8_t fields[] = {MBEDTLS_ASN1_INTEGER, kTagSequence, kTagSequence, kTagSequence};
  for (const std::uint8_t tag : fields) {  // serialNumber, signature, issuer, validity.
    s = skip_tlv(der, avail, &at, tag);
    if (s != Status::kOk) return s;
  }
  const std::size_t subject_at = at;
  s = skip_tlv(der, avail, &at, kTagSequence);
  if (s != Status::kOk) return s;
  *subject = ConstBytes{der + subject_at, at - subject_at};
  return Status::kOk;
}

bool is_marker(const char* line, std::size_t n, const char* marker) {
  while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) --n;
  const std::size_t m = std::strlen(marker);
  return n == m && std::memcmp(line, marker, m) == 0;
}

}  // namespace stepback::https::detail
