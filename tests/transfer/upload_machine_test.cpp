// The Upload's transitions against scripted connections: each test scripts what every
// exchange's connection receives (the scripted answers say "Connection: close", so each
// exchange has its own connection; KeptConnectionsCarryTheWholeSession checks reuse) and checks the
// requests sent, the waits, what was committed and sent, and the outcome, on a fake clock.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stepback/transfer/upload.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/string_sink.hpp"

namespace stepback::transfer {
namespace {

using https::Status;
using testing::ScriptedConnector;
using testing::ScriptedTransport;
using testing::StringSink;

constexpr std::uint64_t kChunk = kChunkGranularity;
constexpr char kMetadata[] = R"({"name":"o","size":"1"})";

std::uint8_t pattern_byte(std::uint64_t i) {
  return static_cast<std::uint8_t>((i * 7 + i / 251) & 0xFF);
}

std::string pattern(std::uint64_t from, std::uint64_t to) {
  std::string s;
  for (std::uint64_t i = from; i < to; ++i) s.push_back(static_cast<char>(pattern_byte(i)));
  return s;
}

std::size_t read_pattern(void*, std::uint64_t offset, https::MutableBytes out) {
  for (std::size_t i = 0; i < out.size; ++i) out.data[i] = pattern_byte(offset + i);
  return out.size;
}

std::string session_created(const std::string& location = "https://upload.test/s?upload_id=u1") {
  return "HTTP/1.1 200 OK\r\nLocation: " + location +
         "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
}
std::string resume_incomplete(std::uint64_t held) {
  if (held == 0) {
    return "HTTP/1.1 308 Resume Incomplete\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  }
  return "HTTP/1.1 308 Resume Incomplete\r\nRange: bytes=0-" + std::to_string(held - 1) +
         "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
}
std::string finished(int status = 200) {
  return "HTTP/1.1 " + std::to_string(status) +
         " OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(sizeof kMetadata - 1) + "\r\n\r\n" + kMetadata;
}
std::string status_only(int status, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " Status\r\n" + extra +
         "Connection: close\r\nContent-Length: 0\r\n\r\n";
}

// One request as the server would read it.
struct Sent {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // Names as sent.
  std::string body;
};

Sent parse(const std::string& sent) {
  Sent r;
  const std::size_t end = sent.find("\r\n\r\n");
  if (end == std::string::npos) {
    r.body = sent;
    return r;
  }
  const std::string head = sent.substr(0, end);
  r.body = sent.substr(end + 4);
  std::size_t line_end = head.find("\r\n");
  const std::string first = head.substr(0, line_end);
  r.method = first.substr(0, first.find(' '));
  r.target = first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
  while (line_end != std::string::npos) {
    const std::size_t next = head.find("\r\n", line_end + 2);
    const std::string line = head.substr(
        line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
    const std::size_t colon = line.find(':');
    r.headers[line.substr(0, colon)] = line.substr(colon + 2);
    line_end = next;
  }
  return r;
}

// One event, copied out of the callback.
struct Seen {
  UploadEvent::Kind kind = UploadEvent::Kind::kSession;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint16_t status = 0;
  std::uint32_t retry = 0;
  std::uint64_t wait = 0;
  std::uint64_t rate = 0;
  Millis at{};
  std::string message;
};

void record(void* context, const UploadEvent& e) {
  Seen s;
  s.kind = e.kind;
  s.offset = e.offset;
  s.size = e.size;
  s.status = e.status;
  s.retry = e.retry;
  s.wait = e.wait.count();
  s.rate = e.rate;
  s.at = e.at;
  s.message = e.message;
  static_cast<std::vector<Seen>*>(context)->push_back(s);
}

// One upload with its buffers, a short policy without jitter (exact waits), a fake clock
// and a body of `size` pattern bytes.
struct Harness {
  explicit Harness(std::uint64_t size = kChunk + 1000) {
    policy.jitter = Jitter::kNone;
    policy.initial_delay = Millis(100);
    policy.max_backoff = Millis(400);
    policy.max_retries = 3;
    policy.max_server_delay = Millis::seconds(60);
    timeouts.read = Millis(5000);
    EXPECT_EQ(
        https::parse_url("https://upload.test/upload/o?uploadType=resumable&name=o", &spec.url),
        Status::kOk);
    spec.body = https::BodySource{read_pattern, nullptr, size};
    spec.chunk_size = kChunk;
    spec.content_type = "application/octet-stream";
  }
  UploadNext start() {
    UploadOptions options;
    options.timeouts = timeouts;
    options.buffers = https::ClientBuffers{{request, sizeof request},
                                           {head, sizeof head},
                                           {io, sizeof io},
                                           {error_body, sizeof error_body}};
    options.session_uri = https::MutableBytes{session, sizeof session};
    options.metadata = metadata.sink();
    options.events = UploadEventSink{record, &events};
    options.wall_now = [] { return Millis(1'700'000'000'000); };
    options.max_rate = max_rate;
    options.progress = progress;
    options.defer = defer;
    upload = std::make_unique<Upload>(connector, context, options);
    started = upload->start(spec);
    if (expect_started) {
      EXPECT_EQ(started, Status::kOk);
    }
    if (network_info) upload->network_changed(now, *network_info);
    return upload->step(now);
  }
  // Steps until done, jumping the clock to each wait's end; at most `limit` steps.
  UploadNext run(UploadNext next, int limit = 100000) {
    for (int i = 0; i < limit && next.kind != UploadNext::Kind::kDone; ++i) {
      if (next.kind == UploadNext::Kind::kWaitIo) {
        EXPECT_GE(next.fd, 0);
        // A silent scripted peer: the only way on is its deadline.
        if (connector_silent_) now = next.at;
      } else if (next.at > now) {
        waits.push_back((next.at - now).count());
        now = next.at;
      }
      next = upload->step(now);
      ++steps;
    }
    return next;
  }
  UploadNext run() { return run(start()); }
  // Steps at the same instant until `done` says so (at most `limit` steps).
  template <typename Done>
  UploadNext step_until(UploadNext next, Done done, int limit = 1000) {
    for (int i = 0; i < limit && !done(next) && next.kind != UploadNext::Kind::kDone; ++i) {
      next = upload->step(now);
    }
    return next;
  }
  // The request sent on connection `i`.
  Sent sent(std::size_t i) { return parse(connector.connection(i).sent()); }
  std::vector<Seen> of(UploadEvent::Kind kind) const {
    std::vector<Seen> out;
    for (const Seen& s : events) {
      if (s.kind == kind) out.push_back(s);
    }
    return out;
  }

  Policy policy;
  Xoshiro128 random{7};
  RetryContext context{policy, random, nullptr};
  Timeouts timeouts;
  ScriptedConnector connector;
  UploadSpec spec;
  std::uint8_t request[2048];
  std::uint8_t head[2048];
  std::uint8_t io[16384];
  std::uint8_t error_body[512];
  std::uint8_t session[256];
  StringSink metadata;
  std::vector<Seen> events;
  std::vector<std::uint64_t> waits;
  Millis now{1000};
  bool connector_silent_ = true;
  std::uint64_t max_rate = 0;
  ProgressPolicy progress;
  DeferPolicy defer;
  bool expect_started = true;
  std::optional<https::NetworkInfo> network_info;  // Told to the upload before its first step.
  Status started = Status::kOk;
  int steps = 0;
  std::unique_ptr<Upload> upload;
};

TEST(Upload, OpensASessionAndSendsTheBodyInChunks) {
  Harness h(2 * kChunk + 1000);
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(resume_incomplete(2 * kChunk));
  h.connector.add(600 * 1024).recv_data(finished(201));
  ASSERT_EQ(h.run().kind, UploadNext::Kind::kDone);
  const UploadResult& r = h.upload->result();
  EXPECT_EQ(r.outcome, Outcome::kSuccess) << r.message;
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.exchanges, 4U);
  EXPECT_EQ(h.metadata.bytes, kMetadata);
  EXPECT_EQ(h.upload->committed(), 2 * kChunk + 1000);
  EXPECT_EQ(h.upload->bytes_sent(), 2 * kChunk + 1000);
  EXPECT_EQ(h.upload->sessions(), 1U);
  EXPECT_EQ(h.upload->session_uri(), "https://upload.test/s?upload_id=u1");
  EXPECT_TRUE(h.waits.empty());

  Sent post = h.sent(0);
  EXPECT_EQ(post.method, "POST");
  EXPECT_EQ(post.target, "/upload/o?uploadType=resumable&name=o");
  EXPECT_EQ(post.headers["X-Upload-Content-Length"], std::to_string(2 * kChunk + 1000));
  EXPECT_EQ(post.headers["X-Upload-Content-Type"], "application/octet-stream");
  EXPECT_EQ(post.headers["Content-Length"], "0");
  EXPECT_EQ(post.headers.count("Content-Range"), 0U);

  const std::uint64_t bounds[][2] = {
      {0, kChunk}, {kChunk, 2 * kChunk}, {2 * kChunk, 2 * kChunk + 1000}};
  for (std::size_t i = 0; i < 3; ++i) {
    Sent put = h.sent(i + 1);
    EXPECT_EQ(put.method, "PUT");
    EXPECT_EQ(put.target, "/s?upload_id=u1");
    EXPECT_EQ(put.headers["Content-Range"], "bytes " + std::to_string(bounds[i][0]) + "-" +
                                                std::to_string(bounds[i][1] - 1) + "/" +
                                                std::to_string(2 * kChunk + 1000));
    EXPECT_TRUE(put.body == pattern(bounds[i][0], bounds[i][1])) << i;
  }
  const auto committed = h.of(UploadEvent::Kind::kCommitted);
  ASSERT_EQ(committed.size(), 3U);
  EXPECT_EQ(committed[2].offset, 2 * kChunk + 1000);
  EXPECT_EQ(h.of(UploadEvent::Kind::kChunk).size(), 3U);
  EXPECT_EQ(h.of(UploadEvent::Kind::kDone).size(), 1U);
}

TEST(Upload, ARelativeLocationIsOnTheInitiationOrigin) {
  Harness h(100);
  ASSERT_EQ(https::parse_url("http://127.0.0.1:8080/upload?uploadType=resumable", &h.spec.url),
            Status::kOk);
  h.connector.add().recv_data(session_created("/session/7"));
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.upload->session_uri(), "http://127.0.0.1:8080/session/7");
  EXPECT_EQ(h.sent(1).target, "/session/7");
}

TEST(Upload, AResetMidChunkAsksWhatTheServerHoldsAndSendsOnlyTheRest) {
  const std::uint64_t size = 2 * kChunk + 1000;
  const std::string total = "/" + std::to_string(size);
  Harness h(size);
  h.connector.add().recv_data(session_created());
  ScriptedTransport& cut = h.connector.add(600 * 1024);
  // The head, two io buffers of body, then a reset while sending the third.
  cut.send_accept(100000).send_accept(16384).send_accept(16384).send_fail(Status::kReset);
  h.connector.add().recv_data(resume_incomplete(20000));  // The query.
  h.connector.add(600 * 1024).recv_data(resume_incomplete(20000 + kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  h.run();
  const UploadResult& r = h.upload->result();
  EXPECT_EQ(r.outcome, Outcome::kSuccess) << r.message;
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100}));
  Sent query = h.sent(2);
  EXPECT_EQ(query.method, "PUT");
  EXPECT_EQ(query.headers["Content-Range"], "bytes *" + total);
  EXPECT_EQ(query.headers["Content-Length"], "0");
  EXPECT_TRUE(query.body.empty());
  // From the committed offset, a whole chunk (the protocol's size), then the rest.
  Sent again = h.sent(3);
  EXPECT_EQ(again.headers["Content-Range"],
            "bytes 20000-" + std::to_string(20000 + kChunk - 1) + total);
  EXPECT_TRUE(again.body == pattern(20000, 20000 + kChunk));
  Sent last = h.sent(4);
  EXPECT_EQ(last.headers["Content-Range"],
            "bytes " + std::to_string(20000 + kChunk) + "-" + std::to_string(size - 1) + total);
  EXPECT_TRUE(last.body == pattern(20000 + kChunk, size));
  // Read for sending: the cut chunk's three io buffers, then everything from 20000 once.
  EXPECT_EQ(h.upload->bytes_sent(), 3 * 16384 + (size - 20000));
  EXPECT_EQ(h.of(UploadEvent::Kind::kQuery).size(), 1U);
  EXPECT_EQ(h.of(UploadEvent::Kind::kWait).size(), 1U);
}

// network_changed(): a chunk under way on the old network is abandoned, and the upload asks
// what the server holds over the new one at once: no wait, no retry, only the rest sent.
TEST(Upload, ANetworkSwitchMidChunkQueriesAtOnceWithoutARetry) {
  const std::uint64_t size = 2 * kChunk + 1000;
  const std::string total = "/" + std::to_string(size);
  Harness h(size);
  h.connector.add().recv_data(session_created());
  // The chunk's head and two io buffers of body leave, then the old network goes quiet.
  ScriptedTransport& old_path = h.connector.add(600 * 1024);
  old_path.send_accept(100000).send_accept(16384).send_accept(16384).send_would_block();
  h.connector.add().recv_data(resume_incomplete(20000));  // The query, on the new network.
  h.connector.add(600 * 1024).recv_data(resume_incomplete(20000 + kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  UploadNext next = h.start();
  next = h.step_until(next, [&](const UploadNext&) {
    return h.connector.opened() == 2 && old_path.sent().size() > 2 * 16384;
  });
  ASSERT_NE(next.kind, UploadNext::Kind::kDone);
  h.upload->network_changed(h.now, https::NetworkInfo{});
  h.run(h.upload->step(h.now));
  const UploadResult& r = h.upload->result();
  EXPECT_EQ(r.outcome, Outcome::kSuccess) << r.message;
  EXPECT_TRUE(old_path.closed());
  EXPECT_TRUE(h.waits.empty()) << "a network switch is no backoff";
  EXPECT_EQ(h.of(UploadEvent::Kind::kWait).size(), 0U);
  Sent query = h.sent(2);
  EXPECT_EQ(query.headers["Content-Range"], "bytes *" + total);
  EXPECT_EQ(h.sent(3).headers["Content-Range"],
            "bytes 20000-" + std::to_string(20000 + kChunk - 1) + total);
  EXPECT_EQ(h.of(UploadEvent::Kind::kQuery).size(), 1U);
}

// Without a network, and its server out of reach, the upload waits for one, then goes on;
// the wait is no retry.
TEST(Upload, WithoutANetworkItWaitsAndGoesOnWhenOneComes) {
  Harness h(1000);
  h.connector.open_failures = {https::Status::kConnectFailed};
  h.connector.unreachable_failures = true;
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(finished());
  h.network_info = https::NetworkInfo{};
  h.network_info->connected = false;
  UploadNext next = h.step_until(h.start(), [&](const UploadNext& n) {
    return n.kind == UploadNext::Kind::kWaitUntil && n.at > h.now;
  });
  ASSERT_EQ(next.kind, UploadNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, h.now + h.timeouts.offline);
  h.now = h.now + Millis(60000);
  h.upload->network_changed(h.now, https::NetworkInfo{});
  h.run(h.upload->step(h.now));
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.connector.opened(), 2U) << "the refused open, then the session and the body";
}

// Without a network, a server the upload can reach (loopback, the LAN) is used at
// once; before, the upload waited for a network it did not need.
TEST(Upload, WithoutANetworkAReachableServerIsUsedAtOnce) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(finished());
  h.start();
  https::NetworkInfo none;
  none.connected = false;
  h.upload->network_changed(h.now, none);
  h.run(h.upload->step(h.now));
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_TRUE(h.waits.empty());
}

// RunHint: a backoff is a wait until its end, with the bytes the server does not hold yet.
TEST(Upload, TheRunHintGivesTheBackoffsEndAndTheBytesNotYetCommitted) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(503));
  h.connector.add().recv_data(resume_incomplete(0));
  h.connector.add().recv_data(finished());
  h.start();
  UploadNext next = h.step_until(h.upload->step(h.now), [&](const UploadNext& n) {
    return n.kind == UploadNext::Kind::kWaitUntil && n.at > h.now;
  });
  ASSERT_EQ(next.kind, UploadNext::Kind::kWaitUntil);
  const https::RunHint hint = h.upload->run_hint(next);
  EXPECT_EQ(hint.state, https::RunHint::State::kWaiting);
  EXPECT_EQ(hint.run_at, next.at);
  EXPECT_EQ(hint.bytes_left.value_or(0), 1000U);
  EXPECT_FALSE(hint.unmetered);
  h.run(h.upload->step(h.now));
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
}

