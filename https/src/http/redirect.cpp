#include "stepback/https/http/redirect.hpp"

#include <cstring>

#include "http1_text.hpp"

namespace stepback::https {
namespace {

using http1_text::iequals;
using http1_text::sub;

// The longest authority parse_url() accepts: a bracketed IPv6 literal of the longest host
// and a colon with five digits.
constexpr std::size_t kMaxAuthority = http1_text::kMaxHostSize + 2 + 1 + 5;

// A reference split as RFC 3986 appendix B does, the fragment left out. `query` keeps its
// '?', so that "" (none) differs from "?" (an empty one).
struct Reference {
  bool has_scheme = false;
  bool tls = false;
  bool has_authority = false;
  std::string_view authority;
  std::string_view path;
  std::string_view query;
};

bool visible_ascii(std::string_view s) {
  for (const char c : s) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return true;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return sub(s, 0, prefix.size()) == prefix;
}

// Splits `text` into *ref; false when it is no http(s) reference. A colon before the first
// '/' or '?' ends a scheme, so "g:h" is another scheme and ":g" no reference (RFC 3986 4.2
// wants "./:g").
bool split_reference(std::string_view text, Reference* ref) {
  text = sub(text, 0, text.find('#'));
  const std::size_t colon = text.find(':');
  if (colon < text.find_first_of("/?")) {
    const std::string_view scheme = sub(text, 0, colon);
    if (iequals(scheme, "https")) {
      ref->tls = true;
    } else if (!iequals(scheme, "http")) {
      return false;
    }
    ref->has_scheme = true;
    text = sub(text, colon + 1);
    // "http:g" is relative to the base only for parsers that are not strict (5.4.2).
    if (!starts_with(text, "//")) return false;
  }
  if (starts_with(text, "//")) {
    text = sub(text, 2);
    ref->has_authority = true;
    ref->authority = sub(text, 0, text.find_first_of("/?"));
    text = sub(text, ref->authority.size());
  }
  ref->path = sub(text, 0, text.find('?'));
  ref->query = sub(text, ref->path.size());
  return true;
}

// Whether parse_url() accepts `authority` (checked apart so that a bad host or port is
// kInvalidArgument whatever the size of the output).
bool valid_authority(std::string_view authority) {
  constexpr std::string_view kScheme = "http://";
  if (authority.size() > kMaxAuthority) return false;
  char text[kScheme.size() + kMaxAuthority];
  std::memcpy(text, kScheme.data(), kScheme.size());
  if (!authority.empty()) std::memcpy(text + kScheme.size(), authority.data(), authority.size());
  Url url;
  return parse_url(std::string_view(text, kScheme.size() + authority.size()), &url) == Status::kOk;
}

bool overlaps(MutableBytes out, std::string_view s) {
  if (out.size == 0 || s.empty()) return false;
  const auto o = reinterpret_cast<std::uintptr_t>(out.data);
  const auto p = reinterpret_cast<std::uintptr_t>(s.data());
  return p < o + out.size && o < p + s.size();
}

// Takes the last segment of the path `head` + `tail` into *segment and removes it with the
// '/' before it; false when none is left. `head` is empty or ends with '/' (a merged base
// path) and then `tail` does not start with one.
bool pop_segment(std::string_view* head, std::string_view* tail, std::string_view* segment) {
  std::string_view* const part = tail->empty() ? head : tail;
  if (part->empty()) return false;
  const std::size_t slash = part->rfind('/');
  if (slash == std::string_view::npos) {
    *segment = *part;
    *part = std::string_view();
    // The tail's first segment follows the '/' that ends the head.
    if (part == tail && !head->empty()) head->remove_suffix(1);
    return true;
  }
  *segment = sub(*part, slash + 1);
  *part = sub(*part, 0, slash);
  return true;
}

// Appends text to the caller's buffer.
class Writer {
 public:
  explicit Writer(MutableBytes out) : out_(out) {}

  std::size_t size() const { return size_; }
  std::string_view text() const { return {reinterpret_cast<const char*>(out_.data), size_}; }

  bool put(std::string_view s) {
    if (s.size() > out_.size - size_) return false;
    if (!s.empty()) std::memcpy(out_.data + size_, s.data(), s.size());
    size_ += s.size();
    return true;
  }

  // host[:port], the host in brackets when it is an IPv6 literal, the port when it is not
  // the scheme's.
  bool put_authority(const Url& url) {
    const bool ipv6 = url.host.find(':') != std::string_view::npos;
    if (!put(ipv6 ? "[" : "") || !put(url.host) || !put(ipv6 ? "]" : "")) return false;
    if (url.port == url.default_port()) return true;
    char digits[5];
    std::size_t at = sizeof digits;
    unsigned port = url.port;
    do {
      digits[--at] = static_cast<char>('0' + port % 10);
      port /= 10;
    } while (port != 0);
    return put(":") && put(std::string_view(digits + at, sizeof digits - at));
  }

