// Resumable uploads against a real resumable-upload server on loopback (upload_server.py,
// TLS or plain), one injected fault per test and then all of them in one upload. Each
// upload must finish byte-exact, never send a committed byte again (the server counts the
// overlap of every chunk with what it held), and send at most the body plus one chunk per
// fault; the bytes sent are printed and recorded as a test property.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "stepback/https/integrity/integrity.hpp"
#include "stepback/https/tls/tls.hpp"
#include "upload_fixture.hpp"

namespace stepback::transfer_test {
namespace {

using Kind = transfer::UploadEvent::Kind;

constexpr std::uint64_t kChunk = transfer::kChunkGranularity;
constexpr std::uint64_t kSize = 4 * kChunk + 1234;  // Five chunks, the last short.

class UploadLoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(integration::python_path(), "python3");
    STEPBACK_REQUIRE_TOOL(integration::openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(integration::bash_path(), "bash");
    ASSERT_NE(integration::pki(), nullptr);
    tls_ = integration::make_tls(integration::pki()->ca);
    ASSERT_NE(tls_, nullptr);
  }

  // Starts the server with `faults` and uploads `size` bytes to it.
  UploadRun upload(const std::string& faults, bool tls = true, std::uint64_t size = kSize,
                   UploadSetup setup = UploadSetup{}) {
    UploadServer::Options options;
    options.script = faults;
    options.tls = tls;
    options.log_delay_ms = log_delay_ms_;
    EXPECT_TRUE(server_.start(options));
    setup.url = server_.initiation_url("object");
    setup.size = size;
    setup.tls = tls ? tls_.get() : nullptr;
    return run_upload(setup);
  }

  // The upload finished byte-exact, sent no committed byte again, and sent at most the body
  // plus one chunk per fault.
  void expect_complete(const UploadRun& run, std::uint64_t size, int faults) {
    EXPECT_FALSE(run.hit_wall_limit);
    EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
    EXPECT_EQ(run.committed, size);
    EXPECT_EQ(run.io_waits_without_fd, 0U);
    const std::string object = server_.object("object");
    EXPECT_EQ(object.size(), size);
    EXPECT_TRUE(object == body(size)) << "the stored object differs from the body";
    EXPECT_EQ(server_.sum("overlap", "chunk"), 0U) << "committed bytes were sent again\n"
                                                   << server_.log();
    EXPECT_NE(run.metadata.find("\"size\": \"" + std::to_string(size) + "\""), std::string::npos)
        << run.metadata;
    EXPECT_LE(run.bytes_sent, size + static_cast<std::uint64_t>(faults) * kChunk) << run.summary();
    const double per_byte = static_cast<double>(run.bytes_sent) / static_cast<double>(size);
    std::printf(
        "bytes sent: %llu for a body of %llu (%.4f per byte; %d fault%s, %u exchanges, "
        "%u connections, %.2f s)\n",
        static_cast<unsigned long long>(run.bytes_sent), static_cast<unsigned long long>(size),
        per_byte, faults, faults == 1 ? "" : "s", run.result.exchanges, run.connections,
        static_cast<double>(run.elapsed.count()) / 1000.0);
    RecordProperty("bytes_sent", std::to_string(run.bytes_sent));
    RecordProperty("body_size", std::to_string(size));
  }

