// TLS 1.3 early data (0-RTT) against nginx (early_data_nginx.conf.in), whose access log says
// per request whether it came in early data. Each request gets its own Client over one
// TcpTlsConnector, so each opens a new connection that offers the session the last one saved.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "integration_support.hpp"
#include "stepback/core/random.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/support/loopback_connector.hpp"

namespace stepback::integration {
namespace {

using https::EarlyData;
using Idempotency = https::RequestSpec::Idempotency;

// The round trip the tests' requests wait before reading the server's first flight.
constexpr int kRoundTripMs = 200;
// How many resumed requests a test makes at most until nginx logs one as early.
constexpr int kTries = 6;

// nginx with early data on or off, on a port that stays the same across restart().
class EarlyNginx {
 public:
  ::testing::AssertionResult start(bool early) {
    if (port_ == 0) port_ = free_port();
    std::string conf = read_file(std::string(source_dir()) + "/early_data_nginx.conf.in");
    if (conf.empty()) return ::testing::AssertionFailure() << "early_data_nginx.conf.in is missing";
    const std::pair<std::string, std::string> vars[] = {{"@DIR@", dir_.path()},
                                                        {"@PORT@", std::to_string(port_)},
                                                        {"@CERT@", pki()->server_cert},
                                                        {"@KEY@", pki()->server_key},
                                                        {"@EARLY@", early ? "on" : "off"}};
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
    if (wait_for([this] { return port_accepts(port_) || !process_.running(); }, kStartTimeoutMs) &&
        process_.running()) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "nginx did not start: " << read_file(dir_.file("output.txt"))
           << read_file(dir_.file("error.log"));
  }
  // Stops nginx and starts it again on the same port: its ticket keys are new.
  ::testing::AssertionResult restart(bool early) {
    process_.stop();
    return start(early);
  }
  std::string url(const std::string& target) const {
    return "https://127.0.0.1:" + std::to_string(port_) + target;
  }
  std::string log_text() const { return read_file(dir_.file("access.log")); }
  // The access log's lines, once it holds `count` of them (nginx logs after answering).
  std::vector<std::string> log_lines(std::size_t count) const {
    std::vector<std::string> lines;
    wait_for(
        [&] {
          lines.clear();
          const std::string text = read_file(dir_.file("access.log"));
          for (std::size_t from = 0, nl; (nl = text.find('\n', from)) != std::string::npos;
               from = nl + 1) {
            lines.push_back(text.substr(from, nl - from));
          }
          return lines.size() >= count;
        },
        3000);
    return lines;
  }

