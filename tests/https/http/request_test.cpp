// Request, the request as it stands between attempts: what it takes, where redirects and
// fresh URLs move it, and the rules that follow its method.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "stepback/https/http/request.hpp"

namespace stepback::https {
namespace {

Url url_of(const char* text) {
  Url url;
  EXPECT_EQ(parse_url(text, &url), Status::kOk) << text;
  return url;
}

TEST(Request, TakesAValidSpecAndRefusesABadOneWithoutChange) {
  Request r;
  RequestSpec spec;
  spec.head.url = url_of("https://example.com/o");
  ASSERT_EQ(r.set(spec), Status::kOk);
  EXPECT_STREQ(r.host(), "example.com");
  EXPECT_TRUE(r.idempotent());
  EXPECT_TRUE(r.resumable());
  EXPECT_FALSE(r.strict());

  RequestSpec bad = spec;
  bad.body.size = 10;  // No reader.
  EXPECT_EQ(r.set(bad), Status::kInvalidArgument);
  const std::string long_host(Request::kHostMax + 1, 'a');
  bad = spec;
  bad.head.url.host = long_host;
  EXPECT_EQ(r.set(bad), Status::kInvalidArgument);
  bad.head.url.host = {};
  EXPECT_EQ(r.set(bad), Status::kInvalidArgument);
  EXPECT_STREQ(r.host(), "example.com");  // Unchanged.

  const std::string longest(Request::kHostMax, 'b');
  bad = spec;
  bad.head.url.host = longest;
  ASSERT_EQ(r.set(bad), Status::kOk);
  EXPECT_EQ(std::string_view(r.host()), longest);
}

TEST(Request, TheBodySizeAndTheRulesComeFromTheSpec) {
  static const ConstBytes body{reinterpret_cast<const std::uint8_t*>("abc"), 3};
  Request r;
  RequestSpec spec;
  spec.head.method = "POST";
  spec.head.url = url_of("https://example.com/o");
  spec.body = BodySource::of(&body);
  spec.idempotency = RequestSpec::Idempotency::kNo;
  ASSERT_EQ(r.set(spec), Status::kOk);
  EXPECT_EQ(r.head().body_size, 3U);
  EXPECT_FALSE(r.idempotent());
  EXPECT_FALSE(r.resumable());
  EXPECT_TRUE(r.strict());
}

TEST(Request, ARedirectToAnotherOriginDropsCredentialsAndAGetDropsTheBody) {
  static const ConstBytes body{reinterpret_cast<const std::uint8_t*>("abc"), 3};
  Request r;
  RequestSpec spec;
  spec.head.method = "POST";
  spec.head.url = url_of("https://example.com/o");
  spec.head.host = "front.example.com";
  spec.body = BodySource::of(&body);
  ASSERT_EQ(r.set(spec), Status::kOk);
  ASSERT_FALSE(r.idempotent());

  RedirectStep step;
  step.method = "GET";
  step.drop_body = true;
  step.same_origin = false;
  const Url to = url_of("https://other.example.net/p");
  r.redirect(to, step);
  EXPECT_STREQ(r.host(), "other.example.net");
  EXPECT_EQ(r.head().method, "GET");
  EXPECT_TRUE(r.head().omit_credentials);
  EXPECT_TRUE(r.head().omit_content_fields);
  EXPECT_TRUE(r.head().host.empty());
  EXPECT_EQ(r.head().body_size, 0U);
  EXPECT_EQ(r.spec().body.read, nullptr);
  EXPECT_TRUE(r.idempotent());  // The rules follow the new method.
  EXPECT_TRUE(r.resumable());

  // The same origin keeps what the caller gave.
  ASSERT_EQ(r.set(spec), Status::kOk);
  r.retarget(url_of("https://example.com/q"), true);
  EXPECT_FALSE(r.head().omit_credentials);
  EXPECT_EQ(r.head().host, "front.example.com");
  EXPECT_EQ(r.head().url.target, "/q");
}

TEST(Request, AGenerationNamedByTheCallerIsSeen) {
  const Header pin[] = {{"X-Goog-If-Generation-Match", "7"}};
  Request r;
  RequestSpec spec;
  spec.head.url = url_of("https://storage.googleapis.com/b/o");
  ASSERT_EQ(r.set(spec), Status::kOk);
  EXPECT_FALSE(r.names_generation());
  spec.head.url = url_of("https://storage.googleapis.com/b/o?generation=7");
  ASSERT_EQ(r.set(spec), Status::kOk);
  EXPECT_TRUE(r.names_generation());
  spec.head.url = url_of("https://storage.googleapis.com/b/o?ifGenerationMatch=7");
  ASSERT_EQ(r.set(spec), Status::kOk);
  EXPECT_TRUE(r.names_generation());
  spec.head.url = url_of("https://storage.googleapis.com/b/o");
  spec.head.headers = pin;
  spec.head.header_count = 1;
  ASSERT_EQ(r.set(spec), Status::kOk);
  EXPECT_TRUE(r.names_generation());
}

}  // namespace
}  // namespace stepback::https
