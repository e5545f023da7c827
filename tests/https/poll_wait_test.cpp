#include "stepback/https/poll_wait.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace stepback::https {
namespace {

// A connected pair of local sockets, closed at the end of the test.
struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    for (const int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
};

TEST(PollWait, EventsForEachInterest) {
  EXPECT_EQ(poll_events(IoInterest::kNone), 0);
  EXPECT_EQ(poll_events(IoInterest::kRead), POLLIN);
  EXPECT_EQ(poll_events(IoInterest::kWrite), POLLOUT);
  EXPECT_EQ(poll_events(IoInterest::kReadWrite), POLLIN | POLLOUT);
}

TEST(PollWait, TimeoutIsTheRestOfTheWaitBoundedByLongest) {
  EXPECT_EQ(poll_timeout(Millis(1500), Millis(1000)), 500);
  EXPECT_EQ(poll_timeout(Millis(1000), Millis(1000)), 0);
  EXPECT_EQ(poll_timeout(Millis(10), Millis(1000)), 0);       // Passed: only look.
  EXPECT_EQ(poll_timeout(Millis(100000), Millis(0)), 60000);  // kLongestPollWait.
  EXPECT_EQ(poll_timeout(Millis(100000), Millis(0), Millis(100)), 100);
  // An `at` far past int's range of milliseconds, with no bound below it, stays an int.
  EXPECT_EQ(poll_timeout(Millis(~std::uint64_t{0}), Millis(0), Millis(~std::uint64_t{0})),
            0x7fffffff);
}

// A ready descriptor ends the wait with true, long before `at` (a wait that did not see it
// would sleep out its 30 s and fail the check after it, not hang).
TEST(PollWait, AReadyDescriptorEndsTheWait) {
  Pair p;
  const char byte = 'x';
  ASSERT_EQ(::write(p.fd[1], &byte, 1), 1);
  ClientNext next;
  next.kind = ClientNext::Kind::kWaitIo;
  next.fd = p.fd[0];
  next.interest = IoInterest::kRead;
  next.at = Millis(30000);
  EXPECT_TRUE(poll_wait(next, Millis(0)));
  // Writable at once too.
  EXPECT_TRUE(poll_wait(p.fd[0], IoInterest::kWrite, Millis(30000), Millis(0)));
}

// Nothing to read and the time already past: it only looks, and says not ready.
TEST(PollWait, APastTimeOnlyLooks) {
  Pair p;
  EXPECT_FALSE(poll_wait(p.fd[0], IoInterest::kRead, Millis(5), Millis(10)));
  ClientNext until;
  until.kind = ClientNext::Kind::kWaitUntil;
  until.at = Millis(5);
  EXPECT_FALSE(poll_wait(until, Millis(10)));
}

// Not ready within `longest`: false (the loop steps again, as the contract allows).
TEST(PollWait, LongestBoundsTheSleep) {
  Pair p;
  EXPECT_FALSE(poll_wait(p.fd[0], IoInterest::kRead, Millis(1000000), Millis(0), Millis(20)));
}

// No descriptor (fd < 0 or kNone) is a sleep on the time alone; kDone is never ready.
TEST(PollWait, NoDescriptorIsASleepAndDoneIsNeverReady) {
  EXPECT_FALSE(poll_wait(-1, IoInterest::kRead, Millis(10), Millis(0)));
  Pair p;
  EXPECT_FALSE(poll_wait(p.fd[0], IoInterest::kNone, Millis(10), Millis(0)));
  ClientNext done;
  done.kind = ClientNext::Kind::kDone;
  done.at = Millis(1000000);
  EXPECT_FALSE(poll_wait(done, Millis(0)));
}

}  // namespace
}  // namespace stepback::https
