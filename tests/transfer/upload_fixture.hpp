// Fixtures of the upload tests on loopback: the resumable-upload server (upload_server.py)
// as a child process, and a bounded poll() loop that drives a transfer::Upload of a pattern
// body to its end. The loop records events in fixed arrays and uses static buffers, so a
// heap trap can be armed around it (Hooks).
#ifndef STEPBACK_TESTS_TRANSFER_UPLOAD_FIXTURE_HPP_
#define STEPBACK_TESTS_TRANSFER_UPLOAD_FIXTURE_HPP_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stepback/core/policy.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/transfer/upload.hpp"
#include "tests/integration/integration_support.hpp"

namespace stepback::transfer_test {

using integration::Process;
using integration::TempDir;

// upload_server.py on an ephemeral loopback port.
class UploadServer {
 public:
  struct Options {
    std::string script = "[]";  // The faults (see upload_server.py).
    bool tls = true;
    // How long the server waits before writing each log record (its --log-delay): a server
    // thread that runs late, as on a loaded machine.
    int log_delay_ms = 0;
  };
  ::testing::AssertionResult start(const Options& options);
  std::uint16_t port() const { return port_; }
  // https://127.0.0.1:PORT/upload?uploadType=resumable&name=NAME (http:// without TLS).
  std::string initiation_url(const std::string& name) const;
  // The server's request log: one JSON object per line.
  std::string log() const { return integration::read_file(dir_.file("requests.log")); }
  std::string output() const { return integration::read_file(dir_.file("output.txt")); }
  // The finished object NAME ("" until it is complete).
  std::string object(const std::string& name) const {
    return integration::read_file(dir_.file("objects/" + name));
  }
  // Sums the numeric field `field` over the log's records whose "kind" is `kind` ("" for
  // every record), read with a plain text scan.
  std::uint64_t sum(const std::string& field, const std::string& kind = "") const;
  // Records of `kind` in the log.
  int count(const std::string& kind) const;

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
  bool tls_ = true;
};

// Byte i of the pattern body, and the first `size` bytes of it.
std::uint8_t body_byte(std::uint64_t i);
std::string body(std::uint64_t size);

// What to upload.
struct UploadSetup {
  std::string url;      // Initiation URL.
  std::string session;  // Or a session URI to continue.
  std::uint64_t size = 0;
  std::uint64_t chunk = transfer::kChunkGranularity;
  Policy policy = integration::test_policy();
  Timeouts timeouts = integration::test_timeouts();
  https::TlsClientConfig* tls = nullptr;
  std::uint32_t session_restarts = 0;
  https::RequestSpec::Idempotency idempotency = https::RequestSpec::Idempotency::kByMethod;
  // Saves and encodes the transfer state after every step, as an app persisting it would.
  bool save_state = false;
  bool compute_crc32c = true;  // UploadSpec::compute_crc32c.
  // Non-zero: a body of unknown size, `reveal` more bytes of it readable each time the
  // upload waits for more (extend()), the size final with the last of them.
  std::uint64_t reveal = 0;
  const std::uint8_t* md5 = nullptr;  // UploadSpec::md5 (16 bytes).
};

// Called around the step loop (after every set-up, before the first step; after the last).
class Hooks {
 public:
  virtual void arm() = 0;
  virtual void disarm() = 0;

 protected:
  ~Hooks() = default;
};

// One event, copied into a fixed record.
struct SeenEvent {
  transfer::UploadEvent::Kind kind = transfer::UploadEvent::Kind::kSession;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint16_t status = 0;
  std::uint64_t wait_ms = 0;
  WaitReason wait_reason = WaitReason::kBackoff;
  Failure failure = Failure::kNone;
  char message[96] = {};
};

// How an upload went.
struct UploadRun {
  transfer::UploadResult result;
  std::string message;
  std::string metadata;  // What the metadata sink received.
  std::uint32_t metadata_restarts = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t committed = 0;
  std::uint32_t sessions = 0;
  std::uint32_t connections = 0;
  std::string session_uri;
  bool hit_wall_limit = false;
  std::uint32_t io_waits_without_fd = 0;
  std::uint32_t extensions = 0;   // extend() calls (UploadSetup::reveal).
  std::uint32_t state_saves = 0;  // Records encoded (save_state).
  std::size_t state_bytes = 0;    // The last one's size.
  Millis elapsed{};
  std::vector<SeenEvent> events;

  std::vector<SeenEvent> of(transfer::UploadEvent::Kind kind) const;
  // A one-line summary for failure messages.
  std::string summary() const;
};

// Uploads per `setup` in a poll() loop until done or integration::kRunWallLimitMs.
UploadRun run_upload(const UploadSetup& setup, Hooks* hooks = nullptr);

}  // namespace stepback::transfer_test

#endif  // STEPBACK_TESTS_TRANSFER_UPLOAD_FIXTURE_HPP_
