// The resolver seam without a DNS server: parse_dns_answer (c-ares's parser, as
// AndroidResolver uses it) on hand-built messages, FixedResolver, and ResolveError's names.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "stepback/https/dns/android_resolver.hpp"
#include "stepback/https/dns/resolver.hpp"

namespace stepback::https {
namespace {

// A DNS response to `name` with `rcode` and the given A / AAAA answers.
std::vector<std::uint8_t> response(const std::string& name, int rcode,
                                   const std::vector<std::string>& v4,
                                   const std::vector<std::string>& v6) {
  std::vector<std::uint8_t> m = {0x12, 0x34, 0x81, static_cast<std::uint8_t>(0x80 | rcode),
                                 0,    1,    0,    static_cast<std::uint8_t>(v4.size() + v6.size()),
                                 0,    0,    0,    0};
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = name.find('.', start);
    const std::size_t end = dot == std::string::npos ? name.size() : dot;
    m.push_back(static_cast<std::uint8_t>(end - start));
    m.insert(m.end(), name.begin() + static_cast<long>(start),
             name.begin() + static_cast<long>(end));
    start = end + 1;
  }
  m.push_back(0);
  m.insert(m.end(), {0, 1, 0, 1});  // QTYPE A, QCLASS IN.
  auto add = [&m](std::uint8_t type, const std::uint8_t* data, std::uint8_t size) {
    m.insert(m.end(), {0xC0, 0x0C, 0, type, 0, 1, 0, 0, 0, 60, 0, size});
    m.insert(m.end(), data, data + size);
  };
  for (const std::string& a : v4) {
    std::uint8_t b[4];
    EXPECT_EQ(inet_pton(AF_INET, a.c_str(), b), 1);
    add(1, b, 4);
  }
  for (const std::string& a : v6) {
    std::uint8_t b[16];
    EXPECT_EQ(inet_pton(AF_INET6, a.c_str(), b), 1);
    add(28, b, 16);
  }
  return m;
}

std::string text(const SocketAddress& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  const auto* sa = reinterpret_cast<const sockaddr*>(a.bytes);
  if (sa->sa_family == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, a.bytes, sizeof sin);
    inet_ntop(AF_INET, &sin.sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(sin.sin_port));
  }
  sockaddr_in6 sin6{};
  std::memcpy(&sin6, a.bytes, sizeof sin6);
  inet_ntop(AF_INET6, &sin6.sin6_addr, buf, sizeof buf);
  return "[" + std::string(buf) + "]:" + std::to_string(ntohs(sin6.sin6_port));
}

#if defined(STEPBACK_HAVE_CARES)
TEST(ParseDnsAnswer, ReadsAAndAaaaRecordsWithThePort) {
  const auto m = response("example.test", 0, {"192.0.2.1", "192.0.2.2"}, {"2001:db8::1"});
  SocketAddress out[8];
  std::size_t count = 0;
  EXPECT_EQ(parse_dns_answer(m.data(), m.size(), 0, 443, out, 8, &count), ResolveError::kNone);
  ASSERT_EQ(count, 3U);
  EXPECT_EQ(text(out[0]), "192.0.2.1:443");
  EXPECT_EQ(text(out[1]), "192.0.2.2:443");
  EXPECT_EQ(text(out[2]), "[2001:db8::1]:443");
}

TEST(ParseDnsAnswer, AppendsAndRespectsTheCapacity) {
  const auto m = response("example.test", 0, {"192.0.2.1", "192.0.2.2"}, {});
  SocketAddress out[2];
  std::size_t count = 1;
  EXPECT_EQ(parse_dns_answer(m.data(), m.size(), 0, 80, out, 2, &count), ResolveError::kNone);
  EXPECT_EQ(count, 2U);
  EXPECT_EQ(text(out[1]), "192.0.2.1:80");
}

TEST(ParseDnsAnswer, ClassifiesRcodes) {
  const auto m = response("example.test", 3, {}, {});
  SocketAddress out[2];
  std::size_t count = 0;
  EXPECT_EQ(parse_dns_answer(m.data(), m.size(), 3, 80, out, 2, &count), ResolveError::kNxDomain);
  EXPECT_EQ(parse_dns_answer(m.data(), m.size(), 2, 80, out, 2, &count),
            ResolveError::kServerFailure);
  EXPECT_EQ(parse_dns_answer(m.data(), m.size(), 5, 80, out, 2, &count),
            ResolveError::kServerFailure);
  EXPECT_EQ(parse_dns_answer(m.data(), m.size(), 9, 80, out, 2, &count),
            ResolveError::kBadResponse);
  EXPECT_EQ(count, 0U);
}

TEST(ParseDnsAnswer, AnEmptyAnswerParsesWithNoAddress) {
  const auto m = response("example.test", 0, {}, {});
  SocketAddress out[2];
  std::size_t count = 0;
  EXPECT_EQ(parse_dns_answer(m.data(), m.size(), 0, 80, out, 2, &count), ResolveError::kNone);
  EXPECT_EQ(count, 0U);
}

