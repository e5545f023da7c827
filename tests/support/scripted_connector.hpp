// A scripted Connector for unit tests of what drives an https::Client: it hands out
// ScriptedTransports in order, one per open(), and can fail the first opens.
//
//   ScriptedConnector c;
//   c.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");  // Connection 1.
//   c.add().send_fail(https::Status::kReset);                            // Connection 2.
//
// The Client's tests (tests/https/client/client_harness.hpp) and those of the layers above use it.
#ifndef STEPBACK_TESTS_SUPPORT_SCRIPTED_CONNECTOR_HPP_
#define STEPBACK_TESTS_SUPPORT_SCRIPTED_CONNECTOR_HPP_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "stepback/https/connector.hpp"
#include "tests/support/scripted_transport.hpp"

namespace stepback::testing {

// Hands out scripted connections in order; open() fails with `open_failures` first, and
// with kConnectFailed once the scripted connections are used up.
class ScriptedConnector final : public https::Connector {
 public:
  // A new connection at the end of the queue (fd 101, 102, ...).
  ScriptedTransport& add(std::size_t sent_capacity = std::size_t{64} * 1024) {
    connections_.push_back(std::make_unique<ScriptedTransport>(sent_capacity));
    connections_.back()->set_fd(100 + static_cast<int>(connections_.size()));
    return *connections_.back();
  }
  std::vector<https::Status> open_failures;
  // Whether those failures (and the one after the scripted connections) are for lack of a
  // path (Connector::unreachable()): no route, as a device without a network meets.
  bool unreachable_failures = false;
  // Each connection's step() first answers kWouldBlock `connect_blocks` times, waiting on
  // `connecting_fd` (-1: a connector with nothing to watch) for writing.
  int connect_blocks = 0;
  int connecting_fd = -1;

  https::Status open(const https::Url&, const char* host, Millis now, const Timeouts& t) override {
    host_ = host;
    deadline_ = now + t.connect;
    unreachable_ = false;
    if (opened_failures_ < open_failures.size()) {
      unreachable_ = unreachable_failures;
      return open_failures[opened_failures_++];
    }
    if (next_ >= connections_.size()) {
      unreachable_ = unreachable_failures;
      return https::Status::kConnectFailed;
    }
    current_ = connections_[next_++].get();
    blocks_left_ = connect_blocks;
    connecting_ = false;
    return https::Status::kOk;
  }
  https::Status step(Millis) override {
    connecting_ = blocks_left_ > 0;
    if (!connecting_) return https::Status::kOk;
    --blocks_left_;
    return https::Status::kWouldBlock;
  }
  int fd() const override {
    if (connecting_) return connecting_fd;
    return current_ != nullptr ? current_->fd() : -1;
  }
  https::IoInterest wants() const override {
    if (connecting_) return https::IoInterest::kWrite;
    return current_ != nullptr ? current_->wants() : https::IoInterest::kNone;
  }
  https::Transport& stream() override { return current_ != nullptr ? *current_ : idle_; }
  Millis deadline() const override { return deadline_; }
  bool resumed() const override { return false; }
  const char* failure_message() const override { return "scripted failure"; }
  bool unreachable() const override { return unreachable_; }
  void exchange_done() override { ++exchanges_; }
  void close() override {
    if (current_ != nullptr) current_->close();
    current_ = nullptr;
  }

  void network_changed() override { ++network_changes_; }

  // Connections handed out so far.
  std::size_t opened() const { return next_; }
  // Calls of network_changed().
  int network_changes() const { return network_changes_; }
  // Responses read completely.
  std::size_t exchanges() const { return exchanges_; }
  // The host of the last open().
  const std::string& host() const { return host_; }
  ScriptedTransport& connection(std::size_t i) { return *connections_[i]; }

 private:
  std::vector<std::unique_ptr<ScriptedTransport>> connections_;
  ScriptedTransport idle_;
  ScriptedTransport* current_ = nullptr;
  std::size_t next_ = 0;
  int network_changes_ = 0;
  std::size_t opened_failures_ = 0;
  Millis deadline_ = Millis::max();
  int blocks_left_ = 0;
  bool connecting_ = false;
  bool unreachable_ = false;
  std::size_t exchanges_ = 0;
  std::string host_;
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_SCRIPTED_CONNECTOR_HPP_
