// CaresResolver: the default Resolver on POSIX systems, built on c-ares (the asynchronous
// resolver curl, gRPC and Node use), which stepback builds from source with its own flags
// (cmake/StepbackCares.cmake). It asks for AAAA and A together (AF_UNSPEC), never blocks after
// init(), and exposes c-ares's sockets to the app's loop through step().
//
// Memory. c-ares allocates through functions installed once per process with
// ares_library_init_mem(); stepback installs a bounded pool over a buffer the app hands to
// dns_pool_init() (or, if it never does, over a built-in static buffer of
// kDefaultDnsPoolSize bytes at the first init()). Nothing of c-ares touches the heap then.
// An exhausted pool is a resolver failure (ResolveError::kOutOfMemory), never a crash.
//
// Hosts file. With CaresOptions::hosts_file, start() reads /etc/hosts itself, as glibc
// does: every line naming the host gives its address, both families in file order, read
// with open() and read() into a 1 KiB buffer on the stack (no stdio, no heap). A name the
// file gives no address is asked of DNS; c-ares never reads the file, since 1.34.5 merges
// a line into an earlier one with the same address and drops its names.
//
// Configuration. Every option stepback relies on is set explicitly by init() (see
// CaresOptions): per-try timeout, tries, the cap on one try, servers (the caller's, or those
// of the system's resolv.conf), ndots, no search domains (a name is looked up as given, never
// with a local domain appended), no HOSTALIASES, no rotation, no query cache, EDNS with a
// 1232-byte payload, and no fallback to a server on 127.0.0.1 when none is configured.
//
// Android: c-ares cannot read an Android device's servers (there is no resolv.conf); give
// them in CaresOptions::servers, or use AndroidResolver (android_resolver.hpp, API 29+).
#ifndef STEPBACK_HTTPS_DNS_CARES_RESOLVER_HPP_
#define STEPBACK_HTTPS_DNS_CARES_RESOLVER_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/types.hpp"

// c-ares's channel, opaque here: no public header of stepback includes ares.h.
struct ares_channeldata;
struct ares_addrinfo;

namespace stepback::https {

// The pool c-ares gets when the app installs none. c-ares reads every open connection into a
// buffer that can take a 64 KiB message, allocated as 128 KiB (its buffers grow by powers of
// two), so one lookup needs a little over 128 KiB, and one that falls back to TCP after a
// truncated answer a little over 256 KiB; the rest (channel, queries, answers) is a few KiB.
// dns_pool_stats() shows what an app's lookups take.
inline constexpr std::size_t kDefaultDnsPoolSize = std::size_t{320} * 1024;

// Installs `buffer` as the memory of every c-ares channel in the process (through
// ares_library_init_mem). Call once, before the first CaresResolver::init(); `buffer` must
// outlive every resolver and be 16-byte aligned. kInvalidArgument for a buffer under 4 KiB
// or misaligned, kError when c-ares is already initialized (a pool, or the default one, is
// in place) or refuses to initialize.
[[nodiscard]] Status dns_pool_init(MutableBytes buffer);

// What the pool holds now and held at most, in bytes (with block headers), and how many
// allocations it refused. All zero before the pool is installed.
struct DnsPoolStats {
  std::size_t capacity = 0;
  std::size_t in_use = 0;
  std::size_t peak = 0;
  std::size_t carved = 0;  // Bytes taken from the buffer so far (freed blocks are reused).
  std::size_t refused = 0;
};
DnsPoolStats dns_pool_stats();

// How a CaresResolver resolves. Every field is passed to c-ares explicitly.
struct CaresOptions {
  // Servers as c-ares's CSV: "192.0.2.53", "192.0.2.53:5353", "[2001:db8::53]:53",
  // comma-separated, tried in order. Null or "": the `nameserver` lines of resolv_conf.
  const char* servers = nullptr;
  // The resolv.conf whose servers are used when `servers` is empty (its `search`, `domain`
  // and `options` lines are overridden by the fields below). Null: /etc/resolv.conf.
  const char* resolv_conf = nullptr;
  // The first try's timeout per server; c-ares may lengthen later tries, up to max_try.
  Millis try_timeout = Millis(2000);
  // The longest any one try may wait.
  Millis max_try = Millis(4000);
  // How many times each server is asked before the lookup fails with kTimeout.
  int tries = 2;
  // Whatever c-ares does, the lookup ends with kTimeout this long after start(); 0 = no
  // extra bound (tries x max_try x servers bounds it). The connector also bounds it by the
  // connect timeout and the retry deadline.
  Millis limit = Millis(0);
  // Names with at least this many dots are tried as given first. There are no search
  // domains, so every name is tried as given only; kept explicit for c-ares's sake.
  int ndots = 1;
  // Whether the hosts file (/etc/hosts) answers before DNS, read by start() on each lookup.
  bool hosts_file = true;
  // Ask over TCP from the start (normally UDP, and TCP only after a truncated answer).
  bool tcp_only = false;
  // The EDNS(0) UDP payload size advertised; 0 turns EDNS off.
  std::uint16_t edns_payload = 1232;
};

// c-ares with its sockets in the app's loop. init() once (outside the loop: it reads
// resolv_conf), then start()/step() per lookup. Not thread-safe; one lookup at a time.
class CaresResolver final : public Resolver {
 public:
  CaresResolver() = default;
  ~CaresResolver();
  CaresResolver(const CaresResolver&) = delete;
  CaresResolver& operator=(const CaresResolver&) = delete;