  UploadServer server_;
  std::unique_ptr<https::TlsClientConfig> tls_;
  int log_delay_ms_ = 0;  // The server's --log-delay for upload().
};

// Regression test: the server wrote a request's log record after sending its answer, so a
// test that read the log as soon as the upload returned could miss the last chunk (seen on a
// fresh machine: count("chunk") was 4, not 5). With every record written 300 ms late, as by
// a server thread on a loaded machine, the log must still hold all five chunks.
TEST_F(UploadLoopbackTest, TheServerLogHoldsEveryChunkWhenTheUploadReturns) {
  log_delay_ms_ = 300;
  const UploadRun run = upload("[]");
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  EXPECT_EQ(server_.count("chunk"), 5) << server_.log();
  EXPECT_EQ(server_.count("post"), 1) << server_.log();
}

TEST_F(UploadLoopbackTest, WithoutFaultsTheBodyGoesOnceInChunks) {
  const UploadRun run = upload("[]");
  expect_complete(run, kSize, 0);
  EXPECT_EQ(run.bytes_sent, kSize);
  EXPECT_EQ(run.result.exchanges, 6U);  // The session POST and five chunks.
  EXPECT_EQ(run.sessions, 1U);
  EXPECT_EQ(server_.count("chunk"), 5);
  EXPECT_EQ(server_.count("query"), 0);
  EXPECT_TRUE(run.of(Kind::kWait).empty());
  // The server keeps its connection alive: one TLS handshake for the whole session.
  EXPECT_EQ(run.connections, 1U);
}

TEST_F(UploadLoopbackTest, PlainHttpToo) {
  const UploadRun run = upload("[]", /*tls=*/false);
  expect_complete(run, kSize, 0);
  EXPECT_EQ(run.bytes_sent, kSize);
  EXPECT_EQ(run.connections, 1U);
}

// x-goog-hash of `data`'s CRC-32C, as the library sends it: "crc32c=BASE64".
std::string goog_crc32c(const std::string& data) {
  const https::Digest d = https::Digest::crc32c(https::crc32c(
      https::ConstBytes{reinterpret_cast<const std::uint8_t*>(data.data()), data.size()}));
  char b64[16] = {};
  const std::size_t n = https::base64_encode(d.view(), b64, sizeof b64);
  return "crc32c=" + std::string(b64, n);
}

TEST_F(UploadLoopbackTest, TheLastChunkCarriesTheBodysCrc32cAndTheStoredObjectIsVerified) {
  const UploadRun run = upload("[]");
  expect_complete(run, kSize, 0);
  const std::string log = server_.log();
  const std::string sent = "\"hash\": \"" + goog_crc32c(body(kSize)) + "\"";
  const std::size_t at = log.find(sent);
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_EQ(log.find(sent, at + 1), std::string::npos) << "sent more than once\n" << log;
  // On the request that completed the object, and only there.
  const std::size_t line = log.rfind('\n', at) + 1;
  EXPECT_NE(log.substr(line, log.find('\n', at) - line)
                .find("\"range\": \"bytes 1048576-1049809/1049810\""),
            std::string::npos)
      << log;
  EXPECT_EQ(run.result.integrity.status, https::IntegrityStatus::kMatch) << run.summary();
  EXPECT_TRUE(run.result.integrity.crc32c.checked);
  EXPECT_FALSE(run.result.integrity.md5.checked);  // No MD5 was given to compare.
  // The bytes hashed before the last chunk are its own: no more than the body went out.
  EXPECT_EQ(run.bytes_sent, kSize);
}

// Regression: without a digest on the completing request, a bit flipped on the way was
// stored as the object and the upload reported success.
TEST_F(UploadLoopbackTest, ABitFlippedOnTheWayIsRefusedByTheServer) {
  const std::string corrupt = R"([{"on": "chunk", "nth": 2, "do": "corrupt", "at": 5}])";
  const UploadRun run = upload(corrupt);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalStatus) << run.summary();
  EXPECT_EQ(run.result.status, 400);
  EXPECT_EQ(server_.object("object"), "") << "a corrupted object was stored";

  // What the old behaviour gave: no digest sent, the corrupted object stored, "success".
  UploadServer plain;
  UploadServer::Options options;
  options.script = corrupt;
  ASSERT_TRUE(plain.start(options));
  UploadSetup without;
  without.compute_crc32c = false;
  without.url = plain.initiation_url("object");
  without.size = kSize;
  without.tls = tls_.get();
  const UploadRun old = run_upload(without);
  EXPECT_EQ(old.result.outcome, Outcome::kSuccess) << old.summary();
  EXPECT_EQ(old.result.integrity.status, https::IntegrityStatus::kNoExpectation);
  EXPECT_EQ(plain.object("object").size(), kSize);
  EXPECT_NE(plain.object("object"), body(kSize));
}

TEST_F(UploadLoopbackTest, AStoredObjectWhoseDigestDiffersEndsWithAnIntegrityFailure) {
  const UploadRun run = upload(R"([{"on": "chunk", "nth": 5, "do": "lie"}])");
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.error, https::Status::kIntegrity);
  EXPECT_EQ(run.result.integrity.status, https::IntegrityStatus::kMismatch);
  EXPECT_NE(run.message.find("crc32c mismatch: expected "), std::string::npos) << run.message;
}

