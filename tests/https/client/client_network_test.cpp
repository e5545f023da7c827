// What the platform says about the network, told to the Client (network_available(),
// network_changed()) against scripted connections (client_harness.hpp): kept connections
// dropped, switches mid-exchange, waiting without a network and its limit, metered networks,
// and the RunHint an OS scheduler is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/https/client/client_harness.hpp"

namespace stepback::https::client_test {
namespace {

// network_available(): what belongs to the old network goes, an exchange under way stays.
TEST(ClientNetwork, AKeptConnectionIsDroppedAndTheBackoffShrinks) {
  Harness h;
  h.policy.initial_delay = Millis(4000);
  h.policy.max_backoff = Millis(8000);
  h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  h.connector.add().recv_data(kOk);
  ClientNext next = h.start();
  for (int i = 0; i < 100 && !(next.kind == ClientNext::Kind::kWaitUntil && next.at > h.now); ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  ASSERT_EQ(next.at, h.now + Millis(4000));  // The backoff after the 503.
  h.client->network_available(h.now);
  EXPECT_TRUE(h.connector.connection(0).closed())
      << "the kept connection belongs to the old network";
  EXPECT_EQ(h.connector.network_changes(), 1);
  next = h.client->step(h.now);
  EXPECT_TRUE(next.kind != ClientNext::Kind::kWaitUntil || next.at < h.now + Millis(4000))
      << "the backoff did not shrink";
  h.run(next);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 2U);
  EXPECT_EQ(h.connector.opened(), 2U);  // A new connection, not the kept one.
  EXPECT_EQ(h.body.bytes, "hello");
}

TEST(ClientNetwork, AConnectUnderWayStartsOverAsTheSameAttempt) {
  Harness h;
  h.connector.connect_blocks = 2;
  h.connector.connecting_fd = 9;
  h.connector.add().recv_data(kOk);
  h.connector.add().recv_data(kOk);
  const ClientNext first = h.start();
  ASSERT_EQ(first.kind, ClientNext::Kind::kWaitIo);
  ASSERT_EQ(first.fd, 9);
  h.client->network_available(h.now);
  EXPECT_EQ(h.connector.network_changes(), 1);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U) << "starting over is not a retry";
  EXPECT_EQ(h.connector.opened(), 2U);
  EXPECT_TRUE(h.connector.connection(0).sent().empty());
  EXPECT_EQ(h.body.bytes, "hello");
}

TEST(ClientNetwork, AnExchangeUnderWayIsLeftAlone) {
  Harness h;
  h.connector.add().recv_would_block().recv_data(kOk);
  const ClientNext waiting = h.start();
  ASSERT_EQ(waiting.kind, ClientNext::Kind::kWaitIo);
  ASSERT_EQ(waiting.interest, IoInterest::kRead);
  h.client->network_available(h.now);
  EXPECT_FALSE(h.connector.connection(0).closed());
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_EQ(h.body.bytes, "hello");
}

// network_changed(): what runs on the old network ends at once, uncounted.
TEST(ClientNetwork, ASwitchMidBodyGoesOnByRangeOverTheNewNetworkWithoutARetry) {
  Harness h;
  // Half of the body, then the old network goes silent: no read timeout is waited for.
  h.connector.add().recv_data(std::string(kHead10) + "01234");
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 5-9/10\r\n"
      "Content-Length: 5\r\n\r\n56789");
  ClientNext next = h.start();
  for (int i = 0; i < 20 && h.body.bytes.size() < 5; ++i) next = h.client->step(h.now);
  ASSERT_EQ(h.body.bytes, "01234");
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitIo);
  h.client->network_changed(h.now, NetworkInfo{});
  EXPECT_FALSE(h.connector.connection(0).closed()) << "phases change in step() alone";
  h.run(h.client->step(h.now));
  EXPECT_TRUE(h.connector.connection(0).closed());
  EXPECT_EQ(h.connector.network_changes(), 1);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U) << "a network switch is not a retry";
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_TRUE(h.waits.empty()) << "no backoff, no read timeout";
  const std::string second = h.connector.connection(1).sent();
  EXPECT_NE(second.find("Range: bytes=5-\r\nIf-Range: \"v1\""), std::string::npos) << second;
}

