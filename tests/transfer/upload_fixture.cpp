#include "upload_fixture.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <sstream>

#include "stepback/core/random.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/transfer/state.hpp"
#include "tests/support/loopback_connector.hpp"

#ifndef STEPBACK_UPLOAD_SERVER
#error "STEPBACK_UPLOAD_SERVER must name upload_server.py (tests/transfer/CMakeLists.txt)"
#endif

namespace stepback::transfer_test {
namespace {

std::uint16_t parse_port(const std::string& text) {
  const unsigned long port = std::strtoul(text.c_str(), nullptr, 10);
  return port > 0 && port < 65536 ? static_cast<std::uint16_t>(port) : 0;
}

// Everything the step loop touches, static so that nothing is allocated while it runs.
constexpr std::size_t kMaxEvents = 1024;
SeenEvent g_events[kMaxEvents];
std::size_t g_event_count = 0;
char g_metadata[8192];
std::size_t g_metadata_size = 0;
std::uint32_t g_metadata_restarts = 0;
transfer::TransferState g_state;
std::uint8_t g_record[transfer::kMaxStateBytes];
std::uint8_t g_request[4096], g_head[8192], g_io[16384], g_error_body[2048], g_session[2048];

void record(void*, const transfer::UploadEvent& e) {
  if (g_event_count == kMaxEvents) return;
  SeenEvent& s = g_events[g_event_count++];
  s = SeenEvent{};
  s.kind = e.kind;
  s.offset = e.offset;
  s.size = e.size;
  s.status = e.status;
  s.wait_ms = e.wait.count();
  s.wait_reason = e.wait_reason;
  s.failure = e.failure;
  std::snprintf(s.message, sizeof s.message, "%s", e.message);
}

bool write_metadata(void*, std::uint64_t offset, https::ConstBytes data) {
  if (offset != g_metadata_size || data.size > sizeof g_metadata - g_metadata_size) return false;
  std::memcpy(g_metadata + g_metadata_size, data.data, data.size);
  g_metadata_size += data.size;
  return true;
}

bool restart_metadata(void*) {
  g_metadata_size = 0;
  ++g_metadata_restarts;
  return true;
}

std::size_t read_body(void*, std::uint64_t offset, https::MutableBytes out) {
  for (std::size_t i = 0; i < out.size; ++i) out.data[i] = body_byte(offset + i);
  return out.size;
}

const char* kind_name(transfer::UploadEvent::Kind kind) {
  using Kind = transfer::UploadEvent::Kind;
  switch (kind) {
    case Kind::kSession:
      return "session";
    case Kind::kChunk:
      return "chunk";
    case Kind::kQuery:
      return "query";
    case Kind::kResponse:
      return "response";
    case Kind::kError:
      return "error";
    case Kind::kCommitted:
      return "committed";
    case Kind::kWait:
      return "wait";
    case Kind::kExpired:
      return "expired";
    case Kind::kProgress:
      return "progress";
    case Kind::kDone:
      return "done";
  }
  return "?";
}

}  // namespace

::testing::AssertionResult UploadServer::start(const Options& options) {
  const integration::Pki* certs = options.tls ? integration::pki() : nullptr;
  if (options.tls && certs == nullptr) return ::testing::AssertionFailure() << "no PKI";
  tls_ = options.tls;
  integration::write_file(dir_.file("script.json"), options.script);
  ::mkdir(dir_.file("objects").c_str(), 0755);
  std::vector<std::string> argv = {integration::python_path(),
                                   STEPBACK_UPLOAD_SERVER,
                                   "--script",
                                   dir_.file("script.json"),
                                   "--port-file",
                                   dir_.file("port"),
                                   "--log-file",
                                   dir_.file("requests.log"),
                                   "--objects",
                                   dir_.file("objects"),
                                   "--lifetime",
                                   "120"};
  if (options.tls)
    argv.insert(argv.end(), {"--cert", certs->server_cert, "--key", certs->server_key});
  if (options.log_delay_ms > 0)
    argv.insert(argv.end(), {"--log-delay", std::to_string(options.log_delay_ms / 1000.0)});
  if (!process_.start(argv, dir_.file("output.txt"))) {
    return ::testing::AssertionFailure() << "could not start " << integration::python_path();
  }
  const bool ready = integration::wait_for(
      [this] { return !integration::read_file(dir_.file("port")).empty() || !process_.running(); },
      integration::kStartTimeoutMs);
  port_ = parse_port(integration::read_file(dir_.file("port")));
  if (!ready || port_ == 0) {
    process_.stop();
    return ::testing::AssertionFailure() << "upload_server.py did not start: " << output();
  }
  return ::testing::AssertionSuccess();
}

std::string UploadServer::initiation_url(const std::string& name) const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
         "/upload?uploadType=resumable&name=" + name;
}

std::uint64_t UploadServer::sum(const std::string& field, const std::string& kind) const {
  std::istringstream lines(log());
  std::uint64_t total = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!kind.empty() && line.find("\"kind\": \"" + kind + "\"") == std::string::npos) continue;
    const std::string key = "\"" + field + "\": ";
    const std::size_t at = line.find(key);
    if (at != std::string::npos)
      total += std::strtoull(line.c_str() + at + key.size(), nullptr, 10);
  }
  return total;
}

int UploadServer::count(const std::string& kind) const {
  return integration::count_of(log(), "\"kind\": \"" + kind + "\"");
}

