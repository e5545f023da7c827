#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/https/http/request_writer.hpp"

namespace stepback::https {
namespace {

TEST(Http1Method, IdempotentByMethod) {
  for (const char* m : {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"}) {
    EXPECT_TRUE(is_idempotent_method(m)) << m;
  }
  for (const char* m : {"POST", "PATCH", "CONNECT", "get", "Get", "", "PROPFIND"}) {
    EXPECT_FALSE(is_idempotent_method(m)) << m;
  }
}

std::string write(const RequestHead& head, Status* status = nullptr, std::size_t size = 1024) {
  std::vector<std::uint8_t> buf(size);
  std::size_t written = 12345;
  const Status s = write_request_head(head, MutableBytes{buf.data(), buf.size()}, &written);
  if (status != nullptr) *status = s;
  if (s != Status::kOk) {
    EXPECT_EQ(written, 0U);
    return {};
  }
  return std::string(reinterpret_cast<const char*>(buf.data()), written);
}

Url url_of(const char* text) {
  Url url;
  EXPECT_EQ(parse_url(text, &url), Status::kOk) << text;
  return url;
}

// A request to a forward proxy names the whole URL and carries the proxy's credentials.
TEST(Http1RequestWriter, AbsoluteFormForAForwardProxy) {
  RequestHead head;
  head.url = url_of("http://origin.test:8080/a?b=1");
  head.absolute_form = true;
  head.proxy_authorization = "Basic dTpw";
  EXPECT_EQ(write(head),
            "GET http://origin.test:8080/a?b=1 HTTP/1.1\r\nHost: origin.test:8080\r\n"
            "Accept-Encoding: identity\r\nConnection: keep-alive\r\n"
            "Proxy-Authorization: Basic dTpw\r\n\r\n");
  head.url = url_of("http://[::1]");
  head.proxy_authorization = "";
  EXPECT_EQ(write(head),
            "GET http://[::1]:80/ HTTP/1.1\r\nHost: [::1]\r\n"
            "Accept-Encoding: identity\r\nConnection: keep-alive\r\n\r\n");
  Status s = Status::kOk;
  head.proxy_authorization = "Basic a\r\nX: y";
  EXPECT_EQ(write(head, &s), "");
  EXPECT_EQ(s, Status::kInvalidArgument);
}

// Range fields come after the caller's, open-ended or up to a piece's last byte, pinned by
// If-Range and Cloud Storage's generation precondition when given.
// A token source for LateValue: writes `value` when it fits, counts the asks.
struct TokenSource {
  std::string_view value;
  int asks = 0;
  bool last_refresh = false;
  static std::size_t write(void* context, bool refresh, MutableBytes out) {
    auto* t = static_cast<TokenSource*>(context);
    ++t->asks;
    t->last_refresh = refresh;
    if (t->value.size() <= out.size && !t->value.empty()) {
      std::memcpy(out.data, t->value.data(), t->value.size());
    }
    return t->value.size();
  }
};

TEST(Http1RequestWriter, AuthorizationIsAskedForLastAndOnlyOnceTheRestFits) {
  TokenSource token{"Bearer t1"};
  RequestHead head;
  head.url = url_of("https://example.com/o");
  head.ranged = true;
  head.range_from = 5;
  head.authorization = LateValue{&TokenSource::write, &token, true};
  const std::string full = write(head);
  EXPECT_EQ(full,
            "GET /o HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: identity\r\n"
            "Connection: keep-alive\r\nRange: bytes=5-\r\nAuthorization: Bearer t1\r\n\r\n");
  EXPECT_EQ(token.asks, 1);
  EXPECT_TRUE(token.last_refresh);
  // Exactly the room it needs, and one byte less: the value no longer fits.
  Status s = Status::kOk;
  EXPECT_EQ(write(head, &s, full.size()), full);
  EXPECT_EQ(write(head, &s, full.size() - 1), "");
  EXPECT_EQ(s, Status::kBufferTooSmall);
  // A head that does not fit without it never asks.
  token.asks = 0;
  EXPECT_EQ(write(head, &s, full.size() - 30), "");
  EXPECT_EQ(s, Status::kBufferTooSmall);
  EXPECT_EQ(token.asks, 0);
  // No value, no field; left out for another origin; a control byte is refused.
  token.value = "";
  EXPECT_EQ(write(head).find("Authorization"), std::string::npos);
  token.value = "Bearer t1";
  head.omit_credentials = true;
  EXPECT_EQ(write(head).find("Authorization"), std::string::npos);
  head.omit_credentials = false;
  token.value = "Bearer t1\r\nX-Evil: 1";
  EXPECT_EQ(write(head, &s), "");
  EXPECT_EQ(s, Status::kInvalidArgument);
}

TEST(Http1RequestWriter, RangeFieldsFollowTheCallersFields) {
  const Header extra[] = {{"X-A", "1"}};
  RequestHead head;
  head.url = url_of("https://example.com/o");
  head.headers = extra;
  head.header_count = 1;
  head.ranged = true;
  head.range_from = 5;
  EXPECT_EQ(write(head),
            "GET /o HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: identity\r\n"
            "Connection: keep-alive\r\nX-A: 1\r\nRange: bytes=5-\r\n\r\n");
  head.range_from = 0;
  head.range_end = 16384;
  head.if_range = "\"v1\"";
  head.generation_match = "1700000000123456";
  EXPECT_EQ(write(head),
            "GET /o HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: identity\r\n"
            "Connection: keep-alive\r\nX-A: 1\r\nRange: bytes=0-16383\r\n"
            "If-Range: \"v1\"\r\nx-goog-if-generation-match: 1700000000123456\r\n\r\n");
  // Without `ranged` the pins are not sent.
  head.ranged = false;
  EXPECT_EQ(write(head).find("If-Range"), std::string::npos);
  Status s = Status::kOk;
  head.ranged = true;
  head.if_range = "\"v1\"\r\nX: y";
  EXPECT_EQ(write(head, &s), "");
  EXPECT_EQ(s, Status::kInvalidArgument);
  head.if_range = "";
  head.range_from = 10;
  head.range_end = 10;  // An empty range.
  EXPECT_EQ(write(head, &s), "");
  EXPECT_EQ(s, Status::kInvalidArgument);
}

TEST(Http1RequestWriter, GoldenGet) {
  RequestHead head;
  head.url = url_of("https://example.com/path?q=1#f");
  head.user_agent = "stepback/0.1.0";
  EXPECT_EQ(write(head),
            "GET /path?q=1 HTTP/1.1\r\n"
            "Host: example.com\r\n"
            "User-Agent: stepback/0.1.0\r\n"
            "Accept-Encoding: identity\r\n"
            "Connection: keep-alive\r\n"
            "\r\n");
}

TEST(Http1RequestWriter, GoldenPostWithBodyAndHeaders) {
  const Header extra[] = {{"Content-Type", "application/json"}, {"X-Trace", ""}, {"X-Tab", "a\tb"}};
  RequestHead head;
  head.method = "POST";
  head.url = url_of("https://api.example.com:8443/v1/items");
  head.headers = extra;
  head.header_count = 3;
  head.body_size = 17;
  head.close = true;
  EXPECT_EQ(write(head),
            "POST /v1/items HTTP/1.1\r\n"
            "Host: api.example.com:8443\r\n"
            "Accept-Encoding: identity\r\n"
            "Connection: close\r\n"
            "Content-Length: 17\r\n"
            "Content-Type: application/json\r\n"
            "X-Trace: \r\n"
            "X-Tab: a\tb\r\n"
            "\r\n");
}

TEST(Http1RequestWriter, HostCarriesNonDefaultPortsAndBracketsIpv6) {
  RequestHead head;
  head.url = url_of("http://example.com/");
  EXPECT_NE(write(head).find("\r\nHost: example.com\r\n"), std::string::npos);
  head.url = url_of("http://example.com:443/");
  EXPECT_NE(write(head).find("\r\nHost: example.com:443\r\n"), std::string::npos);
  head.url = url_of("https://example.com:80/");
  EXPECT_NE(write(head).find("\r\nHost: example.com:80\r\n"), std::string::npos);
  head.url = url_of("https://[::1]:8443/x");
  EXPECT_EQ(write(head).substr(0, 35), "GET /x HTTP/1.1\r\nHost: [::1]:8443\r\n");
  head.url = url_of("https://[2001:db8::1]/");
  EXPECT_NE(write(head).find("\r\nHost: [2001:db8::1]\r\n"), std::string::npos);
}

TEST(Http1RequestWriter, AGivenHostValueReplacesTheUrls) {
  RequestHead head;
  head.url = url_of("https://127.0.0.1:8443/x");
  head.host = "storage.example.test";
  const std::string written = write(head);
  EXPECT_EQ(written.substr(0, 45), "GET /x HTTP/1.1\r\nHost: storage.example.test\r\n");
  EXPECT_EQ(written.find("127.0.0.1"), std::string::npos);
  head.host = "bad\r\nInjected: 1";
  std::uint8_t buf[256];
  std::size_t n = 0;
  EXPECT_EQ(write_request_head(head, MutableBytes{buf, sizeof buf}, &n), Status::kInvalidArgument);
}

TEST(Http1RequestWriter, ContentLengthRules) {
  RequestHead head;
  head.url = url_of("https://h/");
  for (const char* m : {"POST", "PUT", "PATCH"}) {
    head.method = m;
    EXPECT_NE(write(head).find("\r\nContent-Length: 0\r\n"), std::string::npos) << m;
  }
  for (const char* m : {"GET", "HEAD", "DELETE", "OPTIONS"}) {
    head.method = m;
    EXPECT_EQ(write(head).find("Content-Length"), std::string::npos) << m;
  }
  head.method = "DELETE";
  head.body_size = 3;
  EXPECT_NE(write(head).find("\r\nContent-Length: 3\r\n"), std::string::npos);
  head.body_size = ~std::uint64_t{0};
  EXPECT_NE(write(head).find("\r\nContent-Length: 18446744073709551615\r\n"), std::string::npos);
}

TEST(Http1RequestWriter, TargetForms) {
  RequestHead head;
  head.url.host = "h";
  head.url.target = "";
  EXPECT_EQ(write(head).substr(0, 16), "GET / HTTP/1.1\r\n");
  head.url.target = "?a=1";
  EXPECT_EQ(write(head).substr(0, 20), "GET /?a=1 HTTP/1.1\r\n");
  head.url = url_of("https://h?a=1");
  EXPECT_EQ(write(head).substr(0, 20), "GET /?a=1 HTTP/1.1\r\n");
  head.method = "OPTIONS";
  head.url.target = "*";
  EXPECT_EQ(write(head).substr(0, 20), "OPTIONS * HTTP/1.1\r\n");
}

TEST(Http1RequestWriter, UserAgentHeaderAllowedWhenFieldUnset) {
  const Header extra[] = {{"user-agent", "custom/1"}};
  RequestHead head;
  head.url = url_of("https://h/");
  head.headers = extra;
  head.header_count = 1;
  EXPECT_NE(write(head).find("\r\nuser-agent: custom/1\r\n"), std::string::npos);
  head.user_agent = "stepback/0.1.0";
  Status s = Status::kOk;
  write(head, &s);
  EXPECT_EQ(s, Status::kInvalidArgument);
}

struct Rejection {
  const char* what;
  RequestHead head;
};

RequestHead base() {
  RequestHead head;
  head.url.host = "example.com";
  head.url.target = "/";
  return head;
}

const Header kBadHeaders[][1] = {
    {{"", "v"}},
    {{"X A", "v"}},
    {{"X:A", "v"}},
    {{"X\r\nY", "v"}},
    {{"X\n", "v"}},
    {{"X(", "v"}},
    {{"X", "a\r\nB: c"}},
    {{"X", "a\nb"}},
    {{"X", "a\rb"}},
    {{"X", "a\x01"}},
    {{"X", "a\x7f"}},
    {{"Host", "evil"}},
    {{"content-length", "5"}},
    {{"Transfer-Encoding", "chunked"}},
    {{"CONNECTION", "close"}},
    {{"Accept-Encoding", "gzip"}},
};

TEST(Http1RequestWriter, RejectsEveryInvalidArgument) {
  std::vector<Rejection> cases;
  auto add = [&](const char* what, auto edit) {
    RequestHead h = base();
    edit(h);
    cases.push_back({what, h});
  };
  add("empty method", [](RequestHead& h) { h.method = ""; });
  add("method with space", [](RequestHead& h) { h.method = "GE T"; });
  add("method with CRLF", [](RequestHead& h) { h.method = "GET\r\n"; });
  add("empty host", [](RequestHead& h) { h.url.host = ""; });
  add("host with space", [](RequestHead& h) { h.url.host = "a b"; });
  add("host with CRLF", [](RequestHead& h) { h.url.host = "a\r\nX: y"; });
  add("host with slash", [](RequestHead& h) { h.url.host = "a/b"; });
  add("bad IPv6 host", [](RequestHead& h) { h.url.host = "::g"; });
  add("port 0", [](RequestHead& h) { h.url.port = 0; });
  add("relative target", [](RequestHead& h) { h.url.target = "path"; });
  add("target with space", [](RequestHead& h) { h.url.target = "/a b"; });
  add("target with CRLF", [](RequestHead& h) { h.url.target = "/a\r\n"; });
  add("target with NUL", [](RequestHead& h) { h.url.target = std::string_view("/a\0", 3); });
  add("target with fragment", [](RequestHead& h) { h.url.target = "/a#b"; });
  add("asterisk for GET", [](RequestHead& h) { h.url.target = "*"; });
  add("user agent with CR", [](RequestHead& h) { h.user_agent = "ua\r"; });
  add("user agent with LF", [](RequestHead& h) { h.user_agent = "ua\nX: y"; });
  add("user agent with NUL", [](RequestHead& h) { h.user_agent = std::string_view("ua\0", 3); });
  add("headers without array", [](RequestHead& h) { h.header_count = 1; });
  for (const auto& bad : kBadHeaders) {
    add("bad header", [&](RequestHead& h) {
      h.headers = bad;
      h.header_count = 1;
    });
  }
  add("NUL in header name", [](RequestHead& h) {
    static const Header kNul[] = {{std::string_view("X\0", 2), "v"}};
    h.headers = kNul;
    h.header_count = 1;
  });
  add("NUL in header value", [](RequestHead& h) {
    static const Header kNul[] = {{"X", std::string_view("v\0", 2)}};
    h.headers = kNul;
    h.header_count = 1;
  });
  ASSERT_EQ(write(base()).empty(), false);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Status s = Status::kOk;
    write(cases[i].head, &s);
    EXPECT_EQ(s, Status::kInvalidArgument) << i << ": " << cases[i].what;
  }
}

TEST(Http1RequestWriter, BufferTooSmallAtEverySizeReportsNothing) {
  const Header extra[] = {{"X-A", "1"}};
  RequestHead head;
  head.method = "PUT";
  head.url = url_of("https://[::1]:8443/x?y");
  head.user_agent = "ua";
  head.headers = extra;
  head.header_count = 1;
  head.body_size = 12;
  const std::string full = write(head);
  ASSERT_FALSE(full.empty());
  for (std::size_t size = 0; size < full.size(); ++size) {
    Status s = Status::kOk;
    write(head, &s, size);
    EXPECT_EQ(s, Status::kBufferTooSmall) << size;
  }
  EXPECT_EQ(write(head, nullptr, full.size()), full);
}

TEST(Http1RequestWriter, NullArguments) {
  std::size_t written = 7;
  EXPECT_EQ(write_request_head(base(), MutableBytes{nullptr, 10}, &written),
            Status::kInvalidArgument);
  EXPECT_EQ(written, 0U);
  EXPECT_EQ(write_request_head(base(), MutableBytes{nullptr, 0}, &written),
            Status::kBufferTooSmall);
  std::uint8_t buf[64];
  EXPECT_EQ(write_request_head(base(), MutableBytes{buf, sizeof buf}, nullptr),
            Status::kInvalidArgument);
  Url url;
  EXPECT_EQ(parse_url("https://h/", nullptr), Status::kInvalidArgument);
  EXPECT_EQ(parse_url("", &url), Status::kInvalidArgument);
}

}  // namespace
}  // namespace stepback::https
