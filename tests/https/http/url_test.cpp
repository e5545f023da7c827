#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "stepback/https/http/url.hpp"
#include "tests/support/case_label.hpp"

namespace stepback::https {
namespace {

struct UrlCase {
  const char* text;
  bool ok;
  bool tls = true;
  const char* host = "";
  std::uint16_t port = 0;
  const char* target = "";
};

void PrintTo(const UrlCase& c, std::ostream* os) { *os << testing::case_label(c.text); }

class UrlTable : public ::testing::TestWithParam<UrlCase> {};

TEST_P(UrlTable, Parses) {
  const UrlCase& c = GetParam();
  Url url;
  url.host = "untouched";
  const Status s = parse_url(c.text, &url);
  if (!c.ok) {
    EXPECT_EQ(s, Status::kInvalidArgument) << c.text;
    EXPECT_EQ(url.host, "untouched") << c.text;
    return;
  }
  ASSERT_EQ(s, Status::kOk) << c.text;
  EXPECT_EQ(url.tls, c.tls) << c.text;
  EXPECT_EQ(url.host, c.host) << c.text;
  EXPECT_EQ(url.port, c.port) << c.text;
  EXPECT_EQ(url.target, c.target) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Urls, UrlTable,
    ::testing::Values(
        UrlCase{"https://example.com", true, true, "example.com", 443, "/"},
        UrlCase{"https://example.com/", true, true, "example.com", 443, "/"},
        UrlCase{"http://example.com/a", true, false, "example.com", 80, "/a"},
        UrlCase{"HTTPS://Example.COM/X", true, true, "Example.COM", 443, "/X"},
        UrlCase{"https://example.com:8443/a/b?c=d&e", true, true, "example.com", 8443,
                "/a/b?c=d&e"},
        UrlCase{"https://example.com/p#frag", true, true, "example.com", 443, "/p"},
        UrlCase{"https://example.com#frag", true, true, "example.com", 443, "/"},
        UrlCase{"https://example.com?q=1", true, true, "example.com", 443, "?q=1"},
        UrlCase{"https://h:1/", true, true, "h", 1, "/"},
        UrlCase{"https://h:65535/", true, true, "h", 65535, "/"},
        UrlCase{"https://h:00443/", true, true, "h", 443, "/"},
        UrlCase{"https://127.0.0.1:8443/x", true, true, "127.0.0.1", 8443, "/x"},
        UrlCase{"https://[::1]:8443/", true, true, "::1", 8443, "/"},
        UrlCase{"https://[::1]/", true, true, "::1", 443, "/"},
        UrlCase{"http://[2001:db8::1]", true, false, "2001:db8::1", 80, "/"},
        UrlCase{"https://[::ffff:192.0.2.1]/x", true, true, "::ffff:192.0.2.1", 443, "/x"},
        UrlCase{"https://a_b-c.example~/%7Euser?x=%20", true, true, "a_b-c.example~", 443,
                "/%7Euser?x=%20"},
        UrlCase{"ftp://example.com/", false}, UrlCase{"https:/example.com/", false},
        UrlCase{"//example.com/", false}, UrlCase{"example.com", false}, UrlCase{"https://", false},
        UrlCase{"https:///path", false}, UrlCase{"https://:443/", false},
        UrlCase{"https://user@example.com/", false}, UrlCase{"https://user:pw@example.com/", false},
        UrlCase{"https://example.com:0/", false}, UrlCase{"https://example.com:65536/", false},
        UrlCase{"https://example.com:123456/", false}, UrlCase{"https://example.com:/", false},
        UrlCase{"https://example.com:abc/", false}, UrlCase{"https://example.com:-1/", false},
        UrlCase{"https://example.com:80:90/", false}, UrlCase{"https://exa mple.com/", false},
        UrlCase{"https://exa%41mple.com/", false}, UrlCase{"https://[::1/", false},
        UrlCase{"https://[::1]x/", false}, UrlCase{"https://[::1]:/", false},
        UrlCase{"https://[]/", false}, UrlCase{"https://[1.2.3.4]/", false},
        UrlCase{"https://[g::1]/", false}, UrlCase{"https://[::1%25eth0]/", false},
        UrlCase{"https://::1/", false}, UrlCase{"https://example.com/a b", false},
        UrlCase{"https://example.com/a\x7f", false},
        UrlCase{"https://example.com/a\r\nX: y", false},
        UrlCase{"https://example.com/\xc3\xa9", false}));

}  // namespace
}  // namespace stepback::https
