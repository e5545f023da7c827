#include "stepback/https/http/redirect.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/case_label.hpp"
#include "tests/support/heap_trap.hpp"

namespace stepback::https {
namespace {

using Verdict = RedirectStep::Verdict;

constexpr const char* kRfcBase = "http://a/b/c/d;p?q";

Url parsed(std::string_view text) {
  Url url;
  EXPECT_EQ(parse_url(text, &url), Status::kOk) << text;
  return url;
}

// Resolves `location` against `base` into a 1 KiB buffer; the URL's text, or "!" and the
// status when it is refused.
std::string resolve(std::string_view base, std::string_view location) {
  std::array<std::uint8_t, 1024> out{};
  Url resolved;
  std::size_t size = 0;
  const Status s =
      resolve_location(parsed(base), location, {out.data(), out.size()}, &resolved, &size);
  if (s != Status::kOk) return std::string("!") + to_string(s);
  return std::string(reinterpret_cast<const char*>(out.data()), size);
}

struct ResolveCase {
  const char* base;
  const char* location;
  const char* expected;  // The absolute URL, or "!invalid_argument".
};

void PrintTo(const ResolveCase& c, std::ostream* os) { *os << testing::case_label(c.location); }

class ResolveTable : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(ResolveTable, Resolves) {
  const ResolveCase& c = GetParam();
  EXPECT_EQ(resolve(c.base, c.location), c.expected) << c.base << " + " << c.location;
}

// RFC 3986 5.4.1, the normal examples; the fragments are dropped, "//g" gets the path "/"
// and "g:h" (a scheme other than http) is refused.
INSTANTIATE_TEST_SUITE_P(Rfc3986Normal, ResolveTable,
                         ::testing::Values(ResolveCase{kRfcBase, "g:h", "!invalid_argument"},
                                           ResolveCase{kRfcBase, "g", "http://a/b/c/g"},
                                           ResolveCase{kRfcBase, "./g", "http://a/b/c/g"},
                                           ResolveCase{kRfcBase, "g/", "http://a/b/c/g/"},
                                           ResolveCase{kRfcBase, "/g", "http://a/g"},
                                           ResolveCase{kRfcBase, "//g", "http://g/"},
                                           ResolveCase{kRfcBase, "?y", "http://a/b/c/d;p?y"},
                                           ResolveCase{kRfcBase, "g?y", "http://a/b/c/g?y"},
                                           ResolveCase{kRfcBase, "#s", "http://a/b/c/d;p?q"},
                                           ResolveCase{kRfcBase, "g#s", "http://a/b/c/g"},
                                           ResolveCase{kRfcBase, "g?y#s", "http://a/b/c/g?y"},
                                           ResolveCase{kRfcBase, ";x", "http://a/b/c/;x"},
                                           ResolveCase{kRfcBase, "g;x", "http://a/b/c/g;x"},
                                           ResolveCase{kRfcBase, "g;x?y#s", "http://a/b/c/g;x?y"},
                                           ResolveCase{kRfcBase, "", "http://a/b/c/d;p?q"},
                                           ResolveCase{kRfcBase, ".", "http://a/b/c/"},
                                           ResolveCase{kRfcBase, "./", "http://a/b/c/"},
                                           ResolveCase{kRfcBase, "..", "http://a/b/"},
                                           ResolveCase{kRfcBase, "../", "http://a/b/"},
                                           ResolveCase{kRfcBase, "../g", "http://a/b/g"},
                                           ResolveCase{kRfcBase, "../..", "http://a/"},
                                           ResolveCase{kRfcBase, "../../", "http://a/"},
                                           ResolveCase{kRfcBase, "../../g", "http://a/g"}));

// RFC 3986 5.4.2, the abnormal examples; "http:g" is refused as a strict parser does.
INSTANTIATE_TEST_SUITE_P(
    Rfc3986Abnormal, ResolveTable,
    ::testing::Values(ResolveCase{kRfcBase, "../../../g", "http://a/g"},
                      ResolveCase{kRfcBase, "../../../../g", "http://a/g"},
                      ResolveCase{kRfcBase, "/./g", "http://a/g"},
                      ResolveCase{kRfcBase, "/../g", "http://a/g"},
                      ResolveCase{kRfcBase, "g.", "http://a/b/c/g."},
                      ResolveCase{kRfcBase, ".g", "http://a/b/c/.g"},
                      ResolveCase{kRfcBase, "g..", "http://a/b/c/g.."},
                      ResolveCase{kRfcBase, "..g", "http://a/b/c/..g"},
                      ResolveCase{kRfcBase, "./../g", "http://a/b/g"},
                      ResolveCase{kRfcBase, "./g/.", "http://a/b/c/g/"},
                      ResolveCase{kRfcBase, "g/./h", "http://a/b/c/g/h"},
                      ResolveCase{kRfcBase, "g/../h", "http://a/b/c/h"},
                      ResolveCase{kRfcBase, "g;x=1/./y", "http://a/b/c/g;x=1/y"},
                      ResolveCase{kRfcBase, "g;x=1/../y", "http://a/b/c/y"},
                      ResolveCase{kRfcBase, "g?y/./x", "http://a/b/c/g?y/./x"},
                      ResolveCase{kRfcBase, "g?y/../x", "http://a/b/c/g?y/../x"},
                      ResolveCase{kRfcBase, "g#s/./x", "http://a/b/c/g"},
                      ResolveCase{kRfcBase, "g#s/../x", "http://a/b/c/g"},
                      ResolveCase{kRfcBase, "http:g", "!invalid_argument"}));

INSTANTIATE_TEST_SUITE_P(
    Absolute, ResolveTable,
    ::testing::Values(ResolveCase{kRfcBase, "https://x.example/p?q", "https://x.example/p?q"},
                      ResolveCase{kRfcBase, "HTTPS://X.Example/P", "https://X.Example/P"},
                      ResolveCase{kRfcBase, "HtTp://h", "http://h/"},
                      ResolveCase{kRfcBase, "https://h:8443", "https://h:8443/"},
                      ResolveCase{kRfcBase, "https://h:443/", "https://h:443/"},
                      ResolveCase{kRfcBase, "https://h/a/./b/../c/", "https://h/a/c/"},
                      ResolveCase{kRfcBase, "https://h/..", "https://h/"},
                      ResolveCase{kRfcBase, "https://h?q", "https://h/?q"},
                      ResolveCase{kRfcBase, "https://h#f", "https://h/"},
                      ResolveCase{kRfcBase, "https://[2001:db8::1]:8443/x",
                                  "https://[2001:db8::1]:8443/x"},
                      ResolveCase{kRfcBase, "https://h/%2e%2E/x", "https://h/%2e%2E/x"},
                      ResolveCase{kRfcBase, "https://h/a//../b", "https://h/a/b"}));

// Scheme-relative references keep the base's scheme.
INSTANTIATE_TEST_SUITE_P(
    SchemeRelative, ResolveTable,
    ::testing::Values(ResolveCase{"https://a/b", "//x/y", "https://x/y"},
                      ResolveCase{"http://a/b", "//x:8080/y?z", "http://x:8080/y?z"},
                      ResolveCase{"https://a/b", "//[::1]:9/", "https://[::1]:9/"},
                      ResolveCase{"https://a/b", "//x?q", "https://x/?q"},
                      ResolveCase{"https://a/b", "//x/./y/../z", "https://x/z"}));

// The base's authority is rebuilt from its Url: IPv6 hosts in brackets, the port only when
// it is not the scheme's; an empty base path merges as "/".
INSTANTIATE_TEST_SUITE_P(
    BaseAuthority, ResolveTable,
    ::testing::Values(ResolveCase{"https://[::1]:8443/a/b", "c", "https://[::1]:8443/a/c"},
                      ResolveCase{"https://[2001:DB8::1]/a", "/x", "https://[2001:DB8::1]/x"},
                      ResolveCase{"http://h:80/a", "b", "http://h/b"},
                      ResolveCase{"https://h:443/a", "b", "https://h/b"},
                      ResolveCase{"http://h:443/a", "b", "http://h:443/b"},
                      ResolveCase{"https://h:80/a", "b", "https://h:80/b"},
                      ResolveCase{"https://h:1/a", "b", "https://h:1/b"},
                      ResolveCase{"https://h:65535/a", "b", "https://h:65535/b"},
                      ResolveCase{"https://Host.Example/a", "b", "https://Host.Example/b"},
                      ResolveCase{"https://h", "g", "https://h/g"},
                      ResolveCase{"https://h?x", "g", "https://h/g"},
                      ResolveCase{"https://h?x", "", "https://h/?x"},
                      ResolveCase{"https://h?x", "?y", "https://h/?y"},
                      ResolveCase{"https://h/a?x", "?", "https://h/a?"},
                      ResolveCase{"https://h/a?x", "#f", "https://h/a?x"},
                      ResolveCase{"https://h/a/../b?x", "", "https://h/b?x"},
                      ResolveCase{"https://h/a/b/", "..", "https://h/a/"},
                      ResolveCase{"https://h/a/b/", "../../../..", "https://h/"},
                      ResolveCase{"https://h/a/b", "c:/", "!invalid_argument"},
                      ResolveCase{"https://h/a/b", "./c:d", "https://h/a/c:d"},
                      ResolveCase{"https://h/a/b", "c/d:e", "https://h/a/c/d:e"},
                      ResolveCase{"https://h/a/b", "c?d:e", "https://h/a/c?d:e"}));

// Refused: other schemes, userinfo, bad hosts and ports, and any byte outside visible
// ASCII (nothing is percent-encoded on the caller's behalf).
INSTANTIATE_TEST_SUITE_P(
    Refused, ResolveTable,
    ::testing::Values(ResolveCase{kRfcBase, "ftp://h/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "javascript:alert(1)", "!invalid_argument"},
                      ResolveCase{kRfcBase, "data:text/plain,x", "!invalid_argument"},
                      ResolveCase{kRfcBase, "httpx://h/", "!invalid_argument"},
                      ResolveCase{kRfcBase, ":g", "!invalid_argument"},
                      ResolveCase{kRfcBase, "1a:g", "!invalid_argument"},
                      ResolveCase{kRfcBase, "https:/h/p", "!invalid_argument"},
                      ResolveCase{kRfcBase, "https:", "!invalid_argument"},
                      ResolveCase{kRfcBase, "https://user@h/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "https://user:pw@h/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//user@h/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//@h/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//", "!invalid_argument"},
                      ResolveCase{kRfcBase, "///p", "!invalid_argument"},
                      ResolveCase{kRfcBase, "https://", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//h:0/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//h:65536/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//h:/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//h:x/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//[::1/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//[]/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//[h]/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "//h%41/", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/a b", "!invalid_argument"},
                      ResolveCase{kRfcBase, " /a", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/a ", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/a\tb", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/a\r\nSet-Cookie:x", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/a\n", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/a\x7f", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/caf\xc3\xa9", "!invalid_argument"},
                      ResolveCase{kRfcBase, "/\xff", "!invalid_argument"},
                      ResolveCase{kRfcBase, "https://h/#f g", "!invalid_argument"},
                      ResolveCase{kRfcBase, "https://h\xc3\xa9/", "!invalid_argument"}));

TEST(ResolveLocation, RefusesAnEmbeddedNul) {
  EXPECT_EQ(resolve(kRfcBase, std::string_view("/a\0b", 4)), "!invalid_argument");
}

TEST(ResolveLocation, ParsesTheResultIntoViewsOfTheBuffer) {
  std::array<std::uint8_t, 128> out{};
  Url url;
  std::size_t size = 0;
  ASSERT_EQ(resolve_location(parsed("https://a/b/c"), "//[::1]:8443/x/../y?z#f",
                             {out.data(), out.size()}, &url, &size),
            Status::kOk);
  const std::string_view text(reinterpret_cast<const char*>(out.data()), size);
  EXPECT_EQ(text, "https://[::1]:8443/y?z");
  EXPECT_TRUE(url.tls);
  EXPECT_EQ(url.host, "::1");
  EXPECT_EQ(url.port, 8443);
  EXPECT_EQ(url.target, "/y?z");
  EXPECT_EQ(url.host.data(), text.data() + 9);
  EXPECT_EQ(url.target.data(), text.data() + 18);

  ASSERT_EQ(resolve_location(parsed("https://a/b/c"), "http://h:80", {out.data(), out.size()}, &url,
                             &size),
            Status::kOk);
  EXPECT_FALSE(url.tls);
  EXPECT_EQ(url.host, "h");
  EXPECT_EQ(url.port, 80);
  EXPECT_EQ(url.target, "/");
}

TEST(ResolveLocation, ExactBufferFitsAndOneByteLessDoesNot) {
  const Url base = parsed(kRfcBase);
  const std::string expected = "http://a/b/c/g?y";
  std::vector<std::uint8_t> out(expected.size());
  Url url;
  std::size_t size = 0;
  ASSERT_EQ(resolve_location(base, "g?y#s", {out.data(), out.size()}, &url, &size), Status::kOk);
  EXPECT_EQ(std::string(out.begin(), out.end()), expected);
  EXPECT_EQ(size, expected.size());

  for (std::size_t n = 0; n < expected.size(); ++n) {
    std::vector<std::uint8_t> small(n);
    Url untouched;
    untouched.host = "untouched";
    std::size_t small_size = 7;
    EXPECT_EQ(
        resolve_location(base, "g?y#s", {small.data(), small.size()}, &untouched, &small_size),
        Status::kBufferTooSmall)
        << n;
    EXPECT_EQ(untouched.host, "untouched");
    EXPECT_EQ(small_size, 7u);
  }
}

// The dot segments go before the size is checked: a buffer the size of the result suffices
// however long the path was before.
TEST(ResolveLocation, OnlyTheNormalizedPathHasToFit) {
  const std::string location = "/" + std::string(300, 'x') + "/../" + std::string(200, 'y') +
                               "/./../" + std::string(100, 'z') + "/.";
  const std::string expected = "https://h/" + std::string(100, 'z') + "/";
  std::vector<std::uint8_t> out(expected.size());
  Url url;
  std::size_t size = 0;
  ASSERT_EQ(resolve_location(parsed("https://h/base/path/that/is/long"), location,
                             {out.data(), out.size()}, &url, &size),
            Status::kOk);
  EXPECT_EQ(std::string(out.begin(), out.end()), expected);

  // Relative to a long base path as well (the merge of RFC 3986 5.2.3).
  const std::string long_base = "https://h/" + std::string(400, 'b') + "/c";
  std::vector<std::uint8_t> out2(std::string_view("https://h/g").size());
  ASSERT_EQ(resolve_location(parsed(long_base), "../g", {out2.data(), out2.size()}, &url, &size),
            Status::kOk);
  EXPECT_EQ(std::string(out2.begin(), out2.end()), "https://h/g");
}

// A bad reference is kInvalidArgument whatever the buffer, so that a caller that grows its
// buffer on kBufferTooSmall does not grow it for nothing.
TEST(ResolveLocation, InvalidBeatsTooSmall) {
  const Url base = parsed(kRfcBase);
  for (const char* location : {"//h:0/", "//[::1/", "//user@h/", "ftp://h/", "/a b", "//h:/"}) {
    Url url;
    std::size_t size = 0;
    EXPECT_EQ(resolve_location(base, location, {nullptr, 0}, &url, &size), Status::kInvalidArgument)
        << location;
  }
  Url url;
  std::size_t size = 0;
  EXPECT_EQ(resolve_location(base, "g", {nullptr, 0}, &url, &size), Status::kBufferTooSmall);
}

TEST(ResolveLocation, RefusesNullOutputs) {
  std::array<std::uint8_t, 64> out{};
  Url url;
  std::size_t size = 0;
  EXPECT_EQ(resolve_location(parsed(kRfcBase), "g", {out.data(), out.size()}, nullptr, &size),
            Status::kInvalidArgument);
  EXPECT_EQ(resolve_location(parsed(kRfcBase), "g", {out.data(), out.size()}, &url, nullptr),
            Status::kInvalidArgument);
}

// The output may not overlap the base's or the location's text (it would be overwritten
// while read); chained redirects alternate two buffers.
TEST(ResolveLocation, RefusesAnOutputThatOverlapsItsInputs) {
  std::array<std::uint8_t, 64> first{};
  std::array<std::uint8_t, 64> second{};
  Url url;
  std::size_t size = 0;
  ASSERT_EQ(
      resolve_location(parsed("https://h/a/b"), "c", {first.data(), first.size()}, &url, &size),
      Status::kOk);
  Url next;
  EXPECT_EQ(resolve_location(url, "d", {first.data(), first.size()}, &next, &size),
            Status::kInvalidArgument);
  EXPECT_EQ(resolve_location(url, "d", {first.data() + 5, 4}, &next, &size),
            Status::kInvalidArgument);
  ASSERT_EQ(resolve_location(url, "d", {second.data(), second.size()}, &next, &size), Status::kOk);
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(second.data()), size), "https://h/a/d");

  std::array<char, 32> text{};
  const std::string_view location("/x", 2);
  std::copy(location.begin(), location.end(), text.begin());
  EXPECT_EQ(
      resolve_location(url, std::string_view(text.data(), 2),
                       {reinterpret_cast<std::uint8_t*>(text.data()), text.size()}, &next, &size),
      Status::kInvalidArgument);
}

// Absolute results resolve to themselves: they are already without dot segments.
TEST(ResolveLocation, ResultsAreFixedPoints) {
  for (const char* location : {"g", "../..", "//x/./y/..", "?y", "https://[::1]:9/a/b/../c?d"}) {
    const std::string once = resolve("https://h:8443/a/b/c", location);
    ASSERT_NE(once.front(), '!') << location;
    EXPECT_EQ(resolve("http://other/z", once), once) << location;
  }
}

TEST(ResolveLocation, MakesNoHeapCalls) {
  if (!stepback::testing::heap_trap_available()) {
    GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  }
  const Url base = parsed("https://[::1]:8443/a/b/c?q");
  std::array<std::uint8_t, 256> out{};
  long calls = -1;
  Status ok = Status::kError;
  Status refused = Status::kError;
  {
    stepback::testing::HeapTrap trap;
    Url url;
    std::size_t size = 0;
    ok = resolve_location(base, "../x/./y/..?z#f", {out.data(), out.size()}, &url, &size);
    refused = resolve_location(base, "//h:99999/", {out.data(), out.size()}, &url, &size);
    const RedirectStep step = decide_redirect("POST", 302, base, url);
    (void)step;
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 0) << stepback::testing::HeapTrap::describe();
  EXPECT_EQ(ok, Status::kOk);
  EXPECT_EQ(refused, Status::kInvalidArgument);
}

struct OriginCase {
  const char* a;
  const char* b;
  bool same;
};

void PrintTo(const OriginCase& c, std::ostream* os) { *os << testing::case_label(c.b); }

class SameOriginTable : public ::testing::TestWithParam<OriginCase> {};

TEST_P(SameOriginTable, Compares) {
  const OriginCase& c = GetParam();
  EXPECT_EQ(same_origin(parsed(c.a), parsed(c.b)), c.same) << c.a << " vs " << c.b;
  EXPECT_EQ(same_origin(parsed(c.b), parsed(c.a)), c.same) << c.b << " vs " << c.a;
}

INSTANTIATE_TEST_SUITE_P(
    Origins, SameOriginTable,
    ::testing::Values(OriginCase{"https://h/a", "https://h/b?c", true},
                      OriginCase{"https://h", "https://h:443/", true},
                      OriginCase{"http://h", "http://h:80/", true},
                      OriginCase{"https://Example.COM/", "https://example.com/", true},
                      OriginCase{"HTTPS://h/", "https://h/", true},
                      OriginCase{"https://[2001:DB8::1]/", "https://[2001:db8::1]:443/", true},
                      OriginCase{"https://h/", "http://h/", false},
                      OriginCase{"https://h/", "https://h:8443/", false},
                      OriginCase{"http://h:443/", "https://h/", false},
                      OriginCase{"https://h/", "https://g/", false},
                      OriginCase{"https://h/", "https://h.example/", false},
                      OriginCase{"https://[::1]/", "https://[0::1]/", false}));

struct StepCase {
  std::uint16_t status;
  const char* method;
  const char* next_method;
  bool drop_body;
};

void PrintTo(const StepCase& c, std::ostream* os) { *os << c.status << "_" << c.method; }

class FollowedTable : public ::testing::TestWithParam<StepCase> {};

TEST_P(FollowedTable, SameOrigin) {
  const StepCase& c = GetParam();
  const RedirectStep step =
      decide_redirect(c.method, c.status, parsed("https://h/a"), parsed("https://H:443/b"));
  EXPECT_EQ(step.verdict, Verdict::kFollow);
  EXPECT_EQ(step.method, c.next_method);
  EXPECT_EQ(step.drop_body, c.drop_body);
  EXPECT_TRUE(step.same_origin);
}

TEST_P(FollowedTable, CrossOrigin) {
  const StepCase& c = GetParam();
  const RedirectStep step =
      decide_redirect(c.method, c.status, parsed("https://h/a"), parsed("https://other/b"));
  EXPECT_EQ(step.verdict, Verdict::kFollow);
  EXPECT_EQ(step.method, c.next_method);
  EXPECT_EQ(step.drop_body, c.drop_body);
  EXPECT_FALSE(step.same_origin);
}

TEST_P(FollowedTable, HttpToHttpsIsFollowed) {
  const StepCase& c = GetParam();
  const RedirectStep step =
      decide_redirect(c.method, c.status, parsed("http://h/a"), parsed("https://h/b"));
  EXPECT_EQ(step.verdict, Verdict::kFollow);
  EXPECT_EQ(step.method, c.next_method);
  EXPECT_FALSE(step.same_origin);  // Another scheme and port.
}

TEST_P(FollowedTable, HttpsToHttpIsRefused) {
  const StepCase& c = GetParam();
  EXPECT_EQ(
      decide_redirect(c.method, c.status, parsed("https://h/a"), parsed("http://h/a")).verdict,
      Verdict::kInsecure);
  EXPECT_EQ(
      decide_redirect(c.method, c.status, parsed("https://h/a"), parsed("http://h:443/a")).verdict,
      Verdict::kInsecure);
}

// Every followed status with every method: 303 makes a bodiless GET of all but HEAD;
// 301 and 302 do so for POST only; 307 and 308 keep method and body.
INSTANTIATE_TEST_SUITE_P(
    Statuses, FollowedTable,
    ::testing::Values(
        StepCase{301, "GET", "GET", false}, StepCase{301, "HEAD", "HEAD", false},
        StepCase{301, "POST", "GET", true}, StepCase{301, "PUT", "PUT", false},
        StepCase{301, "DELETE", "DELETE", false}, StepCase{301, "PATCH", "PATCH", false},
        StepCase{301, "post", "post", false},  // Methods are case-sensitive (RFC 9110 9.1).
        StepCase{302, "GET", "GET", false}, StepCase{302, "HEAD", "HEAD", false},
        StepCase{302, "POST", "GET", true}, StepCase{302, "PUT", "PUT", false},
        StepCase{302, "DELETE", "DELETE", false}, StepCase{302, "PATCH", "PATCH", false},
        StepCase{303, "GET", "GET", true}, StepCase{303, "HEAD", "HEAD", true},
        StepCase{303, "POST", "GET", true}, StepCase{303, "PUT", "GET", true},
        StepCase{303, "DELETE", "GET", true}, StepCase{303, "PATCH", "GET", true},
        StepCase{307, "GET", "GET", false}, StepCase{307, "HEAD", "HEAD", false},
        StepCase{307, "POST", "POST", false}, StepCase{307, "PUT", "PUT", false},
        StepCase{307, "DELETE", "DELETE", false}, StepCase{307, "PATCH", "PATCH", false},
        StepCase{308, "GET", "GET", false}, StepCase{308, "HEAD", "HEAD", false},
        StepCase{308, "POST", "POST", false}, StepCase{308, "PUT", "PUT", false},
        StepCase{308, "DELETE", "DELETE", false}, StepCase{308, "PATCH", "PATCH", false}));

TEST(DecideRedirect, OtherStatusesAreNotFollowed) {
  const Url from = parsed("https://h/a");
  const Url to = parsed("https://h/b");
  for (const int status :
       {0, 100, 200, 206, 299, 300, 304, 305, 306, 309, 399, 400, 404, 500, 503, 65535}) {
    for (const char* method : {"GET", "POST"}) {
      const RedirectStep step =
          decide_redirect(method, static_cast<std::uint16_t>(status), from, to);
      EXPECT_EQ(step.verdict, Verdict::kNotRedirect) << status << " " << method;
      EXPECT_EQ(step.method, method);
      EXPECT_FALSE(step.drop_body);
    }
  }
  // Not even to an insecure URL: a 200 is no redirect whatever its Location.
  EXPECT_EQ(decide_redirect("GET", 200, from, parsed("http://h/")).verdict, Verdict::kNotRedirect);
}

TEST(DecideRedirect, DefaultStepIsNotAFollow) {
  const RedirectStep step;
  EXPECT_EQ(step.verdict, Verdict::kNotRedirect);
  EXPECT_FALSE(step.drop_body);
  EXPECT_FALSE(step.same_origin);
}

}  // namespace
}  // namespace stepback::https
