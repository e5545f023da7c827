// A scripted fake Transport for unit tests of the layers above TCP (HTTP/1.1, TLS
// plumbing, Request, Client): the test queues what recv() and send() will report, and the
// fake records every byte sent and every call made.
//
//   ScriptedTransport t;
//   t.recv_data("HTTP/1.1 503 Service Unavailable\r\n").recv_would_block()
//    .recv_data("Retry-After: 2\r\n\r\n").recv_closed();
//   t.set_max_recv_chunk(1);                      // split reads at every byte boundary
//   ... drive the request ...
//   EXPECT_EQ(t.sent(), "GET / HTTP/1.1\r\n...");
//
// Scripting copies into std::string and std::vector (heap, at set-up); running the script
// allocates nothing as long as the sent bytes fit sent_capacity, so the fake can stand in
// for a real transport inside an allocation-trapping test.
#ifndef STEPBACK_TESTS_SUPPORT_SCRIPTED_TRANSPORT_HPP_
#define STEPBACK_TESTS_SUPPORT_SCRIPTED_TRANSPORT_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::testing {

// A Transport whose recv() and send() results come from two independent scripts.
class ScriptedTransport final : public https::Transport {
 public:
  // What one scripted step does.
  enum class Kind : std::uint8_t {
    kData,        // recv: deliver `bytes` (over as many calls as `out` sizes need).
    kAccept,      // send: accept at most `limit` bytes in one call.
    kWouldBlock,  // recv or send: report kWouldBlock once, with `interest` as wants().
    kFail,        // recv or send: report `status` on this and every later call (sticky).
  };
  // One scripted step; see Kind.
  struct Event {
    Kind kind = Kind::kData;
    std::string bytes;
    std::size_t limit = 0;
    https::IoInterest interest = https::IoInterest::kRead;
    https::Status status = https::Status::kError;
  };

  // A fake that reserves `sent_capacity` bytes for the sent record (no heap while within).
  explicit ScriptedTransport(std::size_t sent_capacity = std::size_t{64} * 1024) {
    sent_.reserve(sent_capacity);
    recv_script_.reserve(64);
    send_script_.reserve(16);
  }

  // --- Scripting the receive side. Each returns *this for chaining.

  // Queues `bytes` for recv(); an empty string is ignored.
  ScriptedTransport& recv_data(std::string_view bytes) {
    if (!bytes.empty()) recv_script_.push_back(Event{Kind::kData, std::string(bytes), 0, {}, {}});
    return *this;
  }
  // Queues one kWouldBlock from recv(), after which wants() is `interest`.
  ScriptedTransport& recv_would_block(https::IoInterest interest = https::IoInterest::kRead) {
    recv_script_.push_back(Event{Kind::kWouldBlock, {}, 0, interest, {}});
    return *this;
  }
  // Queues an orderly end of stream: recv() returns kClosed from then on.
  ScriptedTransport& recv_closed() { return recv_fail(https::Status::kClosed); }
  // Queues a connection reset: recv() returns kReset from then on.
  ScriptedTransport& recv_reset() { return recv_fail(https::Status::kReset); }
  // Queues `status` (kTimeout, kTlsVerify, ...): recv() returns it from then on.
  ScriptedTransport& recv_fail(https::Status status) {
    recv_script_.push_back(Event{Kind::kFail, {}, 0, {}, status});
    return *this;
  }
  // What recv() returns once the script is used up: kWouldBlock (the default, a silent
  // peer), kClosed or any other status.
  ScriptedTransport& recv_at_end(https::Status status) {
    recv_end_ = status;
    return *this;
  }
  // Caps every recv() at `n` bytes (0: no cap); 1 splits reads at every byte boundary.
  ScriptedTransport& set_max_recv_chunk(std::size_t n) {
    max_recv_chunk_ = n;
    return *this;
  }

  // --- Scripting the send side. Without a script, send() accepts everything it is given
  // (up to max_send_chunk).

  // Queues one send() that accepts at most `n` bytes (a partial write); n must be > 0.
  ScriptedTransport& send_accept(std::size_t n) {
    send_script_.push_back(Event{Kind::kAccept, {}, n, {}, {}});
    return *this;
  }
  // Queues one kWouldBlock from send(), after which wants() is `interest`.
  ScriptedTransport& send_would_block(https::IoInterest interest = https::IoInterest::kWrite) {
    send_script_.push_back(Event{Kind::kWouldBlock, {}, 0, interest, {}});
    return *this;
  }
  // Queues `status` (typically kReset): send() returns it from then on.
  ScriptedTransport& send_fail(https::Status status) {
    send_script_.push_back(Event{Kind::kFail, {}, 0, {}, status});
    return *this;
  }
  // Caps every send() at `n` bytes (0: no cap).
  ScriptedTransport& set_max_send_chunk(std::size_t n) {
    max_send_chunk_ = n;
    return *this;
  }
  // What failure_message() reports (default "", as a transport with nothing to add).
  ScriptedTransport& set_failure_message(std::string_view message) {
    failure_message_ = std::string(message);
    return *this;
  }
  // The value fd() reports (default -1, "nothing to poll").
  ScriptedTransport& set_fd(int fd) {
    fd_ = fd;
    return *this;
  }

  // --- Transport.

