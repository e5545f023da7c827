// The Download against scripted connections on a fake clock: when checkpoints are due, what
// they hold, and a second download (another process) going on from one.
#include "stepback/transfer/download.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "stepback/https/integrity/base64.hpp"
#include "stepback/https/integrity/crc32c.hpp"
#include "stepback/https/integrity/integrity.hpp"
#include "tests/support/heap_trap.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/string_sink.hpp"

namespace stepback::transfer {
namespace {

using testing::ScriptedConnector;
using testing::StringSink;

constexpr char kUrl[] = "https://example.test/fw.bin";

std::string body_of(std::size_t n) {
  std::string b;
  for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<char>('a' + (i * 7) % 26));
  return b;
}

std::string goog_crc32c(const std::string& body) {
  const std::uint32_t crc = https::crc32c(
      https::ConstBytes{reinterpret_cast<const std::uint8_t*>(body.data()), body.size()});
  const std::uint8_t be[4] = {static_cast<std::uint8_t>(crc >> 24),
                              static_cast<std::uint8_t>(crc >> 16),
                              static_cast<std::uint8_t>(crc >> 8), static_cast<std::uint8_t>(crc)};
  char b64[16] = {};
  const std::size_t n = https::base64_encode(https::ConstBytes{be, 4}, b64, sizeof b64);
  return "x-goog-hash: crc32c=" + std::string(b64, n) + "\r\n";
}

// One download with its buffers, a short policy and a fake clock that moves `tick` per step.
struct Harness {
  Harness() {
    policy.jitter = Jitter::kNone;
    policy.initial_delay = Millis(100);
    policy.max_backoff = Millis(400);
    policy.max_retries = 3;
    EXPECT_EQ(https::parse_url(kUrl, &spec.url), https::Status::kOk);
    spec.url_text = kUrl;
  }
  DownloadNext start() {
    DownloadOptions options;
    options.client.timeouts.read = Millis(5000);
    options.client.buffers = https::ClientBuffers{
        https::MutableBytes{request, sizeof request}, https::MutableBytes{head, sizeof head},
        https::MutableBytes{io, sizeof io}, https::MutableBytes{error_body, sizeof error_body}};
    options.client.body = body.sink();
    options.client.wall_now = [] { return Millis(1'700'000'000'000); };
    options.checkpoint = checkpoint;
    options.checkpoints = CheckpointSink{heap_free ? &Harness::keep_last : &Harness::keep, this};
    options.max_rate = max_rate;
    options.range_size = range_size;
    options.client.network = network;
    options.client.events = https::EventSink{&Harness::record, this};
    options.defer = defer;
    download = std::make_unique<Download>(connector, context, options);
    EXPECT_EQ(download->start(spec), https::Status::kOk) << download->message();
    return download->step(now);
  }
  DownloadNext run(DownloadNext next, int limit = 100000) {
    for (int i = 0; i < limit && next.kind != DownloadNext::Kind::kDone; ++i) {
      now = next.at > now ? next.at : now + tick;
      next = download->step(now);
      ++steps;
    }
    return next;
  }
  // Steps until the sink holds at least `bytes` (at most `limit` steps).
  DownloadNext run_until(DownloadNext next, std::size_t bytes, int limit = 100000) {
    for (int i = 0; i < limit && body.bytes.size() < bytes; ++i) {
      if (next.kind == DownloadNext::Kind::kDone) break;
      now = next.at > now ? next.at : now + tick;
      next = download->step(now);
    }
    return next;
  }
  // Keeps the last checkpoint only, in place: no heap.
  static bool keep_last(void* self, const TransferState& state) {
    auto* h = static_cast<Harness*>(self);
    h->last = state;
    ++h->kept;
    return true;
  }
  static void record(void* self, const https::ClientEvent& event) {
    auto* h = static_cast<Harness*>(self);
    if (!h->heap_free) h->events.push_back(event.kind);
  }
  static bool keep(void* self, const TransferState& state) {
    auto* h = static_cast<Harness*>(self);
    // A record never counts bytes the sink does not hold.
    EXPECT_LE(state.delivered, h->body.bytes.size());
    h->saved.push_back(state);
    return true;
  }

