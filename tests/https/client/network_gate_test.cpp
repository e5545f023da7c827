#include "stepback/https/client/network_gate.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace stepback::https {
namespace {

constexpr NetworkPolicy kAny{};

TEST(NetworkGate, WithoutANetworkNothingIsRefusedUntilAnAttemptFindsNoPath) {
  NetworkGate gate;
  gate.changed(NetworkInfo{false, false, false}, kAny, 0);
  EXPECT_STREQ(gate.refusal(kAny, 0), "");
  EXPECT_TRUE(gate.no_path());
  EXPECT_STREQ(gate.refusal(kAny, 0), "there is no network");
  // Any word from the platform lets the request try again.
  gate.changed(NetworkInfo{false, false, false}, kAny, 0);
  EXPECT_STREQ(gate.refusal(kAny, 0), "");
}

TEST(NetworkGate, OnAConnectedNetworkNoPathIsAnOrdinaryFailure) {
  NetworkGate gate;
  gate.changed(NetworkInfo{true, false, false}, kAny, 0);
  EXPECT_FALSE(gate.no_path());
  EXPECT_STREQ(gate.refusal(kAny, 0), "");
}

TEST(NetworkGate, PolicyRefusesMeteredAndRoamingNetworksBySize) {
  NetworkGate gate;
  NetworkPolicy policy;
  policy.metered_up_to = 1000;
  policy.roaming = false;
  gate.changed(NetworkInfo{true, true, false}, policy, 0);
  EXPECT_STREQ(gate.refusal(policy, 1000), "");
  EXPECT_STREQ(gate.refusal(policy, 1001),
               "the network is metered and the transfer is larger than it may move over one");
  gate.changed(NetworkInfo{true, false, true}, policy, 0);
  EXPECT_STREQ(gate.refusal(policy, 0), "the network is roaming, which it may not use");
  policy.metered = false;
  gate.changed(NetworkInfo{true, true, false}, policy, 0);
  EXPECT_STREQ(gate.refusal(policy, 0), "the network is metered, which it may not use");
}

TEST(NetworkGate, TheHoldBeginsOnceAndItsLimitRunsUntilAUsableNetworkComes) {
  NetworkGate gate;
  char words[256] = {};
  gate.changed(NetworkInfo{false, false, false}, kAny, 0);
  ASSERT_TRUE(gate.no_path());
  NetworkGate::Hold h = gate.hold(Millis(1000), Millis(5000), "why", words, sizeof words);
  EXPECT_TRUE(h.began);
  EXPECT_STREQ(h.message, "why");
  EXPECT_FALSE(h.expired);
  EXPECT_EQ(h.end, Millis(6000));
  EXPECT_TRUE(gate.held());
  h = gate.hold(Millis(2000), Millis(5000), "why", words, sizeof words);
  EXPECT_FALSE(h.began);
  // Time held is counted once, from the last account.
  EXPECT_EQ(gate.account(Millis(3000)), Millis(2000));
  EXPECT_EQ(gate.account(Millis(3500)), Millis(500));
  EXPECT_EQ(gate.time_offline(), Millis(2500));
  // A change that gives no usable network does not restart the limit.
  gate.release();
  gate.changed(NetworkInfo{false, false, false}, kAny, 0);
  ASSERT_TRUE(gate.no_path());
  h = gate.hold(Millis(4000), Millis(5000), "why", words, sizeof words);
  EXPECT_TRUE(h.began);
  EXPECT_EQ(h.end, Millis(6000));
  const NetworkGate::Hold over =
      gate.hold(Millis(6000), Millis(5000), "there is no network", words, sizeof words);
  EXPECT_TRUE(over.expired);
  EXPECT_STREQ(over.message,
               "no network the request may use came within 5 s (Timeouts::offline): there is no "
               "network");
  // A usable network disarms it: the next hold has a limit of its own.
  gate.release();
  gate.changed(NetworkInfo{true, false, false}, kAny, 0);
  gate.changed(NetworkInfo{false, false, false}, kAny, 0);
  ASSERT_TRUE(gate.no_path());
  EXPECT_EQ(gate.hold(Millis(7000), Millis(5000), "why", words, sizeof words).end, Millis(12000));
}

TEST(NetworkGate, ASwitchMarkIsTakenOnceAndResetClearsTheRequestsState) {
  NetworkGate gate;
  char words[256] = {};
  EXPECT_FALSE(gate.take_switch());
  gate.mark_switch();
  EXPECT_TRUE(gate.take_switch());
  EXPECT_FALSE(gate.take_switch());
  gate.changed(NetworkInfo{false, false, false}, kAny, 0);
  ASSERT_TRUE(gate.no_path());
  (void)gate.hold(Millis(0), Millis(100), "why", words, sizeof words);
  gate.reset();
  EXPECT_FALSE(gate.held());
  EXPECT_EQ(gate.time_offline(), Millis{});
  EXPECT_STREQ(gate.refusal(kAny, 0), "");
  EXPECT_FALSE(gate.network().connected);  // The platform's last word stays.
}

TEST(NetworkGate, RunHintNeedsFollowThePolicyAndSize) {
  RunHint hint;
  NetworkPolicy policy;
  policy.metered_up_to = 10;
  set_network_needs(&hint, policy, 11);
  EXPECT_TRUE(hint.unmetered);
  EXPECT_FALSE(hint.not_roaming);
  policy.roaming = false;
  set_network_needs(&hint, policy, 10);
  EXPECT_FALSE(hint.unmetered);
  EXPECT_TRUE(hint.not_roaming);
}

TEST(NetworkGate, AHintSaysWhatTheRequestWaitsForAndTheBytesLeft) {
  NetworkGate gate;
  char words[256] = {};
  const RunHint running = gate.hint(Millis(500), true, kAny, 0, 42U);
  EXPECT_EQ(running.state, RunHint::State::kRunning);
  EXPECT_EQ(running.run_at, Millis(500));
  EXPECT_EQ(running.bytes_left, std::optional<std::uint64_t>(42U));
  EXPECT_EQ(gate.hint(Millis(500), false, kAny, 0, std::nullopt).state, RunHint::State::kWaiting);
  EXPECT_FALSE(gate.hint(Millis(500), false, kAny, 0, std::nullopt).bytes_left.has_value());
  gate.changed(NetworkInfo{false, false, false}, kAny, 0);
  ASSERT_TRUE(gate.no_path());
  (void)gate.hold(Millis(0), Millis(100), "why", words, sizeof words);
  EXPECT_EQ(gate.hint(Millis(100), false, kAny, 0, std::nullopt).state,
            RunHint::State::kWaitingForNetwork);
}

}  // namespace
}  // namespace stepback::https