TEST(Upload, RetryableStatusesOnAPutWaitThenQuery) {
  for (const int status : {503, 408, 429, 500}) {
    Harness h(1000);
    h.connector.add().recv_data(session_created());
    h.connector.add().recv_data(status_only(status));
    h.connector.add().recv_data(resume_incomplete(0));  // The query: nothing held.
    h.connector.add().recv_data(finished());
    h.run();
    EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << status;
    EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100})) << status;
    EXPECT_EQ(h.sent(2).headers["Content-Range"], "bytes */1000") << status;
    EXPECT_EQ(h.sent(3).headers["Content-Range"], "bytes 0-999/1000") << status;
    EXPECT_EQ(h.upload->bytes_sent(), 2000U) << status;
  }
}

// One connection carries the whole session when the server keeps it alive: no handshake
// per chunk.
TEST(Upload, KeptConnectionsCarryTheWholeSession) {
  Harness h(2 * kChunk + 1000);
  ScriptedTransport& c = h.connector.add(3 * 600 * 1024);
  const auto keep = [](std::string answer) {
    return answer.replace(answer.find("Connection: close\r\n"), 19, "");
  };
  // Each later answer follows the liveness check of the kept connection (would-block: alive).
  c.recv_data(keep(session_created())).recv_would_block(https::IoInterest::kRead);
  c.recv_data(keep(resume_incomplete(kChunk))).recv_would_block(https::IoInterest::kRead);
  c.recv_data(keep(resume_incomplete(2 * kChunk))).recv_would_block(https::IoInterest::kRead);
  c.recv_data(keep(finished()));
  ASSERT_EQ(h.run().kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.upload->result().exchanges, 4U);
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_EQ(h.upload->client().connections(), 1U);
  EXPECT_EQ(h.upload->bytes_sent(), 2 * kChunk + 1000);
  EXPECT_EQ(h.metadata.bytes, kMetadata);
}