  [[nodiscard]] https::Status send(https::ConstBytes data, std::size_t* sent) override {
    *sent = 0;
    ++send_calls_;
    if (closed_) return misuse();
    // TLS (mbedtls_ssl_write) must be offered the same bytes again after it would block.
    if (blocked_size_ != 0 && data.size != blocked_size_) ++changed_resends_;
    blocked_size_ = 0;
    std::size_t n = data.size;
    if (send_next_ < send_script_.size()) {
      const Event& e = send_script_[send_next_];
      switch (e.kind) {
        case Kind::kWouldBlock:
          ++send_next_;
          wants_ = e.interest;
          blocked_size_ = data.size;
          return https::Status::kWouldBlock;
        case Kind::kFail:
          wants_ = https::IoInterest::kNone;
          return e.status;
        case Kind::kAccept:
          ++send_next_;
          n = std::min(n, e.limit);
          break;
        case Kind::kData:
          ++send_next_;
          break;
      }
    }
    if (max_send_chunk_ != 0) n = std::min(n, max_send_chunk_);
    if (n > 0) sent_.append(reinterpret_cast<const char*>(data.data), n);
    *sent = n;
    wants_ = https::IoInterest::kNone;
    return https::Status::kOk;
  }

  [[nodiscard]] https::Status recv(https::MutableBytes out, std::size_t* received) override {
    *received = 0;
    ++recv_calls_;
    if (closed_) return misuse();
    if (out.size == 0) {
      ++empty_recvs_;  // A socket would answer this as the end of the stream.
      return https::Status::kOk;
    }
    largest_recv_ = std::max(largest_recv_, out.size);
    if (recv_next_ >= recv_script_.size()) {
      wants_ = recv_end_ == https::Status::kWouldBlock ? https::IoInterest::kRead
                                                       : https::IoInterest::kNone;
      return recv_end_;
    }
    Event& e = recv_script_[recv_next_];
    switch (e.kind) {
      case Kind::kWouldBlock:
        ++recv_next_;
        wants_ = e.interest;
        return https::Status::kWouldBlock;
      case Kind::kFail:
        wants_ = https::IoInterest::kNone;
        return e.status;
      case Kind::kAccept:  // Not a receive step; delivers nothing and is skipped.
      case Kind::kData:
        break;
    }
    std::size_t n = std::min(out.size, e.bytes.size() - recv_offset_);
    if (max_recv_chunk_ != 0) n = std::min(n, max_recv_chunk_);
    std::memcpy(out.data, e.bytes.data() + recv_offset_, n);
    recv_offset_ += n;
    received_bytes_ += n;
    if (recv_offset_ == e.bytes.size()) {
      ++recv_next_;
      recv_offset_ = 0;
    }
    *received = n;
    wants_ = https::IoInterest::kNone;
    return https::Status::kOk;
  }

  int fd() const override { return closed_ ? -1 : fd_; }
  const char* failure_message() const override { return failure_message_.c_str(); }
  https::IoInterest wants() const override { return wants_; }
  void close() override {
    ++close_calls_;
    closed_ = true;
    wants_ = https::IoInterest::kNone;
  }

  // --- What happened.

  // Every byte send() accepted, in order.
  const std::string& sent() const { return sent_; }
  // Forgets the sent bytes (keeps the capacity), e.g. between two requests on one connection.
  void clear_sent() { sent_.clear(); }
  // How many bytes recv() has delivered in total.
  std::size_t received_bytes() const { return received_bytes_; }
  // Calls to send(), recv() and close() so far (close() counts every call).
  std::size_t send_calls() const { return send_calls_; }
  std::size_t recv_calls() const { return recv_calls_; }
  std::size_t close_calls() const { return close_calls_; }
  // Whether close() was called.
  bool closed() const { return closed_; }
  // recv() calls asked for 0 bytes, and the most bytes one recv() call asked for.
  std::size_t empty_recvs() const { return empty_recvs_; }
  std::size_t largest_recv() const { return largest_recv_; }
  // send() calls right after a kWouldBlock that offered a different number of bytes than
  // the blocked one (which TLS does not allow).
  std::size_t changed_resends() const { return changed_resends_; }
  // send() or recv() calls made after close(); each returned kError.
  std::size_t calls_after_close() const { return calls_after_close_; }
  // Whether recv() has consumed every data and would-block step (a sticky failure counts as
  // consumed once reached).
  bool recv_script_done() const {
    return recv_next_ >= recv_script_.size() || recv_script_[recv_next_].kind == Kind::kFail;
  }
  // Scripted bytes recv() has not delivered yet.
  std::size_t pending_recv_bytes() const {
    std::size_t n = 0;
    for (std::size_t i = recv_next_; i < recv_script_.size(); ++i) {
      if (recv_script_[i].kind == Kind::kData) n += recv_script_[i].bytes.size();
    }
    return n - recv_offset_;
  }

 private:
  https::Status misuse() {
    ++calls_after_close_;
    return https::Status::kError;
  }

  std::vector<Event> recv_script_;
  std::vector<Event> send_script_;
  std::size_t recv_next_ = 0;
  std::size_t recv_offset_ = 0;
  std::size_t send_next_ = 0;
  std::size_t max_recv_chunk_ = 0;
  std::size_t max_send_chunk_ = 0;
  std::string sent_;
  std::string failure_message_;
  std::size_t received_bytes_ = 0;
  std::size_t send_calls_ = 0;
  std::size_t recv_calls_ = 0;
  std::size_t close_calls_ = 0;
  std::size_t calls_after_close_ = 0;
  std::size_t empty_recvs_ = 0;
  std::size_t largest_recv_ = 0;
  std::size_t blocked_size_ = 0;
  std::size_t changed_resends_ = 0;
  https::Status recv_end_ = https::Status::kWouldBlock;
  https::IoInterest wants_ = https::IoInterest::kNone;
  int fd_ = -1;
  bool closed_ = false;
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_SCRIPTED_TRANSPORT_HPP_