  // Appends remove_dot_segments(head + tail) (RFC 3986 5.2.4), "/" when it is empty, and
  // leaves `reserve` bytes free after it. The segments are read from the back, each ".."
  // dropping the nearest earlier segment that is kept, and written right-aligned, so that
  // only the result has to fit, not the path before its dot segments go.
  bool put_path(std::string_view head, std::string_view tail, std::size_t reserve) {
    if (reserve > out_.size - size_) return false;
    const std::size_t end = out_.size - reserve;
    std::size_t at = end;
    std::size_t skip = 0;
    bool last = true;
    std::string_view segment;
    while (pop_segment(&head, &tail, &segment)) {
      const bool dot = segment == ".";
      const bool dot_dot = segment == "..";
      if (dot || dot_dot) {
        // A last "." or ".." leaves the path ending in '/': "/a/b/.." is "/a/".
        if (last && !put_before("", &at)) return false;
        if (dot_dot) ++skip;
      } else if (skip > 0) {
        --skip;
      } else if (!put_before(segment, &at)) {
        return false;
      }
      last = false;
    }
    if (at == end && !put_before("", &at)) return false;
    std::memmove(out_.data + size_, out_.data + at, end - at);
    size_ += end - at;
    return true;
  }

 private:
  // Writes '/' and `segment` just before out_[*at], after what put() wrote.
  bool put_before(std::string_view segment, std::size_t* at) {
    if (*at - size_ < segment.size() + 1) return false;
    *at -= segment.size() + 1;
    out_.data[*at] = '/';
    if (!segment.empty()) std::memcpy(out_.data + *at + 1, segment.data(), segment.size());
    return true;
  }

  MutableBytes out_;
  std::size_t size_ = 0;
};

}  // namespace

Status resolve_location(const Url& base, std::string_view location, MutableBytes out, Url* resolved,
                        std::size_t* size) {
  Reference ref;
  if (resolved == nullptr || size == nullptr || !visible_ascii(location) ||
      !split_reference(location, &ref) || (ref.has_authority && !valid_authority(ref.authority)) ||
      overlaps(out, location) || overlaps(out, base.host) || overlaps(out, base.target)) {
    return Status::kInvalidArgument;
  }

  // RFC 3986 5.2.2; the path is head + tail before its dot segments go (5.2.3's merge). The
  // base's path loses its dot segments too when the reference keeps it.
  const std::string_view base_path = sub(base.target, 0, base.target.find('?'));
  std::string_view head;
  std::string_view tail = ref.path;
  std::string_view query = ref.query;
  if (!ref.has_authority) {
    if (ref.path.empty()) {
      tail = base_path;
      if (query.empty()) query = sub(base.target, base_path.size());
    } else if (ref.path.front() != '/') {
      // Up to the base path's last '/' (none: rfind's npos + 1 wraps to 0).
      head =
          base_path.empty() ? std::string_view("/") : sub(base_path, 0, base_path.rfind('/') + 1);
    }
  }

  Writer writer(out);
  const bool tls = ref.has_scheme ? ref.tls : base.tls;
  if (!writer.put(tls ? "https://" : "http://") ||
      !(ref.has_authority ? writer.put(ref.authority) : writer.put_authority(base)) ||
      !writer.put_path(head, tail, query.size()) || !writer.put(query)) {
    return Status::kBufferTooSmall;
  }
  // Fails only for a base that parse_url() would not have produced.
  Url url;
  if (parse_url(writer.text(), &url) != Status::kOk) return Status::kInvalidArgument;
  *resolved = url;
  *size = writer.size();
  return Status::kOk;
}

bool same_origin(const Url& a, const Url& b) {
  return a.tls == b.tls && a.port == b.port && iequals(a.host, b.host);
}

RedirectStep decide_redirect(std::string_view method, std::uint16_t status, const Url& from,
                             const Url& to) {
  RedirectStep step;
  step.method = method;
  step.same_origin = same_origin(from, to);
  switch (status) {
    case 301:
    case 302:
      // RFC 9110 15.4.2/3 allow it, and every browser and curl do it: a POST becomes a GET.
      if (method == "POST") {
        step.method = "GET";
        step.drop_body = true;
      }
      break;
    case 303:
      if (method != "HEAD") step.method = "GET";
      step.drop_body = true;
      break;
    case 307:
    case 308:
      break;
    default:
      return step;
  }
  step.verdict =
      from.tls && !to.tls ? RedirectStep::Verdict::kInsecure : RedirectStep::Verdict::kFollow;
  return step;
}

}  // namespace stepback::https
