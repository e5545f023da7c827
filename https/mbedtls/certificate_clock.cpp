// stepback_mbedtls_time, mbedTLS's time source (MBEDTLS_PLATFORM_STD_TIME in the project's
// mbedTLS configuration), compiled into mbedcrypto so that every user of mbedTLS links it. It
// reads the wall clock a TlsTransport installs for the handshake step it runs on this thread
// (its TlsClientConfig's set_wall_clock), else the C library's time().
#include "certificate_clock.hpp"

#include <cstdint>
#include <ctime>
#include <limits>

namespace {

// Per thread: two threads may run handshakes of configurations with different clocks.
thread_local stepback::Millis (*g_wall_now)() = nullptr;

// The clock's seconds as a time_t, saturated: where time_t has 32 bits (armhf, 32-bit
// Android's old ABIs) a date past January 2038 reads as the last one time_t holds, never as
// a wrapped date in 1901.
time_t to_time_t(stepback::Millis wall) {
  const std::uint64_t seconds = wall.count() / 1000;
  constexpr time_t kMax = std::numeric_limits<time_t>::max();
  return seconds > static_cast<std::uint64_t>(kMax) ? kMax : static_cast<time_t>(seconds);
}

}  // namespace

extern "C" time_t stepback_mbedtls_time(time_t* timer) {
  const time_t now = g_wall_now != nullptr ? to_time_t(g_wall_now()) : std::time(nullptr);
  if (timer != nullptr) *timer = now;
  return now;
}

namespace stepback::https::detail {

CertificateClockScope::CertificateClockScope(Millis (*wall_now)()) : previous_(g_wall_now) {
  g_wall_now = wall_now;
}

CertificateClockScope::~CertificateClockScope() { g_wall_now = previous_; }

}  // namespace stepback::https::detail
