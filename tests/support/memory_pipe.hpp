// An in-memory, non-blocking byte stream between two Transports, for tests that run both
// peers of a protocol in one process (a TlsTransport client against an mbedTLS server):
//
//   MemoryPipe pipe;
//   pipe.set_max_transfer(1);  // at most one byte per send() or recv()
//   pipe.set_stutter(true);    // and a kWouldBlock between any two transfers
//   client.start(pipe.client(), config, "localhost", nullptr);
//   ... step the client on pipe.client(), the server on pipe.server() ...
//   pipe.server().cut(10);     // the server's next 10 queued bytes arrive, then its end closes
//
// Each direction is a bounded queue (`capacity` bytes): send() takes what fits, recv() gives
// what is there, and either returns kWouldBlock (with wants() set) when it can do nothing,
// never waiting. An end closed with close() or cut() is an orderly end of stream for its
// peer once the bytes queued before it are read (kClosed), and the peer's sends fail with
// kReset (nobody reads them any more); reset() fails both of the peer's directions at once.
// Allocates only in its constructor.
#ifndef STEPBACK_TESTS_SUPPORT_MEMORY_PIPE_HPP_
#define STEPBACK_TESTS_SUPPORT_MEMORY_PIPE_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::testing {

class MemoryPipe {
  // A ring buffer of fixed capacity.
  struct Queue {
    std::vector<std::uint8_t> bytes;
    std::size_t head = 0;
    std::size_t size = 0;
    std::size_t room() const { return bytes.size() - size; }
    void push(const std::uint8_t* data, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) bytes[(head + size + i) % bytes.size()] = data[i];
      size += n;
    }
    void pop(std::uint8_t* data, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) data[i] = bytes[(head + i) % bytes.size()];
      head = (head + n) % bytes.size();
      size -= n;
    }
  };

 public:
  // One end: a Transport whose sends reach the other end's recv().
  class End final : public https::Transport {
   public:
    [[nodiscard]] https::Status send(https::ConstBytes data, std::size_t* sent) override {
      *sent = 0;
      ++calls_;
      if (closed_) return https::Status::kClosed;
      if (peer_->reset_) return https::Status::kReset;
      if (peer_->closed_) return https::Status::kReset;  // Nobody reads them any more.
      if (data.size == 0) return https::Status::kOk;
      Queue& q = out();
      const std::size_t n = std::min({data.size, pipe_->max_transfer_, q.room()});
      if (n == 0 || stutter_send_) return would_block(&stutter_send_, https::IoInterest::kWrite);
      q.push(data.data, n);
      *sent = n;
      bytes_sent_ += n;
      stutter_send_ = pipe_->stutter_;
      return https::Status::kOk;
    }

    [[nodiscard]] https::Status recv(https::MutableBytes out_bytes,
                                     std::size_t* received) override {
      *received = 0;
      ++calls_;
      if (closed_) return https::Status::kClosed;
      if (peer_->reset_) return https::Status::kReset;
      Queue& q = in();
      if (q.size == 0) {
        if (peer_->closed_) return https::Status::kClosed;
        return would_block(&stutter_recv_, https::IoInterest::kRead);
      }
      if (out_bytes.size == 0) return https::Status::kOk;
      if (stutter_recv_) return would_block(&stutter_recv_, https::IoInterest::kRead);
      const std::size_t n = std::min({out_bytes.size, pipe_->max_transfer_, q.size});
      q.pop(out_bytes.data, n);
      *received = n;
      stutter_recv_ = pipe_->stutter_;
      return https::Status::kOk;
    }

    int fd() const override { return fd_; }
    https::IoInterest wants() const override { return wants_; }
    // An orderly end: the peer reads what is queued, then kClosed.
    void close() override { closed_ = true; }

    // Keeps the first `keep` bytes of what this end sent that the peer has not read yet,
    // drops the rest, and closes: the connection ends in the middle of whatever was being
    // sent (a TLS record, say).
    void cut(std::size_t keep) {
      Queue& q = out();
      q.size = std::min(q.size, keep);
      close();
    }
    // A connection reset: the peer's send() and recv() fail with kReset from now on.
    void reset() { reset_ = true; }

    // The descriptor fd() reports (-1 by default: nothing to poll).
    void set_fd(int fd) { fd_ = fd; }
    bool closed() const { return closed_; }
    // send() and recv() calls so far, the kWouldBlock answers among them, and the bytes sent.
    std::uint64_t calls() const { return calls_; }
    std::uint64_t would_blocks() const { return would_blocks_; }
    std::uint64_t bytes_sent() const { return bytes_sent_; }
    // Bytes sent to this end that it has not read yet.
    std::size_t unread() const { return pipe_->queues_[index_ ^ 1].size; }

   private:
    friend class MemoryPipe;

    Queue& out() { return pipe_->queues_[index_]; }
    Queue& in() { return pipe_->queues_[index_ ^ 1]; }
    https::Status would_block(bool* stutter, https::IoInterest interest) {
      *stutter = false;
      wants_ = interest;
      ++would_blocks_;
      return https::Status::kWouldBlock;
    }

    MemoryPipe* pipe_ = nullptr;
    End* peer_ = nullptr;
    std::size_t index_ = 0;  // Of the queue this end sends into.
    int fd_ = -1;
    https::IoInterest wants_ = https::IoInterest::kNone;
    bool closed_ = false;
    bool reset_ = false;
    bool stutter_send_ = false;  // The next send() says kWouldBlock (stutter mode).
    bool stutter_recv_ = false;
    std::uint64_t calls_ = 0;
    std::uint64_t would_blocks_ = 0;
    std::uint64_t bytes_sent_ = 0;
  };

  explicit MemoryPipe(std::size_t capacity = std::size_t{64} * 1024) {
    for (Queue& q : queues_) q.bytes.assign(capacity, 0);
    ends_[0].pipe_ = ends_[1].pipe_ = this;
    ends_[0].peer_ = &ends_[1];
    ends_[1].peer_ = &ends_[0];
    ends_[1].index_ = 1;
  }
  MemoryPipe(const MemoryPipe&) = delete;
  MemoryPipe& operator=(const MemoryPipe&) = delete;

  // The two ends; which is which is only a name.
  End& client() { return ends_[0]; }
  End& server() { return ends_[1]; }

  // At most `n` bytes per send() or recv() (1: byte at a time; at least 1).
  void set_max_transfer(std::size_t n) { max_transfer_ = std::max<std::size_t>(n, 1); }
  // Whether every call that moved bytes is followed, on the same end and direction, by one
  // that says kWouldBlock.
  void set_stutter(bool on) { stutter_ = on; }

 private:
  Queue queues_[2];  // [0]: client to server, [1]: server to client.
  End ends_[2];
  std::size_t max_transfer_ = SIZE_MAX;
  bool stutter_ = false;
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_MEMORY_PIPE_HPP_