// A request that may have reached the server over the old network is not sent again unless
// it is idempotent.
TEST(ClientNetwork, ASwitchAfterAPostLeftEndsItRatherThanSendItTwice) {
  Harness h("https://example.test/x", "POST");
  h.connector.add().recv_would_block().recv_data(kOk);
  h.connector.add().recv_data(kOk);
  const ClientNext waiting = h.start();
  ASSERT_EQ(waiting.kind, ClientNext::Kind::kWaitIo);
  ASSERT_FALSE(h.connector.connection(0).sent().empty());
  h.client->network_changed(h.now, NetworkInfo{});
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_NE(std::string(h.client->result().message).find("network changed"), std::string::npos)
      << h.client->result().message;
}

// No network, and the destination cannot be reached either: the request waits, the failed
// attempt uncounted, without a retry or the deadline going by, and goes at once when a
// network comes.
TEST(ClientNetwork, WithoutANetworkAnUnreachableDestinationWaitsAndGoesWhenOneComes) {
  Harness h;
  h.policy.total_deadline = Millis(1000);
  h.timeouts.offline = Millis(600000);
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.unreachable_failures = true;
  ClientNext next = h.start();
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, h.now + Millis(600000));
  ASSERT_FALSE(h.events.empty());
  const ClientEvent& wait = h.events.back();
  ASSERT_EQ(wait.kind, ClientEvent::Kind::kWait);
  EXPECT_EQ(wait.wait_reason, WaitReason::kOffline);
  EXPECT_STREQ(wait.message, "there is no network");
  EXPECT_EQ(h.client->run_hint(next).state, RunHint::State::kWaitingForNetwork);
  // Ten minutes offline, far past the one-second deadline: none of it was the request's.
  h.now = h.now + Millis(599000);
  next = h.client->step(h.now);
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  h.client->network_changed(h.now, NetworkInfo{});
  h.connector.add().recv_data(k503).recv_would_block().recv_data(kOk);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U)
      << "the unreachable attempt is not counted; the 503 was retried within the deadline";
}

// The first send after a hold (no network at all, as a cell or a region going dark) waits
// U[0, max(jitter_range, multiplier x the hold)], capped at max_backoff: a fleet held together
// returns spread over about as long as it was held. Before, every held request went in the
// same step as the network's return.
TEST(ClientNetwork, RequestsHeldTogetherDoNotAllGoTheMomentTheNetworkReturns) {
  constexpr std::uint64_t kHeld = 60000;
  constexpr std::uint64_t kBound = 2 * kHeld;  // The multiplier x the hold, under the cap.
  std::vector<std::uint64_t> first_waits;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    Harness h;
    h.random = Xoshiro128{seed};
    h.policy.max_backoff = Millis(300000);
    h.timeouts.offline = Millis(600000);
    h.network_info = NetworkInfo{};
    h.network_info->connected = false;
    h.connector.open_failures = {Status::kConnectFailed};
    h.connector.unreachable_failures = true;
    ClientNext next = h.start();
    for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
      next = h.client->step(h.now);
    }
    ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
    ASSERT_EQ(h.client->run_hint(next).state, RunHint::State::kWaitingForNetwork);
    h.now = h.now + Millis(kHeld);
    h.client->network_changed(h.now, NetworkInfo{});
    h.connector.add().recv_data(kOk);
    const std::size_t before = h.events.size();
    next = h.client->step(h.now);
    ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil) << "the held request went at once";
    ASSERT_GE(next.at, h.now);
    first_waits.push_back((next.at - h.now).count());
    ASSERT_GT(h.events.size(), before);
    EXPECT_EQ(h.events.back().kind, ClientEvent::Kind::kWait);
    EXPECT_EQ(h.events.back().wait_reason, WaitReason::kNetworkBack);
    EXPECT_EQ(h.client->run_hint(next).state, RunHint::State::kWaiting);
    h.run(next);
    EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
    EXPECT_EQ(h.client->result().attempts, 1U);
  }
  const auto [low, high] = std::minmax_element(first_waits.begin(), first_waits.end());
  EXPECT_LE(*high, kBound);
  EXPECT_LT(*low, kBound / 5) << "the sends are not spread from the network's return";
  EXPECT_GT(*high, kBound * 4 / 5) << "the sends are not spread over the hold's length";
}

