// The Client against slow servers (client_harness.hpp): a head that trickles, a body below the
// throughput floor, a reader that takes a byte now and then. The scripted connection hands
// over one byte per recv() (or accepts one per send()) with a would-block after each, and
// drive() lets `gap` pass on the fake clock before every step that waits for I/O: a peer
// moving one byte per `gap`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"
#include "tests/https/client/client_harness.hpp"

namespace stepback::https::client_test {
namespace {

// Queues `text` one byte per recv(), each followed by a would-block.
void trickle(ScriptedTransport& c, const std::string& text) {
  for (const char ch : text) c.recv_data(std::string(1, ch)).recv_would_block();
}

// Steps `h` until done (at most `limit` steps): an I/O wait ends after `gap` (a byte arrives)
// unless its deadline comes first; a timed wait ends at its time. Returns when the clock
// stood at the request's end.
Millis drive(Harness& h, ClientNext next, Millis gap, int limit = 20000) {
  for (int i = 0; i < limit && next.kind != ClientNext::Kind::kDone; ++i) {
    h.nexts.push_back(next);
    if (next.kind == ClientNext::Kind::kWaitIo) {
      h.now = min(next.at, h.now + gap);
    } else if (next.at > h.now) {
      h.waits.push_back((next.at - h.now).count());
      h.now = next.at;
    }
    next = h.client->step(h.now);
  }
  EXPECT_EQ(next.kind, ClientNext::Kind::kDone);
  return h.now;
}

// The kError events' messages, in order.
std::vector<std::string> error_messages(const Harness& h) {
  std::vector<std::string> out;
  for (const ClientEvent& e : h.events) {
    if (e.kind == ClientEvent::Kind::kError) out.emplace_back(e.message);
  }
  return out;
}

const std::string kHead1000 = "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 1000\r\n\r\n";

// Regression (slowloris head): a server sending its head a byte a second kept the client
// forever, since every byte reset the read timeout. The head must now be complete within the
// read timeout of the request; the attempt fails as a timeout and the retry goes on.
TEST(ClientSlowServers, SlowlorisHeadEndsAtTheReadTimeout) {
  Harness h;
  h.timeouts.read = Millis(5000);
  trickle(h.connector.add(), "HTTP/1.1 200 OK\r\nX-Slow: " + std::string(200, 's') + "\r\n\r\n");
  h.connector.add().recv_data(kOk);
  const Millis sent = h.now;  // The request leaves in the first step.
  drive(h, h.start(), Millis(700));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.body.bytes, "hello");
  EXPECT_EQ(error_messages(h),
            std::vector<std::string>{"the response head did not arrive within the read timeout "
                                     "(5000 ms)"});
  for (const ClientEvent& e : h.events) {
    if (e.kind != ClientEvent::Kind::kError) continue;
    EXPECT_EQ(e.failure, Failure::kTimeout);
    // The client asked to wake at the head's deadline (bytes came every 700 ms).
    EXPECT_EQ(e.at, sent + Millis(5000));
  }
}

// A head that arrives in pieces but whole within the read timeout is not cut.
TEST(ClientSlowServers, AHeadCompleteWithinTheReadTimeoutIsKept) {
  Harness h;
  h.timeouts.read = Millis(5000);
  ScriptedTransport& c = h.connector.add();
  trickle(c, "HTTP/1.1 200 OK\r\n");  // 17 bytes, 100 ms apart.
  c.recv_data("Content-Length: 5\r\n\r\nhello");
  drive(h, h.start(), Millis(100));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_TRUE(error_messages(h).empty());
}

// Regression (trickling body never cut): a body arriving a byte a second was never cut, the
// read timeout counting silence only. Below the floor over a window, the attempt now ends as
// a timeout with a message naming the floor; the wait asked for while receiving ends with the
// window, so the client wakes to check it.
TEST(ClientSlowServers, TricklingBodyIsCutByTheThroughputFloor) {
  Harness h;
  h.policy.max_retries = 0;
  h.timeouts.read = Millis(5000);
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, std::string(1000, 'b'));
  const ClientNext first = h.start();
  ASSERT_EQ(first.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(first.at, h.now + Millis(2000));  // The window's end, before the read timeout.
  drive(h, first, Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(h.client->result().error, Status::kTimeout);
  EXPECT_STREQ(h.client->result().message,
               "the response body arrived at 1 B/s over 2000 ms, below the speed limit of 100 B/s");
  EXPECT_EQ(h.body.bytes, "bb");
}

// A GET cut by the floor resumes by Range on the next attempt, byte-exact.
TEST(ClientSlowServers, AGetCutByTheFloorResumesByRange) {
  Harness h;
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  const std::string body(1000, 'b');
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, body);
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-999/1000\r\n"
      "Content-Length: 998\r\n\r\n" +
      body.substr(2));
  drive(h, h.start(), Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.body.offset_violations, 0U);
  EXPECT_NE(h.connector.connection(1).sent().find("\r\nRange: bytes=2-\r\nIf-Range: \"v1\"\r\n"),
            std::string::npos)
      << h.connector.connection(1).sent();
}