 private:
  TempDir dir_;
  Process process_;
  std::uint16_t port_ = 0;
};

struct Response {
  std::uint16_t status = 0;
  EarlyData early = EarlyData::kNone;
};

struct Exchanged {
  https::ClientResult result;
  std::string body;
  std::uint32_t connections = 0;
  bool resumed = false;
  std::vector<Response> responses;  // One per response, in order.
  std::string errors;               // The kError events' messages.
};

bool keep_body(void* context, std::uint64_t, https::ConstBytes data) {
  static_cast<Exchanged*>(context)->body.append(reinterpret_cast<const char*>(data.data),
                                                data.size);
  return true;
}

bool restart_body(void* context) {
  static_cast<Exchanged*>(context)->body.clear();
  return true;
}

void record(void* context, const https::ClientEvent& e) {
  auto* run = static_cast<Exchanged*>(context);
  if (e.kind == https::ClientEvent::Kind::kResponse)
    run->responses.push_back({e.status, e.early_data});
  if (e.kind == https::ClientEvent::Kind::kError) {
    run->errors += std::string(to_string(e.failure)) + ": " + e.message + "; ";
  }
}

// One request on a new Client over `connector` (a new connection), stepped to its end.
Exchanged request(https::Connector& connector, const std::string& url_text,
                  const std::string& method, Idempotency idempotency = Idempotency::kByMethod,
                  bool pause = true) {
  Exchanged run;
  https::Url url;
  if (https::parse_url(url_text, &url) != https::Status::kOk) {
    ADD_FAILURE() << "bad URL " << url_text;
    return run;
  }
  https::RequestSpec spec;
  spec.head.method = method;
  spec.head.url = url;
  spec.head.user_agent = "stepback-integration";
  spec.idempotency = idempotency;
  std::vector<std::uint8_t> head(4096), response_head(8192), io(16384), error_body(1024);
  https::ClientOptions options;
  options.timeouts = test_timeouts();
  options.buffers = https::ClientBuffers{{head.data(), head.size()},
                                         {response_head.data(), response_head.size()},
                                         {io.data(), io.size()},
                                         {error_body.data(), error_body.size()}};
  options.body = https::ResponseSink{&keep_body, &restart_body, &run};
  options.events = https::EventSink{&record, &run};
  options.wall_now = &platform::wall_now;
  const Policy policy = test_policy();
  Xoshiro128 random(42);
  const RetryContext context{policy, random, nullptr};
  https::Client client(connector, context, options);
  if (client.start(spec) != https::Status::kOk) {
    ADD_FAILURE() << "Client::start failed";
    return run;
  }
  const Millis limit = platform::monotonic_now() + Millis(kRunWallLimitMs);
  bool held = false;
  for (https::ClientNext next = client.step(platform::monotonic_now());
       next.kind != https::ClientNext::Kind::kDone; next = client.step(platform::monotonic_now())) {
    const Millis now = platform::monotonic_now();
    if (now >= limit) {
      client.cancel();
      ADD_FAILURE() << "the request did not end in time";
      break;
    }
    // The first wait to read is the handshake's, with the first flight (and any early data)
    // out. Loopback answers at once: the client's Finished would reach nginx before it reads
    // the early data, and nginx, which calls a request early only while the handshake is
    // unfinished, would log it as not early. A pause here is a network's round trip.
    if (pause && !held && next.kind == https::ClientNext::Kind::kWaitIo &&
        next.interest == https::IoInterest::kRead) {
      held = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(kRoundTripMs));
    }
    https::poll_wait(next, now, limit - now);
  }
  run.result = client.result();
  run.connections = client.connections();
  run.resumed = client.resumed();
  return run;
}

std::string summary(const Exchanged& run) {
  std::string s = "outcome=" + std::string(to_string(run.result.outcome)) +
                  " attempts=" + std::to_string(run.result.attempts) +
                  " status=" + std::to_string(run.result.status) +
                  " connections=" + std::to_string(run.connections) +
                  " resumed=" + std::to_string(run.resumed) + " responses:";
  for (const Response& r : run.responses) {
    s += " " + std::to_string(r.status) + "/early=" + std::to_string(static_cast<int>(r.early));
  }
  return s + " errors: " + run.errors;
}

class EarlyDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(nginx_path(), "nginx");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    tls_ = make_tls(pki()->ca, https::TlsVersion::kTls13, https::TlsVersion::kTls13);
    ASSERT_NE(tls_, nullptr);
    connector_.emplace(tls_.get());
  }

  https::Connector& connector() { return connector_->get(); }

  // A first GET: a full handshake, nothing early; the session (and its ticket) is saved.
  void first_get() {
    const Exchanged run = request(connector(), server_.url("/hello"), "GET");
    ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << summary(run);
    ASSERT_FALSE(run.resumed);
    ASSERT_EQ(run.responses.size(), 1U);
    EXPECT_EQ(run.responses[0].early, EarlyData::kNone);
  }

  EarlyNginx server_;
  std::unique_ptr<https::TlsClientConfig> tls_;
  std::optional<testing::LoopbackConnector> connector_;
};

