#include "stepback/core/millis.hpp"

#include <gtest/gtest.h>

namespace stepback {
namespace {

TEST(Millis, SecondsConvertsAndSaturates) {
  EXPECT_EQ(Millis::seconds(32).count(), 32000U);
  EXPECT_EQ(Millis::seconds(~std::uint64_t{0}), Millis::max());
}

TEST(Millis, AdditionSaturatesAtMax) {
  EXPECT_EQ((Millis(5) + Millis(7)).count(), 12U);
  EXPECT_EQ(Millis::max() + Millis(1), Millis::max());
  EXPECT_EQ(Millis(~std::uint64_t{0} - 3) + Millis(10), Millis::max());
}

TEST(Millis, SubtractionSaturatesAtZero) {
  EXPECT_EQ((Millis(10) - Millis(3)).count(), 7U);
  EXPECT_EQ((Millis(3) - Millis(10)).count(), 0U);
}

TEST(Millis, MinMaxAndOrdering) {
  EXPECT_EQ(min(Millis(3), Millis(4)), Millis(3));
  EXPECT_EQ(max(Millis(3), Millis(4)), Millis(4));
  EXPECT_LT(Millis(3), Millis(4));
  EXPECT_NE(Millis(3), Millis(4));
  static_assert(std::is_trivially_copyable_v<Millis>);
  static_assert(sizeof(Millis) == 8);
}

}  // namespace
}  // namespace stepback
