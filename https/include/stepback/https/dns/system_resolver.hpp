// SystemResolver: the platform's own resolver (getaddrinfo; on Android
// android_getaddrinfofornetwork on the app's Network, API 23+) on worker threads, with the
// answer handed to the app's loop through a descriptor, so no step() blocks. It is what an
// Android app below API 29 resolves with instead of c-ares: the system's servers, private DNS,
// VPN rules and cache, and no resolver code in the app's library. On Linux it is glibc's
// resolver with nsswitch (files, DNS, mDNS, systemd-resolved).
//
// The threads are made by init(), outside the loop, and are kept (SystemResolverOptions::
// workers of them). A lookup goes to an idle worker; step() answers kWaitIo on that worker's
// descriptor until the answer is in, or until the resolver's own limit passes. A blocking
// getaddrinfo cannot be interrupted: a lookup cancelled or timed out is abandoned, its worker
// finishes it and drops the answer, and the next lookup takes another idle worker (with none
// idle, it waits for one within its limit). The destructor joins idle workers and leaves busy
// ones to finish alone: each frees its own state when its call returns, so a resolver can be
// destroyed at once even while the system's resolver hangs.
//
// Memory: init() allocates each worker's state and thread. start(), step() and cancel() make
// no heap call on the loop's thread; the system's getaddrinfo allocates its answer on the
// worker (freed there).
#ifndef STEPBACK_HTTPS_DNS_SYSTEM_RESOLVER_HPP_
#define STEPBACK_HTTPS_DNS_SYSTEM_RESOLVER_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/dns/resolver.hpp"

struct addrinfo;

namespace stepback::https {

// The blocking lookup a worker runs: getaddrinfo-shaped, with the Network handle to ask on
// (0: the default network). Returns 0 and the list in *out, or an EAI_* code. Tests give
// their own; the default is the system's (see the top of this file).
using SystemLookup = int (*)(std::uint64_t network, const char* host, const addrinfo* hints,
                             addrinfo** out);
// Frees what a SystemLookup returned (the default: freeaddrinfo).
using SystemLookupFree = void (*)(addrinfo* list);

struct SystemResolverOptions {
  // Bound of one lookup in the loop (the system's resolver has its own timeouts too: glibc's
  // and bionic's 5 s per try); past it the lookup ends as kTimeout and is abandoned.
  Millis limit{10000};
  // Worker threads, 1 to SystemResolver::kMaxWorkers. Two let a lookup on a new network go
  // ahead while one abandoned on the old network is still blocked.
  std::size_t workers = 2;
  // null: the system's lookup and freeaddrinfo.
  SystemLookup lookup = nullptr;
  SystemLookupFree release = nullptr;
};

// One lookup at a time (each on a worker), step-driven. Not thread-safe: start(), step(),
// cancel() and the destructor belong to the loop's thread.
class SystemResolver final : public Resolver {
 public:
  static constexpr std::size_t kMaxWorkers = 4;

  SystemResolver() = default;
  ~SystemResolver();
  SystemResolver(const SystemResolver&) = delete;
  SystemResolver& operator=(const SystemResolver&) = delete;

  // Starts the worker threads (outside the loop). kOk, or kInvalidArgument (bad options) or
  // kError (no thread or descriptor could be made); message() then says why. Called again,
  // it ends the lookup under way and starts afresh.
  [[nodiscard]] Status init(const SystemResolverOptions& options = SystemResolverOptions());
  // Whether init() succeeded.
  bool ready() const { return worker_count_ > 0; }
  // Why init() failed, in words ("" if it did not).
  const char* message() const { return init_message_; }

  // The Network later lookups ask on (android.net.Network#getNetworkHandle(); 0: the default
  // network). Only Android has per-network lookups; elsewhere it is ignored.
  void set_network(std::uint64_t network) { network_ = network; }
  // Lookups go on the binding's network when it names one (the system makes the sockets,
  // so the binding's device and configure hook do not apply).
  void set_binding(const NetworkBinding* binding) override;

  // Before init() succeeded, a lookup finishes at once with kInternal and says so.
  void start(const char* host, std::uint16_t port, Millis now) override;
  [[nodiscard]] ResolverNext step(Millis now) override;
  const ResolveResult& result() const override { return result_; }
  void cancel() override;

  // How many workers are busy with a lookup (one the loop waits for, or abandoned ones);
  // for tests and diagnostics.
  std::size_t busy_workers() const;

  struct Worker;  // Shared with its thread; defined in system_resolver.cpp.

 private:
  // Hands the waiting lookup to an idle worker; false when every worker is busy.
  bool dispatch();
  // Leaves the lookup under way to its worker (withdrawn if not taken yet); its answer is
  // dropped.
  void abandon();
  // Ends the lookup with the answer `w` holds.
  void finish(Worker* w);
  // Ends the lookup with `error` and message_ as written.
  void fail(ResolveError error);
  void shut_down();

  Worker* workers_[kMaxWorkers] = {};
  std::size_t worker_count_ = 0;
  Worker* active_ = nullptr;  // The worker the lookup under way went to, if any.
  std::uint32_t ticket_ = 0;  // Numbers each lookup; a worker's answer names its ticket.
  bool pending_ = false;      // A lookup is under way (on a worker, or waiting for one).
  std::uint64_t network_ = 0;
  Millis limit_{10000};
  Millis deadline_ = Millis::max();
  std::uint16_t port_ = 0;
  ResolveResult result_;
  SocketAddress addresses_[kMaxAddresses];
  char host_[256] = {};
  char init_message_[160] = {};
  char message_[384] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_DNS_SYSTEM_RESOLVER_HPP_