// (a) The second GET, on a new connection that resumes, rides early and the server acts on it.
TEST_F(EarlyDataTest, GetOnAResumedSessionRidesEarly) {
  ASSERT_TRUE(server_.start(true));
  first_get();
  // nginx calls a request early only if it acts on it before the handshake ends, which the
  // client's Finished may still beat now and then: a few tries, each accepted early.
  std::size_t requests = 1;
  bool logged_early = false;
  for (int i = 0; i < kTries && !logged_early; ++i) {
    const Exchanged run = request(connector(), server_.url("/hello"), "GET");
    ++requests;
    EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << summary(run);
    EXPECT_EQ(run.result.attempts, 1U);
    EXPECT_EQ(run.body, "hello\n");
    EXPECT_TRUE(run.resumed);
    ASSERT_EQ(run.responses.size(), 1U) << summary(run);
    EXPECT_EQ(run.responses[0].early, EarlyData::kAccepted);
    const std::vector<std::string> log = server_.log_lines(requests);
    ASSERT_EQ(log.size(), requests) << server_.log_text();  // Each request once.
    EXPECT_EQ(log[0], "GET /hello early=- reused=. status=200");
    logged_early = log.back() == "GET /hello early=1 reused=r status=200";
  }
  EXPECT_TRUE(logged_early) << server_.log_text();
}

// (b) A POST not declared idempotent never rides early, even on a resumed session; one
// declared idempotent (without a body) does.
TEST_F(EarlyDataTest, OnlyRequestsThatMayBeReplayedRideEarly) {
  ASSERT_TRUE(server_.start(true));
  first_get();
  const Exchanged post = request(connector(), server_.url("/post"), "POST");
  EXPECT_EQ(post.result.outcome, Outcome::kSuccess) << summary(post);
  EXPECT_EQ(post.body, "posted\n");
  EXPECT_TRUE(post.resumed);
  ASSERT_EQ(post.responses.size(), 1U) << summary(post);
  EXPECT_EQ(post.responses[0].early, EarlyData::kNone);
  std::vector<std::string> log = server_.log_lines(2);
  ASSERT_EQ(log.size(), 2U);
  EXPECT_EQ(log[1], "POST /post early=- reused=r status=200");
  std::size_t requests = 2;
  bool logged_early = false;
  for (int i = 0; i < kTries && !logged_early; ++i) {
    const Exchanged declared =
        request(connector(), server_.url("/post"), "POST", Idempotency::kYes);
    ++requests;
    EXPECT_EQ(declared.result.outcome, Outcome::kSuccess) << summary(declared);
    ASSERT_EQ(declared.responses.size(), 1U) << summary(declared);
    EXPECT_EQ(declared.responses[0].early, EarlyData::kAccepted);
    log = server_.log_lines(requests);
    ASSERT_EQ(log.size(), requests) << server_.log_text();
    logged_early = log.back() == "POST /post early=1 reused=r status=200";
  }
  EXPECT_TRUE(logged_early) << server_.log_text();
}

// (c) A server that takes no early data: the GET is sent after the handshake, in one attempt.
// Restarted with new ticket keys, it refuses the session and the early data with it; started
// with early data off, its tickets allow none, so none is sent.
TEST_F(EarlyDataTest, WithoutTheServersConsentTheRequestGoesAfterTheHandshake) {
  ASSERT_TRUE(server_.start(true));
  first_get();
  ASSERT_TRUE(server_.restart(false));
  const Exchanged rejected = request(connector(), server_.url("/hello"), "GET");
  EXPECT_EQ(rejected.result.outcome, Outcome::kSuccess) << summary(rejected);
  EXPECT_EQ(rejected.result.attempts, 1U);
  EXPECT_EQ(rejected.connections, 1U);
  EXPECT_EQ(rejected.body, "hello\n");
  ASSERT_EQ(rejected.responses.size(), 1U) << summary(rejected);
  EXPECT_EQ(rejected.responses[0].early, EarlyData::kRejected);
  // The ticket this server gave allows no early data.
  const Exchanged none = request(connector(), server_.url("/hello"), "GET");
  EXPECT_EQ(none.result.outcome, Outcome::kSuccess) << summary(none);
  EXPECT_TRUE(none.resumed);
  ASSERT_EQ(none.responses.size(), 1U) << summary(none);
  EXPECT_EQ(none.responses[0].early, EarlyData::kNone);
  const std::vector<std::string> log = server_.log_lines(3);
  ASSERT_EQ(log.size(), 3U);
  EXPECT_EQ(log[1], "GET /hello early=- reused=. status=200");
  EXPECT_EQ(log[2], "GET /hello early=- reused=r status=200");
}

