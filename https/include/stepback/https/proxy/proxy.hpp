// Proxy settings for the built-in connectors: a plain struct an app fills from the platform
// (Android: ConnectivityManager.getDefaultProxy()'s ProxyInfo: getHost(), getPort(),
// getExclusionList() joined with commas; iOS/macOS: CFNetworkCopySystemProxySettings()'s
// kCFNetworkProxiesHTTPSProxy/HTTPSPort and kCFNetworkProxiesExceptionsList) or from a proxy
// URL as curl takes it (parse_proxy_url), and curl's no_proxy rules (proxy_excluded).
// Nothing allocates; every view is caller-owned.
#ifndef STEPBACK_HTTPS_PROXY_PROXY_HPP_
#define STEPBACK_HTTPS_PROXY_PROXY_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/types.hpp"

namespace stepback::https {

// An HTTP proxy: https:// origins are reached through a CONNECT tunnel, http:// ones by
// sending the request to the proxy with its target in absolute form. The views must outlive
// the connector the config is given to.
struct ProxyConfig {
  std::string_view host;      // Name or address (IPv6 without brackets); empty: no proxy.
  std::uint16_t port = 1080;  // curl's default when a proxy URL names none.
  std::string_view user;      // Basic credentials, sent to the proxy alone; empty: none.
  std::string_view password;  // Used only with a user.
  std::string_view no_proxy;  // Hosts reached directly, curl's syntax (see proxy_excluded).
};

// Parses a proxy URL as curl's --proxy takes it: `[http://][user[:password]@]host[:port][/]`
// into *out (no_proxy untouched). The user and password are percent-decoded into `storage`
// (`storage_size` bytes), which *out's views then point into along with `text`.
// kInvalidArgument for another scheme (https:// and socks proxies are not supported), an empty
// or malformed host, a bad port, a path, or credentials that do not fit `storage`.
[[nodiscard]] Status parse_proxy_url(std::string_view text, char* storage, std::size_t storage_size,
                                     ProxyConfig* out);

// Whether `host` (on `port`) is reached without the proxy per the `no_proxy` list, by curl's
// rules: entries separated by commas or whitespace; `*` alone matches every host; an entry
// matches the host itself and its subdomains (`example.com` and `.example.com` both match
// `example.com` and `a.example.com`, never `badexample.com`), case-insensitively, a trailing
// dot ignored; IP addresses match exactly (IPv6 as written, with or without brackets), IPv4
// also as a CIDR range (`10.0.0.0/8`); an entry may end in `:port` to match that port only.
bool proxy_excluded(std::string_view no_proxy, std::string_view host, std::uint16_t port);

// Whether `proxy` sends a request for `host`:`port` through the proxy: one is configured and
// `no_proxy` does not exclude the host.
bool uses_proxy(const ProxyConfig& proxy, std::string_view host, std::uint16_t port);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_PROXY_PROXY_HPP_
