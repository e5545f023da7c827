#include "head_tap.hpp"

#include "stepback/https/detail/text.hpp"

namespace stepback::tools {
namespace {

// Whether `line` (its CR removed) is a request line: "METHOD SP target SP HTTP/1.x". A body
// still going out after the server answered early is not taken for the next request's head.
bool request_line_shape(std::string_view line) {
  const std::size_t space = line.find(' ');
  if (space == 0 || space == std::string_view::npos) return false;
  for (std::size_t i = 0; i < space; ++i) {
    if (line[i] < 'A' || line[i] > 'Z') return false;
  }
  return line.size() > 9 && line.substr(line.size() - 9, 7) == " HTTP/1";
}

// The fields whose values are credentials, never shown.
bool secret_field(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view name = line.substr(0, colon);
  return https::detail::iequals(name, "authorization") ||
         https::detail::iequals(name, "proxy-authorization");
}

}  // namespace

https::Status HeadTap::open(const https::Url& url, const char* host, Millis now,
                            const Timeouts& timeouts) {
  // A new connection: the next bytes sent are a request head.
  request_ = Lines{};
  request_.in_head = true;
  response_ = Lines{};
  return inner_.open(url, host, now, timeouts);
}

https::Status HeadTap::Stream::send(https::ConstBytes data, std::size_t* sent) {
  const https::Status s = tap_.inner_.stream().send(data, sent);
  if (s == https::Status::kOk) tap_.sent(data.data, *sent);
  return s;
}

https::Status HeadTap::Stream::recv(https::MutableBytes out, std::size_t* received) {
  const https::Status s = tap_.inner_.stream().recv(out, received);
  if (s == https::Status::kOk) tap_.received(out.data, *received);
  return s;
}

void HeadTap::sent(const std::uint8_t* data, std::size_t size) {
  for (std::size_t i = 0; i < size && request_.in_head; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c != '\n') {
      if (request_.size < sizeof request_.line) {
        request_.line[request_.size++] = c;
      } else {
        request_.cut = true;
      }
      continue;
    }
    std::string_view line(request_.line, request_.size);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    request_.in_head = request_line(line);
    request_.size = 0;
    request_.cut = false;
  }
}

bool HeadTap::request_line(std::string_view line) {
  if (request_.first) {
    request_.first = false;
    if (!request_line_shape(line)) return false;
  }
  if (line.empty()) {
    show("> ", line, false);
    // The answer comes next: a head, after which this connection's next bytes sent are the
    // next request's head.
    response_ = Lines{};
    response_.in_head = true;
    interim_ = false;
    head_size_ = 0;
    head_complete_ = false;
    return false;
  }
  show("> ", line, request_.cut);
  return true;
}

void HeadTap::received(const std::uint8_t* data, std::size_t size) {
  for (std::size_t i = 0; i < size && response_.in_head; ++i) {
    const char c = static_cast<char>(data[i]);
    if (head_size_ < sizeof head_) head_[head_size_++] = c;
    if (c != '\n') {
      if (response_.size < sizeof response_.line) {
        response_.line[response_.size++] = c;
      } else {
        response_.cut = true;
      }
      continue;
    }
    std::string_view line(response_.line, response_.size);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    response_.in_head = response_line(line);
    response_.size = 0;
    response_.cut = false;
  }
}

bool HeadTap::response_line(std::string_view line) {
  if (response_.first) {
    response_.first = false;
    // "HTTP/1.1 100 Continue": an interim head, another one follows it.
    interim_ = line.size() >= 10 && line.substr(0, 7) == "HTTP/1." && line[9] == '1';
  }
  show("< ", line, response_.cut);
  if (!line.empty()) return true;
  if (interim_) {
    response_.first = true;
    head_size_ = 0;
    return true;
  }
  head_complete_ = true;
  request_ = Lines{};
  request_.in_head = true;
  return false;
}

void HeadTap::show(const char* prefix, std::string_view line, bool cut) const {
  if (verbose_ == nullptr) return;
  // One write a line: stderr is unbuffered.
  char text[sizeof Lines::line + 32];
  std::size_t n = 0;
  const auto put = [&text, &n](std::string_view s) {
    for (const char c : s) {
      if (n == sizeof text - 1) return;
      const auto b = static_cast<unsigned char>(c);
      text[n++] = (b >= 0x20 && b < 0x7f) || c == '\t' ? c : '?';
    }
  };
  put(prefix);
  if (secret_field(line)) {
    // "Authorization: Bearer [masked]": the scheme says what was sent, the rest never shows.
    const std::size_t colon = line.find(':');
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    const std::size_t space = value.find(' ');
    put(line.substr(0, colon + 1));
    if (space != std::string_view::npos) {
      put(" ");
      put(value.substr(0, space));
    }
    put(" [masked]");
  } else {
    put(line);
    if (cut) put(" [...]");
  }
  text[n++] = '\n';
  (void)std::fwrite(text, 1, n, verbose_);
}

}  // namespace stepback::tools