// Regression: a chunk PUT answered 503 with a google.rpc.RetryInfo body waited the policy's
// backoff instead of the server's retryDelay (only Retry-After was read).
TEST(Upload, RetryInfoOnAChunkSetsTheWait) {
  Harness h(1000);
  const std::string body =
      R"({"error":{"code":503,"status":"UNAVAILABLE","details":[{"@type":)"
      R"("type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2.500s"}]}})";
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  h.connector.add().recv_data(resume_incomplete(0));
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  // retryDelay, then the policy's first backoff (100 ms, no jitter).
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{2500 + 100}));
}

TEST(Upload, RetryAfterLengthensTheWait) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(429, "Retry-After: 3\r\n"));
  h.connector.add().recv_data(resume_incomplete(0));
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{3000 + 100}));  // Retry-After, then backoff.
}

TEST(Upload, A308WithoutRangeMeansNothingIsHeldAndTheChunkGoesAgainAfterAWait) {
  Harness h(kChunk + 10);
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(0));  // Kept none of the chunk.
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100}));
  // No query: the 308 said what is held.
  EXPECT_EQ(h.sent(2).headers["Content-Range"],
            "bytes 0-" + std::to_string(kChunk - 1) + "/" + std::to_string(kChunk + 10));
  EXPECT_EQ(h.upload->bytes_sent(), 2 * kChunk + 10);
  EXPECT_EQ(h.of(UploadEvent::Kind::kQuery).size(), 0U);
}

TEST(Upload, APartlyKeptChunkGoesOnFromTheCommittedOffsetAtOnce) {
  Harness h(kChunk + 10);
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(5000));
  h.connector.add(600 * 1024).recv_data(finished());  // bytes 5000-(kChunk+9): the rest.
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_TRUE(h.waits.empty());
  EXPECT_EQ(h.sent(2).headers["Content-Range"],
            "bytes 5000-" + std::to_string(kChunk + 9) + "/" + std::to_string(kChunk + 10));
}

TEST(Upload, ProgressStartsTheBackoffOver) {
  // Every chunk fails once (503), then goes through: each failure waits the first backoff,
  // never a longer one, and the retry limit (1) is never reached.
  Harness h(3 * kChunk);
  h.policy.max_retries = 1;
  h.connector.add().recv_data(session_created());
  for (std::uint64_t i = 0; i < 3; ++i) {
    h.connector.add(600 * 1024).recv_data(status_only(503));
    h.connector.add().recv_data(resume_incomplete(i * kChunk));
    h.connector.add(600 * 1024)
        .recv_data(i == 2 ? finished() : resume_incomplete((i + 1) * kChunk));
  }
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100, 100, 100}));
}

