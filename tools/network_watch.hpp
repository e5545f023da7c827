// NetworkWatch: how `stepback get` and `stepback upload` learn that the device's network
// changed, on Linux. An rtnetlink socket (NETLINK_ROUTE, the route, address and link groups)
// wakes the main loop on every change; the default routes are then read from
// /proc/net/route and /proc/net/ipv6_route, and when they differ from before (another
// interface or gateway, or none) the transfer is told (Client::network_changed): what ran on
// the old network ends at once and goes on over the new one, and without a default route it
// waits for one. An app does the same from its platform's callback (Android's
// ConnectivityManager.NetworkCallback, Apple's NWPathMonitor).
#ifndef STEPBACK_TOOLS_NETWORK_WATCH_HPP_
#define STEPBACK_TOOLS_NETWORK_WATCH_HPP_

#include <cstddef>
#include <cstdint>

#include "client_loop.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/https/client.hpp"

namespace stepback::tools {

// Receives a network change, from the main loop.
struct NetworkChanged {
  void (*changed)(void* context, Millis now, const https::NetworkInfo& network) = nullptr;
  void* context = nullptr;
};

class NetworkWatch final : public LoopPeer {
 public:
  // Watches on behalf of `sink`; metered and roaming are not known from routes, so the
  // network it reports is unmetered (flags say otherwise: --network-type).
  explicit NetworkWatch(NetworkChanged sink) : sink_(sink) {}
  ~NetworkWatch();
  NetworkWatch(const NetworkWatch&) = delete;
  NetworkWatch& operator=(const NetworkWatch&) = delete;

  // Opens the rtnetlink socket and reads the default routes; false (and nothing is watched)
  // where that cannot be done. The network as it is now, in *network.
  bool open(https::NetworkInfo* network);
  std::size_t poll_fds(pollfd* fds, std::size_t room) override;
  // Reads what the kernel sent; when the default routes changed, tells the sink and answers
  // true (the transfer must be stepped at once).
  bool serve(Millis now) override;

  // A digest of the default routes in the route files' text (/proc/net/route,
  // /proc/net/ipv6_route): 0 when there is none; for tests.
  static std::uint64_t default_routes(const char* ipv4_text, const char* ipv6_text);

 private:
  NetworkChanged sink_;
  int fd_ = -1;
  std::uint64_t routes_ = 0;  // default_routes() at the last look.
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_NETWORK_WATCH_HPP_
