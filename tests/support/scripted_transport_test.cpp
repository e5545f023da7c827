// The ScriptedTransport fake (tests/support) behaves as its comments promise.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tests/support/scripted_transport.hpp"

namespace stepback::testing {
namespace {

using https::IoInterest;
using https::Status;

// Receives once into a buffer of `cap` bytes; the bytes, with the status in *s.
std::string recv_once(ScriptedTransport& t, std::size_t cap, Status* s) {
  std::uint8_t buf[256];
  std::size_t n = 999;
  *s = t.recv({buf, cap}, &n);
  return std::string(reinterpret_cast<const char*>(buf), n);
}

Status send_str(ScriptedTransport& t, const std::string& bytes, std::size_t* sent) {
  return t.send({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, sent);
}

TEST(ScriptedTransport, DeliversChunksWouldBlocksAndAStickyClose) {
  ScriptedTransport t;
  t.recv_data("HTTP/1.1 ").recv_would_block().recv_data("200 OK\r\n").recv_closed();
  Status s = Status::kError;
  EXPECT_EQ(recv_once(t, 256, &s), "HTTP/1.1 ");
  EXPECT_EQ(s, Status::kOk);
  EXPECT_EQ(recv_once(t, 256, &s), "");
  EXPECT_EQ(s, Status::kWouldBlock);
  EXPECT_EQ(t.wants(), IoInterest::kRead);
  EXPECT_EQ(recv_once(t, 3, &s), "200");  // A small buffer takes part of a chunk.
  EXPECT_EQ(t.pending_recv_bytes(), 5u);
  EXPECT_EQ(recv_once(t, 256, &s), " OK\r\n");
  EXPECT_TRUE(t.recv_script_done());
  EXPECT_EQ(recv_once(t, 256, &s), "");
  EXPECT_EQ(s, Status::kClosed);
  EXPECT_EQ(recv_once(t, 256, &s), "");
  EXPECT_EQ(s, Status::kClosed);
  EXPECT_EQ(t.received_bytes(), 17u);
  EXPECT_EQ(t.recv_calls(), 6u);
}

TEST(ScriptedTransport, MaxRecvChunkSplitsAtEveryByte) {
  ScriptedTransport t;
  t.recv_data("abc").recv_data("de").set_max_recv_chunk(1);
  std::string all;
  Status s = Status::kOk;
  while (s == Status::kOk) {
    const std::string got = recv_once(t, 256, &s);
    if (s == Status::kOk) {
      EXPECT_EQ(got.size(), 1u);
    }
    all += got;
  }
  EXPECT_EQ(all, "abcde");
  EXPECT_EQ(s, Status::kWouldBlock);  // The default end of script: a silent peer.
}

TEST(ScriptedTransport, EndOfScriptStatusAndFailures) {
  ScriptedTransport t;
  t.recv_data("x").recv_at_end(Status::kClosed);
  Status s = Status::kError;
  recv_once(t, 256, &s);
  recv_once(t, 256, &s);
  EXPECT_EQ(s, Status::kClosed);
  EXPECT_EQ(t.wants(), IoInterest::kNone);

  ScriptedTransport r;
  r.recv_data("par").recv_reset().recv_data("never");
  EXPECT_EQ(recv_once(r, 256, &s), "par");
  recv_once(r, 256, &s);
  EXPECT_EQ(s, Status::kReset);
  recv_once(r, 256, &s);
  EXPECT_EQ(s, Status::kReset);

  ScriptedTransport f;
  f.recv_would_block(IoInterest::kWrite).recv_fail(Status::kTlsVerify);
  recv_once(f, 256, &s);
  EXPECT_EQ(s, Status::kWouldBlock);
  EXPECT_EQ(f.wants(), IoInterest::kWrite);  // TLS reading may need a write.
  recv_once(f, 256, &s);
  EXPECT_EQ(s, Status::kTlsVerify);
}

TEST(ScriptedTransport, RecordsSendsWithPartialWritesAndWouldBlock) {
  ScriptedTransport t;
  t.send_accept(4).send_would_block().send_fail(Status::kReset);
  std::size_t n = 0;
  EXPECT_EQ(send_str(t, "GET / HTTP/1.1\r\n", &n), Status::kOk);
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(send_str(t, "/ HTTP/1.1\r\n", &n), Status::kWouldBlock);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(t.wants(), IoInterest::kWrite);
  EXPECT_EQ(send_str(t, "/ HTTP/1.1\r\n", &n), Status::kReset);
  EXPECT_EQ(send_str(t, "/ HTTP/1.1\r\n", &n), Status::kReset);
  EXPECT_EQ(t.sent(), "GET ");
  EXPECT_EQ(t.send_calls(), 4u);
}

TEST(ScriptedTransport, UnscriptedSendsAcceptEverythingUpToTheChunkCap) {
  ScriptedTransport t;
  std::size_t n = 0;
  EXPECT_EQ(send_str(t, "hello", &n), Status::kOk);
  EXPECT_EQ(n, 5u);
  t.set_max_send_chunk(2);
  EXPECT_EQ(send_str(t, "world", &n), Status::kOk);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(t.sent(), "hellowo");
  t.clear_sent();
  EXPECT_EQ(t.sent(), "");
}

TEST(ScriptedTransport, CloseIsCountedAndLaterCallsAreMisuse) {
  ScriptedTransport t;
  t.set_fd(7).recv_data("data");
  EXPECT_EQ(t.fd(), 7);
  t.close();
  t.close();
  EXPECT_TRUE(t.closed());
  EXPECT_EQ(t.close_calls(), 2u);
  EXPECT_EQ(t.fd(), -1);
  Status s = Status::kOk;
  recv_once(t, 256, &s);
  EXPECT_EQ(s, Status::kError);
  std::size_t n = 1;
  EXPECT_EQ(send_str(t, "x", &n), Status::kError);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(t.calls_after_close(), 2u);
}

TEST(ScriptedTransport, UsableThroughTheTransportInterface) {
  ScriptedTransport fake;
  fake.recv_data("ok");
  https::Transport& t = fake;
  std::uint8_t buf[8];
  std::size_t n = 0;
  EXPECT_EQ(t.recv({buf, sizeof buf}, &n), Status::kOk);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(t.recv({buf, 0}, &n), Status::kOk);  // An empty buffer takes nothing.
  EXPECT_EQ(n, 0u);
}

// What the rate-limit tests read: empty and largest receives, and a send after kWouldBlock
// that offers other bytes than the blocked one (TLS forbids it).
TEST(ScriptedTransport, CountsEmptyReceivesLargestReceiveAndChangedResends) {
  ScriptedTransport t;
  t.recv_data("abcdef");
  std::uint8_t buf[16];
  std::size_t n = 0;
  EXPECT_EQ(t.recv({buf, 0}, &n), Status::kOk);
  EXPECT_EQ(t.recv({buf, 4}, &n), Status::kOk);
  EXPECT_EQ(t.recv({buf, 16}, &n), Status::kOk);
  EXPECT_EQ(t.empty_recvs(), 1u);
  EXPECT_EQ(t.largest_recv(), 16u);
  t.send_would_block().send_would_block();
  EXPECT_EQ(send_str(t, "12345", &n), Status::kWouldBlock);
  EXPECT_EQ(send_str(t, "12345", &n), Status::kWouldBlock);  // The same bytes: fine.
  EXPECT_EQ(t.changed_resends(), 0u);
  EXPECT_EQ(send_str(t, "123", &n), Status::kOk);  // Fewer than the blocked send offered.
  EXPECT_EQ(t.changed_resends(), 1u);
  EXPECT_EQ(send_str(t, "1", &n), Status::kOk);  // Not after a kWouldBlock.
  EXPECT_EQ(t.changed_resends(), 1u);
}

}  // namespace
}  // namespace stepback::testing
