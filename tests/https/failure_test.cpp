// The Status -> Failure bridge the request layer reports attempts with.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "stepback/core/attempt.hpp"
#include "stepback/https/failure.hpp"

namespace stepback::https {
namespace {

TEST(ToFailure, EveryStatusHasItsFailure) {
  struct Row {
    Status status;
    Failure failure;
  };
  const Row rows[] = {
      {Status::kError, Failure::kLocal},
      {Status::kOk, Failure::kNone},
      {Status::kWouldBlock, Failure::kNone},
      {Status::kClosed, Failure::kReset},
      {Status::kInvalidArgument, Failure::kLocal},
      {Status::kBufferTooSmall, Failure::kTooLarge},
      {Status::kDnsFailed, Failure::kDns},
      {Status::kConnectFailed, Failure::kConnect},
      {Status::kConnectTimeout, Failure::kConnectTimeout},
      {Status::kTlsHandshake, Failure::kTlsHandshake},
      {Status::kTlsVerify, Failure::kTlsVerify},
      {Status::kReset, Failure::kReset},
      {Status::kTimeout, Failure::kTimeout},
      {Status::kProtocol, Failure::kProtocol},
      {Status::kHeadersTooLarge, Failure::kTooLarge},
      {Status::kBodyTooLarge, Failure::kTooLarge},
      {Status::kRestartRefused, Failure::kLocal},
      {Status::kTimeLimit, Failure::kTimeLimit},
      {Status::kBodySource, Failure::kLocal},
      {Status::kTlsRefused, Failure::kTlsRefused},
      {Status::kIntegrity, Failure::kIntegrity},
      {Status::kRedirect, Failure::kProtocol},
      {Status::kProxyAuth, Failure::kLocal},
  };
  // The table covers the enum: a new Status must be added here (and to to_failure).
  EXPECT_EQ(sizeof rows / sizeof rows[0], static_cast<std::size_t>(Status::kProxyAuth) + 1);
  for (const Row& row : rows) {
    EXPECT_EQ(to_failure(row.status), row.failure) << to_string(row.status);
  }
}

TEST(ToFailure, ConnectPhaseFailuresProveTheRequestWasNotProcessed) {
  for (const Status s : {Status::kDnsFailed, Status::kConnectFailed, Status::kConnectTimeout,
                         Status::kTlsHandshake, Status::kTlsVerify}) {
    EXPECT_FALSE(AttemptResult::transport(to_failure(s)).may_have_been_processed) << to_string(s);
  }
  for (const Status s : {Status::kReset, Status::kClosed, Status::kTimeout}) {
    EXPECT_TRUE(AttemptResult::transport(to_failure(s)).may_have_been_processed) << to_string(s);
  }
}

TEST(ToFailure, WhatNoRetryCanFixIsTerminal) {
  const Policy p;
  for (const Status s :
       {Status::kError, Status::kInvalidArgument, Status::kProtocol, Status::kHeadersTooLarge,
        Status::kBodyTooLarge, Status::kBufferTooSmall, Status::kTlsVerify, Status::kProxyAuth}) {
    EXPECT_EQ(classify(p, AttemptResult::transport(to_failure(s))), Verdict::kTerminal)
        << to_string(s);
  }
  for (const Status s :
       {Status::kDnsFailed, Status::kConnectFailed, Status::kConnectTimeout, Status::kTlsHandshake,
        Status::kReset, Status::kClosed, Status::kTimeout}) {
    EXPECT_EQ(classify(p, AttemptResult::transport(to_failure(s))), Verdict::kRetryable)
        << to_string(s);
  }
}

}  // namespace
}  // namespace stepback::https

namespace stepback::https {
namespace {

// Every Status has its own name (the table used to be an array indexed by the enum value).
TEST(StatusNames, EveryStatusHasADistinctName) {
  std::set<std::string> names;
  for (unsigned i = 0; i <= static_cast<unsigned>(Status::kProxyAuth); ++i) {
    const std::string name = to_string(static_cast<Status>(i));
    EXPECT_NE(name, "unknown") << i;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(Status::kProxyAuth) + 1);
  EXPECT_STREQ(to_string(Status::kRestartRefused), "restart_refused");
}

}  // namespace
}  // namespace stepback::https
