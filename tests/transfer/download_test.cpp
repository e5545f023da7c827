// The Download against scripted connections on a fake clock: when checkpoints are due, what
// they hold, and a second download (another process) going on from one.
#include "stepback/transfer/download.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "stepback/https/integrity/base64.hpp"
#include "stepback/https/integrity/crc32c.hpp"
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
    download = std::make_unique<Download>(connector, context, options);
    EXPECT_EQ(download->start(spec), https::Status::kOk) << download->message();
    return download->step(now);
  }
  DownloadNext run(DownloadNext next, int limit = 100000) {
    for (int i = 0; i < limit && next.kind != DownloadNext::Kind::kDone; ++i) {
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

TEST(Download, TheRestoredWaitIsServedFirst) {
  Harness h;
  TransferState kept;
  kept.kind = TransferKind::kDownload;
  ASSERT_TRUE(kept.set_url(kUrl));
  kept.wait_remaining = Millis(3000);
  kept.release_wall_ms = 1'700'000'003'000;
  h.spec.resume = &kept;
  h.connector.add().recv_data(ok_head(5) + "hello");
  const DownloadNext first = h.start();
  ASSERT_EQ(first.kind, DownloadNext::Kind::kWaitUntil);
  EXPECT_EQ(first.at, h.now + Millis(3000));
  EXPECT_EQ(h.connector.opened(), 0U);
  ASSERT_EQ(h.run(first).kind, DownloadNext::Kind::kDone);
  EXPECT_EQ(h.body.bytes, "hello");
}

}  // namespace
}  // namespace stepback::transfer
