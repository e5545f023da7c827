// Must not compile: a constexpr policy whose initial delay exceeds its cap.
#include "stepback/core/policy.hpp"

constexpr stepback::Policy kBroken = [] {
  stepback::Policy p;
  p.initial_delay = stepback::Millis::seconds(60);
  p.max_backoff = stepback::Millis::seconds(32);
  return p;
}();
static_assert(stepback::valid(kBroken), "stepback: invalid policy");

int main() { return 0; }
