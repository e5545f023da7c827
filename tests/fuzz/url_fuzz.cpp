// libFuzzer target for parse_url() (https/src/http/request_writer.cpp): the input is the URL.
// The target aborts unless:
//   - a refused URL leaves *out untouched;
//   - an accepted one has sane parts, all views into the text: a host of 1 to 255
//     characters (a name of letters, digits and -._~, or an IPv6 literal of hex digits,
//     colons and dots, unbracketed), a port in 1..65535 (the one after the host, else the
//     scheme's) and a target of visible ASCII without '#' that starts with '/' (or with
//     '?' when the URL has a query but no path: the writer sends it as "/?...");
//   - the URL rebuilt from its parts ("https://" host ":" port target, IPv6 hosts in
//     brackets), with and without the port when it is the default, parses to the same
//     parts, and so does the text with a fragment appended;
//   - write_request_head() accepts a GET of it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/https/http/request_writer.hpp"

namespace {

using stepback::https::parse_url;
using stepback::https::Status;
using stepback::https::Url;

void require(bool condition) {
  if (!condition) std::abort();
}

bool same(const Url& a, const Url& b) {
  return a.tls == b.tls && a.host == b.host && a.port == b.port && a.target == b.target;
}

// Whether `part` lies inside `text`.
bool inside(std::string_view part, std::string_view text) {
  return part.data() >= text.data() && part.data() + part.size() <= text.data() + text.size();
}

bool valid_host(std::string_view host) {
  if (host.empty() || host.size() > 255) return false;
  const bool ipv6 = host.find(':') != std::string_view::npos;
  for (const char c : host) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    const bool name = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (ipv6 ? !(hex || c == ':' || c == '.') : !name) return false;
  }
  return true;
}

bool valid_target(std::string_view target) {
  if (target.empty() || (target.front() != '/' && target.front() != '?')) return false;
  for (const char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7E || c == '#') return false;
  }
  return true;
}

// The port an accepted URL's authority names, read here apart: the digits after the host's
// ':' (after ']' for an IPv6 literal), else the scheme's.
std::uint32_t expected_port(std::string_view text, const Url& url) {
  std::string_view rest = text.substr(text.find("://") + 3);
  rest = rest.substr(0, rest.find('#'));
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  const std::size_t host_end =
      authority.front() == '[' ? authority.find(']') + 1 : authority.find(':');
  if (host_end >= authority.size()) return url.default_port();
  const std::string_view port = authority.substr(host_end);
  require(port.size() >= 2 && port.size() <= 6 && port.front() == ':');
  std::uint32_t value = 0;
  for (const char c : port.substr(1)) {
    require(c >= '0' && c <= '9');
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return value;
}

std::string rebuild(const Url& url, bool with_port) {
  std::string text = url.tls ? "https://" : "http://";
  const bool ipv6 = url.host.find(':') != std::string_view::npos;
  if (ipv6) text += '[';
  text += url.host;
  if (ipv6) text += ']';
  if (with_port) text += ":" + std::to_string(url.port);
  text += url.target;
  return text;
}

void check_reparse(const Url& url, const std::string& text) {
  Url again;
  require(parse_url(text, &again) == Status::kOk);
  require(same(again, url));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Url sentinel;
  sentinel.tls = false;
  sentinel.host = "sentinel.invalid";
  sentinel.port = 7;
  sentinel.target = "/sentinel";
  Url url = sentinel;
  const Status status = parse_url(text, &url);

  // A fragment is dropped: appending one changes nothing.
  Url with_fragment = sentinel;
  const std::string fragmented = std::string(text) + "#fragment";
  require(parse_url(fragmented, &with_fragment) == status);

  if (status != Status::kOk) {
    require(status == Status::kInvalidArgument && same(url, sentinel));
    require(same(with_fragment, sentinel));
    return 0;
  }
  require(valid_host(url.host) && inside(url.host, text));
  require(url.port >= 1 && url.port == expected_port(text, url));
  require(valid_target(url.target));
  require(inside(url.target, text) || url.target == "/");

  check_reparse(url, rebuild(url, true));
  if (url.port == url.default_port()) check_reparse(url, rebuild(url, false));
  require(same(with_fragment, url));  // Compared by value: its views are into the other text.

  stepback::https::RequestHead head;
  head.url = url;
  std::vector<std::uint8_t> out(size + 512);
  std::size_t written = 0;
  require(stepback::https::write_request_head(head,
                                              stepback::https::MutableBytes{out.data(), out.size()},
                                              &written) == Status::kOk);
  require(written > 0);
  return 0;
}