// (d) A 425 Too Early to a request that rode early: it goes again after the handshake, on the
// same connection, and that is no retry.
TEST_F(EarlyDataTest, TooEarlySendsTheRequestAgainAfterTheHandshake) {
  ASSERT_TRUE(server_.start(true));
  first_get();
  // As above, nginx sees the request as early only when it acts before the handshake ends.
  Exchanged run;
  std::size_t requests = 1;
  for (int i = 0; i < kTries && run.responses.size() != 2; ++i) {
    run = request(connector(), server_.url("/too-early"), "GET");
    requests += run.responses.size();
  }
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << summary(run);
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_EQ(run.result.status, 200);
  EXPECT_EQ(run.body, "late\n");
  EXPECT_EQ(run.connections, 1U);
  ASSERT_EQ(run.responses.size(), 2U) << summary(run) << server_.log_text();
  EXPECT_EQ(run.responses[0].status, 425);
  EXPECT_EQ(run.responses[0].early, EarlyData::kAccepted);
  EXPECT_EQ(run.responses[1].status, 200);
  EXPECT_EQ(run.responses[1].early, EarlyData::kNone);
  const std::vector<std::string> log = server_.log_lines(requests);
  ASSERT_EQ(log.size(), requests) << server_.log_text();
  EXPECT_EQ(log[requests - 2], "GET /too-early early=1 reused=r status=425");
  EXPECT_EQ(log[requests - 1], "GET /too-early early=- reused=r status=200");
}

// (e) Early data turned off in the TLS configuration: nothing rides early.
TEST_F(EarlyDataTest, TurnedOffNothingRidesEarly) {
  ASSERT_TRUE(server_.start(true));
  tls_->set_early_data(false);
  first_get();
  const Exchanged run = request(connector(), server_.url("/hello"), "GET");
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << summary(run);
  EXPECT_TRUE(run.resumed);
  ASSERT_EQ(run.responses.size(), 1U) << summary(run);
  EXPECT_EQ(run.responses[0].early, EarlyData::kNone);
  const std::vector<std::string> log = server_.log_lines(2);
  ASSERT_EQ(log.size(), 2U);
  EXPECT_EQ(log[1], "GET /hello early=- reused=r status=200");
}

// A server that answers the early request and closes at once (keepalive_timeout 0) can reset the
// connection before the client's handshake ends, after it acted on the request. The request
// must then not go again unseen (the connector used to redo such a handshake in full inside
// the same attempt, a request nginx logged twice for one attempt): the attempt fails and counts,
// and nginx never logs more requests than the client made attempts. Without the loopback pause
// the reset comes in the handshake now and then; several connectors give it several chances.
TEST_F(EarlyDataTest, ARequestThatWentEarlyIsNeverSentAgainUnseen) {
  ASSERT_TRUE(server_.start(true));
  std::uint32_t attempts = 0;
  for (int i = 0; i < 12; ++i) {
    testing::LoopbackConnector fresh(tls_.get());
    for (int k = 0; k < 2; ++k) {  // A full handshake, then a resumed one that may go early.
      const Exchanged run = request(fresh.get(), server_.url("/close"), "GET",
                                    Idempotency::kByMethod, /*pause=*/false);
      EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << summary(run);
      attempts += run.result.attempts;
      EXPECT_LE(server_.log_lines(attempts).size(), attempts) << server_.log_text();
    }
  }
}

}  // namespace
}  // namespace stepback::integration
