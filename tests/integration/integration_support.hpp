// Fixtures of the integration tests: real servers (the scripted Python server, openssl
// s_server, nginx) started as child processes on ephemeral loopback ports, a throwaway PKI
// made with the openssl CLI, and a bounded poll() loop that drives a Client to its end.
//
// Every wait is bounded: servers must announce their port within kStartTimeoutMs, a request
// loop gives up (and cancels) after kRunWallLimitMs, and each child is killed in teardown
// (SIGTERM, then SIGKILL) and also dies with the test process (PR_SET_PDEATHSIG), so a test
// that fails or is killed by CTest leaves no server behind. Linux only.
#ifndef STEPBACK_TESTS_INTEGRATION_INTEGRATION_SUPPORT_HPP_
#define STEPBACK_TESTS_INTEGRATION_INTEGRATION_SUPPORT_HPP_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stepback/core/policy.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/proxy/proxy.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/profiles/profile.hpp"

namespace stepback::integration {

// How long a server may take to start listening: generous, since a Python server behind a
// version manager's shim took over 10 s to start on a machine loaded by parallel builds.
inline constexpr int kStartTimeoutMs = 30000;
// How long run_client() lets one request with all its retries take before cancelling.
inline constexpr int kRunWallLimitMs = 25000;

// Tool paths found by CMake ("" when absent) and this folder, for scripts and templates.
const char* python_path();
const char* openssl_path();
const char* nginx_path();
const char* bash_path();
const char* source_dir();

// Whether `path` names an executable file.
bool executable(const char* path);

// Skips the test when `path` is not executable; fails it instead when CI is set, so a CI
// machine without the tool cannot pass silently.
#define STEPBACK_REQUIRE_TOOL(path, what)                                             \
  do {                                                                                \
    if (!::stepback::integration::executable(path)) {                                 \
      if (std::getenv("CI") != nullptr) FAIL() << (what) << " not found (CI is set)"; \
      GTEST_SKIP() << (what) << " not found; scripts/setup.sh installs it";           \
    }                                                                                 \
  } while (false)

// Whole-file helpers; read_file() returns "" for a missing file.
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);
// How many times `needle` occurs in `text`.
int count_of(const std::string& text, const std::string& needle);

// A fresh folder under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // path()/name.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A child process whose stdout and stderr go to a file; killed on stop() or destruction.
class Process {
 public:
  Process() = default;
  ~Process() { stop(); }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Starts argv[0] (a path) with `argv`; false if fork or exec failed (exec failure shows
  // as an early exit with status 127).
  bool start(const std::vector<std::string>& argv, const std::string& output_path);
  // Whether the child is still running (reaps it if it has exited).
  bool running();
  // Waits up to `timeout_ms` for the child to exit: its exit status, or -1 if it was killed
  // by a signal or is still running (then it is stopped).
  int wait_exit(int timeout_ms);
  // SIGTERM, up to 2 s for it to exit, then SIGKILL; always reaps. Safe to call twice.
  void stop();

 private:
  pid_t pid_ = -1;
  int exit_status_ = -1;  // Of the last reaped child.
};

// Runs `argv` to completion within `timeout_ms`, output to `output_path`; its exit status,
// or -1 on a spawn failure or timeout (the child is then killed).
int run_command(const std::vector<std::string>& argv, const std::string& output_path,
                int timeout_ms);

// Polls `ready` every 10 ms until it returns true (then true) or `timeout_ms` passes.
bool wait_for(const std::function<bool()>& ready, int timeout_ms);

// Whether something accepts TCP connections on 127.0.0.1:port right now.
bool port_accepts(std::uint16_t port);

// A loopback port that was free a moment ago (bind to port 0, read it, close): for servers
// that cannot report the port they bound themselves (nginx).
std::uint16_t free_port();

// The certificates of make_certs.sh, generated once per process into a temporary folder.
struct Pki {
  std::string dir;
  std::string ca;           // The CA the clients trust.
  std::string other_ca;     // A CA no server chains to.
  std::string server_cert;  // localhost and 127.0.0.1.
  std::string server_key;
  std::string wrong_host_cert;  // other.example only.
  std::string wrong_host_key;
  std::string expired_cert;  // Valid in 2020 only.
  std::string expired_key;
};
// The process's PKI; fails the calling test (and returns null) if generation failed.
const Pki* pki();

// The scripted Python server (scripted_server.py).
class ScriptedServer {
 public:
  struct Options {
    std::string script;               // The JSON list of actions.
    bool tls = true;                  // TLS with the certificate below, else plain HTTP.
    std::string tls_version = "any";  // "1.2", "1.3", "any", or one per connection: "1.3,1.2".
    std::string cert;                 // Defaults to the PKI's server certificate.
    std::string key;
    // > 0: the listener's accept queue is full for this many seconds after start, so a
    // client's SYN is dropped and the kernel sends it again after about a second: a connect
    // that takes a while, as on any real network.
    double full_queue_seconds = 0;
  };

