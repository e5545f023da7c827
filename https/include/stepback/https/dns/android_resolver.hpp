// AndroidResolver: name lookups through the NDK's DnsResolver (android_res_nquery and
// android_res_nresult, <android/multinetwork.h>, API 29+), on the Network the app chose, so
// a lookup follows the app's network (Wi-Fi, cellular, a VPN) and uses the device's servers,
// private DNS and cache. Each query is a descriptor the app's loop polls; the answers are
// parsed with c-ares's DNS parser (parse_dns_answer below, which is portable and tested on
// every platform). Below API 29 there is no such API: use SystemResolver
// (system_resolver.hpp: android_getaddrinfofornetwork on worker threads).
//
// What is verified where: parse_dns_answer is unit-tested on the host; AndroidResolver
// itself is compiled on the host only against a stub of <android/multinetwork.h> written from
// the NDK's documentation (tests/https/android_stub), never against the NDK's real header
// and never run on a device. See docs/android.md.
#ifndef STEPBACK_HTTPS_DNS_ANDROID_RESOLVER_HPP_
#define STEPBACK_HTTPS_DNS_ANDROID_RESOLVER_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/dns/resolver.hpp"

namespace stepback::https {

// Parses the DNS response `message` (as a server sends it, without TCP's length prefix) whose
// header rcode is `rcode`, appending its A and AAAA records, with `port`, to out[*count]
// (up to `capacity` in total; *count is updated). kNone when the message parsed (with or
// without addresses); kNxDomain, kServerFailure (SERVFAIL, REFUSED, NOTIMP) for those rcodes;
// kBadResponse when it does not parse or has another rcode; kOutOfMemory when the DNS pool
// (cares_resolver.hpp) ran out. Uses c-ares's ares_dns_parse(); kInternal without c-ares.
ResolveError parse_dns_answer(const std::uint8_t* message, std::size_t size, int rcode,
                              std::uint16_t port, SocketAddress* out, std::size_t capacity,
                              std::size_t* count);

#if defined(__ANDROID__)

// android_res_nquery for AAAA and A together on one Network; API 29+ at run time (built
// for a lower API level, every lookup fails with kInternal, saying so).
class AndroidResolver final : public Resolver {
 public:
  // `network` is the value of android.net.Network#getNetworkHandle() (0: the default
  // network). `limit` bounds a lookup (the system resolver has its own timeouts too).
  explicit AndroidResolver(std::uint64_t network = 0, Millis limit = Millis(10000))
      : network_(network), limit_(limit) {}
  ~AndroidResolver() { cancel(); }
  AndroidResolver(const AndroidResolver&) = delete;
  AndroidResolver& operator=(const AndroidResolver&) = delete;

  // The Network later lookups use (e.g. after ConnectivityManager reported a switch).
  void set_network(std::uint64_t network) { network_ = network; }
  // Lookups go on the binding's network when it names one (its device and configure hook do
  // not apply: the system resolver makes the sockets).
  void set_binding(const NetworkBinding* binding) override {
    if (binding != nullptr && binding->network != 0) network_ = binding->network;
  }

  void start(const char* host, std::uint16_t port, Millis now) override;
  [[nodiscard]] ResolverNext step(Millis now) override;
  const ResolveResult& result() const override { return result_; }
  void cancel() override;

 private:
  // One query (AAAA first, then A): its descriptor while pending, and how it ended.
  struct Query {
    int fd = -1;
    ResolveError error = ResolveError::kNone;
    int os_error = 0;  // The negative errno android_res_* returned, or 0.
    int rcode = -1;    // The answer's rcode, or -1.
  };

  void finish();

  std::uint64_t network_;
  Millis limit_;
  Millis deadline_ = Millis::max();
  Query queries_[2];
  // Each query's addresses, kept apart until both are in (then cut per family_quota()).
  SocketAddress found_[2][kMaxAddresses];
  std::size_t found_count_[2] = {};
  SocketAddress addresses_[kMaxAddresses];
  std::size_t count_ = 0;
  std::uint16_t port_ = 0;
  bool pending_ = false;
  ResolveResult result_;
  char host_[256] = {};
  char message_[384] = {};
};

#endif  // __ANDROID__

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_DNS_ANDROID_RESOLVER_HPP_
