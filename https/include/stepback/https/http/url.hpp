// Url: an absolute http or https URL split into what a connection and a request need, and
// its parser. Views of caller-owned text; nothing allocates. The Connector seam needs this
// header alone, not the request writer.
#ifndef STEPBACK_HTTPS_HTTP_URL_HPP_
#define STEPBACK_HTTPS_HTTP_URL_HPP_

#include <cstdint>
#include <string_view>

#include "stepback/https/types.hpp"

namespace stepback::https {

// An absolute http or https URL split into what a request needs; views into the parsed text.
struct Url {
  bool tls = true;               // https (true) or http (false).
  std::string_view host;         // Name or address; IPv6 literals without brackets.
  std::uint16_t port = 443;      // The explicit port, else the scheme's default.
  std::string_view target{"/"};  // Path and query; "" or "?..." is sent as "/...".

  // The port a Host header may omit for this scheme: 443 for https, 80 for http.
  constexpr std::uint16_t default_port() const { return tls ? 443 : 80; }
};

// Parses `text` as `https://host[:port][/path][?query][#fragment]` (or http://) into *out,
// with views into `text`; the fragment is dropped. kInvalidArgument (and *out untouched)
// for another scheme, userinfo, an empty or malformed host, a port outside 1..65535 or
// empty, or bytes outside visible ASCII.
[[nodiscard]] Status parse_url(std::string_view text, Url* out);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_URL_HPP_
