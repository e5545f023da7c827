// Driving a Connector to its answer in a test: step() until it answers something other than
// kWouldBlock, waiting in poll(2) on fd() for wants() between steps, so the test neither spins
// nor hangs.
#ifndef STEPBACK_TESTS_SUPPORT_SETTLE_HPP_
#define STEPBACK_TESTS_SUPPORT_SETTLE_HPP_

#include "stepback/core/millis.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/types.hpp"

namespace stepback::testing {

// The longest one wait between two steps, and how many waits settle() makes at most.
constexpr Millis kSettleWait{10};
constexpr int kSettleWaits = 500;

// Steps `connector` at `now` until its answer is not kWouldBlock, and returns that answer;
// kWouldBlock still after kSettleWaits waits.
inline https::Status settle(https::Connector& connector, Millis now) {
  https::Status s = connector.step(now);
  for (int i = 0; i < kSettleWaits && s == https::Status::kWouldBlock; ++i) {
    (void)https::poll_wait(connector.fd(), connector.wants(), kSettleWait, Millis(0));
    s = connector.step(now);
  }
  return s;
}

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_SETTLE_HPP_