TEST(Upload, WithoutProgressTheRetriesRunOut) {
  Harness h(1000);
  h.policy.max_retries = 2;
  h.connector.add().recv_data(session_created());
  for (int i = 0; i < 3; ++i) {
    h.connector.add().recv_data(status_only(503));
    if (i < 2) h.connector.add().recv_data(resume_incomplete(0));
  }
  h.run();
  const UploadResult& r = h.upload->result();
  EXPECT_EQ(r.outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100, 200}));
}

TEST(Upload, AnExpiredSessionEndsTheUploadClearly) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(404));
  h.run();
  const UploadResult& r = h.upload->result();
  EXPECT_EQ(r.outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(r.session_expired);
  EXPECT_NE(std::string(r.message).find("expired"), std::string::npos) << r.message;
  EXPECT_EQ(h.of(UploadEvent::Kind::kExpired).size(), 1U);
}

TEST(Upload, AnExpiredSessionIsReplacedWhenTheCallerAllows) {
  Harness h(kChunk + 1000);
  h.spec.session_restarts = 1;
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(status_only(410));
  h.connector.add().recv_data(session_created("https://upload.test/s?upload_id=u2"));
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.upload->sessions(), 2U);
  EXPECT_EQ(h.upload->session_uri(), "https://upload.test/s?upload_id=u2");
  EXPECT_EQ(h.sent(4).headers["Content-Range"],
            "bytes 0-" + std::to_string(kChunk - 1) + "/" + std::to_string(kChunk + 1000));
  EXPECT_EQ(h.upload->bytes_sent(), 2 * (kChunk + 1000));
}

TEST(Upload, AKnownSessionStartsWithAQuery) {
  Harness h(kChunk + 1000);
  h.spec.session = "https://upload.test/s?upload_id=old";
  h.connector.add().recv_data(resume_incomplete(kChunk));
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.upload->sessions(), 0U);
  EXPECT_EQ(h.sent(0).headers["Content-Range"], "bytes */" + std::to_string(kChunk + 1000));
  EXPECT_EQ(h.sent(1).headers["Content-Range"], "bytes " + std::to_string(kChunk) + "-" +
                                                    std::to_string(kChunk + 999) + "/" +
                                                    std::to_string(kChunk + 1000));
  EXPECT_EQ(h.upload->bytes_sent(), 1000U);
}

TEST(Upload, AQueryOfACompleteUploadEndsIt) {
  Harness h(1000);
  h.spec.session = "https://upload.test/s?upload_id=done";
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.metadata.bytes, kMetadata);
  EXPECT_EQ(h.upload->bytes_sent(), 0U);
}

TEST(Upload, AnEmptyBodyIsOneEmptyPut) {
  Harness h(0);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.sent(0).headers["X-Upload-Content-Length"], "0");
  EXPECT_EQ(h.sent(1).headers["Content-Range"], "bytes */0");
}

TEST(Upload, TheSessionPostFollowsItsIdempotencyRule) {
  Harness strict(1000);  // kByMethod: a POST that may have arrived is not sent again.
  strict.connector.add().recv_reset();
  strict.connector.add().recv_data(session_created());
  strict.run();
  EXPECT_EQ(strict.upload->result().outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(strict.upload->result().error, Status::kReset);
  EXPECT_EQ(strict.connector.opened(), 1U);

  Harness yes(1000);
  yes.spec.idempotency = https::RequestSpec::Idempotency::kYes;
  yes.connector.add().recv_reset();
  yes.connector.add().recv_data(session_created());
  yes.connector.add().recv_data(finished());
  yes.run();
  EXPECT_EQ(yes.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(yes.waits, (std::vector<std::uint64_t>{100}));
  EXPECT_EQ(yes.sent(1).method, "POST");  // Again, not a query: there is no session yet.

  Harness refused(1000);  // Provably never left: sent again under any rule.
  refused.connector.open_failures = {Status::kConnectFailed};
  refused.connector.add().recv_data(session_created());
  refused.connector.add().recv_data(finished());
  refused.run();
  EXPECT_EQ(refused.upload->result().outcome, Outcome::kSuccess);
}

TEST(Upload, AStalledChunkTimesOutAndIsQueried) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_would_block();  // Then silence.
  h.connector.add().recv_data(resume_incomplete(1000));
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.sent(2).headers["Content-Range"], "bytes */1000");
  // Everything was held: the query's 308 leads to a final empty PUT, not to a resend.
  EXPECT_EQ(h.sent(3).headers["Content-Range"], "bytes */1000");
  EXPECT_EQ(h.upload->bytes_sent(), 1000U);
  bool timeout = false;
  for (const Seen& s : h.of(UploadEvent::Kind::kError))
    timeout |= s.message.find("timed out") != std::string::npos;
  EXPECT_TRUE(timeout);
}

TEST(Upload, CutMetadataStartsTheSinkOver) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(finished().substr(0, finished().size() - 5)).recv_reset();
  h.connector.add().recv_data(finished());  // The query finds the upload finished.
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.metadata.bytes, kMetadata);
  EXPECT_EQ(h.metadata.restarts, 1U);
  EXPECT_EQ(h.metadata.offset_violations, 0U);

  Harness once(1000);
  once.metadata.restartable = false;
  once.connector.add().recv_data(session_created());
  once.connector.add().recv_data(finished().substr(0, finished().size() - 5)).recv_reset();
  once.connector.add().recv_data(finished());
  once.run();
  EXPECT_EQ(once.upload->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(once.upload->result().error, Status::kRestartRefused);
}

TEST(Upload, ProtocolViolationsAreTerminal) {
  struct Case {
    std::string answer;
    const char* words;
  };
  const Case cases[] = {
      {"HTTP/1.1 308 Resume Incomplete\r\nRange: bytes=5-99\r\nContent-Length: 0\r\n\r\n", "Range"},
      {resume_incomplete(2000), "never sent"},
      {status_only(302, "Location: https://elsewhere.test/\r\n"), "status"},
  };
  for (const Case& c : cases) {
    Harness h(1000);
    h.connector.add().recv_data(session_created());
    h.connector.add().recv_data(c.answer);
    h.run();
    EXPECT_EQ(h.upload->result().outcome, Outcome::kTerminalFailure) << c.answer;
    EXPECT_EQ(h.upload->result().error, Status::kProtocol) << c.answer;
    EXPECT_NE(std::string(h.upload->result().message).find(c.words), std::string::npos)
        << h.upload->result().message;
  }
  Harness no_location(1000);
  no_location.connector.add().recv_data(status_only(200));
  no_location.run();
  EXPECT_EQ(no_location.upload->result().outcome, Outcome::kTerminalFailure);
  EXPECT_NE(std::string(no_location.upload->result().message).find("Location"), std::string::npos);
}

TEST(Upload, OtherClientErrorsAreTerminal) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(403));
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(h.upload->result().status, 403);
  EXPECT_FALSE(h.upload->result().session_expired);

  Harness post(1000);  // A 404 on the initiation URL is no expired session.
  post.connector.add().recv_data(status_only(404));
  post.run();
  EXPECT_EQ(post.upload->result().outcome, Outcome::kTerminalStatus);
  EXPECT_FALSE(post.upload->result().session_expired);
}

