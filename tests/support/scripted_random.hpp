// A RandomSource that returns a fixed script of values, for exact-value tests.
#ifndef STEPBACK_TESTS_SUPPORT_SCRIPTED_RANDOM_HPP_
#define STEPBACK_TESTS_SUPPORT_SCRIPTED_RANDOM_HPP_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "stepback/core/random.hpp"

namespace stepback::testing {

// Returns the scripted values in order, then repeats the last one; counts draws.
class ScriptedRandom final : public RandomSource {
 public:
  ScriptedRandom(std::initializer_list<std::uint32_t> values) : values_(values) {}
  std::uint32_t next_u32() override {
    const std::uint32_t v =
        values_.empty() ? 0 : values_[next_ < values_.size() ? next_ : values_.size() - 1];
    ++next_;
    return v;
  }
  std::size_t draws() const { return next_; }

 private:
  std::vector<std::uint32_t> values_;
  std::size_t next_ = 0;
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_SCRIPTED_RANDOM_HPP_
