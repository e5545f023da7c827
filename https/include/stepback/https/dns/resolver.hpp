// Resolver: how a Connector turns a host name into addresses without blocking the app's loop.
// Step-driven like everything else: start() a lookup, then step() it whenever its descriptor
// is ready or its time has come; it answers "wait for this fd (or only until t)" or "done",
// and result() then holds the addresses or the kind of failure, with the host name and the
// resolver's own words in the message.
//
// Implementations: CaresResolver (cares_resolver.hpp; c-ares, the default on POSIX systems),
// AndroidResolver (android_resolver.hpp; the NDK's android_res_nquery, API 29+),
// SystemResolver (system_resolver.hpp; the system's getaddrinfo on worker threads; Android
// below API 29), and FixedResolver (below; addresses the app resolved itself, e.g. on a worker
// thread through the platform's blocking resolver). This header needs no resolver library.
#ifndef STEPBACK_HTTPS_DNS_RESOLVER_HPP_
#define STEPBACK_HTTPS_DNS_RESOLVER_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/https/tcp/binding.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Why a lookup produced no address. The first group are definite answers about the name
// (retrying the same name cannot help); the second are the resolver's or the network's
// trouble (a retry may succeed).
enum class ResolveError : std::uint8_t {
  kNone,
  // Definite answers.
  kNxDomain,     // The name does not exist (NXDOMAIN).
  kNoData,       // The name exists but has neither an A nor an AAAA record.
  kInvalidName,  // The name is not a valid host name (empty, too long, a bad label).
  // Transient.
  kTimeout,        // No server answered within the resolver's timeouts and tries.
  kServerFailure,  // The servers answered SERVFAIL or REFUSED.
  kBadResponse,    // The answer was malformed, truncated beyond repair, or not an answer.
  kNoNetwork,      // No server could be reached (no servers configured, refused, unreachable).
  kOutOfMemory,    // The resolver's bounded memory pool is exhausted.
  kCancelled,      // cancel() or a new start() ended the lookup.
  kInternal,       // Anything else the resolver reports.
};

// The lower-case name of `e` ("nxdomain", "timeout", ...).
const char* to_string(ResolveError e);

// Whether `e` is a definite answer about the name, which no retry of the same name heals.
constexpr bool is_definite(ResolveError e) {
  return e == ResolveError::kNxDomain || e == ResolveError::kNoData ||
         e == ResolveError::kInvalidName;
}

// What a resolver needs from the main loop next.
struct ResolverNext {
  enum class Kind : std::uint8_t {
    kWaitIo,     // Poll `fd` (>= 0) for `interest`, waking at `at` at the latest.
    kWaitUntil,  // Nothing to poll: sleep until `at` (monotonic).
    kDone,       // Finished: see Resolver::result().
  };
  Kind kind = Kind::kDone;
  int fd = -1;
  IoInterest interest = IoInterest::kNone;
  Millis at{};
};

// The outcome of a finished lookup; valid until the next start() or cancel().
struct ResolveResult {
  ResolveError error = ResolveError::kNone;
  const SocketAddress* addresses = nullptr;  // In the resolver's preference order.
  std::size_t count = 0;                     // 0 exactly when error != kNone.
  // Words naming the host and what the resolver said ("no such host 'exampel.com':
  // the DNS server answered NXDOMAIN (Domain name not found)"); "" on success.
  const char* message = "";
  // With kNoNetwork: no DNS server has a path from this device (each one unreachable, the
  // network down, the bound device gone), which a network coming back can heal; false when
  // one was reached and refused, or none is configured.
  bool unreachable = false;
};

// How many addresses of each family a lookup keeps of `v6` IPv6 and `v4` IPv4 ones in
// `capacity` slots: all when they fit; else a family keeps at least half the slots when it
// has that many, the other the rest. A list cut in the resolver's order (IPv6 first) could
// lose a whole family, which Happy Eyeballs then never tries.
struct FamilyQuota {
  std::size_t v6 = 0;
  std::size_t v4 = 0;
};
FamilyQuota family_quota(std::size_t v6, std::size_t v4, std::size_t capacity);

// One lookup at a time, step-driven. Not thread-safe.
class Resolver {
 public:
  // Most addresses one lookup keeps (further answers are dropped, per family_quota()).
  static constexpr std::size_t kMaxAddresses = TcpTransport::kMaxAddresses;

  // Begins resolving `host` (NUL-terminated, not a numeric address) for TCP `port` at
  // monotonic time `now`, cancelling any lookup under way. Then call step().
  virtual void start(const char* host, std::uint16_t port, Millis now) = 0;
  // Advances the lookup at `now`, doing bounded non-blocking work: kWaitIo / kWaitUntil
  // until the answer is in, then kDone (also on later calls, until the next start()).
  [[nodiscard]] virtual ResolverNext step(Millis now) = 0;
  // The last lookup's outcome; meaningful once step() answered kDone.
  virtual const ResolveResult& result() const = 0;
  // Ends the lookup under way, if any (its sockets are closed); result() then says kCancelled.
  virtual void cancel() = 0;
  // The device's network changed (Connector::network_changed(), outside step()): whatever
  // the resolver read from the old network's configuration is read again. Nothing by default.
  virtual void network_changed() {}
  // Sends later lookups over `binding` (must outlive the resolver; null: none), as far as the
  // resolver can: CaresResolver binds each of its sockets, AndroidResolver asks on the
  // binding's network, a FixedResolver looks nothing up. Nothing by default.
  virtual void set_binding(const NetworkBinding* /*binding*/) {}

 protected:
  Resolver() = default;
  Resolver(const Resolver&) = default;
  Resolver& operator=(const Resolver&) = default;
  ~Resolver() = default;
};

// Addresses the app resolved itself (Android below API 29: Network.getAllByName on a worker;
// a fixed server list), handed out for every name: no lookup, no descriptor, never blocks.
// set() copies them; a start() with none set finishes with kNoNetwork.
class FixedResolver final : public Resolver {
 public:
  FixedResolver() = default;
  // Copies up to kMaxAddresses of `addresses` (their ports are replaced by start()'s); of a
  // longer list, as many of each family as family_quota() keeps, in the given order.
  void set(const SocketAddress* addresses, std::size_t count);

  void start(const char* host, std::uint16_t port, Millis now) override;
  [[nodiscard]] ResolverNext step(Millis now) override;
  const ResolveResult& result() const override { return result_; }
  void cancel() override;

 private:
  SocketAddress given_[kMaxAddresses];
  std::size_t given_count_ = 0;
  SocketAddress out_[kMaxAddresses];
  ResolveResult result_;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_DNS_RESOLVER_HPP_