TEST(Upload, StartRefusesBadChunkSizesAndOversizedSessions) {
  Harness h(1000);
  h.start();
  UploadSpec spec = h.spec;
  spec.chunk_size = 1000;
  EXPECT_EQ(h.upload->start(spec), Status::kInvalidArgument);
  spec.chunk_size = 0;
  EXPECT_EQ(h.upload->start(spec), Status::kInvalidArgument);
  spec.chunk_size = 3 * kChunk;
  EXPECT_EQ(h.upload->start(spec), Status::kOk);
  spec.session = "not a url";
  EXPECT_EQ(h.upload->start(spec), Status::kInvalidArgument);
  const std::string long_uri = "https://upload.test/" + std::string(400, 'x');
  spec.session = long_uri;
  EXPECT_EQ(h.upload->start(spec), Status::kBufferTooSmall);
  // A refused start leaves the upload done: stepping it sends nothing.
  EXPECT_EQ(h.upload->step(h.now).kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.upload->result().error, Status::kBufferTooSmall);
  EXPECT_EQ(h.connector.opened(), 0U);
}

TEST(Upload, TheDeadlineCountsFromTheLastProgress) {
  // Deadline 1 s; each chunk fails once and waits 600 ms: 1.2 s of waiting in all, but never
  // 1 s without progress.
  Harness h(2 * kChunk);
  h.policy.initial_delay = Millis(600);
  h.policy.max_backoff = Millis(600);
  h.policy.total_deadline = Millis(1000);
  h.connector.add().recv_data(session_created());
  for (std::uint64_t i = 0; i < 2; ++i) {
    h.connector.add(600 * 1024).recv_data(status_only(503));
    h.connector.add().recv_data(resume_incomplete(i * kChunk));
    h.connector.add(600 * 1024).recv_data(i == 1 ? finished() : resume_incomplete(kChunk));
  }
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{600, 600}));

  Harness stuck(1000);  // Without progress the deadline ends it.
  stuck.policy.initial_delay = Millis(600);
  stuck.policy.max_backoff = Millis(600);
  stuck.policy.total_deadline = Millis(1000);
  stuck.connector.add().recv_data(session_created());
  stuck.connector.add().recv_data(status_only(503));
  stuck.connector.add().recv_data(resume_incomplete(0));
  stuck.connector.add().recv_data(status_only(503));
  stuck.run();
  EXPECT_EQ(stuck.upload->result().outcome, Outcome::kDeadline);
  EXPECT_EQ(stuck.waits, (std::vector<std::uint64_t>{600}));
}

TEST(Upload, SavesWhereItStandsAndAResumedUploadGoesOnFromThere) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(503));
  h.connector.add().recv_data(status_only(503));  // The query after the first wait.
  UploadNext next = h.start();
  TransferState saved;
  const Millis wall(1'700'000'000'000);
  // Steps until the second wait begins, then saves, as an app would before sleeping.
  for (int i = 0; i < 1000 && h.of(UploadEvent::Kind::kWait).size() < 2; ++i) {
    if (next.kind == UploadNext::Kind::kWaitUntil && next.at > h.now) h.now = next.at;
    next = h.upload->step(h.now);
  }
  ASSERT_EQ(h.of(UploadEvent::Kind::kWait).size(), 2U);
  ASSERT_TRUE(h.upload->save(&saved, h.now, wall));
  EXPECT_EQ(saved.session_uri(), "https://upload.test/s?upload_id=u1");
  EXPECT_EQ(saved.total_size, 1000U);
  EXPECT_EQ(saved.committed, 0U);
  EXPECT_EQ(saved.chunk_size, kChunk);
  EXPECT_EQ(saved.retries, 2U);  // The attempt after this wait is retry 2.
  EXPECT_EQ(saved.wait_remaining, Millis(200));
  EXPECT_EQ(saved.release_wall_ms, 1'700'000'000'200);

  // A new process: the restored wait first (150 ms of it were left), then a failure that
  // waits as retry 2 would (400 ms, the cap), then success within the one retry left.
  Harness r(1000);
  r.spec.session = "https://upload.test/s?upload_id=u1";
  r.spec.resume = UploadResume{saved.retries, Millis(150), std::nullopt, 0};
  r.connector.add().recv_data(status_only(503));
  r.connector.add().recv_data(resume_incomplete(0));
  r.connector.add().recv_data(finished());
  r.run();
  EXPECT_EQ(r.upload->result().outcome, Outcome::kSuccess) << r.upload->result().message;
  EXPECT_EQ(r.waits, (std::vector<std::uint64_t>{150, 400}));
  EXPECT_EQ(r.sent(0).headers["Content-Range"], "bytes */1000");

  // Restored at the retry limit: the next failure ends it.
  Harness spent(1000);
  spent.spec.session = "https://upload.test/s?upload_id=u1";
  spent.spec.resume = UploadResume{3, Millis(0), std::nullopt, 0};
  spent.connector.add().recv_data(status_only(503));
  spent.run();
  EXPECT_EQ(spent.upload->result().outcome, Outcome::kRetriesExhausted);
}

TEST(Upload, NothingIsSavedBeforeASessionExists) {
  Harness h(1000);
  h.connector.add().recv_would_block();
  ASSERT_EQ(h.start().kind, UploadNext::Kind::kWaitIo);  // The POST is under way.
  TransferState saved;
  EXPECT_FALSE(h.upload->save(&saved, h.now, Millis(0)));
}

TEST(Upload, ARestoredWaitIsSavedAsSuch) {
  Harness h(1000);
  h.spec.session = "https://upload.test/s?upload_id=u1";
  h.spec.resume = UploadResume{2, Millis(5000), std::nullopt, 0};
  const UploadNext next = h.start();
  ASSERT_EQ(next.kind, UploadNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, h.now + Millis(5000));
  h.now = h.now + Millis(1000);
  TransferState saved;
  ASSERT_TRUE(h.upload->save(&saved, h.now, Millis(2'000'000)));
  EXPECT_EQ(saved.retries, 2U);
  EXPECT_EQ(saved.wait_remaining, Millis(4000));
  EXPECT_EQ(saved.release_wall_ms, 2'004'000);
  ASSERT_EQ(h.of(UploadEvent::Kind::kWait).size(), 1U);
  EXPECT_EQ(h.of(UploadEvent::Kind::kWait)[0].wait, 5000U);
}

TEST(Upload, ProgressForgetsTheRestoredRetries) {
  Harness h(2 * kChunk);
  h.policy.max_retries = 2;
  h.spec.session = "https://upload.test/s?upload_id=u1";
  h.spec.resume = UploadResume{2, Millis(0), std::nullopt, 0};  // No retry left until progress.
  h.connector.add().recv_data(resume_incomplete(0));
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));  // Progress.
  h.connector.add(600 * 1024).recv_data(status_only(503));           // A first failure again.
  h.connector.add().recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100}));
}

