// Where a request goes when the server sends it elsewhere, against scripted connections
// (client_harness.hpp): redirects (methods, bodies and credentials kept or dropped, loops and
// limits) and expired pre-signed URLs replaced by fresh ones (ClientOptions::url_refresh).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "tests/https/client/client_harness.hpp"
#include "tests/support/fake_tokens.hpp"

namespace stepback::https::client_test {
namespace {

using testing::FakeTokens;

std::string redirect(int status, const std::string& location, const std::string& body = "") {
  return "HTTP/1.1 " + std::to_string(status) + " Moved\r\nLocation: " + location +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

int count_of(const std::vector<ClientEvent>& events, ClientEvent::Kind kind) {
  int n = 0;
  for (const ClientEvent& e : events) n += e.kind == kind;
  return n;
}

TEST(ClientRedirect, ARelativeLocationIsFollowedOnTheSameConnectionAsNoRetry) {
  Harness h("https://example.test/releases/latest");
  h.max_redirects = 5;
  h.policy.max_retries = 0;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "../files/fw-1.2.bin", "<a href=...>moved</a>"))
      .recv_would_block()
      .recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.client->redirects(), 1U);
  EXPECT_EQ(h.body.bytes, "hello");  // Not the 302's body.
  EXPECT_EQ(h.client->redirected_url(), "https://example.test/files/fw-1.2.bin");
  EXPECT_EQ(h.connector.opened(), 1U);
  const std::string sent = h.connector.connection(0).sent();
  EXPECT_NE(sent.find("GET /files/fw-1.2.bin HTTP/1.1\r\n"), std::string::npos) << sent;
  EXPECT_EQ(count_of(h.events, ClientEvent::Kind::kRedirect), 1);
}