  Policy policy;
  Xoshiro128 random{7};
  RetryContext context{policy, random, nullptr};
  CheckpointPolicy checkpoint;
  ScriptedConnector connector;
  DownloadSpec spec;
  std::uint8_t request[1024];
  std::uint8_t head[1024];
  std::uint8_t io[256];
  std::uint8_t error_body[256];
  StringSink body;
  std::vector<TransferState> saved;
  bool heap_free = false;  // Checkpoints go to `last` (keep_last), not `saved`.
  TransferState last;
  int kept = 0;
  Millis now{1000};
  Millis tick{10};
  std::uint64_t max_rate = 0;
  std::uint64_t range_size = 0;
  https::NetworkPolicy network;
  DeferPolicy defer;
  std::vector<https::ClientEvent::Kind> events;  // Unless heap_free.
  int steps = 0;
  std::unique_ptr<Download> download;
};

std::string ok_head(std::size_t size, const std::string& extra = "") {
  return "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\n" + extra + "Content-Length: " + std::to_string(size) +
         "\r\n\r\n";
}

TEST(Download, CheckpointsFollowBytesAndTimeTogether) {
  Harness h;
  h.checkpoint.bytes = 1024;
  h.checkpoint.interval = Millis(100);
  const std::string body = body_of(64 * 1024);
  h.connector.add().recv_data(ok_head(body.size()) + body);
  ASSERT_EQ(h.run(h.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  ASSERT_FALSE(h.saved.empty());
  std::uint64_t last = 0;
  for (const TransferState& s : h.saved) {
    EXPECT_EQ(s.kind, TransferKind::kDownload);
    EXPECT_EQ(s.url(), kUrl);
    EXPECT_EQ(s.validator(), "\"v1\"");
    EXPECT_EQ(s.total_size, body.size());
    EXPECT_GE(s.delivered, last + 1024);
    last = s.delivered;
  }
  // 256-byte reads, 4 per step, 10 ms a step: 1 KiB every 10 ms, 64 steps, but a checkpoint
  // at most every 100 ms: one per 10 steps.
  EXPECT_GE(h.saved.size(), 5U);
  EXPECT_LE(h.saved.size(), 7U);
  EXPECT_EQ(h.download->checkpoints(), h.saved.size());
}

TEST(Download, NoCheckpointBeforeTheIntervalHowEverManyBytes) {
  Harness h;
  h.checkpoint.bytes = 1;
  h.checkpoint.interval = Millis(1'000'000);
  const std::string body = body_of(8 * 1024);
  h.connector.add().recv_data(ok_head(body.size()) + body);
  ASSERT_EQ(h.run(h.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_TRUE(h.saved.empty());
}

TEST(Download, ACheckpointBeforeEveryWaitHoldsTheWait) {
  Harness h;
  h.checkpoint.interval = Millis(1'000'000);  // Only the wait makes one due.
  const std::string body = body_of(1000);
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 600)).recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 600-999/1000\r\n"
      "Content-Length: 400\r\n\r\n" +
      body.substr(600));
  ASSERT_EQ(h.run(h.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  ASSERT_EQ(h.saved.size(), 1U);
  EXPECT_EQ(h.saved[0].delivered, 600U);
  EXPECT_EQ(h.saved[0].wait_remaining, Millis(100));
  EXPECT_EQ(h.saved[0].release_wall_ms, 1'700'000'000'100);
  EXPECT_EQ(h.saved[0].retries, 1U);
}

TEST(Download, AFailedDownloadLeavesACheckpointOfWhereItStood) {
  Harness h;
  h.policy.max_retries = 0;
  h.checkpoint.interval = Millis(1'000'000);
  const std::string body = body_of(1000);
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 700)).recv_reset();
  ASSERT_EQ(h.run(h.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kRetriesExhausted);
  ASSERT_EQ(h.saved.size(), 1U);
  EXPECT_EQ(h.saved[0].delivered, 700U);
}

// A download killed after a checkpoint, taken up by another (a new process): the second asks
// for the rest only, and the integrity check over the whole object passes without the first
// part being read again.
TEST(Download, ASecondDownloadGoesOnFromTheCheckpointAndChecksTheWholeObject) {
  const std::string body = body_of(4000);
  const std::string hash = goog_crc32c(body);
  Harness first;
  first.policy.max_retries = 0;
  first.checkpoint.bytes = 1000;
  first.checkpoint.interval = Millis(0);
  first.connector.add().recv_data(ok_head(body.size(), hash) + body.substr(0, 2500)).recv_reset();
  ASSERT_EQ(first.run(first.start()).kind, DownloadNext::Kind::kDone);
  ASSERT_FALSE(first.saved.empty());
  // The last checkpoint before the "kill": the sink is cut back to what it counts.
  const TransferState& kept = first.saved.front();
  ASSERT_GT(kept.delivered, 0U);
  ASSERT_LT(kept.delivered, 2500U);

  const auto kept_bytes = static_cast<std::size_t>(kept.delivered);
  Harness second;
  second.body.bytes = first.body.bytes.substr(0, kept_bytes);
  second.spec.resume = &kept;
  second.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash + "Content-Range: bytes " +
      std::to_string(kept.delivered) + "-3999/4000\r\nContent-Length: " +
      std::to_string(4000 - kept.delivered) + "\r\n\r\n" + body.substr(kept_bytes));
  ASSERT_EQ(second.run(second.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(second.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(second.body.bytes, body);
  EXPECT_EQ(second.download->resumed_from(), kept.delivered);
  const std::string sent = second.connector.connection(0).sent();
  EXPECT_NE(sent.find("Range: bytes=" + std::to_string(kept.delivered) + "-\r\nIf-Range: \"v1\""),
            std::string::npos)
      << sent;
}

// "Allocation-free": a download with checkpoints, a cut body resumed, and a second download
// going on from the last checkpoint make no heap call (the sink's string is reserved first).
TEST(Download, StepsAndCheckpointsMakeNoHeapCalls) {
  if (!testing::heap_trap_available())
    GTEST_SKIP() << "the heap trap needs glibc without sanitizers";
  const std::string body = body_of(32 * 1024);
  const std::string hash = goog_crc32c(body);
  Harness h;
  h.heap_free = true;
  h.checkpoint.bytes = 4096;
  h.checkpoint.interval = Millis(0);
  h.body.bytes.reserve(body.size() * 2);
  h.connector.add().recv_data(ok_head(body.size(), hash) + body.substr(0, 20000)).recv_reset();
  h.connector.add().recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                              "Content-Range: bytes 20000-32767/32768\r\nContent-Length: 12768" +
                              "\r\n\r\n" + body.substr(20000));
  long calls = 0;
  const DownloadNext first = h.start();  // Builds the Download (make_unique) outside the trap.
  {
    testing::HeapTrap trap;
    const DownloadNext next = h.run(first);
    calls = trap.calls();
    ASSERT_EQ(next.kind, DownloadNext::Kind::kDone);
  }
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_GT(h.kept, 3);
}

// A 206 of bytes [from, to) of `body`.
std::string piece(const std::string& body, std::size_t from, std::size_t to,
                  const std::string& extra = "") {
  return "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + extra + "Content-Range: bytes " +
         std::to_string(from) + "-" + std::to_string(to - 1) + "/" + std::to_string(body.size()) +
         "\r\nContent-Length: " + std::to_string(to - from) + "\r\n\r\n" +
         body.substr(from, to - from);
}

// DownloadOptions::range_size: the object comes as pieces of that size on one connection,
// each asked for by its range (If-Range on the first piece's ETag), checkpoints follow the
// bytes across them, the whole object's CRC-32C is checked at the end, and the app sees one
// request: one attempt, one response, one done.
TEST(Download, RangeSizeFetchesPiecesOnOneConnectionAndChecksTheWholeObject) {
  const std::string body = body_of(10000);
  const std::string hash = goog_crc32c(body);
  Harness h;
  h.range_size = 4096;
  h.checkpoint.bytes = 4096;
  h.checkpoint.interval = Millis(0);
  h.connector.add()
      .recv_data(piece(body, 0, 4096, hash))
      .recv_would_block(https::IoInterest::kRead)
      .recv_data(piece(body, 4096, 8192, hash))
      .recv_would_block(https::IoInterest::kRead)
      .recv_data(piece(body, 8192, 10000, hash));
  ASSERT_EQ(h.run(h.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_EQ(h.download->pieces(), 3U);
  EXPECT_EQ(h.connector.opened(), 1U);
  const std::string sent = h.connector.connection(0).sent();
  EXPECT_NE(sent.find("Range: bytes=0-4095\r\n\r\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("Range: bytes=4096-8191\r\nIf-Range: \"v1\"\r\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("Range: bytes=8192-12287\r\nIf-Range: \"v1\"\r\n"), std::string::npos)
      << sent;
  const auto count = [&](https::ClientEvent::Kind kind) {
    return std::count(h.events.begin(), h.events.end(), kind);
  };
  EXPECT_EQ(count(https::ClientEvent::Kind::kAttempt), 1);
  EXPECT_EQ(count(https::ClientEvent::Kind::kResponse), 1);
  EXPECT_EQ(count(https::ClientEvent::Kind::kDone), 1);
  ASSERT_EQ(count(https::ClientEvent::Kind::kIntegrity), 1);
  EXPECT_GE(h.saved.size(), 2U) << "checkpoints between the pieces";
}

// Regression: a piece that arrived whole within the step that asked for it ended the
// download there, as a success with the object cut short (the small-RAM build's stepback get
// over loopback TLS stopped after 4 KiB of 300 KiB, exit 0). Each piece now starts on a turn
// of its own, and the download is done only when the object is.
TEST(Download, APieceThatArrivesWithinOneStepIsNotTheEnd) {
  const std::string body = body_of(250);
  Harness h;
  h.range_size = 100;  // Each piece and its head fit one receive of the 256-byte io buffer.
  h.connector.add()
      .recv_data(piece(body, 0, 100))
      .recv_would_block(https::IoInterest::kRead)  // The kept connection's liveness check.
      .recv_data(piece(body, 100, 200))
      .recv_would_block(https::IoInterest::kRead)
      .recv_data(piece(body, 200, 250));
  ASSERT_EQ(h.run(h.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes.size(), body.size());
  EXPECT_TRUE(h.body.bytes == body);
  EXPECT_EQ(h.download->pieces(), 3U);
}

// A piece cut in the middle is retried (the app sees that attempt), and a checkpoint taken
// inside a piece lets another process go on in pieces from it.
TEST(Download, ACutPieceIsRetriedAndARestartedDownloadGoesOnInPieces) {
  const std::string body = body_of(10000);
  Harness first;
  first.range_size = 4096;
  first.policy.max_retries = 1;
  first.checkpoint.bytes = 1000;
  first.checkpoint.interval = Millis(0);
  // The second piece is cut after 1500 of its bytes, and its retry after 200 more.
  const std::string second_piece = piece(body, 4096, 8192);
  const std::string retried = piece(body, 5596, 8192);
  first.connector.add()
      .recv_data(piece(body, 0, 4096))
      .recv_would_block(https::IoInterest::kRead)
      .recv_data(second_piece.substr(0, second_piece.find("\r\n\r\n") + 4 + 1500))
      .recv_reset();
  first.connector.add()
      .recv_data(retried.substr(0, retried.find("\r\n\r\n") + 4 + 200))
      .recv_reset();
  ASSERT_EQ(first.run(first.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_NE(first.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(
      std::count(first.events.begin(), first.events.end(), https::ClientEvent::Kind::kAttempt), 2);
  const std::string retry = first.connector.connection(1).sent();
  EXPECT_NE(retry.find("Range: bytes=5596-8191\r\nIf-Range: \"v1\"\r\n"), std::string::npos)
      << retry;
  ASSERT_FALSE(first.saved.empty());
  const TransferState kept = first.saved.back();
  ASSERT_EQ(kept.delivered, 5796U);
  const auto kept_bytes = static_cast<std::size_t>(kept.delivered);
  Harness second;
  second.range_size = 4096;
  second.body.bytes = first.body.bytes.substr(0, kept_bytes);
  second.spec.resume = &kept;
  second.connector.add()
      .recv_data(piece(body, kept_bytes, kept_bytes + 4096))
      .recv_would_block(https::IoInterest::kRead)
      .recv_data(piece(body, kept_bytes + 4096, 10000));
  ASSERT_EQ(second.run(second.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(second.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(second.body.bytes, body);
  EXPECT_EQ(second.download->pieces(), 2U);
  const std::string sent = second.connector.connection(0).sent();
  EXPECT_NE(sent.find("Range: bytes=" + std::to_string(kept_bytes) + "-" +
                      std::to_string(kept_bytes + 4095) + "\r\nIf-Range: \"v1\""),
            std::string::npos)
      << sent;
}

// "Allocation-free" holds for a download in pieces.
TEST(Download, PiecesMakeNoHeapCalls) {
  if (!testing::heap_trap_available())
    GTEST_SKIP() << "the heap trap needs glibc without sanitizers";
  const std::string body = body_of(10000);
  const std::string hash = goog_crc32c(body);
  Harness h;
  h.heap_free = true;
  h.range_size = 4096;
  h.checkpoint.bytes = 4096;
  h.checkpoint.interval = Millis(0);
  h.body.bytes.reserve(body.size() * 2);
  h.connector.add()
      .recv_data(piece(body, 0, 4096, hash))
      .recv_would_block(https::IoInterest::kRead)
      .recv_data(piece(body, 4096, 8192, hash))
      .recv_would_block(https::IoInterest::kRead)
      .recv_data(piece(body, 8192, 10000, hash));
  long calls = 0;
  const DownloadNext first = h.start();
  {
    testing::HeapTrap trap;
    const DownloadNext next = h.run(first);
    calls = trap.calls();
    ASSERT_EQ(next.kind, DownloadNext::Kind::kDone);
  }
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_EQ(h.download->pieces(), 3U);
}

TEST(Download, ARecordOfAnotherUrlOrKindIsRefused) {
  Harness h;
  TransferState other;
  other.kind = TransferKind::kDownload;
  ASSERT_TRUE(other.set_url("https://example.test/other.bin"));
  h.spec.resume = &other;
  DownloadOptions options;
  options.client.wall_now = [] { return Millis(0); };
  Download d(h.connector, h.context, options);
  EXPECT_EQ(d.start(h.spec), https::Status::kInvalidArgument);
  EXPECT_STREQ(d.message(), "the record belongs to another URL");
  TransferState upload;
  upload.kind = TransferKind::kUpload;
  ASSERT_TRUE(upload.set_url(kUrl));
  h.spec.resume = &upload;
  EXPECT_EQ(d.start(h.spec), https::Status::kInvalidArgument);
  EXPECT_STREQ(d.message(), "the record is not a download's");
}

// A download's record saved 3 s before the end of a backoff (wall clock 1,700,000,000,000).
TransferState record_in_backoff() {
  TransferState kept;
  kept.kind = TransferKind::kDownload;
  EXPECT_TRUE(kept.set_url(kUrl));
  kept.wait_remaining = Millis(3000);
  kept.release_wall_ms = 1'700'000'003'000;
  return kept;
}

TEST(Download, TheRestoredWaitIsServedFirst) {
  Harness h;
  const TransferState kept = record_in_backoff();
  h.spec.resume = &kept;
  h.connector.add().recv_data(ok_head(5) + "hello");
  const DownloadNext first = h.start();
  ASSERT_EQ(first.kind, DownloadNext::Kind::kWaitUntil);
  EXPECT_EQ(first.at, h.now + Millis(3000));
  EXPECT_EQ(h.connector.opened(), 0U);
  ASSERT_EQ(h.run(first).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.body.bytes, "hello");
}

// A record saved while the restored wait is still being served keeps what is left of it: a
// process killed then sits out the rest, not nothing.
TEST(Download, ASaveDuringTheRestoredWaitKeepsWhatIsLeftOfIt) {
  Harness h;
  const TransferState kept = record_in_backoff();
  h.spec.resume = &kept;
  h.connector.add().recv_data(ok_head(5) + "hello");
  const DownloadNext first = h.start();
  ASSERT_EQ(first.kind, DownloadNext::Kind::kWaitUntil);
  TransferState saved;
  ASSERT_TRUE(h.download->save(&saved, h.now + Millis(1000), Millis(1'700'000'001'000)));
  EXPECT_EQ(saved.wait_remaining, Millis(2000));
  EXPECT_EQ(saved.release_wall_ms, 1'700'000'003'000);
  ASSERT_EQ(h.run(first).kind, DownloadNext::Kind::kDone);
}

std::string partial_head(std::size_t from, std::size_t total, const std::string& extra = "") {
  return "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + extra + "Content-Range: bytes " +
         std::to_string(from) + "-" + std::to_string(total - 1) + "/" + std::to_string(total) +
         "\r\nContent-Length: " + std::to_string(total - from) + "\r\n\r\n";
}

// --limit-rate in the library: a server that could send the whole body at once is read one
// quantum (four 256-byte io buffers here) per timed wait, so the body takes its size over
// the rate and the loop wakes once per quantum: one step per 1 KiB, none spinning.
TEST(Download, MaxRatePacesTheBodyWithOneStepPerQuantum) {
  Harness h;
  h.max_rate = 25600;  // 1 KiB every 40 ms.
  const std::string body = body_of(64 * 1024);
  const std::string response = ok_head(body.size()) + body;
  h.connector.add().recv_data(response);
  const Millis began = h.now;
  ASSERT_EQ(h.run(h.start()).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  const std::uint64_t elapsed = (h.now - began).count();
  const std::uint64_t ideal = response.size() * 1000 / h.max_rate;
  EXPECT_GE(elapsed, ideal);
  EXPECT_LE(elapsed, ideal + 1);
  EXPECT_LE(h.steps, static_cast<int>(response.size() / 1024) + 3);
  EXPECT_EQ(h.connector.connection(0).empty_recvs(), 0U);
}

// pause() mid-body closes the connection and hands the sink a checkpoint; the download then
// sits still however long (no attempt, no timeout), and resume() asks for the rest with Range
// and If-Range on the same representation: byte-exact, the sink never restarted, and the
// digest of the whole object checked over both parts.
// A switch onto a metered network the download may not use stops it at once with a
// checkpoint (no backoff in it), and an unmetered network lets it go on by Range.
TEST(Download, AMeteredNetworkHoldsItCheckpointedAndAnUnmeteredOneResumesIt) {
  const std::string body = body_of(4000);
  Harness h;
  h.network.metered = false;
  h.checkpoint.bytes = 1;
  h.checkpoint.interval = Millis(0);
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 1500)).recv_would_block();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 1500-3999/4000\r\n"
      "Content-Length: 2500\r\n\r\n" +
      body.substr(1500));
  DownloadNext next = h.run_until(h.start(), 1500);
  ASSERT_EQ(h.body.bytes.size(), 1500U);
  https::NetworkInfo metered;
  metered.metered = true;
  h.download->network_changed(h.now, metered);
  next = h.download->step(h.now);
  ASSERT_EQ(next.kind, DownloadNext::Kind::kWaitUntil);
  EXPECT_TRUE(h.connector.connection(0).closed());
  ASSERT_FALSE(h.saved.empty());
  EXPECT_EQ(h.saved.back().delivered, 1500U);
  EXPECT_EQ(h.saved.back().wait_remaining, Millis(0)) << "a hold is not a backoff to sit out";
  h.download->network_changed(h.now, https::NetworkInfo{});
  ASSERT_EQ(h.run(h.download->step(h.now)).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.download->result().attempts, 1U);
  EXPECT_TRUE(h.body.bytes == body);
}

// RunHint: held for an unmetered network with the bytes left, paused while paused.
TEST(Download, TheRunHintSaysWhatTheDownloadWaitsForAndTheBytesLeft) {
  const std::string body = body_of(4000);
  Harness h;
  h.network.metered = false;
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 1500)).recv_would_block();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 1500-3999/4000\r\n"
      "Content-Length: 2500\r\n\r\n" +
      body.substr(1500));
  DownloadNext next = h.run_until(h.start(), 1500);
  https::NetworkInfo metered;
  metered.metered = true;
  h.download->network_changed(h.now, metered);
  next = h.download->step(h.now);
  ASSERT_EQ(next.kind, DownloadNext::Kind::kWaitUntil);
  https::RunHint hint = h.download->run_hint(next);
  EXPECT_EQ(hint.state, https::RunHint::State::kWaitingForNetwork);
  EXPECT_TRUE(hint.unmetered);
  EXPECT_EQ(hint.bytes_left.value_or(0), 2500U);
  h.download->pause(h.now);
  next = h.download->step(h.now);
  hint = h.download->run_hint(next);
  EXPECT_EQ(hint.state, https::RunHint::State::kPaused);
  EXPECT_EQ(hint.run_at, Millis::max());
  EXPECT_EQ(hint.bytes_left.value_or(0), 2500U);
  ASSERT_EQ(h.download->resume(h.now), https::Status::kOk);
  h.download->network_changed(h.now, https::NetworkInfo{});
  ASSERT_EQ(h.run(h.download->step(h.now)).kind, DownloadNext::Kind::kDone);
  EXPECT_TRUE(h.body.bytes == body);
  EXPECT_EQ(h.download->run_hint(DownloadNext::done()).state, https::RunHint::State::kDone);
}

TEST(Download, PauseMidBodyThenResumeGoesOnWithRange) {
  const std::string body = body_of(4000);
  const std::string hash = goog_crc32c(body);
  Harness h;
  h.checkpoint.interval = Millis(1'000'000);  // Only the pause makes one.
  h.connector.add().recv_data(ok_head(body.size(), hash) + body.substr(0, 1500));
  h.connector.add().recv_data(partial_head(1500, 4000, hash) + body.substr(1500));
  DownloadNext next = h.run_until(h.start(), 1500);
  ASSERT_EQ(h.body.bytes.size(), 1500U);
  ASSERT_NE(next.kind, DownloadNext::Kind::kDone);
  h.download->pause(h.now);
  EXPECT_TRUE(h.download->paused());
  EXPECT_TRUE(h.connector.connection(0).closed());
  ASSERT_EQ(h.saved.size(), 1U);
  EXPECT_EQ(h.saved[0].delivered, 1500U);
  EXPECT_EQ(h.saved[0].validator(), "\"v1\"");
  next = h.download->step(h.now);
  EXPECT_EQ(next.kind, DownloadNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, Millis::max());
  h.now = h.now + Millis(600'000);  // Far past the read timeout: nothing is running.
  EXPECT_EQ(h.download->step(h.now).at, Millis::max());
  EXPECT_EQ(h.connector.opened(), 1U);

  ASSERT_EQ(h.download->resume(h.now), https::Status::kOk);
  EXPECT_FALSE(h.download->paused());
  ASSERT_EQ(h.run(h.download->step(h.now)).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess) << h.download->result().message;
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.body.offset_violations, 0U);
  EXPECT_EQ(h.download->client().refetched(), 0U);
  const std::string sent = h.connector.connection(1).sent();
  EXPECT_NE(sent.find("Range: bytes=1500-\r\nIf-Range: \"v1\"\r\n"), std::string::npos) << sent;
}

// The digests still cover the whole object after a pause: a rest that does not belong to
// the first part fails the download rather than completing a spliced file.
TEST(Download, AResumedDownloadChecksTheWholeObjectsDigest) {
  const std::string body = body_of(4000);
  const std::string hash = goog_crc32c(body);
  std::string other_rest = body.substr(1500);
  other_rest[100] ^= 0x20;
  Harness h;
  h.connector.add().recv_data(ok_head(body.size(), hash) + body.substr(0, 1500));
  h.connector.add().recv_data(partial_head(1500, 4000, hash) + other_rest);
  (void)h.run_until(h.start(), 1500);
  h.download->pause(h.now);
  ASSERT_EQ(h.download->resume(h.now + Millis(1000)), https::Status::kOk);
  h.now = h.now + Millis(1000);
  ASSERT_EQ(h.run(h.download->step(h.now)).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.download->result().error, https::Status::kIntegrity);
}

// A pause during a backoff wait does not shorten it: resume() before its end waits for the
// rest; the next attempt then goes on from the delivered bytes.
TEST(Download, APauseInABackoffWaitKeepsTheWaitsEnd) {
  const std::string body = body_of(1000);
  Harness h;
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 600)).recv_reset();
  h.connector.add().recv_data(partial_head(600, 1000) + body.substr(600));
  (void)h.run_until(h.start(), 600);
  const DownloadNext wait = h.download->step(h.now);  // Reads the reset: a 100 ms backoff.
  ASSERT_EQ(wait.kind, DownloadNext::Kind::kWaitUntil);
  ASSERT_EQ(wait.at, h.now + Millis(100));
  h.download->pause(h.now + Millis(30));
  ASSERT_EQ(h.download->resume(h.now + Millis(50)), https::Status::kOk);
  const DownloadNext after = h.download->step(h.now + Millis(50));
  EXPECT_EQ(after.kind, DownloadNext::Kind::kWaitUntil);
  EXPECT_EQ(after.at, wait.at);
  EXPECT_EQ(h.connector.opened(), 1U);
  h.now = h.now + Millis(50);
  ASSERT_EQ(h.run(after).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
  EXPECT_NE(h.connector.connection(1).sent().find("Range: bytes=600-"), std::string::npos);
}

// Paused before its first step, a download from a record still sits out the record's wait
// once resumed.
TEST(Download, PausedBeforeItsFirstStepItStartsOnResume) {
  Harness h;
  const TransferState kept = record_in_backoff();
  h.spec.resume = &kept;
  h.connector.add().recv_data(ok_head(5) + "hello");
  DownloadOptions options;
  options.client.buffers = https::ClientBuffers{
      https::MutableBytes{h.request, sizeof h.request}, https::MutableBytes{h.head, sizeof h.head},
      https::MutableBytes{h.io, sizeof h.io},
      https::MutableBytes{h.error_body, sizeof h.error_body}};
  options.client.timeouts.read = Millis(5000);
  options.client.body = h.body.sink();
  options.client.wall_now = [] { return Millis(1'700'000'000'000); };
  h.download = std::make_unique<Download>(h.connector, h.context, options);
  ASSERT_EQ(h.download->start(h.spec), https::Status::kOk);
  h.download->pause(h.now);
  EXPECT_EQ(h.download->step(h.now).at, Millis::max());
  EXPECT_EQ(h.connector.opened(), 0U);
  ASSERT_EQ(h.download->resume(h.now), https::Status::kOk);
  const DownloadNext first = h.download->step(h.now);
  EXPECT_EQ(first.kind, DownloadNext::Kind::kWaitUntil);
  EXPECT_EQ(first.at, h.now + Millis(3000));
  ASSERT_EQ(h.run(first).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.body.bytes, "hello");
}

// A pause in the wait a record carried keeps that wait's end: resumed before it, the download
// waits for the rest before its first request.
TEST(Download, APauseInTheRestoredWaitKeepsItsEnd) {
  Harness h;
  const TransferState kept = record_in_backoff();
  h.spec.resume = &kept;
  h.connector.add().recv_data(ok_head(5) + "hello");
  const DownloadNext first = h.start();
  ASSERT_EQ(first.kind, DownloadNext::Kind::kWaitUntil);
  ASSERT_EQ(first.at, h.now + Millis(3000));
  h.download->pause(h.now + Millis(1000));
  EXPECT_TRUE(h.download->paused());
  EXPECT_EQ(h.download->step(h.now + Millis(1500)).at, Millis::max());
  ASSERT_EQ(h.download->resume(h.now + Millis(2000)), https::Status::kOk);
  const DownloadNext after = h.download->step(h.now + Millis(2000));
  EXPECT_EQ(after.kind, DownloadNext::Kind::kWaitUntil);
  EXPECT_EQ(after.at, first.at);
  EXPECT_EQ(h.connector.opened(), 0U);
  h.now = h.now + Millis(2000);
  ASSERT_EQ(h.run(after).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.body.bytes, "hello");
}

// cancel() leaves a checkpoint of a download under way, none before its first step (nothing
// moved) or while paused (the pause made one); the download is then done.
TEST(Download, CancelCheckpointsOnlyADownloadUnderWay) {
  const std::string body = body_of(2000);
  {
    Harness h;
    h.checkpoint.interval = Millis(1'000'000);
    h.connector.add().recv_data(ok_head(body.size()) + body);
    DownloadOptions options;
    options.client.buffers = https::ClientBuffers{
        https::MutableBytes{h.request, sizeof h.request},
        https::MutableBytes{h.head, sizeof h.head}, https::MutableBytes{h.io, sizeof h.io},
        https::MutableBytes{h.error_body, sizeof h.error_body}};
    options.client.body = h.body.sink();
    options.client.wall_now = [] { return Millis(1'700'000'000'000); };
    options.checkpoints = CheckpointSink{&Harness::keep, &h};
    h.download = std::make_unique<Download>(h.connector, h.context, options);
    ASSERT_EQ(h.download->start(h.spec), https::Status::kOk);
    h.download->cancel(h.now);
    EXPECT_TRUE(h.saved.empty());
    EXPECT_EQ(h.download->step(h.now).kind, DownloadNext::Kind::kDone);
    EXPECT_EQ(h.download->result().outcome, Outcome::kCancelled);
    EXPECT_EQ(h.connector.opened(), 0U);
  }
  {
    Harness h;
    h.checkpoint.interval = Millis(1'000'000);
    h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 700));
    (void)h.run_until(h.start(), 700);
    ASSERT_TRUE(h.saved.empty());
    h.download->cancel(h.now);
    ASSERT_EQ(h.saved.size(), 1U);
    EXPECT_EQ(h.saved[0].delivered, 700U);
    EXPECT_FALSE(h.download->paused());
    EXPECT_EQ(h.download->step(h.now).kind, DownloadNext::Kind::kDone);
    EXPECT_EQ(h.download->result().outcome, Outcome::kCancelled);
    h.download->pause(h.now);  // Done: no effect.
    EXPECT_FALSE(h.download->paused());
    EXPECT_EQ(h.saved.size(), 1U);
  }
  {
    Harness h;
    h.checkpoint.interval = Millis(1'000'000);
    h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 700));
    (void)h.run_until(h.start(), 700);
    h.download->pause(h.now);
    ASSERT_EQ(h.saved.size(), 1U);
    h.download->cancel(h.now);
    EXPECT_EQ(h.saved.size(), 1U);
    EXPECT_FALSE(h.download->paused());
    EXPECT_EQ(h.download->resume(h.now), https::Status::kOk);  // Not paused: nothing to do.
    EXPECT_EQ(h.download->step(h.now).kind, DownloadNext::Kind::kDone);
    EXPECT_EQ(h.connector.opened(), 1U);
  }
}

// Pausing and resuming allocate nothing either.
TEST(Download, PauseAndResumeMakeNoHeapCalls) {
  if (!testing::heap_trap_available())
    GTEST_SKIP() << "the heap trap needs glibc without sanitizers";
  const std::string body = body_of(8000);
  const std::string hash = goog_crc32c(body);
  Harness h;
  h.heap_free = true;
  h.body.bytes.reserve(body.size() * 2);
  h.connector.add().recv_data(ok_head(body.size(), hash) + body.substr(0, 3000));
  h.connector.add().recv_data(partial_head(3000, 8000, hash) + body.substr(3000));
  const DownloadNext first = h.start();
  long calls = 0;
  {
    testing::HeapTrap trap;
    (void)h.run_until(first, 3000);
    h.download->pause(h.now);
    const bool resumed = h.download->resume(h.now) == https::Status::kOk;
    const DownloadNext next = h.run(h.download->step(h.now));
    calls = trap.calls();
    ASSERT_TRUE(resumed);
    ASSERT_EQ(next.kind, DownloadNext::Kind::kDone);
  }
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
  EXPECT_EQ(h.download->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, body);
}

// The mobile profile's deferral: 10 minutes and up to 10 more.
constexpr DeferPolicy kDefer{Millis(600'000), Millis(600'000)};
constexpr char kNotFound[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

// Retries that run out after a checkpoint counted bytes lose nothing: the download is
// deferred, to run again delay + U[0, spread] after it ended, the same time at every ask.
TEST(Download, RetriesThatRunOutAfterACheckpointDeferIt) {
  Harness h;
  h.policy.max_retries = 1;
  h.defer = kDefer;
  h.checkpoint.interval = Millis(1'000'000);
  const std::string body = body_of(1000);
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 700)).recv_reset();
  h.connector.add().recv_reset();
  const DownloadNext done = h.run(h.start());
  ASSERT_EQ(done.kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kRetriesExhausted);
  ASSERT_FALSE(h.saved.empty());
  EXPECT_EQ(h.saved.back().delivered, 700U);
  const Millis end = h.now;
  const https::RunHint hint = h.download->run_hint(done);
  EXPECT_EQ(hint.state, https::RunHint::State::kDeferred);
  EXPECT_GE(hint.run_at, end + kDefer.delay);
  EXPECT_LE(hint.run_at, end + kDefer.delay + kDefer.spread);
  EXPECT_EQ(h.download->run_hint(done).run_at, hint.run_at);
  EXPECT_EQ(h.download->run_hint(h.download->step(h.now + Millis(5))).run_at, hint.run_at);
  EXPECT_EQ(h.download->deferred_until(), hint.run_at);
  // A new start is not deferred until it gives up again.
  ASSERT_EQ(h.download->start(h.spec), https::Status::kOk);
  EXPECT_FALSE(h.download->deferred_until().has_value());
}

// Retries that run out before any byte arrived leave nothing to go on from: done.
TEST(Download, RetriesThatRunOutWithNothingKeptAreDone) {
  Harness h;
  h.policy.max_retries = 1;
  h.defer = kDefer;
  h.connector.add().recv_reset();
  h.connector.add().recv_reset();
  const DownloadNext done = h.run(h.start());
  ASSERT_EQ(done.kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(h.download->run_hint(done).state, https::RunHint::State::kDone);
  EXPECT_FALSE(h.download->deferred_until().has_value());
}

// A 404 is final, however many bytes a checkpoint kept.
TEST(Download, ATerminalStatusAfterACheckpointIsDone) {
  Harness h;
  h.policy.max_retries = 3;
  h.defer = kDefer;
  h.checkpoint.interval = Millis(1'000'000);
  const std::string body = body_of(1000);
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 700)).recv_reset();
  h.connector.add().recv_data(kNotFound);
  const DownloadNext done = h.run(h.start());
  ASSERT_EQ(done.kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kTerminalStatus);
  ASSERT_FALSE(h.saved.empty());
  EXPECT_EQ(h.saved.back().delivered, 700U);
  EXPECT_EQ(h.download->run_hint(done).state, https::RunHint::State::kDone);
  EXPECT_FALSE(h.download->deferred_until().has_value());
}

// Options left at their defaults (DeferPolicy delay 0) make a give-up final.
TEST(Download, WithoutADeferralAGiveUpIsDone) {
  Harness h;
  h.policy.max_retries = 0;
  h.checkpoint.interval = Millis(1'000'000);
  const std::string body = body_of(1000);
  h.connector.add().recv_data(ok_head(body.size()) + body.substr(0, 700)).recv_reset();
  const DownloadNext done = h.run(h.start());
  ASSERT_EQ(done.kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.download->result().outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(h.download->run_hint(done).state, https::RunHint::State::kDone);
}

}  // namespace
}  // namespace stepback::transfer

