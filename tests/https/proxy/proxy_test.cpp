// The proxy settings' pure parts: curl's no_proxy rules as a table, and the proxy URL parser.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "stepback/https/proxy/proxy.hpp"

namespace stepback::https {
namespace {

struct NoProxyCase {
  const char* list;
  const char* host;
  std::uint16_t port;
  bool excluded;
};

TEST(NoProxy, CurlRules) {
  const NoProxyCase cases[] = {
      {"", "example.com", 443, false},
      {"*", "example.com", 443, true},
      {"*", "10.1.2.3", 80, true},
      {"example.com", "example.com", 443, true},
      {"example.com", "EXAMPLE.com", 443, true},
      {"example.com", "www.example.com", 443, true},
      {"example.com", "badexample.com", 443, false},
      {"example.com", "example.com.evil.test", 443, false},
      {".example.com", "example.com", 443, true},
      {".example.com", "a.b.example.com", 443, true},
      {".example.com", "xexample.com", 443, false},
      {"example.com.", "example.com", 443, true},
      {"example.com", "example.com.", 443, true},
      {"a.test, example.com ,b.test", "www.example.com", 443, true},
      {"a.test example.com", "example.com", 443, true},
      {"a.test,,b.test", "c.test", 443, false},
      {"example.com:8443", "example.com", 8443, true},
      {"example.com:8443", "example.com", 443, false},
      {"127.0.0.1", "127.0.0.1", 80, true},
      {"127.0.0.1", "127.0.0.10", 80, false},
      {"127.0.0.1:8080", "127.0.0.1", 8080, true},
      {"127.0.0.1:8080", "127.0.0.1", 80, false},
      {"10.0.0.0/8", "10.200.3.4", 80, true},
      {"10.0.0.0/8", "11.0.0.1", 80, false},
      {"192.168.1.0/24", "192.168.1.77", 80, true},
      {"192.168.1.0/24", "192.168.2.77", 80, false},
      {"0.0.0.0/0", "8.8.8.8", 80, true},
      {"10.0.0.0/8", "ten.example", 80, false},
      {"::1", "::1", 443, true},
      {"[::1]", "::1", 443, true},
      {"[::1]:8443", "::1", 8443, true},
      {"[::1]:8443", "::1", 443, false},
      {"::1", "[::1]", 443, true},
      {"::1", "::2", 443, false},
      {"localhost", "localhost", 80, true},
      {"*.example.com", "www.example.com", 443, false},  // Not a wildcard: curl's `*` is alone.
  };
  for (const NoProxyCase& c : cases) {
    EXPECT_EQ(proxy_excluded(c.list, c.host, c.port), c.excluded)
        << "no_proxy='" << c.list << "' host=" << c.host << " port=" << c.port;
  }
}

TEST(NoProxy, UsesProxyNeedsAHostAndNoExclusion) {
  ProxyConfig proxy;
  EXPECT_FALSE(uses_proxy(proxy, "example.com", 443));
  proxy.host = "proxy.test";
  EXPECT_TRUE(uses_proxy(proxy, "example.com", 443));
  proxy.no_proxy = "example.com";
  EXPECT_FALSE(uses_proxy(proxy, "www.example.com", 443));
  EXPECT_TRUE(uses_proxy(proxy, "example.org", 443));
}

struct Parsed {
  Status status = Status::kError;
  std::string host, user, password;
  std::uint16_t port = 0;
};

Parsed parse(const char* text) {
  char storage[64];
  ProxyConfig config;
  config.no_proxy = "kept";
  Parsed p;
  p.status = parse_proxy_url(text, storage, sizeof storage, &config);
  p.host = std::string(config.host);
  p.user = std::string(config.user);
  p.password = std::string(config.password);
  p.port = config.port;
  EXPECT_EQ(config.no_proxy, "kept");
  return p;
}

TEST(ProxyUrl, HostPortAndCredentials) {
  Parsed p = parse("http://proxy.test:3128");
  EXPECT_EQ(p.status, Status::kOk);
  EXPECT_EQ(p.host, "proxy.test");
  EXPECT_EQ(p.port, 3128);
  EXPECT_EQ(p.user, "");
  p = parse("proxy.test");  // No scheme: http, as curl; no port: curl's 1080.
  EXPECT_EQ(p.status, Status::kOk);
  EXPECT_EQ(p.port, 1080);
  p = parse("HTTP://u%40corp:p%3Ass%25@10.0.0.1:8080/");
  EXPECT_EQ(p.status, Status::kOk);
  EXPECT_EQ(p.host, "10.0.0.1");
  EXPECT_EQ(p.port, 8080);
  EXPECT_EQ(p.user, "u@corp");
  EXPECT_EQ(p.password, "p:ss%");
  p = parse("http://user@[::1]:3128");
  EXPECT_EQ(p.status, Status::kOk);
  EXPECT_EQ(p.host, "::1");
  EXPECT_EQ(p.user, "user");
  EXPECT_EQ(p.password, "");
}

TEST(ProxyUrl, Refusals) {
  for (const char* bad :
       {"", "http://", "https://proxy.test", "socks5://proxy.test:1080", "http://proxy.test:0",
        "http://proxy.test:65536", "http://proxy.test:x", "http://proxy.test:", "http://a b",
        "http://proxy.test/path", "http://u:%zz@proxy.test", "http://u:%4@proxy.test",
        "http://[::1", "http://:3128"}) {
    EXPECT_EQ(parse(bad).status, Status::kInvalidArgument) << bad;
  }
  char tiny[4];
  ProxyConfig config;
  EXPECT_EQ(parse_proxy_url("http://longuser:pw@proxy.test", tiny, sizeof tiny, &config),
            Status::kInvalidArgument);
}

}  // namespace
}  // namespace stepback::https
