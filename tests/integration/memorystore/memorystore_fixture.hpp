// Fixtures of the Memorystore tests: the local Memorystore for Redis (memorystore_server.py)
// as a child process on an ephemeral loopback port with the integration PKI, and a bounded
// poll() loop that follows one transfer::Operation to its end over TLS. Linux only, like the
// integration fixtures it builds on (tests/integration/integration_support.hpp).
#ifndef STEPBACK_TESTS_INTEGRATION_MEMORYSTORE_MEMORYSTORE_FIXTURE_HPP_
#define STEPBACK_TESTS_INTEGRATION_MEMORYSTORE_MEMORYSTORE_FIXTURE_HPP_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stepback/core/policy.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/transfer/operation.hpp"
#include "tests/integration/integration_support.hpp"

namespace stepback::memorystore {

// The server's source folder (memorystore_server.py).
const char* server_dir();

// memorystore_server.py with the integration PKI's server certificate.
class MemorystoreServer {
 public:
  struct Options {
    std::vector<std::string> tokens;  // Accepted bearer tokens (none: no check).
    std::string token_file;           // One more, read by the server per request.
    std::string faults = "[]";        // The fault rules (JSON; see the server's docstring).
    int op_polls = 2;                 // Polls until an operation is done (0: off).
    double op_seconds = 0;            // Seconds until it is done (0: off).
  };

  // Starts the server and waits for its port.
  ::testing::AssertionResult start(const Options& options);
  std::uint16_t port() const { return port_; }
  // The server's request log (one line per request; never a token).
  std::string log() const { return integration::read_file(dir_.file("requests.log")); }
  std::string output() const { return integration::read_file(dir_.file("output.txt")); }
  // https://127.0.0.1:PORT + target.
  std::string url(const std::string& target) const;
  // The collection URL of project p, location us-central1, plus `tail`.
  std::string instances(const std::string& tail = "") const {
    return url("/v1/projects/p/locations/us-central1/instances" + tail);
  }
  void stop() { process_.stop(); }

 private:
  integration::TempDir dir_;
  integration::Process process_;
  std::uint16_t port_ = 0;
};

// Tokens for a run: `first` until a refresh, then `refreshed`; counts what was asked.
struct TokenSource {
  std::string first;
  std::string refreshed;
  int asked = 0;
  int refreshes = 0;
};

// What to run.
struct OperationSetup {
  std::string url;
  std::string method = "POST";
  std::string body;
  https::RequestSpec::Idempotency idempotency = https::RequestSpec::Idempotency::kYes;
  Policy policy = integration::test_policy();
  PollingPolicy polling = fast_polling();
  Timeouts timeouts = integration::test_timeouts();
  https::TlsClientConfig* tls = nullptr;
  TokenSource* tokens = nullptr;  // nullptr: no Authorization.

  // Polls from 100 ms doubling to 400 ms, equal jitter, floor 50 ms, 10 s polling deadline.
  static PollingPolicy fast_polling();
};

// An operation event, copied.
struct SeenEvent {
  transfer::OperationEvent::Kind kind;
  Millis at;
  std::uint32_t poll;
  std::string name, verb, detail;
  bool done;
  Millis wait;
};

// How a run went.
struct OperationRun {
  transfer::OperationResult result;  // Its views are dead; use the copies below.
  std::string message, error_message, error_status, error_details, code_name;
  std::string name;
  std::string response;  // What the response sink received.
  std::vector<SeenEvent> events;
  std::vector<integration::Event> client_events;
  std::uint32_t connections = 0;
  bool resumed = false;  // The last connection resumed a TLS session.
  bool hit_wall_limit = false;
  Millis elapsed{};

  std::size_t count(transfer::OperationEvent::Kind kind) const;
  std::string summary() const;
};

// Follows one operation per `setup` in a poll() loop until kDone or the wall limit.
OperationRun run_operation(const OperationSetup& setup);

}  // namespace stepback::memorystore

#endif  // STEPBACK_TESTS_INTEGRATION_MEMORYSTORE_MEMORYSTORE_FIXTURE_HPP_
