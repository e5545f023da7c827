// NetworkWatch: how `stepback get` and `stepback upload` learn that the device's network
// changed, on Linux. An rtnetlink socket (NETLINK_ROUTE, the route, address and link groups)
// wakes the main loop on every change; the routes are then read from /proc/net/route and
// /proc/net/ipv6_route. When the default routes differ from before (another interface or
// gateway, or none), or the device goes from some route to none or back, the transfer is told
// (Client::network_changed): what ran on the old network ends at once and goes on over the new
// one. The routes are the platform's word, not a verdict on a destination: without a network
// a transfer is still tried (loopback, an address of the device's own), and it waits for one
// only once an attempt finds no path. Which routes make a network depends on the
// device: one that had a default route when the watch began needs one (while Wi-Fi hands over
// to cellular there is a moment with the cellular subnet but no default route, which is no
// network yet); one that had routes but no default route (a closed network, a test's
// namespaces) is connected while any route leaves it. An app does the same from its platform's
// callback (Android's ConnectivityManager.NetworkCallback, Apple's NWPathMonitor).
#ifndef STEPBACK_TOOLS_NETWORK_WATCH_HPP_
#define STEPBACK_TOOLS_NETWORK_WATCH_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "client_loop.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/https/client.hpp"

namespace stepback::tools {

// Receives a network change, from the main loop.
struct NetworkChanged {
  void (*changed)(void* context, Millis now, const https::NetworkInfo& network) = nullptr;
  void* context = nullptr;
};

// The NetworkChanged of a transfer (a transfer::Download, a transfer::Upload): its
// network_changed().
template <class Transfer>
NetworkChanged network_changed_of(Transfer* transfer) {
  return NetworkChanged{[](void* t, Millis now, const https::NetworkInfo& network) {
                          static_cast<Transfer*>(t)->network_changed(now, network);
                        },
                        transfer};
}

// A transfer for run_transfer(), started, and how it learns of its network.
struct TransferLoop {
  Stepper stepper;
  NetworkChanged network;  // Where the network goes (network_changed_of() the transfer).
  // --network-type: the network, fixed; none: as the routes say, and their changes followed.
  std::optional<https::NetworkInfo> network_type;
  const char* interface = nullptr;  // --interface: the device whose routes are the network.
};

// Runs `transfer` to its end as run_steps() does, ticking `ticker`, with SIGINT and SIGTERM
// caught (StopSignals) and the network watched (NetworkWatch) unless --network-type fixes it;
// the transfer is told of a fixed network, or of none, before its first step.
void run_transfer(const TransferLoop& transfer, Ticker& ticker);

class NetworkWatch final : public LoopPeer {
 public:
  // Watches on behalf of `sink`; metered and roaming are not known from routes, so the
  // network it reports is unmetered (flags say otherwise: --network-type).
  explicit NetworkWatch(NetworkChanged sink) : sink_(sink) {}
  ~NetworkWatch();
  NetworkWatch(const NetworkWatch&) = delete;
  NetworkWatch& operator=(const NetworkWatch&) = delete;

  // Watches only the routes through `device` (--interface: the transfer is bound to it, so
  // the other devices' routes are not its network); null: every device. Before open().
  void set_device(const char* device) { device_ = device; }
  // Opens the rtnetlink socket and reads the default routes; false (and nothing is watched)
  // where that cannot be done. The network as it is now, in *network.
  bool open(https::NetworkInfo* network);
  std::size_t poll_fds(pollfd* fds, std::size_t room) override;
  // Reads what the kernel sent; when the default routes changed, tells the sink and answers
  // true (the transfer must be stepped at once).
  bool serve(Millis now) override;

  // What the route files' text (/proc/net/route, /proc/net/ipv6_route) says: a digest of the
  // default routes (0: none), and whether any route leaves the device (not on lo, not an
  // unreachable one, not IPv6 link-local, multicast or a single address), counting only the
  // routes through `device` when it is not null; for tests.
  struct Routes {
    std::uint64_t defaults = 0;
    bool any = false;
    bool operator==(const Routes& o) const { return defaults == o.defaults && any == o.any; }
  };
  static Routes read_routes(const char* ipv4_text, const char* ipv6_text,
                            const char* device = nullptr);

 private:
  // Whether `routes` make a network on this device (see above).
  bool connected(const Routes& routes) const;

  NetworkChanged sink_;
  int fd_ = -1;
  Routes routes_;        // At the last look.
  bool closed_ = false;  // Routes but no default one when the watch began.
  const char* device_ = nullptr;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_NETWORK_WATCH_HPP_