// A body still being produced: whole chunks with "bytes a-b/*" as they become ready, the
// size declared with the last one; through a reset, whose query is "bytes */*".
TEST_F(UploadLoopbackTest, ABodyOfUnknownSizeGoesAsItIsProduced) {
  UploadSetup setup;
  setup.reveal = 300 * 1024;  // Not a chunk multiple: the upload waits for whole chunks.
  const UploadRun run =
      upload(R"([{"on": "chunk", "nth": 2, "do": "reset", "after": 100000, "commit": 60000}])",
             true, kSize, setup);
  expect_complete(run, kSize, 1);
  EXPECT_GE(run.extensions, 3U);
  const std::string log = server_.log();
  EXPECT_NE(log.find("\"range\": \"bytes 0-262143/*\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"range\": \"bytes */*\""), std::string::npos) << log;
  EXPECT_NE(log.find("-1049809/1049810\""), std::string::npos) << log;  // The last, sized.
  EXPECT_EQ(log.find("x-upload-content-length"), std::string::npos);
  EXPECT_EQ(run.result.integrity.status, https::IntegrityStatus::kMatch);
}

TEST_F(UploadLoopbackTest, AResetMidChunkAfterPartOfItWasCommitted) {
  // The second chunk: 100000 bytes arrive, 60000 are kept, then the connection is reset.
  const UploadRun run =
      upload(R"([{"on": "chunk", "nth": 2, "do": "reset", "after": 100000, "commit": 60000}])");
  expect_complete(run, kSize, 1);
  EXPECT_EQ(server_.count("query"), 1);
  // The next chunk starts at the committed offset, not at the cut chunk's start.
  bool resumed = false;
  for (const SeenEvent& e : run.of(Kind::kChunk)) resumed |= e.offset == kChunk + 60000;
  EXPECT_TRUE(resumed) << run.summary();
}

TEST_F(UploadLoopbackTest, A503OnAPut) {
  const UploadRun run = upload(R"([{"on": "chunk", "nth": 3, "do": "status", "status": 503}])",
                               /*tls=*/false);
  expect_complete(run, kSize, 1);
  EXPECT_EQ(server_.count("query"), 1);
  EXPECT_EQ(run.of(Kind::kWait).size(), 1U);
}

TEST_F(UploadLoopbackTest, A408OnAPut) {
  const UploadRun run = upload(R"([{"on": "chunk", "nth": 2, "do": "status", "status": 408}])");
  expect_complete(run, kSize, 1);
  EXPECT_EQ(server_.count("query"), 1);
}

TEST_F(UploadLoopbackTest, A429WithRetryAfterOnAPut) {
  const UploadRun run =
      upload(R"([{"on": "chunk", "nth": 2, "do": "status", "status": 429, "retry_after": 1}])");
  expect_complete(run, kSize, 1);
  const auto waits = run.of(Kind::kWait);
  ASSERT_EQ(waits.size(), 1U);
  // Retry-After's second, then the test policy's first backoff (100 ms + U[0, 50 ms]).
  EXPECT_GE(waits[0].wait_ms, 1000U + 100U);
  EXPECT_LE(waits[0].wait_ms, 1000U + 150U);
  EXPECT_EQ(waits[0].wait_reason, WaitReason::kRetryAfter);
}

TEST_F(UploadLoopbackTest, A503ThatKeptPartOfTheChunk) {
  const UploadRun run =
      upload(R"([{"on": "chunk", "nth": 2, "do": "status", "status": 503, "commit": 100000}])");
  expect_complete(run, kSize, 1);
}

TEST_F(UploadLoopbackTest, A308WithoutRange) {
  // The first chunk is dropped: 308 with no Range, nothing held; it goes again after a wait.
  const UploadRun run = upload(R"([{"on": "chunk", "nth": 1, "do": "drop"}])");
  expect_complete(run, kSize, 1);
  EXPECT_EQ(server_.count("query"), 0);  // The 308 said what is held.
  EXPECT_EQ(run.of(Kind::kWait).size(), 1U);
}

TEST_F(UploadLoopbackTest, AStallAfterPartOfTheChunkWasCommitted) {
  UploadSetup setup;
  setup.timeouts.read = Millis(2500);  // Under the 6 s stall, far over a busy loopback.
  const UploadRun run =
      upload(R"([{"on": "chunk", "nth": 2, "do": "stall", "commit": 131072, "seconds": 6}])", true,
             kSize, setup);
  expect_complete(run, kSize, 1);
  bool timed_out = false;
  for (const SeenEvent& e : run.of(Kind::kError)) timed_out |= e.failure == Failure::kTimeout;
  EXPECT_TRUE(timed_out) << run.summary();
  EXPECT_EQ(server_.count("query"), 1);
}