TEST(ClientRedirect, WithoutARedirectLimitA3xxIsTheFinalResponse) {
  Harness h;
  h.connector.add().recv_data(redirect(302, "/elsewhere", "moved"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().status, 302);
  EXPECT_EQ(h.body.bytes, "moved");
}

TEST(ClientRedirect, SeeOtherTurnsAPostIntoAGetWithoutBodyOrContentFields) {
  Harness h("https://example.test/jobs", "POST");
  h.max_redirects = 5;
  const std::string payload = "{\"a\":1}";
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
  h.spec.body = BodySource::of(&bytes);
  const Header headers[] = {{"Content-Type", "application/json"}, {"X-Trace", "1"}};
  h.spec.head.headers = headers;
  h.spec.head.header_count = 2;
  h.connector.add().recv_data(redirect(303, "/jobs/7")).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  const std::string sent = h.connector.connection(0).sent();
  const std::size_t second = sent.find("GET /jobs/7 HTTP/1.1\r\n");
  ASSERT_NE(second, std::string::npos) << sent;
  const std::string get = sent.substr(second);
  EXPECT_EQ(get.find("Content-Type"), std::string::npos) << get;
  EXPECT_EQ(get.find("Content-Length"), std::string::npos) << get;
  EXPECT_NE(get.find("X-Trace: 1\r\n"), std::string::npos) << get;
  EXPECT_EQ(get.find(payload), std::string::npos) << get;
}

TEST(ClientRedirect, TemporaryRedirectKeepsMethodAndBody) {
  Harness h("https://example.test/upload", "PUT");
  h.max_redirects = 5;
  const std::string payload = "0123456789";
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
  h.spec.body = BodySource::of(&bytes);
  h.connector.add().recv_data(redirect(307, "/upload2")).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  const std::string sent = h.connector.connection(0).sent();
  const std::size_t second = sent.find("PUT /upload2 HTTP/1.1\r\n");
  ASSERT_NE(second, std::string::npos) << sent;
  EXPECT_NE(sent.substr(second).find("Content-Length: 10\r\n\r\n0123456789"), std::string::npos);
}

TEST(ClientRedirect, CredentialsNeverGoToAnotherOrigin) {
  Harness h("https://api.example.test/file");
  h.max_redirects = 5;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  const Header headers[] = {{"Authorization", "Bearer caller"}, {"Cookie", "s=1"}, {"X-Keep", "k"}};
  h.spec.head.headers = headers;
  h.spec.head.header_count = 3;
  h.connector.add().recv_data(redirect(302, "https://cdn.example.test/blob"));
  h.connector.add().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  ASSERT_EQ(h.connector.opened(), 2U);
  EXPECT_NE(h.connector.connection(0).sent().find("Authorization"), std::string::npos);
  const std::string other = h.connector.connection(1).sent();
  EXPECT_NE(other.find("Host: cdn.example.test\r\n"), std::string::npos) << other;
  EXPECT_EQ(other.find("Authorization"), std::string::npos) << other;
  EXPECT_EQ(other.find("Cookie"), std::string::npos) << other;
  EXPECT_NE(other.find("X-Keep: k\r\n"), std::string::npos) << other;
  EXPECT_EQ(tokens.asked, 1);
}

TEST(ClientRedirect, HttpsToHttpIsRefused) {
  Harness h;
  h.max_redirects = 5;
  h.connector.add().recv_data(redirect(301, "http://example.test/x"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_STREQ(h.client->result().message,
               "refused a redirect from https to http (301 to 'http://example.test/x')");
  EXPECT_EQ(h.connector.opened(), 1U);
}

TEST(ClientRedirect, ALoopEndsTheRequestWithItsOwnWords) {
  Harness h("https://example.test/a");
  h.max_redirects = 10;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "/b"))
      .recv_would_block()
      .recv_data(redirect(302, "https://EXAMPLE.test:443/c"))
      .recv_would_block()
      .recv_data(redirect(302, "/a"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_EQ(std::string(h.client->result().message).rfind("the redirects loop back", 0), 0U)
      << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 1U);
}

TEST(ClientRedirect, OneRedirectMoreThanTheLimitEndsTheRequest) {
  Harness h("https://example.test/0");
  h.max_redirects = 2;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "/1"))
      .recv_would_block()
      .recv_data(redirect(302, "/2"))
      .recv_would_block()
      .recv_data(redirect(302, "/3"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_STREQ(h.client->result().message, "more than 2 redirects (the last: 302 to '/3')");
  EXPECT_EQ(h.client->redirects(), 2U);
}

TEST(ClientRedirect, ALocationThatIsNoHttpUrlIsRefused) {
  Harness h;
  h.max_redirects = 5;
  h.connector.add().recv_data(redirect(302, "ftp://example.test/x"));
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().error, Status::kRedirect);
  EXPECT_STREQ(h.client->result().message,
               "the redirect's Location is not an http(s) URL (302 to 'ftp://example.test/x')");
}

// A body cut after a redirect is resumed from the URL the redirect led to.
TEST(ClientRedirect, ACutBodyResumesAtTheRedirectedUrl) {
  Harness h("https://example.test/latest");
  h.max_redirects = 5;
  h.connector.add()
      .recv_would_block()
      .recv_data(redirect(302, "/v2.bin"))
      .recv_would_block()
      .recv_data(std::string(kHead10) + "01234")
      .recv_reset();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n56789");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.body.bytes, "0123456789");
  const std::string second = h.connector.connection(1).sent();
  EXPECT_EQ(second.rfind("GET /v2.bin HTTP/1.1\r\n", 0), 0U) << second;
  EXPECT_NE(second.find("Range: bytes=5-\r\n"), std::string::npos) << second;
}

// Pre-signed URLs that expire (ClientOptions::url_refresh): fresh URLs handed out in turn.
struct FreshUrls {
  std::vector<std::string> urls;
  std::size_t asked = 0;
  static std::size_t next(void* self, MutableBytes out) {
    auto* f = static_cast<FreshUrls*>(self);
    const std::size_t i = f->asked++;
    if (i >= f->urls.size() || f->urls[i].size() > out.size) return 0;
    std::memcpy(out.data, f->urls[i].data(), f->urls[i].size());
    return f->urls[i].size();
  }
};

constexpr const char* kS3Expired =
    "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: 85\r\n\r\n"
    "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>\n\n\n\n\n\n\n";

// Cut after "hel", the next attempt meets the expiry answer; the fresh URL goes on at once
// from byte 3 (Range and If-Range on the ETag), as neither a retry nor a failure.
TEST(ClientUrlRefresh, AnExpiredUrlIsReplacedAndTheBodyGoesOnFromItsOffset) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"https://bucket.test/o?sig=2"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  h.connector.add()
      .recv_data("HTTP/1.1 200 OK\r\nETag: \"e1\"\r\nContent-Length: 5\r\n\r\nhel")
      .recv_closed();
  h.connector.add()
      .recv_data(kS3Expired)
      .recv_would_block()
      .recv_data(
          "HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes 3-4/5\r\n"
          "Content-Length: 2\r\n\r\nlo");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "hello");
  EXPECT_EQ(fresh.asked, 1U);
  EXPECT_EQ(h.client->url_refreshes(), 1U);
  EXPECT_FALSE(h.client->url_expired());
  EXPECT_EQ(h.client->result().attempts, 2U);  // The cut's retry; the refresh is no attempt.
  const std::string sent = h.connector.connection(1).sent();
  const std::size_t second = sent.find("GET /o?sig=2 HTTP/1.1\r\n");
  ASSERT_NE(second, std::string::npos) << sent;
  EXPECT_NE(sent.find("Range: bytes=3-\r\n", second), std::string::npos) << sent;
  EXPECT_NE(sent.find("If-Range: \"e1\"\r\n", second), std::string::npos) << sent;
  ASSERT_EQ(count_of(h.events, ClientEvent::Kind::kUrlRefresh), 1);
  for (const ClientEvent& e : h.events) {
    if (e.kind != ClientEvent::Kind::kUrlRefresh) continue;
    EXPECT_EQ(e.status, 403);
    EXPECT_EQ(e.offset, 3U);
    EXPECT_EQ(e.url, "https://bucket.test/o?sig=2");
  }
}