// A slow body that keeps above the floor is never cut, over many windows.
TEST(ClientSlowServers, ABodyAboveTheFloorIsNeverCut) {
  Harness h;
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, std::string(1000, 'b'));
  const Millis began = h.now;
  const Millis ended = drive(h, h.start(), Millis(9));  // 111 B/s, for 9 s: four windows.
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes.size(), 1000U);
  EXPECT_GE((ended - began).count(), 8000U);
}

// The floor is judged once what has arrived is read: a loop that stepped 3 s late finds the
// whole body waiting (1000 bytes, 333 B/s over the window, above 300) and keeps it, though
// its first 64-byte read alone would make 21 B/s.
TEST(ClientSlowServers, ALoopThatStepsLateIsNotTakenForASlowServer) {
  Harness h;
  h.timeouts.speed_limit = 300;
  h.timeouts.speed_time = Millis(2000);
  h.connector.add().recv_data(kHead1000).recv_would_block().recv_data(std::string(1000, 'b'));
  ASSERT_EQ(h.start().kind, ClientNext::Kind::kWaitIo);
  h.now = h.now + Millis(3000);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes.size(), 1000U);
}

// speed_limit 0: no floor; the trickle goes on as long as no silence reaches the read timeout.
TEST(ClientSlowServers, FloorZeroIsDisabled) {
  Harness h;
  h.timeouts.read = Millis(5000);
  h.timeouts.speed_limit = 0;
  ScriptedTransport& c = h.connector.add();
  c.recv_data(kHead1000).recv_would_block();
  trickle(c, std::string(1000, 'b'));
  const ClientNext first = h.start();
  ASSERT_EQ(first.kind, ClientNext::Kind::kWaitIo);
  EXPECT_EQ(first.at, h.now + Millis(5000));  // The read timeout alone.
  drive(h, first, Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes.size(), 1000U);
}

// A server that reads the request body a byte a second holds no upload: the floor counts the
// bytes sent too, and the (idempotent) PUT goes again.
TEST(ClientSlowServers, AReaderBelowTheFloorEndsTheSend) {
  Harness h("https://example.test/upload", "PUT");
  h.timeouts.speed_limit = 100;
  h.timeouts.speed_time = Millis(2000);
  const std::string payload(300, 'p');
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
  h.spec.body = BodySource::of(&bytes);
  ScriptedTransport& slow = h.connector.add();
  slow.send_accept(40);  // 40 bytes of the head; then one byte per would-block.
  for (int i = 0; i < 500; ++i) slow.send_would_block().send_accept(1);
  h.connector.add().recv_data(kOk);
  drive(h, h.start(), Millis(1000));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(error_messages(h),
            std::vector<std::string>{"the request went out at 21 B/s over 2000 ms, below the "
                                     "speed limit of 100 B/s"});
}

// "A hostile server cannot hold a client forever with the profile's defaults": under each
// profile's Timeouts, a head trickling a byte a second ends at the read timeout, and a body
// trickling a byte a second ends at the first window's end.
TEST(ClientSlowServers, TheProfilesDefaultsEndBothTrickles) {
  for (const profiles::DeviceProfile* p : {&profiles::desktop, &profiles::mobile}) {
    SCOPED_TRACE(p->name);
    ASSERT_GT(p->timeouts.speed_limit, 1U);  // A byte a second is below it.
    Harness head;
    head.policy.max_retries = 0;
    head.timeouts = p->timeouts;
    trickle(head.connector.add(),
            "HTTP/1.1 200 OK\r\nX-Slow: " + std::string(1000, 's') + "\r\n\r\n");
    const Millis head_began = head.now;
    const Millis head_ended = drive(head, head.start(), Millis(1000));
    EXPECT_EQ(head.client->result().error, Status::kTimeout);
    EXPECT_EQ(head_ended - head_began, p->timeouts.read);

    Harness body;
    body.policy.max_retries = 0;
    body.timeouts = p->timeouts;
    ScriptedTransport& c = body.connector.add();
    c.recv_data("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n").recv_would_block();
    trickle(c, std::string(10000, 'b'));
    const Millis body_began = body.now;
    const Millis body_ended = drive(body, body.start(), Millis(1000));
    EXPECT_EQ(body.client->result().error, Status::kTimeout);
    EXPECT_EQ(body_ended - body_began, p->timeouts.speed_time);
  }
}

}  // namespace
}  // namespace stepback::https::client_test
