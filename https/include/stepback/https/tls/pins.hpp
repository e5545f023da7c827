// Public-key pinning (PublicKeyPin, TlsClientConfig::set_public_key_pins): SHA-256 of a
// certificate's DER SubjectPublicKeyInfo, as OkHttp's CertificatePinner ("sha256/BASE64")
// and Android's network security config (<pin digest="SHA-256">BASE64</pin>) express it.
// A handshake passes when ANY certificate of the verified chain (leaf, intermediates or the
// trust anchor; OkHttp's rule) has a pinned key.
#ifndef STEPBACK_HTTPS_TLS_PINS_HPP_
#define STEPBACK_HTTPS_TLS_PINS_HPP_

#include <mbedtls/x509_crt.h>

#include <cstddef>
#include <cstdint>

#include "stepback/https/types.hpp"

namespace stepback::https {

// A pinned public key: SHA-256 of a certificate's DER SubjectPublicKeyInfo.
struct PublicKeyPin {
  std::uint8_t sha256[32] = {};
};

// Reads "sha256/BASE64" (OkHttp's form) or the bare 44-character BASE64 (Android's network
// security config) into *pin; kInvalidArgument for anything else.
[[nodiscard]] Status parse_public_key_pin(const char* text, PublicKeyPin* pin);

// The pin of `cert`'s public key.
PublicKeyPin public_key_pin_of(const mbedtls_x509_crt& cert);

// Whether `cert`'s public key is one of the `count` pins.
bool matches_pin(const mbedtls_x509_crt& cert, const PublicKeyPin* pins, std::size_t count);

// Whether any certificate of the linked chain starting at `chain` matches one of the pins
// (for a check after the handshake, e.g. on mbedtls_ssl_get_peer_cert(): note that the peer's
// chain as sent need not contain the trust anchor).
bool chain_matches_pins(const mbedtls_x509_crt* chain, const PublicKeyPin* pins, std::size_t count);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TLS_PINS_HPP_
