// The CONNECT tunnel's pure parts: the request as written into a caller buffer, and what each
// answer means, fed whole or a byte at a time. TcpConnector's use of them over a socket is
// tests/https/tcp_proxy_test.cpp.
#include "stepback/https/proxy/tunnel.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace stepback::https {
namespace {

std::string written(std::string_view host, std::uint16_t port, std::string_view authorization,
                    std::size_t size = 1024) {
  char out[1024];
  const ConnectRequest r = write_connect_request(host, port, authorization, out, size);
  if (r.size == 0) return std::string("error: ") + r.error;
  return std::string(out, r.size);
}

TEST(ConnectRequest, NamesTheOriginTwice) {
  EXPECT_EQ(written("192.0.2.1", 443, ""),
            "CONNECT 192.0.2.1:443 HTTP/1.1\r\nHost: 192.0.2.1:443\r\n\r\n");
  EXPECT_EQ(written("example.com", 8443, ""),
            "CONNECT example.com:8443 HTTP/1.1\r\nHost: example.com:8443\r\n\r\n");
}

TEST(ConnectRequest, BracketsAnIpv6Host) {
  EXPECT_EQ(written("2001:db8::1", 443, ""),
            "CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n");
}

TEST(ConnectRequest, CarriesTheCredentialsGiven) {
  EXPECT_EQ(written("192.0.2.1", 443, "Basic dXNlcjpzM2NyZXQ="),
            "CONNECT 192.0.2.1:443 HTTP/1.1\r\nHost: 192.0.2.1:443\r\n"
            "Proxy-Authorization: Basic dXNlcjpzM2NyZXQ=\r\n\r\n");
}

TEST(ConnectRequest, RefusesWhatCannotBeWritten) {
  const std::string no_target = "error: no host or port to reach through the proxy";
  EXPECT_EQ(written("", 443, ""), no_target);
  EXPECT_EQ(written("example.com", 0, ""), no_target);
  EXPECT_EQ(written(std::string(256, 'a'), 443, ""), no_target);
  EXPECT_NE(written(std::string(255, 'a'), 443, ""), no_target);
  // The request and its NUL must fit.
  const std::string whole = written("192.0.2.1", 443, "");
  EXPECT_EQ(written("192.0.2.1", 443, "", whole.size() + 1), whole);
  EXPECT_EQ(written("192.0.2.1", 443, "", whole.size()),
            "error: the CONNECT request does not fit its buffer");
}

struct Answer {
  std::uint8_t head[1024];
  ResponseParser parser{MutableBytes{head, sizeof head}, BodySink{}, 0};
  char message[512] = {};

  Answer() { start_connect_answer(parser); }
  // Feeds `text` whole, or a byte at a time when `bytewise`, until an answer other than
  // kWouldBlock (or the text ends).
  Status feed(const std::string& text, bool credentials = false, bool bytewise = false) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(text.data());
    if (!bytewise) {
      return read_connect_answer(parser, ConstBytes{data, text.size()}, credentials, "proxy.test",
                                 message, sizeof message);
    }
    Status s = Status::kWouldBlock;
    for (std::size_t i = 0; i < text.size() && s == Status::kWouldBlock; ++i) {
      s = read_connect_answer(parser, ConstBytes{data + i, 1}, credentials, "proxy.test", message,
                              sizeof message);
    }
    return s;
  }
};

TEST(ConnectAnswer, ATwoHundredHeadStandsTheTunnel) {
  Answer whole;
  EXPECT_EQ(whole.feed("HTTP/1.1 200 Connection established\r\n\r\n"), Status::kOk);
  Answer bytewise;
  EXPECT_EQ(bytewise.feed("HTTP/1.1 200 OK\r\n\r\n", false, true), Status::kOk);
  // The answer to CONNECT has no body, whatever its fields say.
  Answer sized;
  EXPECT_EQ(sized.feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), Status::kOk);
}

TEST(ConnectAnswer, WaitsForTheWholeHead) {
  Answer a;
  EXPECT_EQ(a.feed("HTTP/1.1 200 OK\r\n"), Status::kWouldBlock);
  EXPECT_EQ(a.feed("\r\n"), Status::kOk);
}

TEST(ConnectAnswer, BytesAfterATwoHundredHeadAreAProtocolError) {
  Answer a;
  EXPECT_EQ(a.feed("HTTP/1.1 200 OK\r\n\r\nhello"), Status::kProtocol);
  EXPECT_STREQ(a.message, "the proxy 'proxy.test' sent bytes after its answer to CONNECT");
}

TEST(ConnectAnswer, FourOhSevenSaysWhetherCredentialsWereSent) {
  Answer without;
  EXPECT_EQ(without.feed("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"), Status::kProxyAuth);
  EXPECT_STREQ(without.message,
               "the proxy 'proxy.test' answered CONNECT with 407 Proxy Authentication Required: "
               "proxy authentication required, and no credentials were given");
  Answer with;
  EXPECT_EQ(with.feed("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", true),
            Status::kProxyAuth);
  EXPECT_STREQ(with.message,
               "the proxy 'proxy.test' answered CONNECT with 407 Proxy Authentication Required: "
               "proxy authentication failed, the proxy refused the credentials");
}

TEST(ConnectAnswer, AGatewayFailureIsAFailedConnect) {
  for (const char* status : {"502 Bad Gateway", "503 Service Unavailable", "504 Timeout"}) {
    Answer a;
    EXPECT_EQ(a.feed(std::string("HTTP/1.1 ") + status + "\r\n\r\n"), Status::kConnectFailed);
    EXPECT_EQ(std::string(a.message), std::string("the proxy 'proxy.test' answered CONNECT with ") +
                                          status + ": it could not reach the server");
  }
}

TEST(ConnectAnswer, AnyOtherAnswerIsAProtocolError) {
  Answer forbidden;
  EXPECT_EQ(forbidden.feed("HTTP/1.1 403 Forbidden\r\n\r\n"), Status::kProtocol);
  EXPECT_STREQ(forbidden.message, "the proxy 'proxy.test' answered CONNECT with 403 Forbidden");
  Answer garbage;
  EXPECT_EQ(garbage.feed("SSH-2.0-OpenSSH_9.6\r\n\r\n"), Status::kProtocol);
  EXPECT_EQ(std::string(garbage.message)
                .rfind("the proxy 'proxy.test' did not answer CONNECT in HTTP: ", 0),
            0u)
      << garbage.message;
}

}  // namespace
}  // namespace stepback::https
