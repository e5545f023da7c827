// A cut body taken up again (client_harness.hpp): resumed by Range and If-Range on the same
// representation, never spliced onto another version or into a sink that cannot start over,
// carried to another Client by body_resume(); and a ranged download's pieces
// (BodyResume::until, continue_body()).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "tests/https/client/client_harness.hpp"

namespace stepback::https::client_test {
namespace {

// Regression: a GET whose body was cut and retried handed the sink the failed
// attempt's bytes followed by the whole body ("halfhello"). A sink that cannot start over
// now fails the request, with the partial bytes alone.
TEST(ClientResume, CutBodyIsNeverSplicedIntoASinkThatCannotRestart) {
  Harness h;
  h.body.restartable = false;
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhalf").recv_reset();
  h.connector.add().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kRestartRefused);
  EXPECT_EQ(h.body.bytes, "half");
  EXPECT_EQ(h.body.offset_violations, 0U);
}

TEST(ClientResume, CutBodyResumesWithRangeAndIfRange) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.client->refetched(), 0U);
  EXPECT_EQ(h.body.offset_violations, 0U);
  const std::string second = h.connector.connection(1).sent();
  EXPECT_NE(second.find("\r\nRange: bytes=5-\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << second;
  EXPECT_EQ(h.connector.connection(0).sent().find("Range:"), std::string::npos);
}

// body_resume() is what a later start(spec, resume) needs: a cut body's bytes, its validator and
// generation, its length, and the integrity count; a second Client goes on from it.
TEST(ClientResume, BodyResumeHoldsWhereTheCutBodyStoodForAnotherClient) {
  Harness h;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 42\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.policy.max_retries = 0;
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  ASSERT_NE(h.client->result().outcome, Outcome::kSuccess);
  const BodyResume r = h.client->body_resume();
  EXPECT_EQ(r.offset, 5U);
  EXPECT_EQ(r.validator, "\"v1\"");
  EXPECT_TRUE(r.validator_is_etag);
  EXPECT_EQ(r.generation, "42");
  EXPECT_EQ(r.total, std::optional<std::uint64_t>(10));
  EXPECT_EQ(r.integrity.size, 5U);
  EXPECT_EQ(r.until, UINT64_MAX);

  Harness next;
  const std::string validator(r.validator);
  const std::string generation(r.generation);
  next.resume = r;
  next.resume->validator = validator;
  next.resume->generation = generation;
  next.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nx-goog-generation: 42\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(next.run(next.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(next.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(next.body.bytes, "56789");
  const std::string sent = next.connector.connection(0).sent();
  EXPECT_NE(sent.find("Range: bytes=5-\r\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("x-goog-if-generation-match: 42\r\n"), std::string::npos) << sent;
}

// The generation is pinned with a precondition field; the URL goes as given. A V4
// signed URL's query is part of its signature: before, `&generation=N` was appended to it on
// resume, and the server answered 403.
TEST(ClientResume, CloudStorageGenerationIsPinnedOnResumeByAFieldNotTheUrl) {
  const std::string target =
      "/bkt/obj?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=a%2F20261129%2Fauto%2F"
      "storage%2Fgoog4_request&X-Goog-Date=20261129T000000Z&X-Goog-Expires=900&"
      "X-Goog-SignedHeaders=host&X-Goog-Signature=0123abcd";
  static const std::string url = "https://storage.example.test" + target;  // The Url views it.
  Harness h(url.c_str());
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 1700000000123456\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nx-goog-generation: 1700000000123456\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "0123456789");
  const std::string second = h.connector.connection(1).sent();
  EXPECT_EQ(second.rfind("GET " + target + " HTTP/1.1\r\n", 0), 0U) << second;
  EXPECT_NE(second.find("Range: bytes=5-\r\nIf-Range: \"v1\"\r\n"
                        "x-goog-if-generation-match: 1700000000123456\r\n\r\n"),
            std::string::npos)
      << second;
}

// The generation precondition failed (412): the object is another version; it is fetched
// whole, the sink restarted, never spliced.
TEST(ClientResume, AFailedGenerationPreconditionFetchesTheObjectWhole) {
  Harness h("https://storage.example.test/bkt/obj");
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nx-goog-generation: 7\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data("HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nx-goog-generation: 8\r\n"
      "Content-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
  EXPECT_EQ(h.connector.connection(2).sent().find("Range:"), std::string::npos);
}

// A server that ignores If-Range and answers a resume with a part of another
// version (another ETag) got it spliced on, with success. Now the body starts over.
TEST(ClientResume, APartWithAnotherETagIsNeverSplicedOn) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v2\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\nFGHIJ");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
  bool said = false;
  for (const ClientEvent& e : h.events) {
    said = said || (e.kind == ClientEvent::Kind::kError &&
                    std::string(e.message).find("another version") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

// The same without an ETag: pinned to Last-Modified, a part with a later one is another
// version.
TEST(ClientResume, APartWithAnotherLastModifiedIsNeverSplicedOn) {
  Harness h;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nLast-Modified: Sun, 29 Nov 2026 01:00:00 GMT\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nLast-Modified: Sun, 29 Nov 2026 02:00:00 GMT\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\nFGHIJ");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nLast-Modified: Sun, 29 Nov 2026 02:00:00 GMT\r\n"
      "Content-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
  EXPECT_NE(h.connector.connection(1).sent().find("If-Range: Sun, 29 Nov 2026 01:00:00 GMT\r\n"),
            std::string::npos);
}

// A part of another Cloud Storage generation under the same ETag text is not spliced either.
TEST(ClientResume, APartOfAnotherGenerationIsNeverSplicedOn) {
  Harness h;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nx-goog-generation: 7\r\n"
          "Content-Length: 10\r\n\r\n01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"e\"\r\nx-goog-generation: 8\r\n"
      "Content-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\nFGHIJ");
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nx-goog-generation: 8\r\n"
      "Content-Length: 10\r\n\r\nABCDEFGHIJ");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "ABCDEFGHIJ");
  EXPECT_EQ(h.body.restarts, 1U);
}

// A server answering every request, the unranged one included, with the same first
// 16 KiB of a 100,000-byte object left a short file and success. A 206 nobody asked for that
// is not the whole representation is a protocol failure now.
TEST(ClientResume, AnUnaskedPartThatIsNotTheWholeBodyIsAnError) {
  Harness h;
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 0-4/10\r\n"
      "Content-Length: 5\r\n\r\n01234");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_NE(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().error, Status::kProtocol);
  EXPECT_NE(std::string(h.client->result().message).find("206"), std::string::npos)
      << h.client->result().message;
  EXPECT_TRUE(h.body.bytes.empty());
}

// A part whose body is longer than its Content-Range claims never writes past it: by
// Content-Length the part is refused and the body fetched whole; chunked, the extra bytes are
// dropped and the attempt fails. Before, the sink got bytes beyond the object's end.
TEST(ClientResume, APartLongerThanItsContentRangeNeverWritesPastIt) {
  {
    Harness h;
    h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
    h.connector.add().recv_data(
        "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
        "Content-Length: 8\r\n\r\n56789XYZ");
    h.connector.add().recv_data(std::string(kHead10) + "0123456789");
    ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
    EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
    EXPECT_EQ(h.body.bytes, "0123456789");
  }
  {
    Harness h;
    h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
    h.connector.add().recv_data(
        "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
        "Transfer-Encoding: chunked\r\n\r\n8\r\n56789XYZ\r\n0\r\n\r\n");
    ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
    EXPECT_EQ(h.client->result().error, Status::kProtocol) << h.client->result().message;
    EXPECT_EQ(h.body.bytes, "0123456789") << "nothing past the part's end";
  }
}

// A 206 to a request without Range that carries the whole representation is taken.
TEST(ClientResume, AnUnaskedPartThatIsTheWholeBodyIsTaken) {
  Harness h;
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 0-9/10\r\n"
      "Content-Length: 10\r\n\r\n0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "0123456789");
}

TEST(ClientResume, WholeBodyOfTheSameRepresentationIsSkippedThrough) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.client->refetched(), 5U);
  EXPECT_EQ(h.body.offset_violations, 0U);
}

TEST(ClientResume, ChangedRepresentationStartsTheSinkOver) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 10\r\n\r\nabcdefghij");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "abcdefghij");
  EXPECT_EQ(h.body.restarts, 1U);
}

TEST(ClientResume, RangeThatDoesNotContinueTheBodyIsFetchedWholeAgain) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 3-9/10\r\n"
      "Content-Length: 7\r\n\r\n3456789");
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 1U);
  EXPECT_EQ(h.connector.opened(), 3U);
  EXPECT_EQ(h.connector.connection(2).sent().find("Range:"), std::string::npos);
}