// A request whose network blinked (held a moment) goes within the jitter range.
TEST(ClientNetwork, ARequestHeldAMomentGoesWithinTheJitterRange) {
  Harness h;
  h.policy.max_backoff = Millis(300000);
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.unreachable_failures = true;
  ClientNext next = h.start();
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  h.now = h.now + Millis(100);
  h.client->network_changed(h.now, NetworkInfo{});
  h.connector.add().recv_data(kOk);
  next = h.client->step(h.now);
  if (next.kind == ClientNext::Kind::kWaitUntil) {
    EXPECT_LE((next.at - h.now).count(), h.policy.jitter_range.count());
  }
  h.run(next);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
}

// The platform's "no network" is no verdict on a destination. A server on loopback
// (or the LAN, or behind a VPN route) is tried and answers; before, the request waited for a
// network without a single attempt.
TEST(ClientNetwork, WithoutANetworkAReachableDestinationIsTriedAtOnce) {
  Harness h;
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.connector.opened(), 1U);
  EXPECT_EQ(h.body.bytes, "hello");
  for (const ClientEvent& e : h.events) {
    EXPECT_FALSE(e.kind == ClientEvent::Kind::kWait && e.wait_reason == WaitReason::kOffline)
        << "waited for a network: " << e.message;
  }
}

// A failure at the far end (refused, a timeout) is no lack of a network: retried with backoff
// as ever, though the platform says offline.
TEST(ClientNetwork, WithoutANetworkARefusedConnectIsAnOrdinaryRetry) {
  Harness h;
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U);
  ASSERT_EQ(h.waits.size(), 1U);
  EXPECT_EQ(h.waits[0], 100U) << "the first backoff, not a wait for a network";
}

// With the platform saying connected, an unreachable destination is an ordinary retry too:
// the client does not second-guess the platform either way.
TEST(ClientNetwork, OnANetworkAnUnreachableDestinationIsAnOrdinaryRetry) {
  Harness h;
  h.connector.open_failures = {Status::kConnectFailed};
  h.connector.unreachable_failures = true;
  h.connector.add().recv_data(kOk);
  h.run(h.start());
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.client->result().attempts, 2U);
  ASSERT_EQ(h.waits.size(), 1U);
  EXPECT_EQ(h.waits[0], 100U);
}

// A route table that changes without giving a way out lets the request try again each time,
// but does not restart the offline limit.
TEST(ClientNetwork, ChangesWithoutANetworkRetryTheDestinationButKeepTheOfflineLimit) {
  Harness h;
  h.timeouts.offline = Millis(10000);
  h.network_info = NetworkInfo{};
  h.network_info->connected = false;
  h.connector.unreachable_failures = true;  // Every open fails: no connection is scripted.
  ClientNext next = h.start();
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  const Millis end = next.at;
  EXPECT_EQ(end, h.now + Millis(10000));
  h.now = h.now + Millis(4000);
  NetworkInfo still_none;
  still_none.connected = false;
  h.client->network_changed(h.now, still_none);
  next = h.client->step(h.now);
  // Past the send's spread after the hold (within max_backoff), to the hold that follows.
  for (int i = 0; i < 20 && !(next.kind == ClientNext::Kind::kWaitUntil &&
                              h.client->run_hint(next).state == RunHint::State::kWaitingForNetwork);
       ++i) {
    if (next.kind == ClientNext::Kind::kWaitUntil) {
      ASSERT_LE(next.at, h.now + h.policy.max_backoff);
      h.now = next.at;
    }
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  EXPECT_EQ(next.at, end) << "the offline limit started over";
  h.run(next);
  EXPECT_EQ(h.client->result().outcome, Outcome::kOffline);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.now, end);
}

// The offline limit ends the request with its own outcome and words.
TEST(ClientNetwork, TheOfflineLimitEndsTheRequestWithItsOwnOutcome) {
  Harness h;
  h.timeouts.offline = Millis(2000);
  h.connector.add().recv_would_block().recv_data(kOk);
  h.connector.unreachable_failures = true;  // Once the network is gone, nothing is reached.
  const ClientNext waiting = h.start();
  ASSERT_EQ(waiting.kind, ClientNext::Kind::kWaitIo);
  NetworkInfo none;
  none.connected = false;
  h.client->network_changed(h.now, none);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kOffline);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_NE(std::string(h.client->result().message).find("within 2 s (Timeouts::offline)"),
            std::string::npos)
      << h.client->result().message;
  ASSERT_EQ(h.waits.size(), 1U);
  EXPECT_EQ(h.waits[0], 2000U);
}

