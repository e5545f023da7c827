#include "stepback/https/http/url.hpp"

#include "http1_text.hpp"

namespace stepback::https {
namespace {

using http1_text::iequals;
using http1_text::valid_host;
using http1_text::valid_target_chars;

// 1..5 digits with a value in 1..65535.
bool parse_port(std::string_view s, std::uint16_t* port) {
  if (s.empty() || s.size() > 5) return false;
  std::uint32_t v = 0;
  for (const char c : s) {
    if (!http1_text::is_digit(c)) return false;
    v = v * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (v == 0 || v > 65535) return false;
  *port = static_cast<std::uint16_t>(v);
  return true;
}

}  // namespace

Status parse_url(std::string_view text, Url* out) {
  const std::size_t sep = text.find("://");
  if (sep == std::string_view::npos || out == nullptr) return Status::kInvalidArgument;
  Url url;
  const std::string_view scheme = http1_text::sub(text, 0, sep);
  if (iequals(scheme, "https")) {
    url.tls = true;
  } else if (iequals(scheme, "http")) {
    url.tls = false;
  } else {
    return Status::kInvalidArgument;
  }
  std::string_view rest = http1_text::sub(text, sep + 3);
  const std::size_t fragment = rest.find('#');
  if (fragment != std::string_view::npos) rest = http1_text::sub(rest, 0, fragment);

  const std::size_t authority_end = rest.find_first_of("/?");
  const std::string_view authority = http1_text::sub(rest, 0, authority_end);
  url.target = authority_end == std::string_view::npos ? std::string_view()
                                                       : http1_text::sub(rest, authority_end);
  if (!valid_target_chars(url.target)) return Status::kInvalidArgument;
  if (authority.find('@') != std::string_view::npos) return Status::kInvalidArgument;

  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::kInvalidArgument;
    url.host = http1_text::sub(authority, 1, close - 1);
    if (url.host.find(':') == std::string_view::npos) return Status::kInvalidArgument;
    const std::string_view after = http1_text::sub(authority, close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Status::kInvalidArgument;
      has_port = true;
      port_text = http1_text::sub(after, 1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    url.host = http1_text::sub(authority, 0, colon);
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = http1_text::sub(authority, colon + 1);
    }
    if (url.host.find(':') != std::string_view::npos) return Status::kInvalidArgument;
  }
  if (!valid_host(url.host)) return Status::kInvalidArgument;
  url.port = url.default_port();
  if (has_port && !parse_port(port_text, &url.port)) return Status::kInvalidArgument;
  if (url.target.empty()) url.target = "/";
  *out = url;
  return Status::kOk;
}

}  // namespace stepback::https
