// HttpsStack: what every HTTPS app sets up once before its first request, in one object and
// one call: the TLS arena mbedTLS allocates from, the TLS configuration with its trust
// anchors (a CA file or hashed directory, or the system's store, looked up on demand), a
// resolver whose lookups never block, and the connector the requests go through (https://
// and http:// alike).
//
//   static stepback::app::HttpsStack stack;  // Static or a member: it holds the TLS arena.
//   if (stack.init(ca_path_or_null) != stepback::https::Status::kOk) fail(stack.message());
//   stepback::transfer::Download download(stack.connector(), ...);
//
// Once per process: the TLS arena is the process's (docs/threads.md), so a second stack uses
// the arena the first installed. The resolver is the platform's best non-blocking one:
// c-ares (reading resolv.conf) on Linux and Apple, AndroidResolver on Android API 29+, and
// SystemResolver (the system's getaddrinfo on two worker threads init() starts) on Android
// below API 29, where c-ares has no servers to read, and in a build without c-ares. init()
// reads files and may start threads, so call it outside the loop; nothing after it allocates.
#ifndef STEPBACK_APP_HTTPS_STACK_HPP_
#define STEPBACK_APP_HTTPS_STACK_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "stepback/https/dns/android_resolver.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/dns/system_resolver.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/https/tls/trust_store.hpp"
#include "stepback/https/types.hpp"

namespace stepback::app {

class HttpsStack {
 public:
  // The TLS arena: one connection with its handshake and a chain looked up from the trust
  // store (RSA roots included), with room to spare; half in the small-RAM build, whose TLS
  // records are 4 KiB.
  static constexpr std::size_t kArenaBytes = std::size_t{https::kSmallRamBuild ? 48 : 96} * 1024;

  HttpsStack() = default;
  HttpsStack(const HttpsStack&) = delete;
  HttpsStack& operator=(const HttpsStack&) = delete;

  // Sets everything up: the TLS arena (unless one is installed already), TLS, the trust
  // anchors of `ca` (a PEM or DER bundle file, or a directory hashed by `openssl rehash`;
  // null: the system's store), the wall clock certificates are checked against
  // (platform::wall_now) and the resolver (resolv.conf is read, or worker threads started,
  // here). kOk, or what failed
  // with words in message(); then nothing may go through connector().
  [[nodiscard]] https::Status init(const char* ca = nullptr);

  // After init() succeeded: the connector for Client, Download, Upload and Operation, and
  // the TLS configuration (for pins, versions, a fragment length).
  https::TcpTlsConnector& connector() { return *connector_; }
  https::TlsClientConfig& tls() { return tls_; }
  https::TrustStore& trust_store() { return trust_; }
  // Words on what init() refused ("" when it did not).
  const char* message() const { return message_; }

 private:
  https::Status fail(https::Status status, const char* what, const char* path);
  // Sets up the resolver; false with message_ when it cannot be.
  bool init_resolver();

  // Gives the arena back when this stack installed it, after every member below has freed
  // its mbedTLS objects (it is destroyed last): PSA's global state, which lives in the arena,
  // is freed, and the arena uninstalled, so that the storage may hold a new stack (a C app's
  // stepback_stack_init after stepback_stack_destroy), whose construction zeroes the arena.
  struct ArenaOwner {
    ArenaOwner() = default;
    ArenaOwner(const ArenaOwner&) = delete;
    ArenaOwner& operator=(const ArenaOwner&) = delete;
    ~ArenaOwner();
    bool owns = false;
  };

  ArenaOwner arena_owner_;  // First: destroyed last.
  alignas(16) std::uint8_t arena_[kArenaBytes];
  https::TrustStore trust_;
  https::TlsClientConfig tls_;
#if defined(__ANDROID__) && __ANDROID_API__ >= 29 && defined(STEPBACK_HAVE_CARES)
  https::AndroidResolver resolver_;  // Its answers are parsed with c-ares.
#elif defined(__ANDROID__) || !defined(STEPBACK_HAVE_CARES)
  https::SystemResolver resolver_;
#else
  https::CaresResolver resolver_;
#endif
  std::optional<https::TcpTlsConnector> connector_;
  char message_[320] = {};
};

}  // namespace stepback::app

#endif  // STEPBACK_APP_HTTPS_STACK_HPP_