// Fresh URLs that expire at once: at most max_url_refreshes (3) are taken, then the expiry
// answer is the final response and url_expired() says why.
TEST(ClientUrlRefresh, RefreshesAreBounded) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"https://bucket.test/o?sig=2", "https://bucket.test/o?sig=3",
                   "https://bucket.test/o?sig=4", "https://bucket.test/o?sig=5"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  ScriptedTransport& t = h.connector.add();
  for (int i = 0; i < 4; ++i) t.recv_data(kS3Expired).recv_would_block();
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(h.client->result().status, 403);
  EXPECT_EQ(h.client->url_refreshes(), 3U);
  EXPECT_EQ(fresh.asked, 3U);
  EXPECT_TRUE(h.client->url_expired());
  EXPECT_EQ(h.body.bytes, "");  // Expiry answers are read to be checked, not delivered.
}

// A fresh URL may not leave https for http.
TEST(ClientUrlRefresh, AFreshUrlFromHttpsToHttpIsRefused) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"http://bucket.test/o?sig=2"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  h.connector.add().recv_data(kS3Expired);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalFailure);
  EXPECT_STREQ(h.client->result().message, "refused a fresh URL from https to http");
  EXPECT_EQ(h.connector.opened(), 1U);
}

// A 403 for another reason is the final response, its body the caller's as without
// url_refresh (read first, to be checked); the app is not asked.
TEST(ClientUrlRefresh, AnotherRefusalIsTheFinalResponseWithItsBody) {
  Harness h("https://bucket.test/o?sig=1");
  FreshUrls fresh{{"https://bucket.test/o?sig=2"}};
  h.url_refresh = UrlRefresh{&FreshUrls::next, &fresh};
  h.connector.add().recv_data(
      "HTTP/1.1 403 Forbidden\r\nContent-Length: 55\r\n\r\n"
      "<Error><Code>SignatureDoesNotMatch</Code></Error>\n\n\n\n\n\n");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(fresh.asked, 0U);
  EXPECT_FALSE(h.client->url_expired());
  EXPECT_EQ(h.body.bytes, "<Error><Code>SignatureDoesNotMatch</Code></Error>\n\n\n\n\n\n");
}

// Without url_refresh an expiry answer is an ordinary final 403.
TEST(ClientUrlRefresh, WithoutARefreshAnExpiryIsAnOrdinaryFinalResponse) {
  Harness h("https://bucket.test/o?sig=1");
  h.connector.add().recv_data(kS3Expired);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().status, 403);
  EXPECT_FALSE(h.client->url_expired());
  EXPECT_EQ(h.body.bytes.rfind("<Error><Code>AccessDenied</Code>", 0), 0U);
}

}  // namespace
}  // namespace stepback::https::client_test
