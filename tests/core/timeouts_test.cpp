#include "stepback/core/timeouts.hpp"

#include <gtest/gtest.h>

namespace stepback {
namespace {

static_assert(valid(Timeouts{}));

// valid() at run time: every limit must be positive.
TEST(Timeouts, ValidityIsAlsoARuntimeCheck) {
  Timeouts t;
  EXPECT_TRUE(valid(t));
  t.connect = Millis(1);
  t.tls_handshake = Millis(1);
  t.read = Millis(1);
  EXPECT_TRUE(valid(t));
  Timeouts no_connect;
  no_connect.connect = Millis(0);
  EXPECT_FALSE(valid(no_connect));
  Timeouts no_handshake;
  no_handshake.tls_handshake = Millis(0);
  EXPECT_FALSE(valid(no_handshake));
  Timeouts no_read;
  no_read.read = Millis(0);
  EXPECT_FALSE(valid(no_read));
}

// The throughput floor: on by default (desktop's 1 KiB/s over 30 s), off with speed_limit 0,
// and a floor needs a window to be measured over.
TEST(Timeouts, AFloorNeedsAWindowAndZeroTurnsItOff) {
  Timeouts t;
  EXPECT_EQ(t.speed_limit, 1024U);
  EXPECT_EQ(t.speed_time, Millis(30000));
  t.speed_time = Millis(0);
  EXPECT_FALSE(valid(t));
  t.speed_limit = 0;
  EXPECT_TRUE(valid(t));
}

}  // namespace
}  // namespace stepback
