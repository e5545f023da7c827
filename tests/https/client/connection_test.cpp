// Connection, the Client's connection kept between requests: which origin it serves, the
// liveness check before reuse, and what a network change or an exchange's end does to it.
#include "stepback/https/client/connection.hpp"

#include <gtest/gtest.h>

#include "tests/support/scripted_connector.hpp"

namespace stepback::https {
namespace {

using testing::ScriptedConnector;

Url url_of(const char* text) {
  Url url;
  EXPECT_EQ(parse_url(text, &url), Status::kOk) << text;
  return url;
}

constexpr Timeouts kTimeouts{};

// Opens a connection to `url` and ends one exchange on it, kept.
void open_and_keep(Connection& c, const Url& url) {
  ASSERT_EQ(c.open(url, "example.test", Millis(0), kTimeouts), Status::kOk);
  ASSERT_EQ(c.step(Millis(0)), Status::kOk);
  c.exchange_done(true);
}

TEST(Connection, AKeptConnectionServesOnlyItsOriginWhenIdle) {
  ScriptedConnector connector;
  connector.add().recv_would_block();
  Connection c(connector);
  const Url url = url_of("https://example.test/a");
  open_and_keep(c, url);
  EXPECT_EQ(c.opened(), 1U);
  EXPECT_TRUE(c.kept());
  c.keep_for(url_of("https://example.test/b"), "example.test", true);
  EXPECT_TRUE(c.kept());
  EXPECT_TRUE(c.reuse());
  EXPECT_TRUE(c.reused());
  // Another port, scheme or host, or an exchange under way: closed.
  c.keep_for(url_of("http://example.test/b"), "example.test", true);
  EXPECT_FALSE(c.kept());
  EXPECT_TRUE(connector.connection(0).closed());
}

TEST(Connection, AnotherHostOrABusyConnectionIsNotKept) {
  for (const bool idle : {true, false}) {
    ScriptedConnector connector;
    connector.add().recv_would_block();
    Connection c(connector);
    open_and_keep(c, url_of("https://example.test/a"));
    c.keep_for(url_of(idle ? "https://other.test/a" : "https://example.test/a"), "example.test",
               idle);
    EXPECT_FALSE(c.kept()) << idle;
    EXPECT_FALSE(c.reuse()) << idle;
    EXPECT_FALSE(c.reused()) << idle;
  }
}

TEST(Connection, AConnectionTheServerClosedIsNotReused) {
  ScriptedConnector connector;
  connector.add().recv_closed();
  Connection c(connector);
  open_and_keep(c, url_of("https://example.test/a"));
  EXPECT_FALSE(c.reuse());
  EXPECT_FALSE(c.kept());
  EXPECT_TRUE(connector.connection(0).closed());
}

TEST(Connection, StrayBytesOnAKeptConnectionCloseIt) {
  ScriptedConnector connector;
  connector.add().recv_data("HTTP/1.1 408 Request Timeout\r\n\r\n");
  Connection c(connector);
  open_and_keep(c, url_of("https://example.test/a"));
  EXPECT_FALSE(c.reuse());
  EXPECT_TRUE(connector.connection(0).closed());
}

TEST(Connection, AnExchangeNotKeptAndANetworkChangeClose) {
  ScriptedConnector connector;
  connector.add();
  connector.add();
  Connection c(connector);
  ASSERT_EQ(c.open(url_of("https://example.test/a"), "example.test", Millis(0), kTimeouts),
            Status::kOk);
  ASSERT_EQ(c.step(Millis(0)), Status::kOk);
  c.exchange_done(false);
  EXPECT_FALSE(c.kept());
  EXPECT_EQ(connector.exchanges(), 1U);
  open_and_keep(c, url_of("https://example.test/a"));
  EXPECT_EQ(c.opened(), 2U);
  c.network_changed();
  EXPECT_FALSE(c.kept());
  EXPECT_EQ(connector.network_changes(), 1);
  EXPECT_TRUE(connector.connection(1).closed());
}

}  // namespace
}  // namespace stepback::https
