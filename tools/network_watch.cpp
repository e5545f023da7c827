#include "network_watch.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "stepback/platform/clock.hpp"

#if defined(__linux__)
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#endif

namespace stepback::tools {
namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

std::uint64_t mix(std::uint64_t h, const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(s[i]);
    h *= kFnvPrime;
  }
  return h;
}

// Reads a small /proc file whole into `out` (NUL-terminated); "" when it cannot be read.
void read_text(const char* path, char* out, std::size_t room) {
  out[0] = '\0';
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return;
  const std::size_t n = std::fread(out, 1, room - 1, f);
  out[n] = '\0';
  std::fclose(f);
}

// The next line of `text` at *at, split on blanks into up to `max` fields; how many.
std::size_t next_fields(const char* text, std::size_t* at, const char** fields,
                        std::size_t* lengths, std::size_t max) {
  std::size_t count = 0;
  std::size_t i = *at;
  while (text[i] != '\0' && text[i] != '\n') {
    while (text[i] == ' ' || text[i] == '\t') ++i;
    if (text[i] == '\0' || text[i] == '\n') break;
    const std::size_t start = i;
    while (text[i] != '\0' && text[i] != '\n' && text[i] != ' ' && text[i] != '\t') ++i;
    if (count < max) {
      fields[count] = text + start;
      lengths[count] = i - start;
      ++count;
    }
  }
  if (text[i] == '\n') ++i;
  *at = i;
  return count;
}

bool all_zero(const char* s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (s[i] != '0') return false;
  }
  return n > 0;
}

std::uint64_t hex(const char* s, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : 0;
    v = v * 16 + static_cast<std::uint64_t>(d);
  }
  return v;
}

constexpr std::uint64_t kRouteUp = 0x1;        // RTF_UP
constexpr std::uint64_t kRouteReject = 0x200;  // RTF_REJECT (an unreachable route)

}  // namespace

NetworkWatch::Routes NetworkWatch::read_routes(const char* ipv4_text, const char* ipv6_text,
                                               const char* device) {
  const std::size_t device_size = device == nullptr ? 0 : std::strlen(device);
  // Whether a route through the interface named by `name` (`size` bytes) is not counted.
  const auto other_device = [&](const char* name, std::size_t size) {
    return device != nullptr && (size != device_size || std::memcmp(name, device, size) != 0);
  };
  std::uint64_t h = kFnvOffset;
  Routes r;
  const char* f[16];
  std::size_t n[16];
  // Iface Destination Gateway Flags RefCnt Use Metric Mask ... (a header line first).
  std::size_t at = 0;
  (void)next_fields(ipv4_text, &at, f, n, 16);
  while (ipv4_text[at] != '\0') {
    if (next_fields(ipv4_text, &at, f, n, 16) < 8) continue;
    const std::uint64_t flags = hex(f[3], n[3]);
    const bool lo = n[0] == 2 && std::memcmp(f[0], "lo", 2) == 0;
    if ((flags & kRouteUp) == 0 || (flags & kRouteReject) != 0 || lo) continue;
    if (other_device(f[0], n[0])) continue;
    r.any = true;
    if (all_zero(f[1], n[1]) && all_zero(f[7], n[7])) {
      r.defaults = 1;
      h = mix(mix(h, f[0], n[0]), f[2], n[2]);
    }
  }
  // Destination prefix-length source prefix-length next-hop metric refcnt use flags iface.
  at = 0;
  while (ipv6_text[at] != '\0') {
    if (next_fields(ipv6_text, &at, f, n, 16) < 10) continue;
    const std::uint64_t flags = hex(f[8], n[8]);
    const bool lo = n[9] == 2 && std::memcmp(f[9], "lo", 2) == 0;
    if ((flags & kRouteUp) == 0 || (flags & kRouteReject) != 0 || lo || n[0] < 4) continue;
    if (other_device(f[9], n[9])) continue;
    const std::uint64_t prefix = hex(f[1], n[1]);
    if (all_zero(f[0], n[0]) && prefix == 0) {
      r.any = true;
      r.defaults = 1;
      h = mix(mix(h, f[9], n[9]), f[4], n[4]);
      continue;
    }
    // fe80::/10 (link-local), ff00::/8 (multicast), /128 (an address of the device itself).
    const bool link_local =
        (f[0][0] == 'f' && f[0][1] == 'e' &&
         (f[0][2] == '8' || f[0][2] == '9' || f[0][2] == 'a' || f[0][2] == 'b'));
    const bool multicast = f[0][0] == 'f' && f[0][1] == 'f';
    if (!link_local && !multicast && prefix < 128) r.any = true;
  }
  if (r.defaults != 0) r.defaults = h | 1;
  return r;
}

namespace {

NetworkWatch::Routes read_system_routes(const char* device) {
  static char v4[16384];
  static char v6[16384];
  read_text("/proc/net/route", v4, sizeof v4);
  read_text("/proc/net/ipv6_route", v6, sizeof v6);
  return NetworkWatch::read_routes(v4, v6, device);
}

}  // namespace

NetworkWatch::~NetworkWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool NetworkWatch::open(https::NetworkInfo* network) {
  *network = https::NetworkInfo{};
#if defined(__linux__)
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) return false;
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  local.nl_groups =
      RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  routes_ = read_system_routes(device_);
  closed_ = routes_.defaults == 0 && routes_.any;
  network->connected = connected(routes_);
  return true;
#else
  return false;
#endif
}

bool NetworkWatch::connected(const Routes& routes) const {
  return closed_ ? routes.any : routes.defaults != 0;
}

std::size_t NetworkWatch::poll_fds(pollfd* fds, std::size_t room) {
  if (fd_ < 0 || room == 0) return 0;
  fds[0] = pollfd{fd_, POLLIN, 0};
  return 1;
}

bool NetworkWatch::serve(Millis now) {
  if (fd_ < 0) return false;
  bool heard = false;
  char buffer[8192];
  // Drains what the kernel sent; the messages only say that something changed.
  while (::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT) > 0) heard = true;
  if (!heard) return false;
  const Routes routes = read_system_routes(device_);
  if (routes == routes_) return false;
  routes_ = routes;
  https::NetworkInfo network;
  network.connected = connected(routes);
  if (sink_.changed != nullptr) sink_.changed(sink_.context, now, network);
  return true;
}

void run_transfer(const TransferLoop& transfer, Ticker& ticker) {
  const StopSignals signals;
  NetworkWatch watch(transfer.network);
  https::NetworkInfo network;
  watch.set_device(transfer.interface);
  const bool watching = !transfer.network_type && watch.open(&network);
  if (transfer.network_type) network = *transfer.network_type;
  if (transfer.network_type || !network.connected) {
    transfer.network.changed(transfer.network.context, platform::monotonic_now(), network);
  }
  run_steps(transfer.stepper, ticker, watching ? &watch : nullptr);
}

}  // namespace stepback::tools
