// The Client's credentials (ClientOptions::credentials) against scripted connections
// (client_harness.hpp): the Authorization asked for on every attempt, one refresh after an
// expired token.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "tests/https/client/client_harness.hpp"
#include "tests/support/fake_tokens.hpp"

namespace stepback::https::client_test {
namespace {

using testing::FakeTokens;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

constexpr char k401Expired[] =
    "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"https://accounts.google.com/\", "
    "error=\"invalid_token\"\r\nContent-Length: 6\r\n\r\nexpird";

TEST(ClientCredentials, EveryAttemptAsksForTheAuthorization) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(tokens.asked, 2);
  EXPECT_EQ(tokens.refreshed, 0);
  const std::string sent = h.connector.connection(0).sent();
  EXPECT_EQ(count(sent, "\r\nAuthorization: Bearer t1\r\n\r\n"), 2U) << sent;
}

TEST(ClientCredentials, ExpiredTokenGetsOneRefreshAndAnImmediateAttempt) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data(k401Expired).recv_would_block().recv_data(kOk);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(tokens.refreshed, 1);
  EXPECT_TRUE(h.waits.empty());      // No backoff.
  EXPECT_EQ(h.body.bytes, "hello");  // The 401's body went nowhere.
  const std::string sent = h.connector.connection(0).sent();
  EXPECT_NE(sent.find("Authorization: Bearer t2\r\n"), std::string::npos) << sent;
  for (const ClientEvent& e : h.events) {
    EXPECT_EQ(std::string(e.message).find("Bearer"), std::string::npos);
  }
}

TEST(ClientCredentials, SecondRejectionInARowIsTerminal) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data(k401Expired).recv_would_block().recv_data(k401Expired);
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(h.client->result().status, 401);
  EXPECT_EQ(tokens.refreshed, 1);
}

TEST(ClientCredentials, A401WithoutAnInvalidTokenChallengeIsNotRefreshed) {
  Harness h;
  FakeTokens tokens;
  h.credentials = Credentials{&FakeTokens::get, &tokens};
  h.connector.add().recv_data("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(h.run(h.start()).kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.client->result().outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(tokens.refreshed, 0);
}

}  // namespace
}  // namespace stepback::https::client_test
