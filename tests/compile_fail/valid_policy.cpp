// The control for invalid_policy.cpp: the same shape with a valid policy compiles.
#include "stepback/core/policy.hpp"

constexpr stepback::Policy kFine = [] {
  stepback::Policy p;
  p.initial_delay = stepback::Millis::seconds(1);
  p.max_backoff = stepback::Millis::seconds(32);
  return p;
}();
static_assert(stepback::valid(kFine), "stepback: invalid policy");

int main() { return 0; }