// "crc32c=BASE64" of the pattern bytes [0, size).
std::string crc32c_item(std::uint64_t size, std::uint32_t* crc_out = nullptr) {
  const std::string bytes = pattern(0, size);
  const std::uint32_t crc = https::crc32c(
      https::ConstBytes{reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  if (crc_out != nullptr) *crc_out = crc;
  const https::Digest d = https::Digest::crc32c(crc);
  char b64[16] = {};
  return "crc32c=" + std::string(b64, https::base64_encode(d.view(), b64, sizeof b64));
}

std::string finished_with(const std::string& json, const std::string& extra_head = "") {
  return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\n" + extra_head +
         "Content-Length: " + std::to_string(json.size()) + "\r\n\r\n" + json;
}

TEST(Upload, OnlyTheLastChunkCarriesTheBodysCrc32c) {
  Harness h(2 * kChunk + 1000);
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(resume_incomplete(2 * kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.sent(1).headers.count("x-goog-hash"), 0U);
  EXPECT_EQ(h.sent(2).headers.count("x-goog-hash"), 0U);
  EXPECT_EQ(h.sent(3).headers["x-goog-hash"], crc32c_item(2 * kChunk + 1000));
  // The metadata names no digest: nothing could be compared.
  EXPECT_EQ(h.upload->result().integrity.status, https::IntegrityStatus::kNoExpectation);
}

TEST(Upload, AnEmptyBodyFinishesWithTheCrc32cOfNothing) {
  Harness h(0);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.sent(1).headers["x-goog-hash"], "crc32c=AAAAAA==");
}

TEST(Upload, TheDigestsTheServerReturnsAreChecked) {
  const std::string good = crc32c_item(1000).substr(7);
  struct Case {
    std::string answer;
    https::IntegrityStatus want;
  } cases[] = {
      {finished_with(R"({"name":"o","crc32c":")" + good + R"("})"), https::IntegrityStatus::kMatch},
      {finished_with(R"({"name":"o","crc32c":"AAAAAA=="})"), https::IntegrityStatus::kMismatch},
      {finished_with(R"({"name":"o"})", "x-goog-hash: crc32c=AAAAAA==\r\n"),
       https::IntegrityStatus::kMismatch},
      {finished_with(R"({"name":"o"})", "x-goog-hash: crc32c=" + good + "\r\n"),
       https::IntegrityStatus::kMatch},
      // A user's metadata key of the same name, nested: not the object's digest.
      {finished_with(R"({"metadata":{"crc32c":"AAAAAA=="},"size":"1000"})"),
       https::IntegrityStatus::kNoExpectation},
      // Keys and values in strings with escapes, braces and colons are skipped whole.
      {finished_with(R"({"n\"ame":"a:{\"crc32c\":\"AAAAAA==\"}","crc32c":")" + good + R"("})"),
       https::IntegrityStatus::kMatch},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.answer);
    Harness h(1000);
    h.connector.add().recv_data(session_created());
    h.connector.add().recv_data(c.answer);
    h.run();
    const UploadResult& r = h.upload->result();
    EXPECT_EQ(r.integrity.status, c.want);
    if (c.want == https::IntegrityStatus::kMismatch) {
      EXPECT_EQ(r.outcome, Outcome::kTerminalFailure);
      EXPECT_EQ(r.error, Status::kIntegrity);
      EXPECT_NE(std::string(r.message).find("crc32c mismatch: expected AAAAAA==, got " + good),
                std::string::npos)
          << r.message;
    } else {
      EXPECT_EQ(r.outcome, Outcome::kSuccess) << r.message;
    }
  }
}

TEST(Upload, DigestsTheCallerKnowsAreSentAsGiven) {
  Harness h(1000);
  const std::uint8_t md5[16] = {0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04,
                                0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e};
  h.spec.crc32c = 0x12345678U;
  h.spec.md5 = md5;
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(finished());
  h.run();
  EXPECT_EQ(h.sent(1).headers["x-goog-hash"], "crc32c=EjRWeA==,md5=1B2M2Y8AsgTpgAmY7PhCfg==");
}

// A restored session: the saved CRC-32C of what the server held goes on; without one, the
// bytes before the last chunk are read again (not sent again) to compute it.
TEST(Upload, ARestoredUploadSendsTheWholeBodysCrc32c) {
  for (const bool saved_crc : {true, false}) {
    SCOPED_TRACE(saved_crc);
    Harness h(2 * kChunk + 1000);
    h.spec.session = "https://upload.test/s?upload_id=u1";
    std::uint32_t prefix = 0;
    (void)crc32c_item(kChunk, &prefix);
    h.spec.resume = UploadResume{0, Millis(0), std::nullopt, 0};
    if (saved_crc) h.spec.resume = UploadResume{0, Millis(0), prefix, kChunk};
    h.connector.add().recv_data(resume_incomplete(kChunk));
    h.connector.add(600 * 1024).recv_data(resume_incomplete(2 * kChunk));
    h.connector.add(600 * 1024).recv_data(finished());
    h.run();
    EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
    EXPECT_EQ(h.sent(2).headers["x-goog-hash"], crc32c_item(2 * kChunk + 1000));
    EXPECT_EQ(h.upload->bytes_sent(), kChunk + 1000);
  }
}

// The CRC-32C of the committed prefix is saved, so a restart need not read it again.
TEST(Upload, TheSavedStateCarriesTheCommittedPrefixsCrc32c) {
  Harness h(2 * kChunk + 1000);
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(status_only(503));
  UploadNext next = h.start();
  for (int i = 0; i < 1000 && h.of(UploadEvent::Kind::kWait).empty(); ++i) {
    if (next.kind == UploadNext::Kind::kWaitUntil && next.at > h.now) h.now = next.at;
    next = h.upload->step(h.now);
  }
  TransferState saved;
  ASSERT_TRUE(h.upload->save(&saved, h.now, Millis(1'700'000'000'000)));
  EXPECT_EQ(saved.committed, kChunk);
  std::uint32_t prefix = 0;
  (void)crc32c_item(kChunk, &prefix);
  // The second chunk went out whole (the running CRC is past the committed offset): not
  // saved rather than saved wrong.
  EXPECT_FALSE(saved.crc32c.has_value());

  Harness first(2 * kChunk + 1000);
  first.connector.add().recv_data(session_created());
  first.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  next = first.start();
  for (int i = 0; i < 1000 && first.upload->committed() < kChunk; ++i) {
    if (next.kind == UploadNext::Kind::kWaitUntil && next.at > first.now) first.now = next.at;
    next = first.upload->step(first.now);
  }
  ASSERT_TRUE(first.upload->save(&saved, first.now, Millis(1'700'000'000'000)));
  EXPECT_EQ(saved.committed, kChunk);
  ASSERT_TRUE(saved.crc32c.has_value());
  EXPECT_EQ(*saved.crc32c, prefix);
}

// Steps `h` until it waits for more body (kWaitUntil at Millis::max()) or is done.
UploadNext until_starved(Harness& h, UploadNext next) {
  for (int i = 0; i < 10000 && next.kind != UploadNext::Kind::kDone && next.at != Millis::max();
       ++i) {
    if (next.kind == UploadNext::Kind::kWaitUntil && next.at > h.now) {
      h.waits.push_back((next.at - h.now).count());
      h.now = next.at;
    }
    next = h.upload->step(h.now);
  }
  return next;
}