  // Creates the c-ares channel with `options` (strings are copied by c-ares). kOk, or
  // kInvalidArgument (a bad option or server list) or kError (no servers in resolv.conf,
  // out of pool, c-ares refused); message() then says why. May be called again to
  // reconfigure (e.g. after a network change): any lookup under way ends as kCancelled.
  [[nodiscard]] Status init(const CaresOptions& options);
  // Whether init() succeeded.
  bool ready() const { return channel_ != nullptr; }
  // Why init() failed, in words ("" if it did not).
  const char* message() const { return init_message_; }

  // Before init() succeeded, a lookup finishes at once with kInternal and init()'s message;
  // one the hosts file answers finishes at once too.
  void start(const char* host, std::uint16_t port, Millis now) override;
  [[nodiscard]] ResolverNext step(Millis now) override;
  const ResolveResult& result() const override { return result_; }
  void cancel() override;
  // Cancels the lookup under way and re-reads the system's configuration (resolv_conf) with
  // ares_reinit(); servers given in CaresOptions stay as they are. A failure to read it
  // keeps the old servers (the next lookup says what fails).
  void network_changed() override;
  // Binds every socket c-ares opens (UDP and TCP, to each server) to `binding`; one it cannot
  // bind counts as a server c-ares could not reach.
  void set_binding(const NetworkBinding* binding) override { binding_ = binding; }

  // Most sockets of one channel tracked for the loop (c-ares rarely opens more than two: UDP,
  // and TCP after a truncated answer).
  static constexpr std::size_t kMaxSockets = 4;

 private:
  struct Socket {
    int fd = -1;
    IoInterest interest = IoInterest::kNone;
  };

  static void on_socket_state(void* self, int fd, int readable, int writable);
  static int on_socket_configure(int fd, int type, void* self);
  static void on_answer(void* self, int status, int timeouts, ares_addrinfo* result);
  // Ends the lookup with c-ares's `status` and answer (freed here): result_, and message_
  // when it failed.
  void finish(int status, ares_addrinfo* result);
  // The ResolveError of c-ares's `status` for a lookup that kept `count` addresses; a
  // cancelled lookup says why it was cancelled (the pool ran out, `limit` passed).
  ResolveError error_of(int status, std::size_t count) const;
  // Writes message_ for the failed lookup: `e` as error_of() gave it for `status`.
  void describe_failure(ResolveError e, int status);
  // The two messages that tell which end the lookup met: the resolver's own limit or c-ares's
  // tries (kTimeout), a device that refused the sockets or servers c-ares could not reach
  // (kNoNetwork). `words` is c-ares's name for the status.
  void describe_timeout(const char* words);
  void describe_no_network(const char* words);
  // After ARES_ECONNREFUSED: whether no configured server has a path from this device (a
  // UDP connect() to each, which sends nothing), ResolveResult::unreachable.
  bool no_server_reachable() const;
  // Whether the numeric address `server` has a route from here (true when unknown).
  bool has_path(const char* server) const;
  // Answers the lookup from the hosts file when it gives the host an address; false if not.
  bool answer_from_hosts_file();
  void destroy();

  ares_channeldata* channel_ = nullptr;
  Socket sockets_[kMaxSockets];
  SocketAddress addresses_[kMaxAddresses];
  ResolveResult result_;
  Millis limit_{};
  Millis deadline_ = Millis::max();
  char host_[256] = {};  // The name being looked up, for messages.
  std::uint16_t port_ = 0;
  const NetworkBinding* binding_ = nullptr;
  int bind_error_ = 0;          // errno of the last socket binding_ could not bind, this lookup.
  bool pending_ = false;        // A lookup was started and has not finished.
  bool timed_out_ = false;      // The lookup is being cancelled because `limit` passed.
  bool out_of_memory_ = false;  // The lookup is being cancelled because the pool ran out.
  bool hosts_file_ = false;     // CaresOptions::hosts_file.
  char init_message_[160] = {};
  char message_[384] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_DNS_CARES_RESOLVER_HPP_
