// Which network a transfer's sockets go over. A phone often has two at once (Wi-Fi without
// internet, cellular that works); by default the OS picks, and an app that knows better names
// the network here. TcpConnector::set_binding applies it to every socket of the connections it
// makes and of the name lookups (CaresResolver's, AndroidResolver's network).
#ifndef STEPBACK_HTTPS_TCP_BINDING_HPP_
#define STEPBACK_HTTPS_TCP_BINDING_HPP_

#include <cstddef>
#include <cstdint>

namespace stepback::https {

// Bytes of a device name with its NUL (Linux's IFNAMSIZ): "wlan0" is 6.
inline constexpr std::size_t kInterfaceNameCapacity = 16;

// A network to bind to; every field may be combined, an empty binding binds nothing.
struct NetworkBinding {
  // The device to send through ("wlan0", "rmnet_data0"): SO_BINDTODEVICE on Linux and
  // Android, IP_BOUND_IF/IPV6_BOUND_IF on Apple. Null or "": any device.
  const char* interface = nullptr;
  // Android: an android.net.Network's getNetworkHandle(), given to android_setsocknetwork()
  // (API 23+). 0: the default network. Elsewhere a non-zero handle fails each socket with
  // EOPNOTSUPP.
  std::uint64_t network = 0;
  // Called with each new socket (TCP, and the resolver's UDP and TCP) after the above, before
  // it connects: for what only the app can do (VpnService.protect(), a firewall mark). false
  // fails that socket, as a connect that failed with errno EPERM.
  bool (*configure)(int fd, void* context) = nullptr;
  void* context = nullptr;
};

// Whether `binding` binds anything.
bool binds(const NetworkBinding& binding);

// Applies `binding` to the socket `fd`: 0, or the errno of what failed (ENODEV for a device
// that does not exist, EOPNOTSUPP for what this platform cannot do).
int apply_binding(const NetworkBinding& binding, int fd);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TCP_BINDING_HPP_