namespace stepback::transfer {
namespace {

// A record over the first `kept` bytes of `body`, as a download whose response announced the
// object's CRC-32C and MD5 would have saved it, the MD5 fed in pieces of `piece` bytes (so
// that its block buffer holds what another chunking leaves there).
TransferState record_over(const std::string& body, std::size_t kept, std::size_t piece) {
  https::IntegrityCheck check;
  check.expect_crc32c(0x12345678U);
  std::uint8_t md5[https::kMd5DigestSize] = {1, 2, 3};
  check.expect_md5(md5);
  for (std::size_t at = 0; at < kept; at += piece) {
    const std::size_t n = std::min(piece, kept - at);
    check.update(https::ConstBytes{reinterpret_cast<const std::uint8_t*>(body.data()) + at, n});
  }
  TransferState s;
  s.kind = TransferKind::kDownload;
  s.delivered = kept;
  s.integrity = check.state();
  s.crc32c = check.crc32c();
  return s;
}

struct KeptSource {
  std::string bytes;
  static std::size_t read(void* context, std::uint64_t offset, https::MutableBytes out) {
    const std::string& b = static_cast<KeptSource*>(context)->bytes;
    if (offset >= b.size()) return 0;
    const auto at = static_cast<std::size_t>(offset);  // Below b.size().
    const std::size_t n = std::min(out.size, b.size() - at);
    std::memcpy(out.data, b.data() + at, n);
    return n;
  }
  https::BodySource source() { return https::BodySource{&KeptSource::read, this, bytes.size()}; }
};

// A bit flipped in a part file below its checkpoint went unseen: the running
// digests came from the record, and "integrity verified" was said of bytes no longer on
// disk. The kept bytes are read back and hashed again.
TEST(KeptBytes, AFlippedBitBelowTheCheckpointIsFound) {
  const std::string body = body_of(10007);
  const TransferState record = record_over(body, 10007, 1500);
  KeptSource kept{body};
  std::uint8_t scratch[700];
  EXPECT_EQ(check_kept_bytes(record, kept.source(), https::MutableBytes{scratch, sizeof scratch}),
            KeptBytes::kIntact)
      << "read back in other pieces than it was written, the same bytes hash the same";
  kept.bytes[1000] = static_cast<char>(kept.bytes[1000] ^ 0x01);
  EXPECT_EQ(check_kept_bytes(record, kept.source(), https::MutableBytes{scratch, sizeof scratch}),
            KeptBytes::kDamaged);
}

// A damaged MD5 alone (the CRC-32C made to agree) is found too.
TEST(KeptBytes, TheMd5IsComparedBesideTheCrc32c) {
  const std::string body = body_of(4096 + 17);
  TransferState record = record_over(body, body.size(), 4096);
  record.integrity.md5_context[3] ^= 0x80;  // As if other bytes had been hashed.
  KeptSource kept{body};
  std::uint8_t scratch[4096];
  EXPECT_EQ(check_kept_bytes(record, kept.source(), https::MutableBytes{scratch, sizeof scratch}),
            KeptBytes::kDamaged);
}

TEST(KeptBytes, AShortPartIsUnreadableAndARecordWithoutDigestsIsNotRead) {
  const std::string body = body_of(5000);
  const TransferState record = record_over(body, 5000, 5000);
  KeptSource shorter{body.substr(0, 4000)};
  std::uint8_t scratch[1024];
  EXPECT_EQ(
      check_kept_bytes(record, shorter.source(), https::MutableBytes{scratch, sizeof scratch}),
      KeptBytes::kUnreadable);
  TransferState plain;
  plain.kind = TransferKind::kDownload;
  plain.delivered = 5000;
  const https::BodySource nothing{};  // Never read: a null read would be kUnreadable.
  EXPECT_EQ(check_kept_bytes(plain, nothing, https::MutableBytes{scratch, sizeof scratch}),
            KeptBytes::kUnchecked);
  EXPECT_STREQ(to_string(KeptBytes::kDamaged), "damaged");
}

TEST(KeptBytes, CheckingMakesNoHeapCalls) {
  if (!testing::heap_trap_available())
    GTEST_SKIP() << "the heap trap needs glibc without sanitizers";
  const std::string body = body_of(3000);
  const TransferState record = record_over(body, 3000, 100);
  KeptSource kept{body};
  const https::BodySource source = kept.source();
  std::uint8_t scratch[512];
  KeptBytes got = KeptBytes::kUnreadable;
  long calls = -1;
  {
    testing::HeapTrap trap;
    got = check_kept_bytes(record, source, https::MutableBytes{scratch, sizeof scratch});
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
  EXPECT_EQ(got, KeptBytes::kIntact);
}

}  // namespace
}  // namespace stepback::transfer
