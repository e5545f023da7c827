// stepback_mbedtls_time, mbedTLS's time source (MBEDTLS_PLATFORM_STD_TIME in the project's
// mbedTLS configuration), compiled into mbedcrypto so that every user of mbedTLS links it. It
// reads the wall clock a TlsTransport installs for the handshake step it runs on this thread
// (its TlsClientConfig's set_wall_clock), else the C library's time().
#include "certificate_clock.hpp"

#include <ctime>

namespace {

// Per thread: two threads may run handshakes of configurations with different clocks.
thread_local stepback::Millis (*g_wall_now)() = nullptr;

}  // namespace

extern "C" time_t stepback_mbedtls_time(time_t* timer) {
  const time_t now =
      g_wall_now != nullptr ? static_cast<time_t>(g_wall_now().count() / 1000) : std::time(nullptr);
  if (timer != nullptr) *timer = now;
  return now;
}

namespace stepback::https::detail {

CertificateClockScope::CertificateClockScope(Millis (*wall_now)()) : previous_(g_wall_now) {
  g_wall_now = wall_now;
}

CertificateClockScope::~CertificateClockScope() { g_wall_now = previous_; }

}  // namespace stepback::https::detail
