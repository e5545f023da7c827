#include "tests/integration/memorystore/memorystore_fixture.hpp"

#include <cstring>
#include <sstream>

#include "stepback/core/random.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/support/loopback_connector.hpp"

namespace stepback::memorystore {

const char* server_dir() { return STEPBACK_MEMORYSTORE_DIR; }

::testing::AssertionResult MemorystoreServer::start(const Options& options) {
  const integration::Pki* certs = integration::pki();
  if (certs == nullptr) return ::testing::AssertionFailure() << "no PKI";
  std::vector<std::string> argv = {integration::python_path(),
                                   std::string(server_dir()) + "/memorystore_server.py",
                                   "--cert",
                                   certs->server_cert,
                                   "--key",
                                   certs->server_key,
                                   "--port-file",
                                   dir_.file("port"),
                                   "--log-file",
                                   dir_.file("requests.log"),
                                   "--lifetime",
                                   "120",
                                   "--op-polls",
                                   std::to_string(options.op_polls),
                                   "--op-seconds",
                                   std::to_string(options.op_seconds),
                                   "--faults-json",
                                   options.faults};
  for (const std::string& t : options.tokens) argv.insert(argv.end(), {"--token", t});
  if (!options.token_file.empty()) argv.insert(argv.end(), {"--token-file", options.token_file});
  if (!process_.start(argv, dir_.file("output.txt"))) {
    return ::testing::AssertionFailure() << "could not start " << integration::python_path();
  }
  const bool ready = integration::wait_for(
      [this] { return !integration::read_file(dir_.file("port")).empty() || !process_.running(); },
      integration::kStartTimeoutMs);
  const std::string text = integration::read_file(dir_.file("port"));
  port_ = static_cast<std::uint16_t>(std::strtoul(text.c_str(), nullptr, 10));
  if (!ready || port_ == 0) {
    process_.stop();
    return ::testing::AssertionFailure() << "memorystore_server.py did not start: " << output();
  }
  return ::testing::AssertionSuccess();
}

std::string MemorystoreServer::url(const std::string& target) const {
  return "https://127.0.0.1:" + std::to_string(port_) + target;
}

PollingPolicy OperationSetup::fast_polling() {
  PollingPolicy p;
  p.min_delay = Millis(50);
  p.initial_delay = Millis(100);
  p.multiplier = 2;
  p.max_delay = Millis(400);
  p.jitter = Jitter::kEqual;
  p.total_deadline = Millis(10000);
  return p;
}

std::size_t OperationRun::count(transfer::OperationEvent::Kind kind) const {
  std::size_t n = 0;
  for (const SeenEvent& e : events) n += e.kind == kind ? 1 : 0;
  return n;
}

std::string OperationRun::summary() const {
  std::ostringstream s;
  s << "outcome=" << transfer::to_string(result.outcome)
    << " phase=" << transfer::to_string(result.phase) << " polls=" << result.polls << " message='"
    << message << "' request: outcome=" << to_string(result.request.outcome)
    << " status=" << result.request.status << " attempts=" << result.request.attempts
    << " error=" << https::to_string(result.request.error) << " error.status=" << error_status
    << " error.message='" << error_message << "' elapsed_ms=" << elapsed.count()
    << (hit_wall_limit ? " HIT-WALL-LIMIT" : "") << " events:";
  for (const SeenEvent& e : events) {
    using Kind = transfer::OperationEvent::Kind;
    switch (e.kind) {
      case Kind::kOperation:
        s << " [operation " << e.name << (e.done ? " done" : "") << "]";
        break;
      case Kind::kPoll:
        s << " [poll " << e.poll << "]";
        break;
      case Kind::kPolled:
        s << " [polled " << e.poll << (e.done ? " done" : "") << "]";
        break;
      case Kind::kWait:
        s << " [wait " << e.wait.count() << " ms]";
        break;
      case Kind::kDone:
        s << " [done]";
        break;
    }
  }
  s << " client events:";
  for (const integration::Event& e : client_events) {
    switch (e.kind) {
      case https::ClientEvent::Kind::kResponse:
        s << " [response " << e.status << "]";
        break;
      case https::ClientEvent::Kind::kError:
        s << " [error " << e.message << "]";
        break;
      case https::ClientEvent::Kind::kWait:
        s << " [wait " << e.wait.count() << "]";
        break;
      default:
        break;
    }
  }
  return s.str();
}

namespace {

struct RunContext {
  OperationRun* run;
  const OperationSetup* setup;
};

void on_operation_event(void* context, const transfer::OperationEvent& e) {
  auto* c = static_cast<RunContext*>(context);
  c->run->events.push_back(SeenEvent{e.kind, e.at, e.poll, std::string(e.name), std::string(e.verb),
                                     std::string(e.status_detail), e.done, e.wait});
}

void on_client_event(void* context, const https::ClientEvent& e) {
  auto* c = static_cast<RunContext*>(context);
  integration::Event copy;
  copy.kind = e.kind;
  copy.at = e.at;
  copy.attempt = e.attempt;
  copy.status = e.status;
  copy.failure = e.failure;
  copy.message = e.message != nullptr ? e.message : "";
  copy.wait = e.wait;
  copy.wait_reason = e.wait_reason;
  copy.outcome = e.outcome;
  c->run->client_events.push_back(copy);
}

bool keep_response(void* context, std::uint64_t, https::ConstBytes data) {
  auto* c = static_cast<RunContext*>(context);
  c->run->response.append(reinterpret_cast<const char*>(data.data), data.size);
  return true;
}

std::size_t authorization(void* context, bool refresh, https::MutableBytes out) {
  auto* t = static_cast<TokenSource*>(context);
  ++t->asked;
  if (refresh) ++t->refreshes;
  const std::string value = "Bearer " + (t->refreshes > 0 ? t->refreshed : t->first);
  if (value.size() <= out.size) std::memcpy(out.data, value.data(), value.size());
  return value.size();
}

}  // namespace

OperationRun run_operation(const OperationSetup& setup) {
  OperationRun run;
  transfer::OperationSpec spec;
  if (https::parse_url(setup.url, &spec.mutation.head.url) != https::Status::kOk) {
    ADD_FAILURE() << "bad URL " << setup.url;
    return run;
  }
  const https::Header headers[] = {{"Content-Type", "application/json"}};
  spec.mutation.head.method = setup.method;
  spec.mutation.head.user_agent = "stepback-memorystore-test";
  spec.mutation.head.headers = headers;
  spec.mutation.head.header_count = setup.body.empty() ? 0 : 1;
  const https::ConstBytes body{reinterpret_cast<const std::uint8_t*>(setup.body.data()),
                               setup.body.size()};
  spec.mutation.body = https::BodySource::of(&body);
  spec.mutation.idempotency = setup.idempotency;

  std::vector<std::uint8_t> request(4096), head(8192), io(16384), error_body(2048), answer(16384);
  Xoshiro128 random(42);
  const RetryContext context{setup.policy, random, nullptr};
  RunContext events{&run, &setup};
  testing::LoopbackConnector connector(setup.tls);
  transfer::OperationOptions options;
  options.client.timeouts = setup.timeouts;
  options.client.buffers = https::ClientBuffers{{request.data(), request.size()},
                                                {head.data(), head.size()},
                                                {io.data(), io.size()},
                                                {error_body.data(), error_body.size()}};
  options.client.events = https::EventSink{&on_client_event, &events};
  options.client.wall_now = &platform::wall_now;
  if (setup.tokens != nullptr)
    options.client.credentials = https::Credentials{&authorization, setup.tokens};
  options.operation_buffer = https::MutableBytes{answer.data(), answer.size()};
  options.response = https::ResponseSink{&keep_response, nullptr, &events};
  options.polling = setup.polling;
  options.events = transfer::OperationEventSink{&on_operation_event, &events};
  transfer::Operation op(connector.get(), context, options);
  const https::Status started = op.start(spec);
  if (started != https::Status::kOk) {
    ADD_FAILURE() << "Operation::start: " << https::to_string(started);
    return run;
  }

  const Millis begin = platform::monotonic_now();
  const Millis wall_limit = begin + Millis(integration::kRunWallLimitMs);
  https::ClientNext next = op.step(begin);
  while (next.kind != https::ClientNext::Kind::kDone) {
    const Millis now = platform::monotonic_now();
    if (now >= wall_limit) {
      op.cancel();
      run.hit_wall_limit = true;
      break;
    }
    https::poll_wait(next, now, wall_limit - now);
    next = op.step(platform::monotonic_now());
  }
  run.elapsed = platform::monotonic_now() - begin;
  const transfer::OperationResult& r = op.result();
  run.result = r;
  run.message = r.message != nullptr ? r.message : "";
  run.error_message = std::string(r.error.message);
  run.error_status = std::string(r.error.status);
  run.error_details = std::string(r.error.details);
  run.code_name = r.error.code_name != nullptr ? r.error.code_name : "";
  run.name = std::string(op.name());
  run.connections = op.client().connections();
  run.resumed = op.client().resumed();
  return run;
}

}  // namespace stepback::memorystore