// A download larger than a metered network may carry stops when its length is known and goes
// on, by Range, when an unmetered network comes.
TEST(ClientNetwork, AMeteredNetworkHoldsALargeDownloadUntilAnUnmeteredOne) {
  Harness h;
  h.network.metered_up_to = 8;
  h.connector.add().recv_data(std::string(kHead10) + "01").recv_would_block();
  h.connector.add().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-9/10\r\n"
      "Content-Length: 8\r\n\r\n23456789");
  h.start();
  NetworkInfo metered;
  metered.metered = true;
  h.client->network_changed(h.now, metered);
  ClientNext next = h.client->step(h.now);
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  EXPECT_TRUE(h.connector.connection(0).closed());
  EXPECT_FALSE(h.client->network_usable());
  ASSERT_EQ(h.events.back().kind, ClientEvent::Kind::kWait);
  EXPECT_EQ(h.events.back().wait_reason, WaitReason::kOffline);
  EXPECT_NE(std::string(h.events.back().message).find("metered"), std::string::npos);
  h.client->network_changed(h.now + Millis(100), NetworkInfo{});
  h.now = h.now + Millis(100);
  h.run(h.client->step(h.now));
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess);
  EXPECT_EQ(h.client->result().attempts, 1U);
  EXPECT_EQ(h.body.bytes, "0123456789");
}

// RunHint: what an OS scheduler is told at each stage: running, a backoff's end, held for an
// unmetered network with the bytes left, done.
TEST(ClientNetwork, TheRunHintFollowsTheRequestFromRunningToWaitingToDone) {
  Harness h;
  h.network.metered_up_to = 8;
  h.connector.add().recv_data(std::string(kHead10) + "01").recv_would_block();
  // The 503 keeps its connection: the retry goes on it.
  h.connector.add().recv_data(k503).recv_would_block().recv_data(
      "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes 2-9/10\r\n"
      "Content-Length: 8\r\n\r\n23456789");
  ClientNext next = h.start();
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitIo; ++i) {
    next = h.client->step(h.now);
  }
  RunHint hint = h.client->run_hint(next);
  EXPECT_EQ(hint.state, RunHint::State::kRunning);
  ASSERT_TRUE(hint.bytes_left.has_value());
  EXPECT_EQ(*hint.bytes_left, 8U);  // Ten bytes, two delivered.
  EXPECT_TRUE(hint.unmetered) << "ten bytes are above metered_up_to";
  EXPECT_FALSE(hint.not_roaming);
  NetworkInfo metered;
  metered.metered = true;
  h.client->network_changed(h.now, metered);
  next = h.client->step(h.now);
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  hint = h.client->run_hint(next);
  EXPECT_EQ(hint.state, RunHint::State::kWaitingForNetwork);
  EXPECT_EQ(hint.run_at, next.at) << "the offline limit's end";
  EXPECT_EQ(hint.bytes_left.value_or(0), 8U);
  // An unmetered network: the 503 comes, and its backoff is a plain wait.
  h.client->network_changed(h.now, NetworkInfo{});
  next = h.client->step(h.now);
  for (int i = 0; i < 20 && next.kind != ClientNext::Kind::kWaitUntil; ++i) {
    next = h.client->step(h.now);
  }
  ASSERT_EQ(next.kind, ClientNext::Kind::kWaitUntil);
  hint = h.client->run_hint(next);
  EXPECT_EQ(hint.state, RunHint::State::kWaiting);
  EXPECT_EQ(hint.run_at, next.at);
  EXPECT_GT(hint.run_at, h.now);
  h.run(next);
  EXPECT_EQ(h.client->result().outcome, Outcome::kSuccess) << h.client->result().message;
  EXPECT_EQ(h.body.bytes, "0123456789");
  EXPECT_EQ(h.client->run_hint(ClientNext::done()).state, RunHint::State::kDone);
}

TEST(ClientNetwork, TheRunHintAsksForANetworkThatIsNotRoamingWhenThePolicySays) {
  Harness h;
  h.network.roaming = false;
  h.network.metered = false;
  h.connector.add().recv_would_block();
  const ClientNext next = h.start();
  const RunHint hint = h.client->run_hint(next);
  EXPECT_TRUE(hint.not_roaming);
  EXPECT_TRUE(hint.unmetered);
  EXPECT_FALSE(hint.bytes_left.has_value()) << "no length is known before a response";
}

}  // namespace
}  // namespace stepback::https::client_test
