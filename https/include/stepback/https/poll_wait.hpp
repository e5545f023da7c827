// Waiting for a step() answer with poll(2): the whole main loop of a POSIX program that has
// nothing else to wait on (the CLI, the examples, the tests and benches use it). An app with
// an event loop of its own (ALooper, epoll, a GUI toolkit's) registers ClientNext::fd there
// instead; docs/architecture.md, "The main-loop contract", says what a loop owes step().
//
//   Millis now = platform::monotonic_now();
//   for (ClientNext next = client.step(now); next.kind != ClientNext::Kind::kDone;
//        next = client.step(now)) {
//     poll_wait(next, now);
//     now = platform::monotonic_now();
//   }
//
// POSIX only (<poll.h>); header-only, so the library itself does not depend on it.
#ifndef STEPBACK_HTTPS_POLL_WAIT_HPP_
#define STEPBACK_HTTPS_POLL_WAIT_HPP_

#include <poll.h>

#include "stepback/core/millis.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// The poll(2) events that wait for `interest`: POLLIN, POLLOUT, both, or none.
constexpr decltype(pollfd::events) poll_events(IoInterest interest) {
  switch (interest) {
    case IoInterest::kRead:
      return POLLIN;
    case IoInterest::kWrite:
      return POLLOUT;
    case IoInterest::kReadWrite:
      return POLLIN | POLLOUT;
    case IoInterest::kNone:
      break;
  }
  return 0;
}

// The longest one poll_wait() sleeps unless told otherwise: the loop steps again after it,
// which costs nothing, and a clock that jumped is read again no later than this.
constexpr Millis kLongestPollWait{60000};

// poll(2)'s timeout, in milliseconds, for a wait until `at` (on the clock that gave `now`)
// of at most `longest`: 0 when `at` has passed.
constexpr int poll_timeout(Millis at, Millis now, Millis longest = kLongestPollWait) {
  const Millis wait = at <= now ? Millis(0) : min(at - now, longest);
  return static_cast<int>(min(wait, Millis(0x7fffffff)).count());
}

// Sleeps in poll(2) until `fd` is ready for `interest` or `at` (on the clock that gave `now`)
// passes, and no longer than `longest`; true when the descriptor reported readiness (or an
// error or hang-up, which the next step() reads). With fd < 0 or kNone it sleeps on the time
// alone; with `at` at or before `now` it only looks. A signal may end the sleep early: the
// caller steps again either way, which the main-loop contract allows.
inline bool poll_wait(int fd, IoInterest interest, Millis at, Millis now,
                      Millis longest = kLongestPollWait) {
  const int timeout = poll_timeout(at, now, longest);
  if (fd < 0 || interest == IoInterest::kNone) {
    (void)::poll(nullptr, 0, timeout);
    return false;
  }
  pollfd p{fd, poll_events(interest), 0};
  return ::poll(&p, 1, timeout) > 0 && p.revents != 0;
}

// The same for a step() answer: kWaitIo waits on its descriptor until its time, kWaitUntil
// on its time alone, kDone not at all.
inline bool poll_wait(const ClientNext& next, Millis now, Millis longest = kLongestPollWait) {
  switch (next.kind) {
    case ClientNext::Kind::kWaitIo:
      return poll_wait(next.fd, next.interest, next.at, now, longest);
    case ClientNext::Kind::kWaitUntil:
      return poll_wait(-1, IoInterest::kNone, next.at, now, longest);
    case ClientNext::Kind::kDone:
      break;
  }
  return false;
}

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_POLL_WAIT_HPP_
