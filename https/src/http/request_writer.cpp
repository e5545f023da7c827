#include "stepback/https/http/request_writer.hpp"

#include <cstring>

#include "http1_text.hpp"

namespace stepback::https {
namespace {

using http1_text::iequals;
using http1_text::is_field_char;
using http1_text::is_token;
using http1_text::valid_host;
using http1_text::valid_target_chars;

bool valid_field_value(std::string_view s) {
  for (const char c : s) {
    if (!is_field_char(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Appends to a caller buffer and remembers whether anything did not fit.
class Writer {
 public:
  explicit Writer(MutableBytes out) : out_(out) {}

  void put(std::string_view s) {
    if (overflow_ || s.size() > out_.size - size_) {
      overflow_ = true;
      return;
    }
    if (!s.empty()) std::memcpy(out_.data + size_, s.data(), s.size());
    size_ += s.size();
  }
  void put_decimal(std::uint64_t v) {
    char digits[20];
    std::size_t n = 0;
    do {
      digits[sizeof digits - 1 - n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    put(std::string_view(digits + sizeof digits - n, n));
  }
  void put_field(std::string_view name, std::string_view value) {
    put(name);
    put(": ");
    put(value);
    put("\r\n");
  }
  // The room left once `keep` more bytes are set aside, and taking `n` bytes of it as written.
  MutableBytes room(std::size_t keep) const {
    const std::size_t left = overflow_ ? 0 : out_.size - size_;
    return MutableBytes{out_.data + size_, left > keep ? left - keep : 0};
  }
  void take(std::size_t n) { size_ += n; }
  void rewind(std::size_t size) { size_ = size; }
  void overflow_now() { overflow_ = true; }
  bool overflow() const { return overflow_; }
  std::size_t size() const { return size_; }

 private:
  MutableBytes out_;
  std::size_t size_ = 0;
  bool overflow_ = false;
};

bool sends_content_length_when_empty(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH";
}

// Fields the writer owns: a caller copy would contradict the framing or a standard field.
bool reserved_field(std::string_view name, bool has_user_agent) {
  return iequals(name, "host") || iequals(name, "content-length") ||
         iequals(name, "transfer-encoding") || iequals(name, "connection") ||
         iequals(name, "accept-encoding") || (has_user_agent && iequals(name, "user-agent"));
}

// "Authorization: VALUE\r\n", its value asked for in the room the blank line leaves.
Status put_authorization(const RequestHead& head, Writer& w) {
  const LateValue& a = head.authorization;
  if (a.write == nullptr || head.omit_credentials || w.overflow()) return Status::kOk;
  const std::size_t before = w.size();
  w.put("Authorization: ");
  const MutableBytes value = w.room(4);  // "\r\n" after the value, "\r\n" ending the head.
  if (w.overflow()) {
    w.overflow_now();
    return Status::kOk;
  }
  const std::size_t n = a.write(a.context, a.refresh, value);
  if (n > value.size) {
    w.overflow_now();
    return Status::kOk;
  }
  if (n == 0) {
    w.rewind(before);  // No value, no field.
    return Status::kOk;
  }
  if (!valid_field_value(std::string_view(reinterpret_cast<const char*>(value.data), n))) {
    return Status::kInvalidArgument;
  }
  w.take(n);
  w.put("\r\n");
  return Status::kOk;
}

bool valid_head(const RequestHead& head) {
  if (!is_token(head.method)) return false;
  if (!valid_host(head.url.host) || head.url.port == 0) return false;
  const std::string_view target = head.url.target;
  if (!valid_target_chars(target)) return false;
  const bool origin_form = target.empty() || target.front() == '/' || target.front() == '?';
  const bool asterisk_form = target == "*" && head.method == "OPTIONS";
  if (!origin_form && !asterisk_form) return false;
  if (!valid_field_value(head.user_agent) || !valid_field_value(head.host)) return false;
  if (!valid_field_value(head.proxy_authorization)) return false;
  if (!valid_field_value(head.if_range) || !valid_field_value(head.generation_match)) return false;
  if (head.ranged && head.range_end <= head.range_from) return false;
  if (head.absolute_form && !origin_form) return false;
  if (head.header_count > 0 && head.headers == nullptr) return false;
  for (std::size_t i = 0; i < head.header_count; ++i) {
    const Header& h = head.headers[i];
    if (!is_token(h.name) || !valid_field_value(h.value)) return false;
    if (reserved_field(h.name, !head.user_agent.empty())) return false;
  }
  return true;
}

// Whether the caller field `name` is left out of `head` (see RequestHead::omit_*).
bool omitted(const RequestHead& head, std::string_view name) {
  if (head.omit_credentials && (iequals(name, "authorization") || iequals(name, "cookie") ||
                                iequals(name, "proxy-authorization"))) {
    return true;
  }
  return head.omit_content_fields && name.size() >= 8 &&
         iequals(http1_text::sub(name, 0, 8), "content-");
}

}  // namespace

bool is_idempotent_method(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS" || method == "TRACE";
}

Status write_request_head(const RequestHead& head, MutableBytes out, std::size_t* written) {
  if (written == nullptr) return Status::kInvalidArgument;
  *written = 0;
  if (out.data == nullptr && out.size != 0) return Status::kInvalidArgument;
  if (!valid_head(head)) return Status::kInvalidArgument;

  Writer w(out);
  w.put(head.method);
  w.put(" ");
  const bool ipv6 = head.url.host.find(':') != std::string_view::npos;
  if (head.absolute_form) {
    w.put(head.url.tls ? "https://" : "http://");
    if (ipv6) w.put("[");
    w.put(head.url.host);
    if (ipv6) w.put("]");
    w.put(":");
    w.put_decimal(head.url.port);
  }
  if (head.url.target.empty() || head.url.target.front() == '?') w.put("/");
  w.put(head.url.target);
  w.put(" HTTP/1.1\r\nHost: ");
  if (!head.host.empty()) {
    w.put(head.host);
  } else {
    if (ipv6) w.put("[");
    w.put(head.url.host);
    if (ipv6) w.put("]");
    if (head.url.port != head.url.default_port()) {
      w.put(":");
      w.put_decimal(head.url.port);
    }
  }
  w.put("\r\n");
  if (!head.user_agent.empty()) w.put_field("User-Agent", head.user_agent);
  w.put_field("Accept-Encoding", "identity");
  w.put_field("Connection", head.close ? "close" : "keep-alive");
  if (!head.proxy_authorization.empty()) {
    w.put_field("Proxy-Authorization", head.proxy_authorization);
  }
  if (head.body_size > 0 || sends_content_length_when_empty(head.method)) {
    w.put("Content-Length: ");
    w.put_decimal(head.body_size);
    w.put("\r\n");
  }
  for (std::size_t i = 0; i < head.header_count; ++i) {
    if (omitted(head, head.headers[i].name)) continue;
    w.put_field(head.headers[i].name, head.headers[i].value);
  }
  if (head.ranged) {
    w.put("Range: bytes=");
    w.put_decimal(head.range_from);
    w.put("-");
    if (head.range_end != UINT64_MAX) w.put_decimal(head.range_end - 1);
    w.put("\r\n");
    if (!head.if_range.empty()) w.put_field("If-Range", head.if_range);
    if (!head.generation_match.empty()) {
      w.put_field("x-goog-if-generation-match", head.generation_match);
    }
  }
  const Status authorized = put_authorization(head, w);
  if (authorized != Status::kOk) return authorized;
  w.put("\r\n");
  if (w.overflow()) return Status::kBufferTooSmall;
  *written = w.size();
  return Status::kOk;
}

}  // namespace stepback::https