TEST_F(UploadLoopbackTest, AnExpiredSessionEndsTheUploadClearly) {
  const UploadRun run = upload(R"([{"on": "chunk", "nth": 3, "do": "expire"}])");
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalStatus) << run.summary();
  EXPECT_EQ(run.result.status, 404);
  EXPECT_TRUE(run.result.session_expired);
  EXPECT_NE(run.message.find("expired"), std::string::npos) << run.message;
  EXPECT_EQ(run.of(Kind::kExpired).size(), 1U);
  EXPECT_EQ(server_.object("object"), "");
}

TEST_F(UploadLoopbackTest, AnExpiredSessionIsReplacedWhenAllowed) {
  UploadSetup setup;
  setup.session_restarts = 1;
  const UploadRun run =
      upload(R"([{"on": "chunk", "nth": 3, "do": "expire"}])", true, kSize, setup);
  EXPECT_EQ(run.sessions, 2U);
  EXPECT_EQ(server_.count("post"), 2);
  // A new session has none of the old one's bytes: the two chunks it held go again, and
  // the one that met the expiry.
  ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary();
  expect_complete(run, kSize, 3);
}

TEST_F(UploadLoopbackTest, A503OnTheSessionPostIsRetried) {
  // 503 is a refusal to act (RFC 9110 15.6.4): safe to send the POST again under "auto".
  const UploadRun run = upload(R"([{"on": "post", "do": "status", "status": 503}])");
  expect_complete(run, kSize, 0);
  EXPECT_EQ(server_.count("post"), 2);
  EXPECT_EQ(run.sessions, 1U);
}

TEST_F(UploadLoopbackTest, AKnownSessionGoesOnWhereTheLastRunStopped) {
  // The first run gives up on a 503 (no retries allowed) after two chunks.
  UploadServer::Options options;
  options.script = R"([{"on": "chunk", "nth": 3, "do": "status", "status": 503}])";
  ASSERT_TRUE(server_.start(options));
  UploadSetup setup;
  setup.url = server_.initiation_url("object");
  setup.size = kSize;
  setup.tls = tls_.get();
  setup.policy.max_retries = 0;
  const UploadRun first = run_upload(setup);
  ASSERT_EQ(first.result.outcome, Outcome::kRetriesExhausted) << first.summary();
  EXPECT_EQ(first.committed, 2 * kChunk);
  ASSERT_FALSE(first.session_uri.empty());

  // The second continues the session: a query, then only what the server lacks.
  setup.session = first.session_uri;
  setup.policy = integration::test_policy();
  const UploadRun second = run_upload(setup);
  expect_complete(second, kSize, 0);
  EXPECT_EQ(second.sessions, 0U);
  EXPECT_EQ(server_.count("post"), 1);
  EXPECT_EQ(second.bytes_sent, kSize - 2 * kChunk);
  EXPECT_EQ(server_.count("query"), 1);
}

TEST_F(UploadLoopbackTest, EveryFaultInOneUpload) {
  // Each fault lands on the chunk after a successful one, so each is the first failure since
  // progress: reset mid-chunk, 503, 408, 429 with Retry-After, 308 without progress, stall.
  const std::uint64_t size = 8 * kChunk + 1234;
  UploadSetup setup;
  setup.timeouts.read = Millis(2500);  // Under the 6 s stall, far over a busy loopback.
  const UploadRun run = upload(R"([
      {"on": "chunk", "nth": 2, "do": "reset", "after": 100000, "commit": 60000},
      {"on": "chunk", "nth": 4, "do": "status", "status": 503},
      {"on": "chunk", "nth": 6, "do": "status", "status": 408},
      {"on": "chunk", "nth": 8, "do": "status", "status": 429, "retry_after": 1},
      {"on": "chunk", "nth": 10, "do": "drop"},
      {"on": "chunk", "nth": 12, "do": "stall", "commit": 131072, "seconds": 6}])",
                               /*tls=*/true, size, setup);
  expect_complete(run, size, 6);
  EXPECT_EQ(run.of(Kind::kWait).size(), 6U) << run.summary();
}

}  // namespace
}  // namespace stepback::transfer_test