TEST(Upload, ABodyOfUnknownSizeGoesInWholeChunksAndDeclaresItsSizeLast) {
  Harness h(kChunk + 100);
  h.spec.size_final = false;
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  UploadNext next = until_starved(h, h.start());
  ASSERT_EQ(next.kind, UploadNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, Millis::max());
  EXPECT_EQ(next.fd, -1);
  EXPECT_EQ(h.upload->committed(), kChunk);
  EXPECT_EQ(h.sent(0).headers.count("X-Upload-Content-Length"), 0U);
  EXPECT_EQ(h.sent(1).headers["Content-Range"], "bytes 0-262143/*");
  EXPECT_EQ(h.sent(1).headers.count("x-goog-hash"), 0U);
  EXPECT_EQ(h.upload->step(h.now).at, Millis::max());  // Still nothing to do.
  EXPECT_EQ(h.upload->extend(kChunk + 50, false), Status::kInvalidArgument);  // Shrinks.
  // Long after (the caller's wait is not the server's: no deadline ran out meanwhile).
  h.now = h.now + Millis::seconds(3600);
  ASSERT_EQ(h.upload->extend(kChunk + 500, true), Status::kOk);
  EXPECT_EQ(h.upload->extend(kChunk + 600, true), Status::kInvalidArgument);  // Final.
  h.run(h.upload->step(h.now));
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.sent(2).headers["Content-Range"], "bytes 262144-262643/262644");
  EXPECT_EQ(h.sent(2).headers["x-goog-hash"], crc32c_item(kChunk + 500));
  EXPECT_TRUE(h.sent(2).body == pattern(kChunk, kChunk + 500));
}

TEST(Upload, AnUnknownSizeEndingOnAChunkIsFinishedByAnEmptyPut) {
  Harness h(2 * kChunk);
  h.spec.size_final = false;
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(resume_incomplete(2 * kChunk));
  h.connector.add().recv_data(finished());
  UploadNext next = until_starved(h, h.start());
  ASSERT_EQ(next.at, Millis::max());
  TransferState state;
  EXPECT_FALSE(h.upload->save(&state, h.now, Millis(1)));  // No record of an unknown size.
  ASSERT_EQ(h.upload->extend(2 * kChunk, true), Status::kOk);
  h.run(h.upload->step(h.now));
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.sent(2).headers["Content-Range"], "bytes 262144-524287/*");
  EXPECT_EQ(h.sent(3).headers["Content-Range"], "bytes */524288");
  EXPECT_EQ(h.sent(3).headers["x-goog-hash"], crc32c_item(2 * kChunk));
  EXPECT_EQ(h.upload->bytes_sent(), 2 * kChunk);
}

TEST(Upload, AFailureWhileTheSizeIsUnknownIsQueriedWithoutOne) {
  Harness h(kChunk);
  h.spec.size_final = false;
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(status_only(503));
  h.connector.add().recv_data(resume_incomplete(kChunk - 1000));  // The query after the wait.
  h.connector.add().recv_data(finished());
  UploadNext next = until_starved(h, h.start());
  ASSERT_EQ(next.at, Millis::max());  // 1000 bytes left: less than a chunk.
  EXPECT_EQ(h.sent(2).headers["Content-Range"], "bytes */*");
  EXPECT_EQ(h.waits, (std::vector<std::uint64_t>{100}));
  ASSERT_EQ(h.upload->extend(kChunk, true), Status::kOk);
  h.run(h.upload->step(h.now));
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.sent(3).headers["Content-Range"], "bytes 261144-262143/262144");
}

TEST(Upload, CancelEndsIt) {
  Harness h(1000);
  h.connector.add().recv_would_block();
  const UploadNext next = h.start();
  EXPECT_EQ(next.kind, UploadNext::Kind::kWaitIo);
  h.upload->cancel();
  EXPECT_EQ(h.upload->step(h.now).kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kCancelled);
}

