// libFuzzer target for resolve_location() (https/src/http/redirect.cpp): the first byte picks
// one of kBases ('0' to '7'), the rest is the Location value. The target aborts unless:
//   - the status and URL equal those of a reference written here with strings from RFC 3986's
//     text: appendix B's split, 5.2.2's transform, 5.2.3's merge and 5.2.4's
//     remove_dot_segments step by step (rules A to E on an input and an output buffer), with
//     the library's documented choices on top (http and https only, an authority required
//     after a scheme, no colon in a relative path's first segment, visible ASCII only, the
//     scheme in lower case, the base's authority as its Url writes it, the base path without
//     dot segments when kept, "/" for an empty path) and parse_url() as the final judge;
//   - an accepted result is parsed into *resolved with views into the buffer, fits a buffer
//     of exactly its size, and not one byte less (kBufferTooSmall, outputs untouched);
//   - a refused location is refused with an empty buffer too, and an accepted one is
//     kBufferTooSmall there;
//   - the result resolves to itself against another base;
//   - decide_redirect() refuses https -> http and follows 307 with the same method, and
//     same_origin() is symmetric.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/https/http/redirect.hpp"

namespace {

using stepback::https::decide_redirect;
using stepback::https::MutableBytes;
using stepback::https::parse_url;
using stepback::https::RedirectStep;
using stepback::https::resolve_location;
using stepback::https::same_origin;
using stepback::https::Status;
using stepback::https::Url;

// Picked by the first byte modulo 8: '0' is RFC 3986's base, '1' to '7' the others.
constexpr const char* kBases[8] = {
    "http://a/b/c/d;p?q",     "https://h:8443/x/y/",     "https://[2001:db8::1]/a/./b/../c?q=1",
    "http://h?only",          "https://H.example:443/a", "http://h:80/a/b/c/d/e/f/g",
    "https://h/a/b/../../..", "https://[::1]:8443",
};

void require(bool condition) {
  if (!condition) std::abort();
}

bool same(const Url& a, const Url& b) {
  return a.tls == b.tls && a.host == b.host && a.port == b.port && a.target == b.target;
}

bool inside(std::string_view part, const std::vector<std::uint8_t>& buffer) {
  const auto* begin = reinterpret_cast<const char*>(buffer.data());
  return part.data() >= begin && part.data() + part.size() <= begin + buffer.size();
}

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// RFC 3986 5.2.4, rule by rule.
std::string remove_dot_segments(std::string in) {
  std::string out;
  const auto drop_last = [&out] {
    const std::size_t slash = out.rfind('/');
    out.erase(slash == std::string::npos ? 0 : slash);
  };
  while (!in.empty()) {
    if (starts(in, "../")) {
      in.erase(0, 3);
    } else if (starts(in, "./")) {
      in.erase(0, 2);
    } else if (starts(in, "/./")) {
      in.replace(0, 3, "/");
    } else if (in == "/.") {
      in = "/";
    } else if (starts(in, "/../")) {
      in.replace(0, 4, "/");
      drop_last();
    } else if (in == "/..") {
      in = "/";
      drop_last();
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      const std::size_t end = in.find('/', in[0] == '/' ? 1 : 0);
      out += in.substr(0, end);
      in.erase(0, end);
    }
  }
  return out;
}

// The reference's answer: the URL text, or "" when the location is refused.
std::string reference(const Url& base, const std::string& location) {
  for (const char c : location) {
    if (c < 0x21 || c > 0x7E) return "";
  }
  // Appendix B: ^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?
  std::string rest = location.substr(0, location.find('#'));
  const std::size_t scheme_end = rest.find_first_of(":/?");
  const bool has_scheme =
      scheme_end != std::string::npos && scheme_end > 0 && rest[scheme_end] == ':';
  std::string scheme;
  if (has_scheme) {
    scheme = lower(rest.substr(0, scheme_end));
    rest.erase(0, scheme_end + 1);
  }
  const bool has_authority = starts(rest, "//");
  std::string authority;
  if (has_authority) {
    const std::size_t end = rest.find_first_of("/?", 2);
    authority = rest.substr(2, end == std::string::npos ? std::string::npos : end - 2);
    rest.erase(0, 2 + authority.size());
  }
  const std::size_t q = rest.find('?');
  const std::string path = rest.substr(0, q);
  const bool has_query = q != std::string::npos;
  const std::string query = has_query ? rest.substr(q) : "";

  if (has_scheme && ((scheme != "http" && scheme != "https") || !has_authority)) return "";
  if (!has_scheme && !has_authority &&
      path.substr(0, path.find('/')).find(':') != std::string::npos) {
    return "";
  }

  const std::string_view target = base.target;
  const std::string base_path(target.substr(0, target.find('?')));
  const std::string base_query(target.substr(base_path.size()));
  std::string base_authority;
  const bool ipv6 = base.host.find(':') != std::string_view::npos;
  base_authority = (ipv6 ? "[" : "") + std::string(base.host) + (ipv6 ? "]" : "");
  if (base.port != base.default_port()) base_authority += ":" + std::to_string(base.port);

  // 5.2.2.
  std::string t_scheme = base.tls ? "https" : "http";
  std::string t_authority = base_authority;
  std::string t_path;
  std::string t_query = query;
  if (has_scheme) {
    t_scheme = scheme;
    t_authority = authority;
    t_path = remove_dot_segments(path);
  } else if (has_authority) {
    t_authority = authority;
    t_path = remove_dot_segments(path);
  } else if (path.empty()) {
    t_path = remove_dot_segments(base_path);
    if (!has_query) t_query = base_query;
  } else if (path[0] == '/') {
    t_path = remove_dot_segments(path);
  } else {
    // 5.2.3: the base always has an authority.
    const std::string merged =
        base_path.empty() ? "/" + path : base_path.substr(0, base_path.rfind('/') + 1) + path;
    t_path = remove_dot_segments(merged);
  }
  if (t_path.empty()) t_path = "/";
  const std::string text = t_scheme + "://" + t_authority + t_path + t_query;
  Url url;
  return parse_url(text, &url) == Status::kOk ? text : "";
}

Status resolve_into(const Url& base, std::string_view location, std::vector<std::uint8_t>* out,
                    Url* url, std::size_t* size) {
  return resolve_location(base, location, MutableBytes{out->data(), out->size()}, url, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Url base;
  require(parse_url(kBases[data[0] % 8], &base) == Status::kOk);
  const std::string location(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string expected = reference(base, location);

  Url sentinel;
  sentinel.host = "sentinel.invalid";
  std::vector<std::uint8_t> big(location.size() + 1024);
  Url url = sentinel;
  std::size_t written = 7;
  const Status status = resolve_into(base, location, &big, &url, &written);

  std::vector<std::uint8_t> empty;
  Url untouched = sentinel;
  std::size_t untouched_size = 7;
  const Status empty_status = resolve_into(base, location, &empty, &untouched, &untouched_size);
  require(same(untouched, sentinel) && untouched_size == 7);

  if (expected.empty()) {
    require(status == Status::kInvalidArgument && empty_status == Status::kInvalidArgument);
    require(same(url, sentinel) && written == 7);
    return 0;
  }
  require(status == Status::kOk && empty_status == Status::kBufferTooSmall);
  const std::string_view text(reinterpret_cast<const char*>(big.data()), written);
  require(text == expected);
  Url again;
  require(parse_url(text, &again) == Status::kOk && same(again, url));
  require(inside(url.host, big) && inside(url.target, big));

  std::vector<std::uint8_t> exact(written);
  Url exact_url;
  std::size_t exact_size = 0;
  require(resolve_into(base, location, &exact, &exact_url, &exact_size) == Status::kOk);
  require(exact_size == written &&
          std::string_view(reinterpret_cast<const char*>(exact.data()), exact_size) == expected);
  std::vector<std::uint8_t> short_by_one(written - 1);
  Url short_url = sentinel;
  std::size_t short_size = 7;
  require(resolve_into(base, location, &short_by_one, &short_url, &short_size) ==
          Status::kBufferTooSmall);
  require(same(short_url, sentinel) && short_size == 7);

  Url other;
  require(parse_url(kBases[0], &other) == Status::kOk);
  std::vector<std::uint8_t> twice(written);
  Url twice_url;
  std::size_t twice_size = 0;
  require(resolve_into(other, text, &twice, &twice_url, &twice_size) == Status::kOk);
  require(std::string_view(reinterpret_cast<const char*>(twice.data()), twice_size) == text);

  require(same_origin(base, url) == same_origin(url, base));
  const RedirectStep step = decide_redirect("PUT", 307, base, url);
  require(step.verdict == (base.tls && !url.tls ? RedirectStep::Verdict::kInsecure
                                                : RedirectStep::Verdict::kFollow));
  require(step.method == "PUT" && !step.drop_body);
  return 0;
}
