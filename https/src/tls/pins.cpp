#include "stepback/https/tls/pins.hpp"

#include <mbedtls/sha256.h>

#include <cstring>

#include "stepback/https/integrity/base64.hpp"

namespace stepback::https {

Status parse_public_key_pin(const char* text, PublicKeyPin* pin) {
  if (text == nullptr || pin == nullptr) return Status::kInvalidArgument;
  constexpr char kPrefix[] = "sha256/";
  if (std::strncmp(text, kPrefix, sizeof kPrefix - 1) == 0) text += sizeof kPrefix - 1;
  // 44 characters of base64 for the 32 bytes, one '=' at the end.
  std::uint8_t out[sizeof pin->sha256];
  if (!base64_decode_exact(text, out, sizeof out)) return Status::kInvalidArgument;
  std::memcpy(pin->sha256, out, sizeof pin->sha256);
  return Status::kOk;
}

PublicKeyPin public_key_pin_of(const mbedtls_x509_crt& cert) {
  PublicKeyPin pin;
  (void)mbedtls_sha256(cert.pk_raw.p, cert.pk_raw.len, pin.sha256, 0);
  return pin;
}

bool matches_pin(const mbedtls_x509_crt& cert, const PublicKeyPin* pins, std::size_t count) {
  if (pins == nullptr || count == 0 || cert.pk_raw.p == nullptr) return false;
  const PublicKeyPin own = public_key_pin_of(cert);
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(own.sha256, pins[i].sha256, sizeof own.sha256) == 0) return true;
  }
  return false;
}

bool chain_matches_pins(const mbedtls_x509_crt* chain, const PublicKeyPin* pins,
                        std::size_t count) {
  for (const mbedtls_x509_crt* c = chain; c != nullptr; c = c->next) {
    if (c->version != 0 && matches_pin(*c, pins, count)) return true;
  }
  return false;
}

}  // namespace stepback::https