// --limit-rate for uploads: the chunks go a quantum (half the 32 KiB burst) per timed wait,
// so the body takes its size over the rate, heads included, with no busy turns between.
TEST(Upload, MaxRatePacesTheChunksWithTimedWaits) {
  const std::uint64_t size = kChunk + 1000;
  Harness h(size);
  h.max_rate = 256 * 1024;  // A burst of 32 KiB: 62.5 ms per 16 KiB quantum.
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  const Millis began = h.now;
  ASSERT_EQ(h.run().kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  std::uint64_t sent = 0;
  for (std::size_t i = 0; i < 3; ++i) sent += h.connector.connection(i).sent().size();
  EXPECT_TRUE(h.sent(1).body == pattern(0, kChunk));
  const std::uint64_t elapsed = (h.now - began).count();
  EXPECT_GE(elapsed, sent * 1000 / h.max_rate);
  EXPECT_LE(elapsed, sent * 1000 / h.max_rate + 63);
  // About one step per quantum (and a few per exchange), not one per byte or millisecond.
  EXPECT_LE(h.steps, static_cast<int>(sent / (16 * 1024)) + 12);
  // A quantum's wait each, but for the few bytes of a head or of a chunk's end, which wait
  // for just themselves: at most two such per exchange.
  int short_waits = 0;
  for (const std::uint64_t w : h.waits) short_waits += w < 62 ? 1 : 0;
  EXPECT_LE(short_waits, 6);
  EXPECT_GE(h.waits.size(), sent / (16 * 1024));
}

// pause() mid-chunk gives the exchange up and keeps the session; resume() asks the server
// what it holds and sends from there, byte-exact.
TEST(Upload, PauseMidChunkKeepsTheSessionAndResumeAsksWhatIsHeld) {
  const std::uint64_t size = kChunk + 1000;
  Harness h(size);
  h.connector.add().recv_data(session_created());
  ScriptedTransport& cut = h.connector.add(600 * 1024);
  cut.send_accept(100000).send_accept(16384).send_would_block();
  h.connector.add().recv_data(resume_incomplete(0));  // The query after resume().
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add().recv_data(finished());
  UploadNext next = h.step_until(h.start(), [&h](const UploadNext& n) {
    return h.connector.opened() == 2 && n.kind == UploadNext::Kind::kWaitIo;
  });
  ASSERT_EQ(next.kind, UploadNext::Kind::kWaitIo);
  h.upload->pause(h.now);
  EXPECT_TRUE(h.upload->paused());
  EXPECT_TRUE(cut.closed());
  next = h.upload->step(h.now);
  EXPECT_EQ(next.kind, UploadNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, Millis::max());
  TransferState saved;
  ASSERT_TRUE(h.upload->save(&saved, h.now, Millis(1'700'000'000'000)));
  EXPECT_EQ(saved.session_uri(), "https://upload.test/s?upload_id=u1");
  EXPECT_EQ(saved.committed, 0U);
  h.now = h.now + Millis(600'000);  // Far past every timeout: nothing is running.
  EXPECT_EQ(h.upload->step(h.now).at, Millis::max());
  EXPECT_EQ(h.connector.opened(), 2U);

  h.upload->resume(h.now);
  EXPECT_FALSE(h.upload->paused());
  ASSERT_EQ(h.run(h.upload->step(h.now)).kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  EXPECT_EQ(h.upload->sessions(), 1U);
  EXPECT_EQ(h.sent(2).method, "PUT");
  EXPECT_EQ(h.sent(2).headers["Content-Range"], "bytes */" + std::to_string(size));
  EXPECT_EQ(h.sent(3).headers["Content-Range"],
            "bytes 0-" + std::to_string(kChunk - 1) + "/" + std::to_string(size));
  EXPECT_TRUE(h.sent(3).body == pattern(0, kChunk));
  EXPECT_TRUE(h.sent(4).body == pattern(kChunk, size));
  EXPECT_EQ(h.upload->committed(), size);
}

// A pause in a backoff wait neither shortens it nor loses it: save() still holds what is
// left, and resume() before its end waits for the rest, then queries.
TEST(Upload, APauseInABackoffWaitKeepsTheWaitsEnd) {
  Harness h(1000);
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(503));
  h.connector.add().recv_data(resume_incomplete(0));
  h.connector.add().recv_data(finished());
  UploadNext next = h.step_until(h.start(), [&h](const UploadNext& n) {
    return n.kind == UploadNext::Kind::kWaitUntil && n.at > h.now;
  });
  ASSERT_EQ(next.kind, UploadNext::Kind::kWaitUntil);
  const Millis end = next.at;
  ASSERT_EQ(end, h.now + Millis(100));
  h.upload->pause(h.now + Millis(30));
  TransferState saved;
  ASSERT_TRUE(h.upload->save(&saved, h.now + Millis(30), Millis(1'700'000'000'000)));
  EXPECT_EQ(saved.wait_remaining, Millis(70));
  h.now = h.now + Millis(50);
  h.upload->resume(h.now);
  next = h.upload->step(h.now);
  EXPECT_EQ(next.kind, UploadNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, end);
  EXPECT_EQ(h.connector.opened(), 2U);
  ASSERT_EQ(h.run(next).kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.sent(2).headers["Content-Range"], "bytes */1000");
  EXPECT_EQ(h.sent(3).headers["Content-Range"], "bytes 0-999/1000");
}

TEST(Upload, CancelEndsAPausedUpload) {
  Harness h(1000);
  h.connector.add().recv_would_block();
  (void)h.start();
  h.upload->pause(h.now);
  h.upload->cancel();
  EXPECT_EQ(h.upload->step(h.now).kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kCancelled);
  h.upload->resume(h.now);  // Nothing to go on with.
  EXPECT_EQ(h.upload->step(h.now).kind, UploadNext::Kind::kDone);
}

// Progress across the session: the offset of the body sent (the chunk's start plus what of it
// went), rising over both chunks to the end, 64 KiB and 250 ms apart at least, of the body's
// size, at the rate the sends are paced to.
TEST(Upload, ProgressFollowsTheBodyAcrossChunksAtThePacedRate) {
  const std::uint64_t size = kChunk + 200 * 1024;
  Harness h(size);
  h.max_rate = 256 * 1024;
  h.connector.add().recv_data(session_created());
  h.connector.add(600 * 1024).recv_data(resume_incomplete(kChunk));
  h.connector.add(600 * 1024).recv_data(finished());
  ASSERT_EQ(h.run().kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kSuccess) << h.upload->result().message;
  std::vector<Seen> progress;
  for (const Seen& e : h.events) {
    if (e.kind == UploadEvent::Kind::kProgress) progress.push_back(e);
  }
  // About (size / 64 KiB) reports; some beyond the first chunk.
  ASSERT_GE(progress.size(), size / 65536 - 2);
  EXPECT_GT(progress.back().offset, kChunk);
  for (std::size_t i = 0; i < progress.size(); ++i) {
    EXPECT_EQ(progress[i].size, size);
    EXPECT_LE(progress[i].offset, size);
    if (i == 0) continue;
    EXPECT_GE(progress[i].offset - progress[i - 1].offset, 65536U) << i;
    EXPECT_GE((progress[i].at - progress[i - 1].at).count(), 250U) << i;
    // The rate of the body's bytes: the limit paces heads too, so a little under it.
    EXPECT_GE(progress[i].rate, h.max_rate * 90 / 100) << i;
    EXPECT_LE(progress[i].rate, h.max_rate * 105 / 100) << i;
  }
}

// A progress policy of no bytes is refused by start(), as a missing clock is.
TEST(Upload, AnInvalidProgressPolicyIsRefused) {
  Harness h;
  h.progress = ProgressPolicy{0, Millis(250)};
  h.expect_started = false;
  (void)h.start();
  EXPECT_EQ(h.started, Status::kInvalidArgument);
  EXPECT_EQ(h.connector.opened(), 0U);
}

// The mobile profile's deferral: 10 minutes and up to 10 more.
constexpr DeferPolicy kDefer{Millis(600'000), Millis(600'000)};

// Retries that run out with the session open lose nothing: the upload is deferred, to run
// again (with UploadSpec::session) delay + U[0, spread] after it ended, the same time at
// every ask, with what the scheduler needs to know of it.
TEST(Upload, RetriesThatRunOutWithASessionDeferIt) {
  Harness h(1000);
  h.policy.max_retries = 1;
  h.defer = kDefer;
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(503));
  h.connector.add().recv_data(resume_incomplete(0));
  h.connector.add().recv_data(status_only(503));
  const UploadNext done = h.run();
  ASSERT_EQ(done.kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kRetriesExhausted);
  EXPECT_FALSE(h.upload->session_uri().empty());
  const https::RunHint hint = h.upload->run_hint(done);
  EXPECT_EQ(hint.state, https::RunHint::State::kDeferred);
  EXPECT_GE(hint.run_at, h.now + kDefer.delay);
  EXPECT_LE(hint.run_at, h.now + kDefer.delay + kDefer.spread);
  EXPECT_EQ(hint.bytes_left, 1000U);
  EXPECT_EQ(h.upload->run_hint(h.upload->step(h.now + Millis(5))).run_at, hint.run_at);
  EXPECT_EQ(h.upload->deferred_until(), hint.run_at);
}

// Retries that run out before a session was opened leave nothing to go on with: done.
TEST(Upload, RetriesThatRunOutBeforeASessionAreDone) {
  Harness h(1000);
  h.policy.max_retries = 1;
  h.defer = kDefer;  // No connections scripted: every open fails.
  const UploadNext done = h.run();
  ASSERT_EQ(done.kind, UploadNext::Kind::kDone);
  EXPECT_EQ(h.upload->result().outcome, Outcome::kRetriesExhausted);
  EXPECT_TRUE(h.upload->session_uri().empty());
  EXPECT_EQ(h.upload->run_hint(done).state, https::RunHint::State::kDone);
  EXPECT_FALSE(h.upload->deferred_until().has_value());
}

// An expired session (404) is final, and so is a cancel.
TEST(Upload, AnExpiredSessionOrACancelIsDone) {
  Harness h(1000);
  h.defer = kDefer;
  h.connector.add().recv_data(session_created());
  h.connector.add().recv_data(status_only(404));
  const UploadNext done = h.run();
  EXPECT_EQ(h.upload->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(h.upload->run_hint(done).state, https::RunHint::State::kDone);

  Harness c(1000);
  c.defer = kDefer;
  c.connector.add().recv_data(session_created());
  (void)c.step_until(c.start(),
                     [&](const UploadNext&) { return c.upload->session_uri().size() > 0; });
  c.upload->cancel();
  EXPECT_EQ(c.upload->result().outcome, Outcome::kCancelled);
  EXPECT_EQ(c.upload->run_hint(c.upload->step(c.now)).state, https::RunHint::State::kDone);
}

}  // namespace
}  // namespace stepback::transfer
