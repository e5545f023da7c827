// The heads of each exchange a Client makes, read from the plaintext of its connection (after
// TLS, before the Client parses it), for curl's -v and -i: a Connector that wraps another and
// watches what goes through its stream, without changing a byte of it.
#ifndef STEPBACK_TOOLS_HEAD_TAP_HPP_
#define STEPBACK_TOOLS_HEAD_TAP_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "stepback/https/connector.hpp"

namespace stepback::tools {

// Watches the request and response heads on `inner`'s connections. With a `verbose` stream,
// writes each head there as it completes, line by line, the request's after "> " and the
// response's (interim 1xx ones included) after "< ", as curl's -v does: bytes outside
// printable ASCII shown as '?', and the value of an Authorization or Proxy-Authorization
// field masked (its scheme kept). Keeps the last final response head as received, for -i.
// Request and response bodies are not looked at.
class HeadTap final : public https::Connector {
 public:
  // Most bytes of a response head kept; a longer one is cut (the Client refuses one that
  // does not fit its own buffer anyway).
  static constexpr std::size_t kMaxHead = std::size_t{32} * 1024;

  // `inner` and `verbose` (null: no -v) must outlive the tap.
  HeadTap(https::Connector& inner, std::FILE* verbose) : inner_(inner), verbose_(verbose) {}

  // The last final (not 1xx) response head received whole, as it came (its CRLFs and the
  // empty line that ends it included); empty while none has, and while the next one comes.
  std::string_view response_head() const {
    return head_complete_ ? std::string_view(head_, head_size_) : std::string_view();
  }

  [[nodiscard]] https::Status open(const https::Url& url, const char* host, Millis now,
                                   const Timeouts& timeouts) override;
  [[nodiscard]] https::Status step(Millis now) override { return inner_.step(now); }
  int fd() const override { return inner_.fd(); }
  https::IoInterest wants() const override { return inner_.wants(); }
  https::Transport& stream() override { return stream_; }
  Millis deadline() const override { return inner_.deadline(); }
  bool resumed() const override { return inner_.resumed(); }
  const char* failure_message() const override { return inner_.failure_message(); }
  bool unreachable() const override { return inner_.unreachable(); }
  void exchange_done() override { inner_.exchange_done(); }
  void close() override { inner_.close(); }
  void network_changed() override { inner_.network_changed(); }
  bool forwards(const https::Url& url, std::string_view* proxy_authorization) const override {
    return inner_.forwards(url, proxy_authorization);
  }

 private:
  // The inner connector's stream, with what goes through it shown to the tap.
  class Stream final : public https::Transport {
   public:
    explicit Stream(HeadTap& tap) : tap_(tap) {}
    [[nodiscard]] https::Status send(https::ConstBytes data, std::size_t* sent) override;
    [[nodiscard]] https::Status recv(https::MutableBytes out, std::size_t* received) override;
    int fd() const override { return tap_.inner_.stream().fd(); }
    https::IoInterest wants() const override { return tap_.inner_.stream().wants(); }
    void close() override { tap_.inner_.stream().close(); }
    const char* failure_message() const override { return tap_.inner_.stream().failure_message(); }

   private:
    HeadTap& tap_;
  };

  // One direction's head, a line at a time.
  struct Lines {
    bool in_head = false;  // Bytes are a head's; else a body's, not looked at.
    bool first = true;     // The next line is the head's first (request or status line).
    char line[2048] = {};
    std::size_t size = 0;
    bool cut = false;  // The line was longer than `line`.
  };

  void sent(const std::uint8_t* data, std::size_t size);
  void received(const std::uint8_t* data, std::size_t size);
  // A whole line of the request head (without its LF); false when the head ends with it.
  bool request_line(std::string_view line);
  // A whole line of a response head; false when the final head ends with it.
  bool response_line(std::string_view line);
  // Writes `line` after `prefix` to the verbose stream, made printable.
  void show(const char* prefix, std::string_view line, bool cut) const;

  https::Connector& inner_;
  Stream stream_{*this};
  std::FILE* verbose_;
  Lines request_;
  Lines response_;
  bool interim_ = false;  // The response head coming is a 1xx.
  char head_[kMaxHead] = {};
  std::size_t head_size_ = 0;
  bool head_complete_ = false;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_HEAD_TAP_HPP_
