// The Client's integrity check of a delivered body (x-goog-hash) against scripted connections
// (client_harness.hpp): over resumed parts, over a body taken up from another Client, a
// mismatch's status and words, and transcoded objects left unchecked.
#include <gtest/gtest.h>

#include <string>

#include "stepback/https/integrity/integrity.hpp"
#include "tests/https/client/client_harness.hpp"

namespace stepback::https::client_test {
namespace {

TEST(ClientIntegrity, MatchingCrc32cAcrossResumedPartsIsVerified) {
  Harness h;
  const std::string hash = goog_crc32c("0123456789");
  h.connector.add()
      .recv_data("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\n" + hash + "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                              "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  int verified = 0;
  for (const ClientEvent& e : h.events)
    verified += e.kind == ClientEvent::Kind::kIntegrity && e.verified;
  EXPECT_EQ(verified, 1);
}

// A body a first client (another process) got the first half of, taken up by a second
// client from what the first one kept: only the rest is asked for, and the integrity check
// covers the whole body.
TEST(ClientIntegrity, BodyResumedFromAnotherClientIsAskedForTheRestAndCheckedWhole) {
  const std::string hash = goog_crc32c("0123456789");
  Harness first;
  first.connector.add()
      .recv_data("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 42\r\n" + hash +
                 "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  first.policy.max_retries = 0;
  ASSERT_EQ(first.run(first.start()).kind, ClientNext::Kind::kDone);
  ASSERT_EQ(first.body.bytes, "01234");
  BodyResume kept;
  kept.offset = first.client->delivered();
  kept.validator = first.client->validator();
  kept.validator_is_etag = first.client->validator_is_etag();
  kept.generation = first.client->generation();
  kept.total = first.client->expected_size();
  kept.integrity = first.client->integrity_state();
  EXPECT_EQ(kept.validator, "\"v1\"");
  EXPECT_EQ(kept.generation, "42");

  Harness second;
  second.body.bytes = first.body.bytes;
  second.resume = kept;
  second.connector.add().recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                                   "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(second.run(second.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(second.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(second.body.bytes, "0123456789");
  const std::string sent = second.connector.connection(0).sent();
  EXPECT_EQ(sent.rfind("GET /x HTTP/1.1\r\n", 0), 0U) << sent;
  EXPECT_NE(sent.find("Range: bytes=5-\r\nIf-Range: \"v1\"\r\nx-goog-if-generation-match: 42\r\n"),
            std::string::npos)
      << sent;
  int verified = 0;
  for (const ClientEvent& e : second.events)
    verified += e.kind == ClientEvent::Kind::kIntegrity && e.verified;
  EXPECT_EQ(verified, 1);
}

// The same, with a wrong byte in the kept half: the check over the whole body fails although
// the second client never saw that byte.
TEST(ClientIntegrity, DamageInTheResumedFromPartIsStillFound) {
  const std::string hash = goog_crc32c("0123456789");
  IntegrityCheck check;
  ASSERT_TRUE(check.add_header("x-goog-hash", hash.substr(13, hash.size() - 15)));
  const char kept_bytes[] = "01x34";
  check.update(ConstBytes{reinterpret_cast<const std::uint8_t*>(kept_bytes), 5});
  Harness h;
  h.body.bytes = kept_bytes;
  BodyResume kept;
  kept.offset = 5;
  kept.validator = "\"v1\"";
  kept.total = 10;
  kept.integrity = check.state();
  h.resume = kept;
  h.connector.add().recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                              "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kIntegrity);
}

TEST(ClientIntegrity, MismatchFailsWithItsOwnStatusAndNamesBothValues) {
  Harness h;
  const std::string hash = goog_crc32c("0123456789");
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\n" + hash +
                              "Content-Length: 10\r\n\r\n0123456780");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kIntegrity);
  const std::string message = h.client->result().message;
  EXPECT_NE(message.find("crc32c mismatch: expected "), std::string::npos) << message;
  EXPECT_NE(message.find(", got "), std::string::npos) << message;
}

TEST(ClientIntegrity, TranscodedObjectsAreNotCheckedAgainstStoredHashes) {
  Harness h;
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nx-goog-stored-content-encoding: gzip\r\n" +
                              goog_crc32c("compressed bytes") + "Content-Length: 5\r\n\r\nhello");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "hello");
}

}  // namespace
}  // namespace stepback::https::client_test