TEST(ParseDnsAnswer, GarbageAndTruncationAreBadResponses) {
  const std::uint8_t garbage[] = {1, 2, 3, 4, 5};
  SocketAddress out[2];
  std::size_t count = 0;
  EXPECT_EQ(parse_dns_answer(garbage, sizeof garbage, 0, 80, out, 2, &count),
            ResolveError::kBadResponse);
  const auto m = response("example.test", 0, {"192.0.2.1"}, {});
  EXPECT_EQ(parse_dns_answer(m.data(), m.size() - 3, 0, 80, out, 2, &count),
            ResolveError::kBadResponse);
  EXPECT_EQ(count, 0U);
}
#endif  // STEPBACK_HAVE_CARES

SocketAddress v4(const char* ip, std::uint16_t port) {
  SocketAddress a;
  EXPECT_EQ(parse_numeric_address(ip, port, &a), Status::kOk);
  return a;
}

TEST(FixedResolver, HandsOutItsAddressesWithThePort) {
  FixedResolver r;
  const SocketAddress given[2] = {v4("192.0.2.7", 1), v4("192.0.2.8", 1)};
  r.set(given, 2);
  r.start("any.name", 8443, Millis(0));
  EXPECT_EQ(r.step(Millis(0)).kind, ResolverNext::Kind::kDone);
  ASSERT_EQ(r.result().count, 2U);
  EXPECT_EQ(text(r.result().addresses[0]), "192.0.2.7:8443");
  EXPECT_EQ(text(r.result().addresses[1]), "192.0.2.8:8443");
}

SocketAddress v6(const char* ip, std::uint16_t port) {
  SocketAddress a;
  EXPECT_EQ(parse_numeric_address(ip, port, &a), Status::kOk);
  return a;
}

// Regression: set() kept the first kMaxAddresses given, so eight IPv6 addresses ahead of an
// IPv4 one left no IPv4 address for Happy Eyeballs to fall back on.
TEST(FixedResolver, ALongListKeepsBothFamilies) {
  FixedResolver r;
  std::vector<SocketAddress> given;
  for (int i = 1; i <= 9; ++i) given.push_back(v6(("2001:db8::" + std::to_string(i)).c_str(), 1));
  given.push_back(v4("192.0.2.1", 1));
  r.set(given.data(), given.size());
  r.start("any.name", 443, Millis(0));
  ASSERT_EQ(r.result().count, Resolver::kMaxAddresses);
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < r.result().count; ++i) kept.push_back(text(r.result().addresses[i]));
  // The first kMaxAddresses - 1 IPv6 addresses (7; 3 in the small-RAM build), then the IPv4.
  std::vector<std::string> want;
  for (std::size_t i = 1; i < Resolver::kMaxAddresses; ++i) {
    want.push_back("[2001:db8::" + std::to_string(i) + "]:443");
  }
  want.emplace_back("192.0.2.1:443");
  EXPECT_EQ(kept, want);
}

TEST(FamilyQuota, EachFamilyKeepsHalfTheRoomWhenItHasThatMany) {
  const auto q = [](std::size_t v6, std::size_t v4, std::size_t capacity) {
    const FamilyQuota f = family_quota(v6, v4, capacity);
    return std::vector<std::size_t>{f.v6, f.v4};
  };
  EXPECT_EQ(q(2, 3, 8), (std::vector<std::size_t>{2, 3}));  // Everything fits.
  EXPECT_EQ(q(10, 1, 8), (std::vector<std::size_t>{7, 1}));
  EXPECT_EQ(q(1, 10, 8), (std::vector<std::size_t>{1, 7}));
  EXPECT_EQ(q(10, 10, 8), (std::vector<std::size_t>{4, 4}));
  EXPECT_EQ(q(10, 10, 7), (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(q(10, 0, 8), (std::vector<std::size_t>{8, 0}));
  EXPECT_EQ(q(0, 10, 8), (std::vector<std::size_t>{0, 8}));
  EXPECT_EQ(q(0, 0, 8), (std::vector<std::size_t>{0, 0}));
}

TEST(FixedResolver, WithoutAddressesItFails) {
  FixedResolver r;
  r.start("any.name", 443, Millis(0));
  EXPECT_EQ(r.result().error, ResolveError::kNoNetwork);
  EXPECT_FALSE(is_definite(r.result().error));
}

TEST(ResolveError, NamesAndDefiniteness) {
  EXPECT_STREQ(to_string(ResolveError::kNxDomain), "nxdomain");
  EXPECT_TRUE(is_definite(ResolveError::kNxDomain));
  EXPECT_TRUE(is_definite(ResolveError::kNoData));
  EXPECT_TRUE(is_definite(ResolveError::kInvalidName));
  EXPECT_FALSE(is_definite(ResolveError::kTimeout));
  EXPECT_FALSE(is_definite(ResolveError::kServerFailure));
  EXPECT_FALSE(is_definite(ResolveError::kOutOfMemory));
}

// A resolver whose answer the test scripts: it waits on `fd` until `answer_at`, then ends
// with `error` (or `addresses`).
}  // namespace
}  // namespace stepback::https