  // Starts the server and waits for its port.
  ::testing::AssertionResult start(const Options& options);
  std::uint16_t port() const { return port_; }
  // The server's event log (see scripted_server.py); "" before any event.
  std::string log() const { return read_file(dir_.file("events.log")); }
  // The server's stdout and stderr, for failure messages.
  std::string output() const { return read_file(dir_.file("output.txt")); }
  // https://127.0.0.1:PORT + target (http:// without TLS).
  std::string url(const std::string& target) const;
  void stop() { process_.stop(); }

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
  bool tls_ = true;
};

// The scripted HTTP proxy (tests/support/scripted_proxy.py).
class ScriptedProxy {
 public:
  // Starts it with `script` (comma-separated answers: ok, cut, garbage, 407, 503, ...) and,
  // unless empty, the USER:PASSWORD it requires; waits for its port.
  ::testing::AssertionResult start(const std::string& script, const std::string& auth = "");
  std::uint16_t port() const { return port_; }
  // One JSON object per request it got (conn, method, target, proxy_authorization, answer).
  std::string log() const { return read_file(dir_.file("events.log")); }
  std::string output() const { return read_file(dir_.file("output.txt")); }
  void stop() { process_.stop(); }

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
};

// openssl s_server -www on an ephemeral port, optionally limited to one TLS version.
class OpensslServer {
 public:
  // `version_flag` is "-tls1_2", "-tls1_3" or "" for both.
  ::testing::AssertionResult start(const std::string& version_flag,
                                   const std::vector<std::string>& extra = {});
  std::uint16_t port() const { return port_; }
  std::string output() const { return read_file(dir_.file("output.txt")); }
  std::string url(const std::string& target) const;
  void stop() { process_.stop(); }

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
};

// nginx from tests/integration/nginx.conf.in, in the foreground, everything in a temp dir.
class NginxServer {
 public:
  ::testing::AssertionResult start();
  std::uint16_t port() const { return port_; }
  // The folder nginx serves (root).
  std::string www() const { return dir_.file("www"); }
  std::string error_log() const { return read_file(dir_.file("error.log")); }
  std::string access_log() const { return read_file(dir_.file("access.log")); }
  std::string url(const std::string& target) const;
  void stop() { process_.stop(); }

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
};

// Byte i of the deterministic body pattern of scripted_server.py.
inline std::uint8_t pattern_byte(std::uint64_t i) {
  return static_cast<std::uint8_t>((i * 7 + i / 251) & 0xFF);
}
// 32-bit FNV-1a, continued from `hash`.
std::uint32_t fnv1a(const std::uint8_t* data, std::size_t size, std::uint32_t hash = 2166136261U);
// FNV-1a of the first `size` bytes of the pattern.
std::uint32_t pattern_fnv1a(std::size_t size);

// Installs the process's TLS arena (a static 1 MiB buffer) once, before any mbedTLS call.
void ensure_tls_arena();

// A TLS client configuration that trusts `ca_file`, limited to [min, max]; fails the
// calling test (and returns null) when set-up fails.
std::unique_ptr<https::TlsClientConfig> make_tls(const std::string& ca_file,
                                                 https::TlsVersion min = https::TlsVersion::kTls12,
                                                 https::TlsVersion max = https::TlsVersion::kTls13);

// The tests' own short policy: 100 ms initial delay, cap 500 ms, kSeed jitter of at most
// 50 ms, 4 retries, 20 s total deadline.
Policy test_policy();
// Short transport timeouts: connect 2 s, handshake 3 s, read 3 s.
profiles::Timeouts test_timeouts();

// One ClientEvent, copied out of the callback (its views die with it).
struct Event {
  https::ClientEvent::Kind kind = https::ClientEvent::Kind::kAttempt;
  Millis at{};
  std::uint32_t attempt = 0;
  std::uint16_t status = 0;
  Failure failure = Failure::kNone;
  std::string message;
  Millis wait{};
  WaitReason wait_reason = WaitReason::kBackoff;
  Outcome outcome = Outcome::kSuccess;
  std::uint64_t offset = 0;  // kResume.
  std::string validator;     // kResume.
  bool verified = false;     // kIntegrity.
  std::uint64_t bytes = 0;   // kProgress.
};

// What to run.
struct ClientSetup {
  std::string url;
  std::string method = "GET";
  std::string body;  // Request body.
  std::vector<std::pair<std::string, std::string>> headers;
  https::RequestSpec::Idempotency idempotency = https::RequestSpec::Idempotency::kByMethod;
  Policy policy = test_policy();
  profiles::Timeouts timeouts = test_timeouts();
  std::size_t head_buffer = 8192;  // Response head buffer.
  std::uint64_t body_limit = 1 << 20;
  https::TlsClientConfig* tls = nullptr;       // Required for https:// URLs.
  std::function<void(const Event&)> on_event;  // Called after each event is recorded.
  bool sink_restartable = true;                // false: the sink refuses to start over.
  std::optional<Millis> max_time;              // ClientOptions::max_time.
  const https::ProxyConfig* proxy = nullptr;   // The connector's proxy, if any.
  std::optional<https::NetworkInfo> network;   // Told to the client before it starts.
};

// How a run went.
struct RunResult {
  https::ClientResult result;
  std::string message;  // result.message, copied.
  std::uint32_t connections = 0;
  bool resumed = false;
  bool hit_wall_limit = false;  // The loop gave up after kRunWallLimitMs and cancelled.
  std::vector<Event> events;
  std::string body;  // Every byte the sink received.
  Millis elapsed{};
  // How many kWaitIo answers named no descriptor (fd < 0) or no interest: the loop could only
  // sleep through them. Must stay 0 (the main-loop contract).
  std::uint32_t io_waits_without_fd = 0;
  std::uint32_t offset_violations = 0;  // Sink writes not at the end of what it had: must be 0.
  std::uint32_t restarts = 0;           // Times the sink was told to start over.
  std::uint64_t delivered = 0;          // Client::delivered(), refetched().
  std::uint64_t refetched = 0;

  // The events of `kind`, in order.
  std::vector<Event> of(https::ClientEvent::Kind kind) const;
  // A one-line summary for failure messages.
  std::string summary() const;
};

// Starts a Client per `setup` and steps it in a poll() loop until kDone or the wall limit.
RunResult run_client(const ClientSetup& setup);

}  // namespace stepback::integration

#endif  // STEPBACK_TESTS_INTEGRATION_INTEGRATION_SUPPORT_HPP_
