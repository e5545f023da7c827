// The hosts-file reader CaresResolver answers from first (https/src/dns/hosts_file.cpp): which
// lines name a host and which addresses they give, read the way glibc reads the file; lines
// too long for the buffer; the bound on addresses; the file read in pieces without the heap.
#include "https/src/dns/hosts_file.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/tcp/address.hpp"
#include "tests/support/heap_trap.hpp"

namespace stepback::https::detail {
namespace {

constexpr std::size_t kCapacity = Resolver::kMaxAddresses;

// "[::1]:443" or "127.0.0.1:443".
std::string text(const SocketAddress& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (address_family(a) == AF_INET6) {
    sockaddr_in6 sin6{};
    std::memcpy(&sin6, a.bytes, sizeof sin6);
    inet_ntop(AF_INET6, &sin6.sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(ntohs(sin6.sin6_port));
  }
  if (address_family(a) == AF_INET) {
    sockaddr_in sin{};
    std::memcpy(&sin, a.bytes, sizeof sin);
    inet_ntop(AF_INET, &sin.sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(sin.sin_port));
  }
  return "?";
}

std::vector<std::string> texts(const SocketAddress* addresses, std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(text(addresses[i]));
  return out;
}

// What `hosts` gives `host` for port 443, at most `capacity` addresses.
std::vector<std::string> search(const std::string& hosts, const char* host,
                                std::size_t capacity = kCapacity) {
  SocketAddress out[32];
  const std::size_t n = search_hosts_text(hosts.data(), hosts.size(), host, 443, out, capacity);
  EXPECT_LE(n, capacity);
  return texts(out, n);
}

using Addresses = std::vector<std::string>;

// c-ares 1.34.5 merged the third line into localhost's entry (same address)
// and dropped its name, so dual.test had ::1 alone.
TEST(HostsFileTest, ANameOnTwoLinesHasBothFamiliesAfterAnEarlierLineWithTheSameAddress) {
  const std::string hosts = "127.0.0.1 localhost\n::1 dual.test\n127.0.0.1 dual.test\n";
  EXPECT_EQ(search(hosts, "dual.test"), (Addresses{"[::1]:443", "127.0.0.1:443"}));
  EXPECT_EQ(search(hosts, "localhost"), (Addresses{"127.0.0.1:443"}));
}

TEST(HostsFileTest, AddressesComeInFileOrder) {
  const std::string hosts =
      "127.0.0.1 dual.test\n::1 dual.test\n192.0.2.1 dual.test\n2001:db8::1 dual.test\n";
  EXPECT_EQ(search(hosts, "dual.test"),
            (Addresses{"127.0.0.1:443", "[::1]:443", "192.0.2.1:443", "[2001:db8::1]:443"}));
}

TEST(HostsFileTest, AliasesNameTheHostAsTheCanonicalNameDoes) {
  const std::string hosts =
      "192.0.2.1 canonical.test alias.test other.test\n"
      "192.0.2.2 unrelated.test\n"
      "2001:db8::2 another.test canonical.test\n";
  EXPECT_EQ(search(hosts, "canonical.test"), (Addresses{"192.0.2.1:443", "[2001:db8::2]:443"}));
  EXPECT_EQ(search(hosts, "alias.test"), (Addresses{"192.0.2.1:443"}));
  EXPECT_EQ(search(hosts, "other.test"), (Addresses{"192.0.2.1:443"}));
  EXPECT_EQ(search(hosts, "another.test"), (Addresses{"[2001:db8::2]:443"}));
}

TEST(HostsFileTest, NamesCompareAsciiCaseInsensitively) {
  const std::string hosts = "192.0.2.1 Dual.TEST\n192.0.2.2 dual.test\n";
  EXPECT_EQ(search(hosts, "dual.test"), (Addresses{"192.0.2.1:443", "192.0.2.2:443"}));
  EXPECT_EQ(search(hosts, "DUAL.test"), (Addresses{"192.0.2.1:443", "192.0.2.2:443"}));
}

TEST(HostsFileTest, OnlyAWholeNameMatches) {
  const std::string hosts =
      "192.0.2.1 dual.testing\n192.0.2.2 xdual.test\n192.0.2.3 dual\n192.0.2.4 dual.test.\n";
  EXPECT_EQ(search(hosts, "dual.test"), Addresses{});
  EXPECT_EQ(search(hosts, ""), Addresses{});
}

TEST(HostsFileTest, TheAddressFieldIsNeverAName) {
  EXPECT_EQ(search("192.0.2.1 a.test\n", "192.0.2.1"), Addresses{});
}

TEST(HostsFileTest, CommentsAndBlankLinesAreSkipped) {
  const std::string hosts =
      "# 192.0.2.9 dual.test\n"
      "\n"
      "   \t \n"
      "  # 192.0.2.8 dual.test\n"
      "192.0.2.7 other.test # dual.test\n"
      "192.0.2.1 dual.test# a comment right after the name\n"
      "\t192.0.2.2\tdual.test\t# tabs\n"
      "#\n";
  EXPECT_EQ(search(hosts, "dual.test"), (Addresses{"192.0.2.1:443", "192.0.2.2:443"}));
}

TEST(HostsFileTest, CarriageReturnsAndAMissingLastNewlineAreRead) {
  EXPECT_EQ(search("192.0.2.1 dual.test\r\n::1 dual.test\r\n", "dual.test"),
            (Addresses{"192.0.2.1:443", "[::1]:443"}));
  EXPECT_EQ(search("192.0.2.1 a.test\n192.0.2.2 dual.test", "dual.test"),
            (Addresses{"192.0.2.2:443"}));
}

TEST(HostsFileTest, MalformedLinesAreSkipped) {
  const std::string hosts =
      "fe80::1%eth0 dual.test\n"    // A zone: inet_pton takes none.
      "fe80::1%1 dual.test\n"       // Nor a numeric one.
      "[::1] dual.test\n"           // Brackets.
      "127.1 dual.test\n"           // inet_aton's short forms.
      "0x7f.0.0.1 dual.test\n"      // Hexadecimal.
      "300.0.0.1 dual.test\n"       // Out of range.
      "192.0.2.1/24 dual.test\n"    // A prefix.
      "2001:db8::1::2 dual.test\n"  // Two "::".
      "not-an-address dual.test\n"  // A name where the address goes.
      "dual.test\n"                 // A name alone.
      "192.0.2.3\n"                 // An address alone.
      "192.0.2.4dual.test\n"        // No separator.
      " 2001:db8::1 dual.test\n";   // The one good line.
  EXPECT_EQ(search(hosts, "dual.test"), (Addresses{"[2001:db8::1]:443"}));
  // Address fields longer than any address.
  EXPECT_EQ(search("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2550 dual.test\n", "dual.test"),
            Addresses{});
  EXPECT_EQ(search(std::string(5000, '1') + " dual.test\n", "dual.test"), Addresses{});
}

TEST(HostsFileTest, TheLongestAddressIsRead) {
  // INET6_ADDRSTRLEN - 1 characters.
  EXPECT_EQ(search("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255 dual.test\n", "dual.test"),
            (Addresses{"[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:443"}));
}

TEST(HostsFileTest, AnAddressIsGivenOnce) {
  const std::string hosts =
      "::1 dual.test\n"
      "0:0:0:0:0:0:0:1 dual.test\n"  // ::1 written out.
      "127.0.0.1 dual.test\n"
      "127.0.0.1 alias.test dual.test\n"
      "::1 dual.test dual.test\n";
  EXPECT_EQ(search(hosts, "dual.test"), (Addresses{"[::1]:443", "127.0.0.1:443"}));
}

TEST(HostsFileTest, ANameNoLineGivesHasNoAddress) {
  EXPECT_EQ(search("", "dual.test"), Addresses{});
  EXPECT_EQ(search("\n\n", "dual.test"), Addresses{});
  EXPECT_EQ(search("127.0.0.1 localhost\n::1 localhost ip6-localhost\n", "dual.test"), Addresses{});
}

TEST(HostsFileTest, ThePortIsSet) {
  SocketAddress out[2];
  const std::string hosts = "::1 dual.test\n127.0.0.1 dual.test\n";
  ASSERT_EQ(search_hosts_text(hosts.data(), hosts.size(), "dual.test", 8080, out, 2), 2U);
  EXPECT_EQ(text(out[0]), "[::1]:8080");
  EXPECT_EQ(text(out[1]), "127.0.0.1:8080");
}

// A line of `size` bytes (newline not counted) that names dual.test with 192.0.2.1, made long
// by an alias of x's. At HostsSearch::kMaxLine bytes from its start, a reader that cut it
// into buffer-sized lines would find a line of its own: "192.0.2.66 dual.test".
std::string long_line(std::size_t size) {
  const std::string head = "192.0.2.1 dual.test ";
  const std::string tail = " 192.0.2.66 dual.test";
  std::string line = head + std::string(HostsSearch::kMaxLine - head.size() - 1, 'x') + tail;
  if (line.size() < size) line += std::string(size - line.size(), 'y');
  line.resize(size);
  return line;
}

TEST(HostsFileTest, ALineTooLongForTheBufferIsSkippedNotMisparsed) {
  const std::string next = "192.0.2.2 dual.test\n";
  // The longest line read: kMaxLine - 1 bytes and its newline fill the buffer.
  EXPECT_EQ(search(long_line(HostsSearch::kMaxLine - 1) + "\n" + next, "dual.test"),
            (Addresses{"192.0.2.1:443", "192.0.2.2:443"}));
  for (const std::size_t size : {HostsSearch::kMaxLine, HostsSearch::kMaxLine + 1,
                                 HostsSearch::kMaxLine + 20, 3 * HostsSearch::kMaxLine + 7}) {
    const std::string line = long_line(size);
    ASSERT_EQ(line.size(), size);
    EXPECT_EQ(search(line + "\n" + next, "dual.test"), (Addresses{"192.0.2.2:443"}))
        << size << " bytes";
    // The line last, without a newline.
    EXPECT_EQ(search(next + line, "dual.test"), (Addresses{"192.0.2.2:443"})) << size << " bytes";
  }
}

// Pieces of any size, down to one byte, give what the whole text gives.
TEST(HostsFileTest, TextInPiecesOfAnySizeGivesTheSameAnswer) {
  const std::string hosts =
      "# c\n127.0.0.1 localhost\n::1 dual.test\n" + long_line(HostsSearch::kMaxLine + 5) + "\n" +
      long_line(HostsSearch::kMaxLine - 1) + "\n127.0.0.1 DUAL.test alias\n192.0.2.5 dual.test";
  const Addresses whole = search(hosts, "dual.test");
  EXPECT_EQ(whole, (Addresses{"[::1]:443", "192.0.2.1:443", "127.0.0.1:443", "192.0.2.5:443"}));
  for (const std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1000},
                                  std::size_t{1023}, std::size_t{1025}}) {
    SocketAddress out[kCapacity];
    HostsSearch s("dual.test", 443, out, kCapacity);
    for (std::size_t at = 0; at < hosts.size(); at += piece) {
      s.feed(hosts.data() + at, std::min(piece, hosts.size() - at));
    }
    s.finish();
    EXPECT_EQ(texts(out, s.count()), whole) << "pieces of " << piece;
  }
}

// `v6` IPv6 and `v4` IPv4 lines for dual.test, IPv6 first when `v6_first`, else interleaved.
std::string many(std::size_t v6, std::size_t v4, bool v6_first) {
  std::vector<std::string> six;
  std::vector<std::string> four;
  for (std::size_t i = 1; i <= v6; ++i) six.push_back("2001:db8::" + std::to_string(i));
  for (std::size_t i = 1; i <= v4; ++i) four.push_back("192.0.2." + std::to_string(i));
  std::string hosts;
  if (v6_first) {
    for (const std::string& a : six) hosts += a + " dual.test\n";
    for (const std::string& a : four) hosts += a + " dual.test\n";
  } else {
    for (std::size_t i = 0; i < six.size() || i < four.size(); ++i) {
      if (i < four.size()) hosts += four[i] + " dual.test\n";
      if (i < six.size()) hosts += six[i] + " dual.test\n";
    }
  }
  return hosts;
}

// At most the resolver's kMaxAddresses, with both families kept as family_quota() keeps them:
// the first ones of each family, in file order. Before: ten IPv6 addresses before one IPv4
// must not leave the IPv4 one out.
TEST(HostsFileTest, AtMostCapacityAddressesKeepingBothFamiliesAsFamilyQuota) {
  // The first kCapacity - 1 IPv6 addresses (7; 3 in the small-RAM build), then the IPv4.
  Addresses first;
  for (std::size_t i = 1; i < kCapacity; ++i) {
    first.push_back("[2001:db8::" + std::to_string(i) + "]:443");
  }
  first.emplace_back("192.0.2.1:443");
  EXPECT_EQ(search(many(10, 1, true), "dual.test"), first);
  for (const bool v6_first : {true, false}) {
    for (std::size_t v6 = 0; v6 <= 12; ++v6) {
      for (std::size_t v4 = 0; v4 <= 12; ++v4) {
        for (const std::size_t capacity : {std::size_t{1}, std::size_t{7}, kCapacity}) {
          const Addresses got = search(many(v6, v4, v6_first), "dual.test", capacity);
          const FamilyQuota q = family_quota(v6, v4, capacity);
          Addresses want;
          for (std::size_t i = 1; i <= q.v6; ++i) {
            want.push_back("[2001:db8::" + std::to_string(i) + "]:443");
          }
          for (std::size_t i = 1; i <= q.v4; ++i) {
            want.push_back("192.0.2." + std::to_string(i) + ":443");
          }
          // Each family's addresses are the first ones, in order (the families' order between
          // them is the file's, not checked here).
          Addresses got_v6;
          Addresses got_v4;
          for (const std::string& a : got) (a[0] == '[' ? got_v6 : got_v4).push_back(a);
          got_v6.insert(got_v6.end(), got_v4.begin(), got_v4.end());
          EXPECT_EQ(got_v6, want) << v6 << " IPv6, " << v4 << " IPv4, capacity " << capacity
                                  << (v6_first ? ", IPv6 first" : ", interleaved");
        }
      }
    }
  }
}

TEST(HostsFileTest, NoRoomNoAddress) {
  EXPECT_EQ(search("::1 dual.test\n", "dual.test", 0), Addresses{});
}

// A file the test writes, removed when it goes.
class TempHosts {
 public:
  explicit TempHosts(const std::string& text) {
    char name[] = "/tmp/stepback_hosts_XXXXXX";
    const int fd = ::mkstemp(name);
    EXPECT_GE(fd, 0);
    path_ = name;
    std::size_t at = 0;
    while (fd >= 0 && at < text.size()) {
      const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    EXPECT_EQ(at, text.size());
    if (fd >= 0) ::close(fd);
  }
  ~TempHosts() { ::unlink(path_.c_str()); }
  TempHosts(const TempHosts&) = delete;
  TempHosts& operator=(const TempHosts&) = delete;
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

TEST(HostsFileTest, AFileIsReadAsItsTextIs) {
  TempHosts file("127.0.0.1 localhost\n::1 dual.test\n127.0.0.1 dual.test");
  SocketAddress out[kCapacity];
  HostsSearch s("dual.test", 443, out, kCapacity);
  ASSERT_TRUE(read_hosts_file(file.path(), &s));
  EXPECT_EQ(texts(out, s.count()), (Addresses{"[::1]:443", "127.0.0.1:443"}));
}

TEST(HostsFileTest, AMissingFileOrADirectoryIsNotRead) {
  SocketAddress out[kCapacity];
  HostsSearch missing("dual.test", 443, out, kCapacity);
  EXPECT_FALSE(read_hosts_file("/nonexistent/stepback/hosts", &missing));
  EXPECT_EQ(missing.count(), 0U);
  HostsSearch directory("dual.test", 443, out, kCapacity);
  EXPECT_FALSE(read_hosts_file("/tmp", &directory));
  EXPECT_EQ(directory.count(), 0U);
}

// A large file (a blocklist's size, about 4 MB) is read in buffer-sized pieces, never whole,
// and without a heap call; its first, middle and last lines are all found.
TEST(HostsFileTest, ALargeFileIsReadInPiecesWithoutTheHeap) {
  if (!stepback::testing::heap_trap_available()) {
    GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  }
  std::string hosts = "192.0.2.1 dual.test\n";
  for (int i = 0; i < 120000; ++i) {
    hosts += "0.0.0.0 ads" + std::to_string(i) + ".blocked.example\n";
    if (i == 60000) hosts += "2001:db8::1 ALIAS.example dual.test\n";
  }
  hosts += "192.0.2.2 dual.test";
  TempHosts file(hosts);
  SocketAddress out[kCapacity];
  bool read = false;
  std::size_t count = 0;
  long calls = -1;
  {
    stepback::testing::HeapTrap trap;
    HostsSearch s("dual.test", 443, out, kCapacity);
    read = read_hosts_file(file.path(), &s);
    count = s.count();
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 0) << stepback::testing::HeapTrap::describe();
  ASSERT_TRUE(read);
  EXPECT_EQ(texts(out, count), (Addresses{"192.0.2.1:443", "[2001:db8::1]:443", "192.0.2.2:443"}));
}

}  // namespace
}  // namespace stepback::https::detail
