// A manual monotonic clock for tests.
#ifndef STEPBACK_TESTS_SUPPORT_FAKE_CLOCK_HPP_
#define STEPBACK_TESTS_SUPPORT_FAKE_CLOCK_HPP_

#include "stepback/core/millis.hpp"

namespace stepback::testing {

// A clock that moves only when told to.
class FakeClock {
 public:
  explicit FakeClock(Millis start = Millis(1000000)) : now_(start) {}
  Millis now() const { return now_; }
  void advance(Millis d) { now_ = now_ + d; }
  void set(Millis t) { now_ = t; }

 private:
  Millis now_;
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_FAKE_CLOCK_HPP_