TEST(ClientResume, RangeNotSatisfiableStartsOver) {
  Harness h;
  h.connector.add().recv_data(std::string(kHead10) + "01234").recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */4\r\nContent-Length: "
      "0\r\n\r\n");
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nETag: \"v3\"\r\nContent-Length: 4\r\n\r\nnew!");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "new!");
  EXPECT_EQ(h.body.restarts, 1U);
}

// A resume the server no longer honours (the object changed: a whole 200 with another ETag)
// starts the sink over, never splicing the kept part onto the new representation.
TEST(ClientResume, ResumeFromAnotherClientOfAChangedObjectStartsOver) {
  Harness h;
  h.body.bytes = "01234";
  BodyResume kept;
  kept.offset = 5;
  kept.validator = "\"v1\"";
  kept.integrity.size = 5;
  h.resume = kept;
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 4\r\n\r\nnew!");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "new!");
  EXPECT_EQ(h.body.restarts, 1U);
}

TEST(ClientResume, ResumeThatCannotBeTrueIsRefused) {
  Harness h;
  ClientOptions options;
  options.wall_now = [] { return Millis(0); };
  Client client(h.connector, h.context, options);
  BodyResume r;
  r.offset = 5;
  r.integrity.size = 4;  // Covers fewer bytes than the sink holds.
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.integrity.size = 5;
  r.validator = "\"v1\"\r\nX-Evil: 1";
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.validator = "\"v1\"";
  r.generation = "12a";
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.generation = "";
  r.until = 5;  // A piece that ends where the sink already stands.
  EXPECT_EQ(client.start(h.spec, r), Status::kInvalidArgument);
  r.until = UINT64_MAX;
  RequestSpec post = h.spec;
  post.head.method = "POST";
  EXPECT_EQ(client.start(post, r), Status::kInvalidArgument);
}

