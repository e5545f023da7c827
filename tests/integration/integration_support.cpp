#include "integration_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "stepback/core/random.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/support/loopback_connector.hpp"

namespace stepback::integration {

const char* python_path() { return STEPBACK_INTEG_PYTHON; }
const char* openssl_path() { return STEPBACK_INTEG_OPENSSL; }
const char* nginx_path() { return STEPBACK_INTEG_NGINX; }
const char* bash_path() { return STEPBACK_INTEG_BASH; }
const char* source_dir() { return STEPBACK_INTEG_SOURCE_DIR; }

bool executable(const char* path) {
  return path != nullptr && path[0] != '\0' && ::access(path, X_OK) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && base[0] != '\0' ? base : "/tmp") + "/stepback-integ-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) != nullptr) path_ = buf.data();
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

bool Process::start(const std::vector<std::string>& argv, const std::string& output_path) {
  stop();
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || null_in < 0) {
    if (out >= 0) ::close(out);
    if (null_in >= 0) ::close(null_in);
    return false;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec. The child dies with the test process.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    ::dup2(null_in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out);
  ::close(null_in);
  if (pid < 0) return false;
  pid_ = pid;
  return true;
}

bool Process::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_status_ = (r == pid_ && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  pid_ = -1;
  return false;
}

int Process::wait_exit(int timeout_ms) {
  if (!wait_for([this] { return !running(); }, timeout_ms)) {
    stop();
    return -1;
  }
  return exit_status_;
}

void Process::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const bool exited = wait_for([this] { return !running(); }, 2000);
  if (!exited && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
}

int run_command(const std::vector<std::string>& argv, const std::string& output_path,
                int timeout_ms) {
  Process p;
  if (!p.start(argv, output_path)) return -1;
  return p.wait_exit(timeout_ms);
}

bool wait_for(const std::function<bool()>& ready, int timeout_ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (ready()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool port_accepts(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = 0;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

const Pki* pki() {
  // Function-local statics: made on first use, and the keys are removed at exit.
  static const TempDir dir;
  static const std::unique_ptr<Pki> made = []() -> std::unique_ptr<Pki> {
    if (dir.path().empty()) return nullptr;
    const std::string script = std::string(source_dir()) + "/make_certs.sh";
    if (run_command({bash_path(), script, openssl_path(), dir.file("pki")},
                    dir.file("make_certs.log"), 30000) != 0) {
      return nullptr;
    }
    auto p = std::make_unique<Pki>();
    p->dir = dir.file("pki");
    p->ca = p->dir + "/ca.pem";
    p->other_ca = p->dir + "/other_ca.pem";
    p->server_cert = p->dir + "/server.pem";
    p->server_key = p->dir + "/server.key";
    p->wrong_host_cert = p->dir + "/wrong_host.pem";
    p->wrong_host_key = p->dir + "/wrong_host.key";
    p->expired_cert = p->dir + "/expired.pem";
    p->expired_key = p->dir + "/expired.key";
    return p;
  }();
  if (made == nullptr) {
    ADD_FAILURE() << "make_certs.sh failed: " << read_file(dir.file("make_certs.log"));
  }
  return made.get();
}

namespace {

// Parses the decimal port at the start of `text`; 0 if none.
std::uint16_t parse_port(const std::string& text) {
  unsigned long v = 0;
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && v <= 65535) {
    v = v * 10 + static_cast<unsigned long>(text[i] - '0');
    ++i;
  }
  return (i > 0 && v > 0 && v <= 65535) ? static_cast<std::uint16_t>(v) : 0;
}

std::string loopback_url(bool tls, std::uint16_t port, const std::string& target) {
  return std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port) + target;
}

}  // namespace

namespace {

// Starts a loopback server script (`argv`, output in dir/output.txt) and waits for the port it
// writes to dir/port; the port in *port, or a failure naming `name` with the script's output.
::testing::AssertionResult start_loopback_script(Process& process, const TempDir& dir,
                                                 const std::vector<std::string>& argv,
                                                 const char* name, std::uint16_t* port) {
  if (!process.start(argv, dir.file("output.txt"))) {
    return ::testing::AssertionFailure() << "could not start " << python_path();
  }
  const bool ready = wait_for(
      [&] { return !read_file(dir.file("port")).empty() || !process.running(); }, kStartTimeoutMs);
  *port = parse_port(read_file(dir.file("port")));
  if (!ready || *port == 0) {
    process.stop();
    return ::testing::AssertionFailure()
           << name << " did not start: " << read_file(dir.file("output.txt"));
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

::testing::AssertionResult ScriptedServer::start(const Options& options) {
  const Pki* certs = options.tls ? pki() : nullptr;
  if (options.tls && certs == nullptr) return ::testing::AssertionFailure() << "no PKI";
  tls_ = options.tls;
  write_file(dir_.file("script.json"), options.script);
  std::vector<std::string> argv = {python_path(), std::string(source_dir()) + "/scripted_server.py",
                                   "--script",    dir_.file("script.json"),
                                   "--port-file", dir_.file("port"),
                                   "--log-file",  dir_.file("events.log"),
                                   "--lifetime",  "120"};
  if (options.tls) {
    argv.insert(argv.end(), {"--cert", options.cert.empty() ? certs->server_cert : options.cert,
                             "--key", options.key.empty() ? certs->server_key : options.key,
                             "--tls", options.tls_version});
  }
  if (options.full_queue_seconds > 0) {
    argv.insert(argv.end(), {"--full-queue", std::to_string(options.full_queue_seconds)});
  }
  return start_loopback_script(process_, dir_, argv, "scripted_server.py", &port_);
}

std::string ScriptedServer::url(const std::string& target) const {
  return loopback_url(tls_, port_, target);
}

::testing::AssertionResult ScriptedProxy::start(const std::string& script,
                                                const std::string& auth) {
  std::vector<std::string> argv = {
      python_path(), std::string(source_dir()) + "/../support/scripted_proxy.py",
      "--script",    script,
      "--port-file", dir_.file("port"),
      "--log-file",  dir_.file("events.log"),
      "--lifetime",  "120"};
  if (!auth.empty()) argv.insert(argv.end(), {"--auth", auth});
  return start_loopback_script(process_, dir_, argv, "scripted_proxy.py", &port_);
}

::testing::AssertionResult OpensslServer::start(const std::string& version_flag,
                                                const std::vector<std::string>& extra) {
  const Pki* certs = pki();
  if (certs == nullptr) return ::testing::AssertionFailure() << "no PKI";
  // Port 0: s_server binds an ephemeral port and prints "ACCEPT 127.0.0.1:PORT".
  std::vector<std::string> argv = {openssl_path(), "s_server",        "-accept",
                                   "127.0.0.1:0",  "-cert",           certs->server_cert,
                                   "-key",         certs->server_key, "-www"};
  if (!version_flag.empty()) argv.push_back(version_flag);
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (!process_.start(argv, dir_.file("output.txt"))) {
    return ::testing::AssertionFailure() << "could not start " << openssl_path();
  }
  const std::string marker = "ACCEPT 127.0.0.1:";
  const bool ready = wait_for(
      [&] {
        const std::string out = output();
        const std::size_t at = out.find(marker);
        return (at != std::string::npos && out.find('\n', at) != std::string::npos) ||
               !process_.running();
      },
      kStartTimeoutMs);
  const std::string out = output();
  const std::size_t at = out.find(marker);
  port_ = at == std::string::npos ? 0 : parse_port(out.substr(at + marker.size()));
  if (!ready || port_ == 0) {
    process_.stop();
    return ::testing::AssertionFailure() << "s_server did not start: " << output();
  }
  return ::testing::AssertionSuccess();
}

std::string OpensslServer::url(const std::string& target) const {
  return loopback_url(true, port_, target);
}

::testing::AssertionResult NginxServer::start() {
  const Pki* certs = pki();
  if (certs == nullptr) return ::testing::AssertionFailure() << "no PKI";
  std::filesystem::create_directories(www() + "/appears");
  write_file(www() + "/chunked.html", "<p>start</p><!--# echo var=\"uri\" --><p>end</p>\n");
  const std::string templ = read_file(std::string(source_dir()) + "/nginx.conf.in");
  if (templ.empty()) return ::testing::AssertionFailure() << "nginx.conf.in is missing";
  // nginx cannot report the port it bound, so take a free one; another process may grab it
  // in between, hence a few tries.
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = free_port();
    std::string conf = templ;
    const std::pair<std::string, std::string> vars[] = {{"@DIR@", dir_.path()},
                                                        {"@PORT@", std::to_string(port_)},
                                                        {"@CERT@", certs->server_cert},
                                                        {"@KEY@", certs->server_key}};
    for (const auto& [name, value] : vars) {
      for (std::size_t at = conf.find(name); at != std::string::npos;
           at = conf.find(name, at + value.size())) {
        conf.replace(at, name.size(), value);
      }
    }
    write_file(dir_.file("nginx.conf"), conf);
    if (!process_.start({nginx_path(), "-p", dir_.path(), "-c", dir_.file("nginx.conf"), "-e",
                         dir_.file("error.log")},
                        dir_.file("output.txt"))) {
      return ::testing::AssertionFailure() << "could not start " << nginx_path();
    }
    const bool ready =
        wait_for([this] { return port_accepts(port_) || !process_.running(); }, kStartTimeoutMs);
    if (ready && process_.running()) return ::testing::AssertionSuccess();
    process_.stop();
  }
  return ::testing::AssertionFailure()
         << "nginx did not start: " << read_file(dir_.file("output.txt")) << error_log();
}

std::string NginxServer::url(const std::string& target) const {
  return loopback_url(true, port_, target);
}

std::uint32_t fnv1a(const std::uint8_t* data, std::size_t size, std::uint32_t hash) {
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 16777619U;
  }
  return hash;
}

std::uint32_t pattern_fnv1a(std::size_t size) {
  std::uint32_t hash = 2166136261U;
  for (std::size_t i = 0; i < size; ++i) {
    const std::uint8_t b = pattern_byte(i);
    hash = fnv1a(&b, 1, hash);
  }
  return hash;
}

void ensure_tls_arena() {
  // Room for every root of the system's store parsed at once (TrustStoreGetTest's "loaded"
  // mode) beside other configurations and a handshake: Debian's ca-certificates 20250419 (150
  // roots) no longer fitted in 1 MiB, which only a fresh machine had.
  alignas(16) static std::uint8_t arena[std::size_t{4} << 20];
  if (!https::tls_arena_installed()) {
    ASSERT_EQ(https::tls_arena_init(arena, sizeof arena), https::Status::kOk);
  }
}

std::unique_ptr<https::TlsClientConfig> make_tls(const std::string& ca_file, https::TlsVersion min,
                                                 https::TlsVersion max) {
  ensure_tls_arena();
  auto config = std::make_unique<https::TlsClientConfig>();
  if (config->init() != https::Status::kOk) {
    ADD_FAILURE() << "TlsClientConfig::init failed";
    return nullptr;
  }
  if (config->add_ca_file(ca_file.c_str()) != https::Status::kOk) {
    ADD_FAILURE() << "add_ca_file(" << ca_file << ") failed";
    return nullptr;
  }
  config->set_versions(min, max);
  return config;
}

Policy test_policy() {
  Policy p;
  p.initial_delay = Millis(100);
  p.multiplier = 2;
  p.jitter = Jitter::kSeed;
  p.jitter_range = Millis(50);
  p.max_backoff = Millis(500);
  p.max_retries = 4;
  p.total_deadline = Millis(20000);
  p.max_server_delay = Millis(10000);
  return p;
}

profiles::Timeouts test_timeouts() {
  profiles::Timeouts t;
  t.connect = Millis(2000);
  t.tls_handshake = Millis(3000);
  t.read = Millis(3000);
  return t;
}

std::vector<Event> RunResult::of(https::ClientEvent::Kind kind) const {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

std::string RunResult::summary() const {
  std::ostringstream s;
  s << "outcome=" << to_string(result.outcome) << " attempts=" << result.attempts
    << " status=" << result.status << " error=" << https::to_string(result.error) << " message='"
    << message << "' connections=" << connections << " resumed=" << resumed
    << " elapsed_ms=" << elapsed.count() << " body_bytes=" << body.size()
    << (hit_wall_limit ? " HIT-WALL-LIMIT" : "") << " events:";
  for (const Event& e : events) {
    switch (e.kind) {
      case https::ClientEvent::Kind::kAttempt:
        s << " [attempt " << e.attempt << "]";
        break;
      case https::ClientEvent::Kind::kResponse:
        s << " [response " << e.status << "]";
        break;
      case https::ClientEvent::Kind::kError:
        s << " [error " << to_string(e.failure) << ": " << e.message << "]";
        break;
      case https::ClientEvent::Kind::kWait:
        s << " [wait " << e.wait.count() << " ms " << to_string(e.wait_reason) << "]";
        break;
      case https::ClientEvent::Kind::kIntegrity:
        s << " [integrity " << (e.verified ? "ok" : "MISMATCH") << ": " << e.message << "]";
        break;
      case https::ClientEvent::Kind::kRedirect:
        s << " [redirect " << e.status << "]";
        break;
      case https::ClientEvent::Kind::kResume:
        s << " [resume at " << e.offset << " if-range " << e.validator << "]";
        break;
      case https::ClientEvent::Kind::kUrlRefresh:
        s << " [url refresh " << e.status << " at " << e.offset << "]";
        break;
      case https::ClientEvent::Kind::kProgress:
        s << " [progress " << e.bytes << "]";
        break;
      case https::ClientEvent::Kind::kDone:
        s << " [done " << to_string(e.outcome) << "]";
        break;
    }
  }
  return s.str();
}

namespace {

struct RunContext {
  RunResult* run;
  const ClientSetup* setup;
};

void record_event(void* context, const https::ClientEvent& e) {
  auto* c = static_cast<RunContext*>(context);
  Event copy;
  copy.kind = e.kind;
  copy.at = e.at;
  copy.attempt = e.attempt;
  copy.status = e.status;
  copy.failure = e.failure;
  copy.message = e.message != nullptr ? e.message : "";
  copy.wait = e.wait;
  copy.wait_reason = e.wait_reason;
  copy.outcome = e.outcome;
  copy.offset = e.offset;
  copy.verified = e.verified;
  copy.bytes = e.bytes;
  copy.validator = std::string(e.validator);
  c->run->events.push_back(copy);
  if (c->setup->on_event) c->setup->on_event(copy);
}

// Keeps the body, checking the sink contract: every byte once, in order.
bool keep_body(void* context, std::uint64_t offset, https::ConstBytes data) {
  auto* c = static_cast<RunContext*>(context);
  if (offset != c->run->body.size()) ++c->run->offset_violations;
  c->run->body.append(reinterpret_cast<const char*>(data.data), data.size);
  return true;
}

bool restart_body(void* context) {
  auto* c = static_cast<RunContext*>(context);
  if (!c->setup->sink_restartable) return false;
  ++c->run->restarts;
  c->run->body.clear();
  return true;
}

}  // namespace

RunResult run_client(const ClientSetup& setup) {
  RunResult run;
  https::Url url;
  if (https::parse_url(setup.url, &url) != https::Status::kOk) {
    ADD_FAILURE() << "bad URL " << setup.url;
    return run;
  }
  std::vector<https::Header> headers;
  for (const auto& [name, value] : setup.headers) headers.push_back({name, value});
  https::RequestSpec spec;
  spec.head.method = setup.method;
  spec.head.url = url;
  spec.head.user_agent = "stepback-integration";
  spec.head.headers = headers.data();
  spec.head.header_count = headers.size();
  const https::ConstBytes body{reinterpret_cast<const std::uint8_t*>(setup.body.data()),
                               setup.body.size()};
  spec.body = https::BodySource::of(&body);
  spec.idempotency = setup.idempotency;

  std::vector<std::uint8_t> request(4096), head(setup.head_buffer), io(16384), error_body(1024);
  const https::ClientBuffers buffers{{request.data(), request.size()},
                                     {head.data(), head.size()},
                                     {io.data(), io.size()},
                                     {error_body.data(), error_body.size()}};
  Xoshiro128 random(42);
  const RetryContext context{setup.policy, random, nullptr};
  RunContext events{&run, &setup};
  testing::LoopbackConnector connector(setup.tls);
  if (connector.set_proxy(setup.proxy) != https::Status::kOk) {
    ADD_FAILURE() << "the proxy settings do not fit the connector";
    return run;
  }
  https::ClientOptions options;
  options.timeouts = setup.timeouts;
  options.buffers = buffers;
  options.body = https::ResponseSink{&keep_body, &restart_body, &events};
  options.body_limit = setup.body_limit;
  options.events = https::EventSink{&record_event, &events};
  options.wall_now = &platform::wall_now;
  options.max_time = setup.max_time;
  https::Client client(connector.get(), context, options);
  if (setup.network) client.network_changed(platform::monotonic_now(), *setup.network);
  const https::Status started = client.start(spec);
  if (started != https::Status::kOk) {
    ADD_FAILURE() << "Client::start: " << https::to_string(started);
    return run;
  }

  const Millis begin = platform::monotonic_now();
  const Millis wall_limit = begin + Millis(kRunWallLimitMs);
  https::ClientNext next = client.step(begin);
  while (next.kind != https::ClientNext::Kind::kDone) {
    const Millis now = platform::monotonic_now();
    if (now >= wall_limit) {
      client.cancel();
      run.hit_wall_limit = true;
      break;
    }
    if (next.kind == https::ClientNext::Kind::kWaitIo &&
        (next.fd < 0 || next.interest == https::IoInterest::kNone)) {
      ++run.io_waits_without_fd;
    }
    https::poll_wait(next, now, wall_limit - now);
    next = client.step(platform::monotonic_now());
  }
  run.elapsed = platform::monotonic_now() - begin;
  run.result = client.result();
  run.message = run.result.message != nullptr ? run.result.message : "";
  run.connections = client.connections();
  run.delivered = client.delivered();
  run.refetched = client.refetched();
  run.resumed = client.resumed();
  return run;
}

}  // namespace stepback::integration
