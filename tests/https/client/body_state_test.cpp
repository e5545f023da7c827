#include "stepback/https/client/body_state.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tests/support/string_sink.hpp"

namespace stepback::https {
namespace {

ConstBytes bytes_of(std::string_view s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A body state over a sink, and a parser to give it response heads.
struct Rig {
  explicit Rig(bool restartable = true) {
    body.restartable = restartable;
    sink = body.sink();
  }
  // Parses `head` as the next response and has the state decide on it.
  void respond(std::string_view text, BodyState::Known known = {}) {
    parser.reset(false);
    state.begin_response();
    std::size_t consumed = 0;
    (void)parser.feed(bytes_of(text), &consumed);
    state.decide(parser, known);
  }
  testing::StringSink body;
  ResponseSink sink;
  std::uint8_t error_body[64];
  BodyState state{sink, MutableBytes{error_body, sizeof error_body}};
  std::uint8_t head[512];
  ResponseParser parser{MutableBytes{head, sizeof head}, BodySink{}, 1 << 20};
};

TEST(BodyState, AResumeIsValidOnlyWhenItsPinsCanBeSent) {
  BodyResume r;
  r.offset = 5;
  r.integrity.size = 5;
  r.validator = "\"v1\"";
  r.generation = "42";
  EXPECT_TRUE(BodyState::valid(r));
  BodyResume bad = r;
  bad.validator = "\"v1\"\r\nX: y";
  EXPECT_FALSE(BodyState::valid(bad));
  bad = r;
  bad.generation = "4a";
  EXPECT_FALSE(BodyState::valid(bad));
  bad = r;
  bad.integrity.size = 4;
  EXPECT_FALSE(BodyState::valid(bad));
  bad = r;
  bad.total = 4;
  EXPECT_FALSE(BodyState::valid(bad));
  bad = r;
  bad.until = 5;
  EXPECT_FALSE(BodyState::valid(bad));
}

TEST(BodyState, TheNextRangeGoesOnWherePinnedBytesEnd) {
  Rig rig;
  rig.state.reset();
  EXPECT_FALSE(rig.state.next_range(true, false).ranged);
  BodyResume r;
  r.offset = 5;
  r.integrity.size = 5;
  r.validator = "\"v1\"";
  r.generation = "42";
  ASSERT_TRUE(rig.state.resume(r));
  BodyState::Range range = rig.state.next_range(true, false);
  EXPECT_TRUE(range.ranged);
  EXPECT_EQ(range.from, 5U);
  EXPECT_EQ(range.end, UINT64_MAX);
  EXPECT_EQ(range.if_range, "\"v1\"");
  EXPECT_EQ(range.generation, "42");
  // The app names a generation itself: none added.
  EXPECT_EQ(rig.state.next_range(true, true).generation, "");
  // Not a GET: never ranged.
  EXPECT_FALSE(rig.state.next_range(false, false).ranged);
  // A piece of an unpinned body is asked from byte 0.
  rig.state.reset();
  rig.state.set_until(100);
  range = rig.state.next_range(true, false);
  EXPECT_TRUE(range.ranged);
  EXPECT_EQ(range.from, 0U);
  EXPECT_EQ(range.end, 100U);
}

TEST(BodyState, APartOfThePinnedVersionContinuesTheBodyInPlace) {
  Rig rig;
  BodyResume r;
  r.offset = 5;
  r.integrity.size = 5;
  r.validator = "\"v1\"";
  ASSERT_TRUE(rig.state.resume(r));
  rig.state.asked(rig.state.next_range(true, false));
  rig.respond(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n");
  ASSERT_EQ(rig.state.use(), BodyState::Use::kDeliver);
  const BodyState::Delivery d = rig.state.deliver(bytes_of("56789"));
  EXPECT_TRUE(d.ok);
  EXPECT_TRUE(d.wrote);
  EXPECT_EQ(d.offset, 5U);
  EXPECT_EQ(rig.body.bytes, "56789");
  EXPECT_EQ(rig.state.delivered(), 10U);
  EXPECT_EQ(rig.state.total(), std::optional<std::uint64_t>(10));
  EXPECT_FALSE(rig.state.cut(206));
  EXPECT_EQ(rig.state.unusable(), Status::kOk);
}

TEST(BodyState, APartOfAnotherVersionIsNeverSplicedIn) {
  Rig rig;
  BodyResume r;
  r.offset = 5;
  r.integrity.size = 5;
  r.validator = "\"v1\"";
  ASSERT_TRUE(rig.state.resume(r));
  rig.state.asked(rig.state.next_range(true, false));
  rig.respond(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v2\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n");
  EXPECT_EQ(rig.state.use(), BodyState::Use::kDiscard);
  EXPECT_EQ(rig.state.unusable(), Status::kReset);
  EXPECT_STREQ(rig.state.unusable_message(),
               "a part came from another version of the object (another ETag); fetching it "
               "whole again");
  EXPECT_EQ(rig.body.restarts, 1U);
  EXPECT_EQ(rig.state.delivered(), 0U);
  EXPECT_EQ(rig.state.refetched(), 5U);
  EXPECT_FALSE(rig.state.next_range(true, false).ranged);  // Whole, from byte 0.
  EXPECT_TRUE(rig.state.deliver(bytes_of("xxxxx")).ok);
  EXPECT_EQ(rig.body.bytes, "");
}

TEST(BodyState, ASinkThatCannotRestartRefusesTheSplice) {
  Rig rig(/*restartable=*/false);
  BodyResume r;
  r.offset = 5;
  r.integrity.size = 5;
  r.validator = "\"v1\"";
  ASSERT_TRUE(rig.state.resume(r));
  rig.state.asked(rig.state.next_range(true, false));
  rig.respond("HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 10\r\n\r\n");
  EXPECT_TRUE(rig.state.sink_failed());
  EXPECT_FALSE(rig.state.deliver(bytes_of("0123456789")).ok);
  EXPECT_EQ(rig.body.bytes, "");
}

TEST(BodyState, TheSameWholeRepresentationIsSkippedThroughNotRestarted) {
  Rig rig;
  BodyResume r;
  r.offset = 3;
  r.integrity.size = 3;
  r.validator = "\"v1\"";
  ASSERT_TRUE(rig.state.resume(r));
  rig.state.asked(rig.state.next_range(true, false));
  rig.respond("HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 6\r\n\r\n");
  ASSERT_EQ(rig.state.use(), BodyState::Use::kDeliver);
  const BodyState::Delivery d = rig.state.deliver(bytes_of("abcdef"));
  EXPECT_EQ(d.offset, 3U);
  EXPECT_EQ(rig.body.bytes, "def");
  EXPECT_EQ(rig.state.refetched(), 3U);
  EXPECT_EQ(rig.body.restarts, 0U);
}

TEST(BodyState, AnUnaskedPartialAnswerThatIsNotWholeIsAProtocolError) {
  Rig rig;
  rig.state.reset();
  rig.state.asked(BodyState::Range{});
  rig.respond(
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/10\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(rig.state.unusable(), Status::kProtocol);
  // A 206 that is plainly the whole representation is taken as it.
  rig.respond(
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/5\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(rig.state.unusable(), Status::kOk);
  EXPECT_EQ(rig.state.use(), BodyState::Use::kDeliver);
}

TEST(BodyState, RetryableAnswersAreCapturedAndRedirectsDiscarded) {
  Rig rig;
  rig.state.reset();
  BodyState::Known known;
  known.retryable = true;
  rig.respond("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\n", known);
  ASSERT_EQ(rig.state.use(), BodyState::Use::kCapture);
  (void)rig.state.deliver(bytes_of("busy"));
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(rig.state.captured().data),
                             rig.state.captured().size),
            "busy");
  EXPECT_EQ(rig.body.bytes, "");
  known = {};
  known.nobodys = true;
  rig.respond("HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 4\r\n\r\n", known);
  EXPECT_EQ(rig.state.use(), BodyState::Use::kDiscard);
  EXPECT_EQ(rig.state.captured().size, 0U);
}

TEST(BodyState, APartRunningPastItsContentRangeIsCutAndFails) {
  Rig rig;
  rig.state.reset();
  rig.state.set_until(4);
  rig.state.asked(rig.state.next_range(true, false));
  rig.respond(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 0-3/10\r\n"
      "Transfer-Encoding: chunked\r\n\r\n");
  ASSERT_EQ(rig.state.use(), BodyState::Use::kDeliver);
  (void)rig.state.deliver(bytes_of("0123456"));
  EXPECT_EQ(rig.body.bytes, "0123");
  EXPECT_EQ(rig.state.unusable(), Status::kProtocol);
}

TEST(BodyState, AShortWholeBodyIsCutAndTheDigestsJudgeACompleteOne) {
  Rig rig;
  rig.state.reset();
  rig.state.asked(BodyState::Range{});
  // CRC-32C of "hello" is 9a71bb4c: mnG7TA== in base64.
  rig.respond("HTTP/1.1 200 OK\r\nx-goog-hash: crc32c=mnG7TA==\r\nContent-Length: 5\r\n\r\n");
  (void)rig.state.deliver(bytes_of("hel"));
  EXPECT_TRUE(rig.state.cut(200));
  EXPECT_FALSE(rig.state.check_integrity().has_value());  // Not all there yet.
  (void)rig.state.deliver(bytes_of("lo"));
  EXPECT_FALSE(rig.state.cut(200));
  const std::optional<IntegrityResult> checked = rig.state.check_integrity();
  ASSERT_TRUE(checked.has_value());
  EXPECT_NE(checked->status, IntegrityStatus::kMismatch) << rig.state.integrity_message();
  // One byte otherwise: the digests say so.
  rig.state.reset();
  rig.state.asked(BodyState::Range{});
  rig.respond("HTTP/1.1 200 OK\r\nx-goog-hash: crc32c=mnG7TA==\r\nContent-Length: 5\r\n\r\n");
  (void)rig.state.deliver(bytes_of("hellO"));
  const std::optional<IntegrityResult> bad = rig.state.check_integrity();
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, IntegrityStatus::kMismatch);
}

}  // namespace
}  // namespace stepback::https