// A ranged download's pieces (BodyResume::until, continue_body): each request asks for its
// piece, even from byte 0, and a 206 that delivers it whole ends the request as a finished
// piece; the next continues on the kept connection, pinned by If-Range to the first piece's
// ETag, and the integrity check covers the whole representation once the last is in.
TEST(ClientPieces, EachPieceIsAFinished206AndTheNextContinuesOnTheKeptConnection) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  const std::string hash = goog_crc32c("0123456789");
  ScriptedTransport& c = h.connector.add();
  c.recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
              "Content-Range: bytes 0-3/10\r\nContent-Length: 4\r\n\r\n0123")
      .recv_would_block(IoInterest::kRead)
      .recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                 "Content-Range: bytes 4-7/10\r\nContent-Length: 4\r\n\r\n4567")
      .recv_would_block(IoInterest::kRead)
      .recv_data("HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n" + hash +
                 "Content-Range: bytes 8-9/10\r\nContent-Length: 2\r\n\r\n89");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 206);
  EXPECT_EQ(h.client->delivered(), 4U);
  EXPECT_EQ(h.client->expected_size(), std::optional<std::uint64_t>(10));
  EXPECT_EQ(h.client->validator(), "\"v1\"");
  EXPECT_EQ(h.client->continue_body(100), Status::kOk);  // Past the end: the rest.
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  // A server may send less than asked: a whole part is still a finished piece.
  EXPECT_EQ(h.client->result().status, 206);
  EXPECT_EQ(h.client->delivered(), 8U);
  EXPECT_EQ(h.client->continue_body(12), Status::kOk);
  ASSERT_EQ(h.run(h.client->step(h.now)).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.body.restarts, 0U);
  EXPECT_EQ(h.connector.opened(), 1U);
  // The last piece completed the representation: no piece follows it.
  EXPECT_EQ(h.client->continue_body(20), Status::kInvalidArgument);
  const std::string sent = c.sent();
  EXPECT_NE(sent.find("\r\nRange: bytes=0-3\r\n\r\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("\r\nRange: bytes=4-99\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << sent;
  EXPECT_NE(sent.find("\r\nRange: bytes=8-11\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << sent;
  bool verified = false;
  for (const ClientEvent& e : h.events) {
    if (e.kind == ClientEvent::Kind::kIntegrity) verified = e.verified;
  }
  EXPECT_TRUE(verified) << "the CRC-32C of the whole object, checked after the last piece";
}

// A piece cut in the middle is retried from where it stopped, up to the same end.
TEST(ClientPieces, ACutPieceResumesUpToTheSameEnd) {
  Harness h;
  BodyResume first;
  first.until = 6;
  h.resume = first;
  h.connector.add()
      .recv_data(
          "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 0-5/10\r\n"
          "Content-Length: 6\r\n\r\n012")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 3-5/10\r\n"
      "Content-Length: 3\r\n\r\n345");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 206);
  EXPECT_EQ(h.body.bytes, "012345");
  const std::string second = h.connector.connection(1).sent();
  EXPECT_NE(second.find("\r\nRange: bytes=3-5\r\nIf-Range: \"v1\"\r\n\r\n"), std::string::npos)
      << second;
}

// A server that ignores ranges answers a piece with the whole representation: it is taken
// whole, and the request is complete (no piece follows).
TEST(ClientPieces, AServerThatIgnoresRangesSendsTheWholeBodyInOne) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 200);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.client->continue_body(8), Status::kInvalidArgument);
}

// A piece asked of an empty object is not satisfiable (416): the object is fetched whole.
TEST(ClientPieces, APieceOfAnEmptyObjectFetchesItWhole) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  h.connector.add().recv_data(
      "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */0\r\n"
      "Content-Length: 0\r\n\r\n");
  h.connector.add().recv_data("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 200);
  EXPECT_EQ(h.body.bytes, "");
  EXPECT_EQ(h.connector.connection(1).sent().find("Range:"), std::string::npos);
}

// A piece whose range does not start where the sink stands is never spliced: the body is
// fetched whole.
TEST(ClientPieces, APartAtAnotherOffsetIsFetchedWhole) {
  Harness h;
  BodyResume first;
  first.until = 4;
  h.resume = first;
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-5/10\r\n"
      "Content-Length: 4\r\n\r\n2345");
  h.connector.add().recv_data(std::string(kHead10) + "0123456789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.connector.connection(1).sent().find("Range:"), std::string::npos);
}

}  // namespace
}  // namespace stepback::https::client_test