std::uint8_t body_byte(std::uint64_t i) {
  return static_cast<std::uint8_t>((i * 7 + i / 251 + i / 65521) & 0xFF);
}

std::string body(std::uint64_t size) {
  std::string s(static_cast<std::size_t>(size), '\0');
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(body_byte(i));
  return s;
}

std::vector<SeenEvent> UploadRun::of(transfer::UploadEvent::Kind kind) const {
  std::vector<SeenEvent> out;
  for (const SeenEvent& e : events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

std::string UploadRun::summary() const {
  std::ostringstream out;
  out << to_string(result.outcome) << " status=" << result.status
      << " error=" << https::to_string(result.error) << " message='" << message
      << "' sent=" << bytes_sent << " committed=" << committed << " events:";
  for (const SeenEvent& e : events) {
    out << " " << kind_name(e.kind);
    if (e.status != 0) out << "(" << e.status << ")";
    if (e.kind == transfer::UploadEvent::Kind::kChunk ||
        e.kind == transfer::UploadEvent::Kind::kCommitted) {
      out << "@" << e.offset;
    }
    if (e.message[0] != '\0') out << "['" << e.message << "']";
  }
  return out.str();
}

UploadRun run_upload(const UploadSetup& setup, Hooks* hooks) {
  UploadRun run;
  g_event_count = 0;
  g_metadata_size = 0;
  g_metadata_restarts = 0;
  https::Url url;
  const std::string& text = setup.session.empty() ? setup.url : setup.session;
  EXPECT_EQ(https::parse_url(text, &url), https::Status::kOk) << text;
  Xoshiro128 random(11);
  const RetryContext context{setup.policy, random, nullptr};
  testing::LoopbackConnector connector(setup.tls);
  transfer::UploadOptions options;
  options.timeouts = setup.timeouts;
  options.buffers = https::ClientBuffers{{g_request, sizeof g_request},
                                         {g_head, sizeof g_head},
                                         {g_io, sizeof g_io},
                                         {g_error_body, sizeof g_error_body}};
  options.session_uri = https::MutableBytes{g_session, sizeof g_session};
  options.metadata = https::ResponseSink{write_metadata, restart_metadata, nullptr};
  options.events = transfer::UploadEventSink{record, nullptr};
  options.wall_now = &platform::wall_now;
  transfer::Upload upload(connector.get(), context, options);
  transfer::UploadSpec spec;
  spec.url = url;
  spec.session = setup.session;
  std::uint64_t available = setup.size;
  if (setup.reveal != 0) {
    available = setup.reveal < setup.size ? setup.reveal : setup.size;
    spec.size_final = available == setup.size;
  }
  spec.body = https::BodySource{read_body, nullptr, available};
  spec.chunk_size = setup.chunk;
  spec.content_type = "application/octet-stream";
  spec.user_agent = "stepback-upload-test";
  spec.idempotency = setup.idempotency;
  spec.session_restarts = setup.session_restarts;
  spec.compute_crc32c = setup.compute_crc32c;
  spec.md5 = setup.md5;
  EXPECT_EQ(upload.start(spec), https::Status::kOk);

  if (hooks != nullptr) hooks->arm();
  const Millis begin = platform::monotonic_now();
  const Millis wall_limit = begin + Millis(integration::kRunWallLimitMs);
  transfer::UploadNext next = upload.step(begin);
  while (next.kind != transfer::UploadNext::Kind::kDone) {
    if (next.kind == transfer::UploadNext::Kind::kWaitUntil && next.at == Millis::max() &&
        available < setup.size) {
      // Waiting for more of a body being produced: here it is.
      available = setup.size - available > setup.reveal ? available + setup.reveal : setup.size;
      ++run.extensions;
      EXPECT_EQ(upload.extend(available, available == setup.size), https::Status::kOk);
      next = upload.step(platform::monotonic_now());
      continue;
    }
    const Millis now = platform::monotonic_now();
    if (now >= wall_limit) {
      upload.cancel();
      run.hit_wall_limit = true;
      break;
    }
    const bool io = next.kind == transfer::UploadNext::Kind::kWaitIo;
    if (io && (next.fd < 0 || next.interest == https::IoInterest::kNone)) ++run.io_waits_without_fd;
    https::poll_wait(io ? next.fd : -1, next.interest, next.at, now, wall_limit - now);
    const Millis stepped = platform::monotonic_now();
    next = upload.step(stepped);
    if (setup.save_state && upload.save(&g_state, stepped, platform::wall_now()) &&
        g_state.set_url(text)) {
      std::size_t n = 0;
      if (transfer::encode_state(g_state, https::MutableBytes{g_record, sizeof g_record}, &n) ==
          transfer::StateStatus::kOk) {
        ++run.state_saves;
        run.state_bytes = n;
      }
    }
  }
  run.elapsed = platform::monotonic_now() - begin;
  if (hooks != nullptr) hooks->disarm();

  run.result = upload.result();
  run.message = upload.result().message;
  run.metadata.assign(g_metadata, g_metadata_size);
  run.metadata_restarts = g_metadata_restarts;
  run.bytes_sent = upload.bytes_sent();
  run.committed = upload.committed();
  run.sessions = upload.sessions();
  run.connections = upload.client().connections();
  run.session_uri = std::string(upload.session_uri());
  run.events.assign(g_events, g_events + g_event_count);
  return run;
}

}  // namespace stepback::transfer_test
