// Whether a request goes again, against scripted connections (client_harness.hpp): the
// idempotency rules by method, precondition and declaration, and kept connections found dead
// before or after the request went out on them, or reused by the next request.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "tests/https/client/client_harness.hpp"

namespace stepback::https::client_test {
namespace {

// The idempotency table: method x rule x precondition.
TEST(ClientIdempotency, RuleTable) {
  using I = RequestSpec::Idempotency;
  const Header if_match{"If-Match", "\"e1\""};
  const Header goog{"x-goog-if-generation-match", "7"};
  struct Row {
    const char* method;
    I rule;
    const char* target;
    const Header* header;
    bool expected;
  } rows[] = {
      {"GET", I::kByMethod, "/o", nullptr, true},
      {"PUT", I::kByMethod, "/o", nullptr, true},
      {"DELETE", I::kByMethod, "/o", nullptr, true},
      {"POST", I::kByMethod, "/o", nullptr, false},
      {"PATCH", I::kByMethod, "/o", nullptr, false},
      {"GET", I::kStrict, "/o", nullptr, true},
      {"HEAD", I::kStrict, "/o", nullptr, true},
      {"PUT", I::kStrict, "/o", nullptr, false},
      {"DELETE", I::kStrict, "/o", nullptr, false},
      {"PUT", I::kStrict, "/o", &if_match, true},
      {"DELETE", I::kStrict, "/b/o?ifGenerationMatch=7", nullptr, true},
      {"PATCH", I::kStrict, "/b/o?alt=json&ifMetagenerationMatch=3", nullptr, true},
      {"POST", I::kStrict, "/b/o?ifSourceGenerationMatch=1", nullptr, true},
      {"POST", I::kStrict, "/b/o", &goog, true},
      {"POST", I::kStrict, "/b/o?xifGenerationMatch=1", nullptr, false},
      {"POST", I::kYes, "/b", nullptr, true},
      {"GET", I::kNo, "/o", nullptr, false},
  };
  for (const Row& r : rows) {
    RequestSpec spec;
    spec.head.method = r.method;
    spec.head.url.target = r.target;
    spec.head.headers = r.header;
    spec.head.header_count = r.header != nullptr ? 1 : 0;
    spec.idempotency = r.rule;
    EXPECT_EQ(is_idempotent(spec), r.expected)
        << r.method << " " << r.target << " rule " << static_cast<int>(r.rule);
  }
}

// Under kStrict a 503 does not prove the server left the request alone (Cloud Storage's
// conformance); by method, RFC 9110 lets 503 and 429 count as not processed.
TEST(ClientIdempotency, StrictPostIsNotResentAfter503) {
  Harness strict("https://example.test/orders", "POST");
  strict.spec.idempotency = RequestSpec::Idempotency::kStrict;
  strict.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  strict.run(strict.start());
  EXPECT_EQ(strict.client->result().outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(strict.client->result().attempts, 1U);

  Harness by_method("https://example.test/orders", "POST");
  by_method.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  by_method.run(by_method.start());
  EXPECT_EQ(by_method.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(by_method.client->result().attempts, 2U);
}

TEST(ClientIdempotency, DeclaredIdempotentPostIsResentAfterAReset) {
  Harness h("https://example.test/b", "POST");
  h.spec.idempotency = RequestSpec::Idempotency::kYes;
  h.connector.add().recv_reset();
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
}

// A kept connection found closed before reuse is replaced before any byte is written.
TEST(ClientKeepAlive, DeadKeptConnectionIsReplacedBeforeSending) {
  Harness h("https://example.test/orders", "POST");
  h.connector.add().recv_data(k503).recv_closed();
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.connector.opened(), 2U);
  const std::string first = h.connector.connection(0).sent();
  EXPECT_EQ(first.find("POST", 1), std::string::npos)
      << "a request was written on the dead connection";
}

// A kept connection found dead only after the request went out on it is sent again
// at once on a new one, not counted, as before; now it is said (an event, so a trace line),
// where before the second connection came without a word.
TEST(ClientKeepAlive, AKeptConnectionFoundDeadAfterSendingIsSentAgainAndSaid) {
  Harness h;
  // The liveness check passes (would block); the server's reset comes after the request.
  h.connector.add().recv_data(k503).recv_would_block(IoInterest::kRead).recv_reset();
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U) << "the 503 and its retry; the re-send is free";
  EXPECT_EQ(h.connector.opened(), 2U);
  int said = 0;
  for (const ClientEvent& e : h.events) {
    said += e.kind == ClientEvent::Kind::kError &&
            std::string(e.message).find("kept connection") != std::string::npos;
  }
  EXPECT_EQ(said, 1);
}

// A connection kept after a request serves the next start() to the same origin.
TEST(ClientKeepAlive, TheNextRequestToTheSameOriginReusesTheKeptConnection) {
  Harness h;
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kOk).recv_would_block(IoInterest::kRead).recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  ASSERT_EQ(h.client->result().outcome, Outcome::kSuccess);
  ASSERT_EQ(h.client->start(h.spec), Status::kOk);
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_EQ(h.client->connections(), 1U);
  const std::string sent = c.sent();
  EXPECT_NE(sent.find("GET /x", sent.find("GET /x") + 1), std::string::npos) << sent;
  EXPECT_FALSE(c.closed());
  h.client->cancel();  // Also closes a connection kept after a finished request.
  EXPECT_TRUE(c.closed());
}

TEST(ClientKeepAlive, ARequestToAnotherOriginOpensItsOwnConnection) {
  for (const char* other :
       {"https://other.test/x", "https://example.test:8443/x", "http://example.test/x"}) {
    SCOPED_TRACE(other);
    Harness h;
    h.connector.add().recv_data(kOk).recv_would_block(IoInterest::kRead);
    h.connector.add().recv_data(kOk);
    ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
    EXPECT_FALSE(h.connector.connection(0).closed());  // Kept after the first request.
    RequestSpec spec = h.spec;
    ASSERT_EQ(parse_url(other, &spec.head.url), Status::kOk);
    ASSERT_EQ(h.client->start(spec), Status::kOk);
    EXPECT_TRUE(h.connector.connection(0).closed());
    ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
    EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
    EXPECT_EQ(h.connector.opened(), 2U);
  }
}

TEST(ClientKeepAlive, StartingAgainMidExchangeNeverReusesTheBusyConnection) {
  Harness h;
  h.connector.add().recv_would_block(IoInterest::kRead);  // The response never comes.
  h.connector.add().recv_data(kOk);
  ClientNext next = h.start();
  for (int i = 0; i < 5 && next.kind != ClientNext::Kind::kWaitIo; ++i)
    next = h.client->step(h.now);
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);  // Waiting for the response.
  ASSERT_EQ(h.client->start(h.spec), Status::kOk);
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.connector.opened(), 2U);
}

// Regression: a kept connection reset after part of an upload's body had left was taken as
// a stale connection and the request silently sent again from its first byte, so bytes the
// server had already committed went twice. Once body bytes have left it is a failed attempt.
TEST(ClientKeepAlive, AResetAfterBodyBytesLeftIsAFailedAttemptNotAStaleConnection) {
  Harness h("https://example.test/session", "PUT");
  h.spec.idempotency = RequestSpec::Idempotency::kYes;
  static const std::string body(100000, 'b');
  h.spec.body = BodySource{[](void*, std::uint64_t offset, MutableBytes out) {
                             const std::size_t n = static_cast<std::size_t>(
                                 std::min<std::uint64_t>(out.size, body.size() - offset));
                             std::memcpy(out.data, body.data() + offset, n);
                             return n;
                           },
                           nullptr, body.size()};
  ScriptedTransport& c = h.connector.add();
  c.recv_data(k503).recv_would_block(IoInterest::kRead);  // Alive when probed...
  c.recv_reset();                                         // ...reset once the body is going.
  h.connector.add().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 3U);  // 503, the reset, the success.
}

}  // namespace
}  // namespace stepback::https::client_test
