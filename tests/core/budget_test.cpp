#include "stepback/core/budget.hpp"

#include <gtest/gtest.h>

namespace stepback {
namespace {

static_assert(valid(BudgetConfig{}));
static_assert(!valid(BudgetConfig{0, 100}));
static_assert(!valid(BudgetConfig{10, 0}));
static_assert(!valid(BudgetConfig{10, 1001}));
static_assert(!valid(BudgetConfig{1000001, 100}));

TEST(RetryBudget, StartsFullAndStopsRetriesAtHalf) {
  RetryBudget b(BudgetConfig{10, 100});
  EXPECT_EQ(b.milli_tokens(), 10000U);
  for (int i = 0; i < 4; ++i) {
    b.record_failure();
    EXPECT_TRUE(b.allows_retry()) << i;
  }
  b.record_failure();  // 5 tokens left: not above half.
  EXPECT_EQ(b.milli_tokens(), 5000U);
  EXPECT_FALSE(b.allows_retry());
}

TEST(RetryBudget, SuccessesRefundAFractionUpToTheSize) {
  RetryBudget b(BudgetConfig{10, 100});
  for (int i = 0; i < 5; ++i) b.record_failure();
  b.record_success();
  EXPECT_EQ(b.milli_tokens(), 5100U);
  EXPECT_TRUE(b.allows_retry());
  for (int i = 0; i < 100; ++i) b.record_success();
  EXPECT_EQ(b.milli_tokens(), 10000U);
}

TEST(RetryBudget, NeverGoesBelowZero) {
  RetryBudget b(BudgetConfig{1, 1000});
  b.record_failure();
  b.record_failure();
  EXPECT_EQ(b.milli_tokens(), 0U);
  EXPECT_FALSE(b.allows_retry());
  b.record_success();
  EXPECT_EQ(b.milli_tokens(), 1000U);
  EXPECT_TRUE(b.allows_retry());
}

}  // namespace
}  // namespace stepback

namespace stepback {
namespace {

TEST(RetryBudget, ARequestsOwnFailuresAreGivenBack) {
  RetryBudget b(BudgetConfig{10, 100});
  for (int i = 0; i < 8; ++i) b.record_failure();  // 2 tokens left.
  EXPECT_FALSE(b.allows_retry());                  // Someone else's request: throttled.
  EXPECT_TRUE(b.allows_retry(8000));               // The request that took them: not.
  EXPECT_FALSE(b.allows_retry(3000));              // 2 + 3 = 5 tokens: not above half.
  EXPECT_TRUE(b.allows_retry(3001));
}

// The same limits as the static_asserts above, for a configuration made at run time.
TEST(BudgetConfig, ValidityIsAlsoARuntimeCheck) {
  const BudgetConfig good[] = {{10, 100}, {1, 1}, {1000000, 1000}};
  for (const BudgetConfig& c : good) EXPECT_TRUE(valid(c)) << c.max_tokens << " " << c.refund_milli;
  const BudgetConfig bad[] = {{0, 100}, {1000001, 100}, {10, 0}, {10, 1001}};
  for (const BudgetConfig& c : bad) EXPECT_FALSE(valid(c)) << c.max_tokens << " " << c.refund_milli;
}

}  // namespace
}  // namespace stepback
