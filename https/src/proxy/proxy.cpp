#include "stepback/https/proxy/proxy.hpp"

#include "http/http1_text.hpp"

namespace stepback::https {
namespace {

using http1_text::iequals;
using http1_text::sub;

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(sub(s, 0, prefix.size()), prefix);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `in` to storage[*used...]; false when it does not fit or an escape is bad.
bool decode(std::string_view in, char* storage, std::size_t size, std::size_t* used,
            std::string_view* out) {
  const std::size_t start = *used;
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = hex_value(in[i + 1]);
      const int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    if (storage == nullptr || *used >= size) return false;
    storage[(*used)++] = c;
  }
  *out = std::string_view(storage + start, *used - start);
  return true;
}

bool parse_port(std::string_view text, std::uint16_t* port) {
  if (text.empty() || text.size() > 5) return false;
  std::uint32_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (v == 0 || v > 65535) return false;
  *port = static_cast<std::uint16_t>(v);
  return true;
}

bool valid_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

// Splits `text` into host (brackets removed) and optional port.
bool split_host_port(std::string_view text, std::string_view* host, std::string_view* port_text) {
  *port_text = {};
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    *host = sub(text, 1, close - 1);
    const std::string_view rest = sub(text, close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      *port_text = sub(rest, 1);
      if (port_text->empty()) return false;
    }
    return true;
  }
  const std::size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
    *host = text;  // A bare IPv6 address: no port.
    return true;
  }
  *host = sub(text, 0, colon);
  if (colon != std::string_view::npos) {
    *port_text = sub(text, colon + 1);
    if (port_text->empty()) return false;
  }
  return true;
}

// A dotted-quad IPv4 address as a 32-bit number; false for anything else.
bool parse_ipv4(std::string_view s, std::uint32_t* out) {
  std::uint32_t value = 0;
  int parts = 0;
  std::size_t i = 0;
  while (parts < 4) {
    std::uint32_t part = 0;
    std::size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && digits < 4) {
      part = part * 10 + static_cast<std::uint32_t>(s[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0 || digits > 3 || part > 255) return false;
    value = (value << 8) | part;
    ++parts;
    if (parts < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  if (i != s.size()) return false;
  *out = value;
  return true;
}

std::string_view strip_trailing_dot(std::string_view s) {
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  return s;
}

// Whether one no_proxy entry (not empty) matches `host`:`port`.
bool entry_matches(std::string_view entry, std::string_view host, std::uint16_t port) {
  if (entry == "*") return true;
  std::string_view name;
  std::string_view port_text;
  if (!split_host_port(entry, &name, &port_text)) return false;
  if (!port_text.empty()) {
    std::uint16_t entry_port = 0;
    if (!parse_port(port_text, &entry_port) || entry_port != port) return false;
  }
  // CIDR: an IPv4 network and prefix length.
  const std::size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    std::uint32_t network = 0;
    std::uint32_t address = 0;
    std::uint16_t bits = 0;
    const std::string_view bits_text = sub(name, slash + 1);
    if (!parse_ipv4(sub(name, 0, slash), &network) || !parse_ipv4(host, &address)) {
      return false;
    }
    if (bits_text == "0") return true;
    if (!parse_port(bits_text, &bits) || bits > 32) return false;
    const std::uint32_t mask = bits == 32 ? 0xffffffffu : ~(0xffffffffu >> bits);
    return (network & mask) == (address & mask);
  }
  if (!name.empty() && name.front() == '.') name.remove_prefix(1);
  name = strip_trailing_dot(name);
  host = strip_trailing_dot(host);
  if (name.empty()) return false;
  if (iequals(name, host)) return true;
  // A subdomain: the host ends with ".name".
  return host.size() > name.size() && host[host.size() - name.size() - 1] == '.' &&
         iequals(sub(host, host.size() - name.size()), name);
}

}  // namespace

Status parse_proxy_url(std::string_view text, char* storage, std::size_t storage_size,
                       ProxyConfig* out) {
  if (out == nullptr) return Status::kInvalidArgument;
  std::string_view rest = text;
  if (starts_with_nocase(rest, "http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return Status::kInvalidArgument;  // https://, socks5:// and the rest: not supported.
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos || rest.find('?') != std::string_view::npos ||
      rest.find('#') != std::string_view::npos) {
    return Status::kInvalidArgument;
  }
  ProxyConfig parsed;
  const std::size_t at = rest.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view userinfo = sub(rest, 0, at);
    rest.remove_prefix(at + 1);
    const std::size_t colon = userinfo.find(':');
    std::size_t used = 0;
    if (storage == nullptr && userinfo.size() > 0) return Status::kInvalidArgument;
    if (!decode(sub(userinfo, 0, colon), storage, storage_size, &used, &parsed.user)) {
      return Status::kInvalidArgument;
    }
    if (colon != std::string_view::npos &&
        !decode(sub(userinfo, colon + 1), storage, storage_size, &used, &parsed.password)) {
      return Status::kInvalidArgument;
    }
  }
  std::string_view port_text;
  if (!split_host_port(rest, &parsed.host, &port_text) || parsed.host.empty()) {
    return Status::kInvalidArgument;
  }
  const bool ipv6 = parsed.host.find(':') != std::string_view::npos;
  for (const char c : parsed.host) {
    const bool ok = valid_host_char(c) || (ipv6 && (c == ':' || c == '%'));
    if (!ok) return Status::kInvalidArgument;
  }
  if (!port_text.empty() && !parse_port(port_text, &parsed.port)) return Status::kInvalidArgument;
  parsed.no_proxy = out->no_proxy;
  *out = parsed;
  return Status::kOk;
}

bool proxy_excluded(std::string_view no_proxy, std::string_view host, std::uint16_t port) {
  if (!host.empty() && host.front() == '[' && host.back() == ']') {
    host = sub(host, 1, host.size() - 2);
  }
  std::size_t i = 0;
  while (i < no_proxy.size()) {
    const char c = no_proxy[i];
    if (c == ',' || c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < no_proxy.size() && no_proxy[end] != ',' && no_proxy[end] != ' ' &&
           no_proxy[end] != '\t') {
      ++end;
    }
    if (entry_matches(sub(no_proxy, i, end - i), host, port)) return true;
    i = end;
  }
  return false;
}

bool uses_proxy(const ProxyConfig& proxy, std::string_view host, std::uint16_t port) {
  return !proxy.host.empty() && !proxy_excluded(proxy.no_proxy, host, port);
}

}  // namespace stepback::https
