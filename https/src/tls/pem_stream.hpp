// Certificates in a byte stream: the subject of a DER certificate found from its first bytes,
// and the base64 table and marker lines of PEM blocks, for the trust store's scanner
// (cert_scanner.hpp).
#ifndef STEPBACK_HTTPS_SRC_TLS_PEM_STREAM_HPP_
#define STEPBACK_HTTPS_SRC_TLS_PEM_STREAM_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/integrity/base64.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https::detail {

// Finds the subject Name of the certificate whose first `avail` DER bytes are `der`:
// kOk with *subject and *total (the certificate's whole length), kWouldBlock when more bytes
// are needed, kInvalidArgument when it is no certificate.
Status locate_subject(const std::uint8_t* der, std::size_t avail, ConstBytes* subject,
                      std::size_t* total);

// The value of each byte in a PEM data line: 0-63 for a base64 digit, -1: not base64 (ends
// the certificate as malformed), -2: ignored white space, -3: padding.
struct Base64Table {
  std::int8_t v[256];
  constexpr Base64Table() : v() {
    for (int i = 0; i < 256; ++i)
      v[i] = static_cast<std::int8_t>(base64_value(static_cast<char>(i)));
    v[static_cast<unsigned char>(' ')] = -2;
    v[static_cast<unsigned char>('\t')] = -2;
    v[static_cast<unsigned char>('\r')] = -2;
    v[static_cast<unsigned char>('=')] = -3;
  }
};
// The table the scanner decodes PEM data lines with, built at compile time.
inline constexpr Base64Table kBase64;

// The marker lines that open and close a PEM certificate block.
inline constexpr char kBeginMarker[] = "-----BEGIN CERTIFICATE-----";
inline constexpr char kEndMarker[] = "-----END CERTIFICATE-----";
inline constexpr std::size_t kMarkerBytes = 40;  // Longest marker line kept for comparison.

// Whether the collected line `line` (n bytes, \r and trailing blanks allowed) is `marker`.
bool is_marker(const char* line, std::size_t n, const char* marker);

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_TLS_PEM_STREAM_HPP_
