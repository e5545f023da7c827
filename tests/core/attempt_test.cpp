#include "stepback/core/attempt.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace stepback {
namespace {

TEST(Classify, StatusTableForTheDefaultPolicy) {
  const Policy p;
  for (std::uint16_t s = 100; s < 600; ++s) {
    Verdict expected = Verdict::kTerminal;
    if (s < 400) expected = Verdict::kSuccess;
    if (s == 408 || s == 429 || s >= 500) expected = Verdict::kRetryable;
    EXPECT_EQ(classify(p, AttemptResult::http(s)), expected) << s;
  }
  EXPECT_EQ(classify(p, AttemptResult::http(0)), Verdict::kTerminal);
  EXPECT_EQ(classify(p, AttemptResult::http(99)), Verdict::kTerminal);
  EXPECT_EQ(classify(p, AttemptResult::http(600)), Verdict::kTerminal);
}

TEST(Classify, ACustomRetryableSet) {
  Policy p;
  p.retryable = StatusSet().add(503);
  EXPECT_EQ(classify(p, AttemptResult::http(503)), Verdict::kRetryable);
  EXPECT_EQ(classify(p, AttemptResult::http(500)), Verdict::kTerminal);
  EXPECT_EQ(classify(p, AttemptResult::http(429)), Verdict::kTerminal);
}

TEST(Classify, TransportFailureTable) {
  const Policy p;
  struct Row {
    Failure failure;
    Verdict verdict;
    bool may_have_been_processed;
  };
  const Row rows[] = {
      {Failure::kDns, Verdict::kRetryable, false},
      {Failure::kConnect, Verdict::kRetryable, false},
      {Failure::kConnectTimeout, Verdict::kRetryable, false},
      {Failure::kTlsHandshake, Verdict::kRetryable, false},
      {Failure::kTlsVerify, Verdict::kTerminal, false},
      {Failure::kReset, Verdict::kRetryable, true},
      {Failure::kTimeout, Verdict::kRetryable, true},
      {Failure::kProtocol, Verdict::kTerminal, true},
      {Failure::kTooLarge, Verdict::kTerminal, true},
      {Failure::kTlsRefused, Verdict::kTerminal, false},
      {Failure::kIntegrity, Verdict::kTerminal, true},
      {Failure::kTimeLimit, Verdict::kTerminal, true},
      {Failure::kLocal, Verdict::kTerminal, true},
  };
  for (const Row& row : rows) {
    const AttemptResult r = AttemptResult::transport(row.failure);
    EXPECT_EQ(classify(p, r), row.verdict) << to_string(row.failure);
    EXPECT_EQ(r.may_have_been_processed, row.may_have_been_processed) << to_string(row.failure);
  }
}

TEST(AttemptResult, OnlyTooManyRequestsAndUnavailableProveTheRequestWasNotProcessed) {
  EXPECT_FALSE(AttemptResult::http(429).may_have_been_processed);
  EXPECT_FALSE(AttemptResult::http(503).may_have_been_processed);
  EXPECT_TRUE(AttemptResult::http(500).may_have_been_processed);
  EXPECT_TRUE(AttemptResult::http(502).may_have_been_processed);
  EXPECT_TRUE(AttemptResult::http(504).may_have_been_processed);
  EXPECT_TRUE(AttemptResult::http(408).may_have_been_processed);
  const AttemptResult delayed = AttemptResult::http(429, Millis(1500), DelaySource::kRetryAfter);
  EXPECT_EQ(delayed.server_delay, Millis(1500));
  EXPECT_EQ(delayed.delay_source, DelaySource::kRetryAfter);
  EXPECT_FALSE(AttemptResult::transport(Failure::kReset, false).may_have_been_processed);
}

TEST(Names, EveryEnumeratorHasAName) {
  EXPECT_STREQ(to_string(Outcome::kSuccess), "success");
  EXPECT_STREQ(to_string(Outcome::kRetriesExhausted), "retries_exhausted");
  EXPECT_STREQ(to_string(Outcome::kDeadline), "deadline");
  EXPECT_STREQ(to_string(Outcome::kTerminalStatus), "terminal_status");
  EXPECT_STREQ(to_string(Outcome::kTerminalFailure), "terminal_failure");
  EXPECT_STREQ(to_string(Outcome::kNotIdempotent), "not_idempotent");
  EXPECT_STREQ(to_string(Outcome::kBudgetExhausted), "budget_exhausted");
  EXPECT_STREQ(to_string(Outcome::kServerDelayTooLong), "server_delay_too_long");
  EXPECT_STREQ(to_string(Outcome::kCancelled), "cancelled");
  EXPECT_STREQ(to_string(Outcome::kOffline), "offline");
  EXPECT_STREQ(to_string(static_cast<Outcome>(200)), "unknown");
  EXPECT_STREQ(to_string(Failure::kTlsVerify), "tls_verify");
  EXPECT_STREQ(to_string(Failure::kTooLarge), "too_large");
  EXPECT_STREQ(to_string(Failure::kTlsRefused), "tls_refused");
  EXPECT_STREQ(to_string(Failure::kIntegrity), "integrity");
  EXPECT_STREQ(to_string(Failure::kTimeLimit), "time_limit");
  EXPECT_STREQ(to_string(Failure::kLocal), "local");
  EXPECT_STREQ(to_string(Verdict::kRetryable), "retryable");
  EXPECT_STREQ(to_string(WaitReason::kRetryAfter), "retry_after");
  EXPECT_STREQ(to_string(WaitReason::kNetworkBack), "network_back");
}

TEST(Names, ValuesOutsideEachEnumerationAreUnknown) {
  EXPECT_STREQ(to_string(static_cast<Failure>(14)), "unknown");
  EXPECT_STREQ(to_string(static_cast<Verdict>(3)), "unknown");
  EXPECT_STREQ(to_string(static_cast<WaitReason>(5)), "unknown");
  EXPECT_STREQ(to_string(static_cast<Outcome>(10)), "unknown");
  // The last named value of each, for contrast.
  EXPECT_STREQ(to_string(Failure::kLocal), "local");
  EXPECT_STREQ(to_string(Verdict::kTerminal), "terminal");
  EXPECT_STREQ(to_string(WaitReason::kOffline), "offline");
  EXPECT_STREQ(to_string(Outcome::kOffline), "offline");
}

}  // namespace
}  // namespace stepback
