#include "stepback/https/client/follow_up.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>

namespace stepback::https {
namespace {

// A parsed response head, as the Client's parser holds it.
struct Response {
  explicit Response(std::string_view text) {
    parser.reset(false);
    std::size_t consumed = 0;
    (void)parser.feed(ConstBytes{reinterpret_cast<const std::uint8_t*>(text.data()), text.size()},
                      &consumed);
  }
  std::uint8_t head[1024];
  ResponseParser parser{MutableBytes{head, sizeof head}, BodySink{}, 1 << 20};
};

Url url_of(const char* text) {
  Url u;
  EXPECT_EQ(parse_url(text, &u), Status::kOk);
  return u;
}

struct Buffers {
  std::uint8_t scratch[512];
  std::uint8_t kept[256];
  MutableBytes scratch_bytes() { return MutableBytes{scratch, sizeof scratch}; }
  MutableBytes kept_bytes() { return MutableBytes{kept, sizeof kept}; }
};

TEST(FollowUp, ARedirectIsFollowedOnlyWithALimitAndALocation) {
  const Response found("HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n");
  const Response bare("HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n");
  const Response multiple("HTTP/1.1 300 Multiple Choices\r\nLocation: /b\r\n\r\n");
  EXPECT_TRUE(FollowUp::is_redirect(found.parser, 1));
  EXPECT_FALSE(FollowUp::is_redirect(found.parser, 0));
  EXPECT_FALSE(FollowUp::is_redirect(bare.parser, 5));
  EXPECT_FALSE(FollowUp::is_redirect(multiple.parser, 5));
}

TEST(FollowUp, ARedirectResolvesKeepsTheUrlAndCountsTheChain) {
  FollowUp follow;
  const Url from = url_of("https://a.test/x");
  follow.reset(from);
  Buffers b;
  const Response r("HTTP/1.1 303 See Other\r\nLocation: https://b.test/y\r\n\r\n");
  const FollowUp::Target t =
      follow.redirect(r.parser, "POST", from, 5, b.scratch_bytes(), b.kept_bytes(), 256);
  ASSERT_EQ(t.kind, FollowUp::Target::Kind::kGo);
  EXPECT_EQ(t.text, "https://b.test/y");
  EXPECT_EQ(t.url.host, "b.test");
  EXPECT_EQ(t.url.target, "/y");
  EXPECT_EQ(t.step.method, "GET");
  EXPECT_TRUE(t.step.drop_body);
  EXPECT_FALSE(t.step.same_origin);
  // The URL lives in the kept buffer, not the scratch the next response reuses.
  EXPECT_EQ(static_cast<const void*>(t.text.data()), static_cast<const void*>(b.kept));
  std::memset(b.scratch, 'x', sizeof b.scratch);
  EXPECT_EQ(t.url.host, "b.test");
  EXPECT_EQ(follow.redirects(), 1U);
  EXPECT_EQ(follow.url_size(), t.text.size());
}

TEST(FollowUp, ARedirectIsRefusedPastTheLimitToHttpInALoopOrTooLong) {
  Buffers b;
  const Url from = url_of("https://a.test/x");
  {
    FollowUp follow;
    follow.reset(from);
    const Response r("HTTP/1.1 301 Moved\r\nLocation: /y\r\n\r\n");
    const FollowUp::Target t =
        follow.redirect(r.parser, "GET", from, 0, b.scratch_bytes(), b.kept_bytes(), 256);
    EXPECT_EQ(t.kind, FollowUp::Target::Kind::kRefuse);
    EXPECT_EQ(t.status, Status::kRedirect);
    EXPECT_STREQ(t.message, "more than 0 redirects (the last: 301 to '/y')");
  }
  {
    FollowUp follow;
    follow.reset(from);
    const Response r("HTTP/1.1 302 Found\r\nLocation: http://a.test/x\r\n\r\n");
    const FollowUp::Target t =
        follow.redirect(r.parser, "GET", from, 5, b.scratch_bytes(), b.kept_bytes(), 256);
    EXPECT_STREQ(t.message, "refused a redirect from https to http (302 to 'http://a.test/x')");
  }
  {
    FollowUp follow;
    follow.reset(from);
    const Response r("HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n");
    const FollowUp::Target t =
        follow.redirect(r.parser, "GET", from, 5, b.scratch_bytes(), b.kept_bytes(), 256);
    EXPECT_STREQ(t.message, "the redirects loop back to a URL already visited (302 to '/x')");
  }
  {
    FollowUp follow;
    follow.reset(from);
    const Response r("HTTP/1.1 302 Found\r\nLocation: mailto:a@b\r\n\r\n");
    const FollowUp::Target t =
        follow.redirect(r.parser, "GET", from, 5, b.scratch_bytes(), b.kept_bytes(), 256);
    EXPECT_STREQ(t.message, "the redirect's Location is not an http(s) URL (302 to 'mailto:a@b')");
  }
  {
    FollowUp follow;
    follow.reset(from);
    const Response r("HTTP/1.1 302 Found\r\nLocation: https://long-host.test/\r\n\r\n");
    const FollowUp::Target t =
        follow.redirect(r.parser, "GET", from, 5, b.scratch_bytes(), b.kept_bytes(), 8);
    EXPECT_STREQ(t.message,
                 "the redirect's host name is too long (302 to 'https://long-host.test/')");
  }
}

TEST(FollowUp, ALoopIsSeenCaseInsensitivelyAcrossTheChainAndARestartForgetsIt) {
  Buffers b;
  const Url from = url_of("https://A.test/x");
  FollowUp follow;
  follow.reset(from);
  const Response to_b("HTTP/1.1 302 Found\r\nLocation: https://b.test/y\r\n\r\n");
  ASSERT_EQ(
      follow.redirect(to_b.parser, "GET", from, 5, b.scratch_bytes(), b.kept_bytes(), 256).kind,
      FollowUp::Target::Kind::kGo);
  const Url at_b = url_of("https://b.test/y");
  const Response back("HTTP/1.1 302 Found\r\nLocation: https://a.TEST/x\r\n\r\n");
  EXPECT_EQ(
      follow.redirect(back.parser, "GET", at_b, 5, b.scratch_bytes(), b.kept_bytes(), 256).kind,
      FollowUp::Target::Kind::kRefuse);
  follow.restart(at_b);
  EXPECT_EQ(follow.redirects(), 0U);
  EXPECT_EQ(
      follow.redirect(back.parser, "GET", at_b, 5, b.scratch_bytes(), b.kept_bytes(), 256).kind,
      FollowUp::Target::Kind::kGo);
}

std::size_t give(void* context, MutableBytes out) {
  const std::string_view url = *static_cast<std::string_view*>(context);
  if (url.size() > out.size) return out.size + 1;
  std::memcpy(out.data, url.data(), url.size());
  return url.size();
}

TEST(FollowUp, AFreshUrlReplacesAnExpiredOneUpToTheLimit) {
  Buffers b;
  const Url from = url_of("https://a.test/x?sig=old");
  std::string_view fresh = "https://a.test/x?sig=new";
  const UrlRefresh refresh{give, &fresh};
  EXPECT_TRUE(FollowUp::may_be_expired(refresh, true, 403));
  EXPECT_TRUE(FollowUp::may_be_expired(refresh, true, 400));
  EXPECT_FALSE(FollowUp::may_be_expired(refresh, false, 403));
  EXPECT_FALSE(FollowUp::may_be_expired(refresh, true, 404));
  EXPECT_FALSE(FollowUp::may_be_expired(UrlRefresh{}, true, 403));
  FollowUp follow;
  follow.reset(from);
  FollowUp::Target t = follow.refresh(refresh, 1, from, b.scratch_bytes(), b.kept_bytes(), 256);
  ASSERT_EQ(t.kind, FollowUp::Target::Kind::kGo);
  EXPECT_EQ(t.text, fresh);
  EXPECT_TRUE(t.step.same_origin);
  EXPECT_FALSE(follow.url_expired());
  EXPECT_EQ(follow.url_refreshes(), 1U);
  t = follow.refresh(refresh, 1, from, b.scratch_bytes(), b.kept_bytes(), 256);
  EXPECT_EQ(t.kind, FollowUp::Target::Kind::kNone);
  EXPECT_TRUE(follow.url_expired());
}

TEST(FollowUp, AFreshUrlThatIsNotOneOrGoesToHttpEndsTheRequest) {
  Buffers b;
  const Url from = url_of("https://a.test/x");
  FollowUp follow;
  follow.reset(from);
  std::string_view none = "";
  EXPECT_EQ(
      follow.refresh(UrlRefresh{give, &none}, 3, from, b.scratch_bytes(), b.kept_bytes(), 256).kind,
      FollowUp::Target::Kind::kNone);
  std::string_view plain = "http://a.test/x";
  FollowUp::Target t =
      follow.refresh(UrlRefresh{give, &plain}, 3, from, b.scratch_bytes(), b.kept_bytes(), 256);
  EXPECT_EQ(t.status, Status::kInvalidArgument);
  EXPECT_STREQ(t.message, "refused a fresh URL from https to http");
  std::string_view junk = "not a url";
  t = follow.refresh(UrlRefresh{give, &junk}, 3, from, b.scratch_bytes(), b.kept_bytes(), 256);
  EXPECT_STREQ(t.message, "the fresh URL for the expired one is not an http(s) URL");
  std::string_view other = "https://b.test/x";
  t = follow.refresh(UrlRefresh{give, &other}, 3, from, b.scratch_bytes(), MutableBytes{b.kept, 4},
                     256);
  EXPECT_EQ(t.status, Status::kBufferTooSmall);
}

TEST(FollowUp, AnExpiredTokenIsAnsweredWithOneFreshTokenPerAttempt) {
  const Response expired(
      "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer error=\"invalid_token\"\r\n"
      "Content-Length: 0\r\n\r\n");
  const Response denied("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
  FollowUp follow;
  follow.reset(url_of("https://a.test/"));
  EXPECT_FALSE(follow.token_rejected(expired.parser, false));
  EXPECT_FALSE(follow.token_rejected(denied.parser, true));
  ASSERT_TRUE(follow.token_rejected(expired.parser, true));
  EXPECT_FALSE(follow.take_fresh_token());
  follow.want_fresh_token();
  EXPECT_TRUE(follow.take_fresh_token());
  // The attempt carried a fresh token: a second rejection is final.
  EXPECT_FALSE(follow.token_rejected(expired.parser, true));
  EXPECT_FALSE(follow.take_fresh_token());
  EXPECT_TRUE(follow.token_rejected(expired.parser, true));
}

}  // namespace
}  // namespace stepback::https
