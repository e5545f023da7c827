// The wall clock mbedTLS's certificate checks read (https/mbedtls/certificate_clock.cpp).
#ifndef STEPBACK_HTTPS_MBEDTLS_CERTIFICATE_CLOCK_HPP_
#define STEPBACK_HTTPS_MBEDTLS_CERTIFICATE_CLOCK_HPP_

#include "stepback/core/millis.hpp"

namespace stepback::https::detail {

// While it lives, mbedTLS's time() on this thread is `wall_now` (Millis since the Unix epoch);
// nullptr for the C library's time(). Restores the previous clock when it ends.
class CertificateClockScope {
 public:
  explicit CertificateClockScope(Millis (*wall_now)());
  ~CertificateClockScope();
  CertificateClockScope(const CertificateClockScope&) = delete;
  CertificateClockScope& operator=(const CertificateClockScope&) = delete;

 private:
  Millis (*previous_)();
};

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_MBEDTLS_CERTIFICATE_CLOCK_HPP_
