#include "looper_request.hpp"

#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "stepback/platform/clock.hpp"

namespace stepback::examples {
namespace {

// Looper callbacks return 1 to stay registered; registrations are managed in advance().
constexpr int kKeep = 1;

int looper_events(https::IoInterest interest) {
  int events = 0;
  if (interest == https::IoInterest::kRead || interest == https::IoInterest::kReadWrite) {
    events |= ALOOPER_EVENT_INPUT;
  }
  if (interest == https::IoInterest::kWrite || interest == https::IoInterest::kReadWrite) {
    events |= ALOOPER_EVENT_OUTPUT;
  }
  return events;
}

}  // namespace

LooperRequest::LooperRequest(ALooper* looper, https::Client& client, DoneFn on_done, void* context)
    : looper_(looper), client_(client), on_done_(on_done), context_(context) {
  ALooper_acquire(looper_);
}

LooperRequest::~LooperRequest() {
  if (!done_) client_.cancel();
  unwatch_socket();
  if (timer_fd_ >= 0) {
    ALooper_removeFd(looper_, timer_fd_);
    close(timer_fd_);
  }
  ALooper_release(looper_);
}

bool LooperRequest::start() {
  // Absolute expirations on the clock monotonic_now() reads, so `at` is used as it is.
  timer_fd_ = timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd_ < 0) return false;
  ALooper_addFd(looper_, timer_fd_, ALOOPER_POLL_CALLBACK, ALOOPER_EVENT_INPUT,
                &LooperRequest::on_timer, this);
  advance();
  return true;
}

void LooperRequest::cancel() {
  if (done_) return;
  client_.cancel();
  advance();  // The client now answers kDone.
}

void LooperRequest::network_changed(const https::NetworkInfo& network) {
  if (done_) return;
  client_.network_changed(platform::monotonic_now(), network);
  advance();
}

int LooperRequest::on_timer(int fd, int /*events*/, void* self) {
  std::uint64_t expirations = 0;
  (void)read(fd, &expirations, sizeof expirations);  // Clears the readiness.
  static_cast<LooperRequest*>(self)->advance();
  return kKeep;
}

int LooperRequest::on_socket(int /*fd*/, int /*events*/, void* self) {
  static_cast<LooperRequest*>(self)->advance();
  return kKeep;
}

void LooperRequest::advance() {
  if (done_) return;
  const https::ClientNext next = client_.step(platform::monotonic_now());
  last_ = next;
  switch (next.kind) {
    case https::ClientNext::Kind::kWaitIo:
      watch_socket(next.fd, next.interest);
      arm_timer(next.at);  // The I/O timeout.
      return;
    case https::ClientNext::Kind::kWaitUntil:
      // Level-triggered: a kept-alive socket that the server closes while we back off
      // would otherwise wake the looper on every turn.
      unwatch_socket();
      arm_timer(next.at);
      return;
    case https::ClientNext::Kind::kDone:
      finish();
      return;
  }
}

void LooperRequest::watch_socket(int fd, https::IoInterest interest) {
  if (socket_fd_ >= 0 && socket_fd_ != fd) unwatch_socket();
  // Adding a registered fd again replaces its events; the looper also accepts a new socket
  // that reuses the number of one closed while registered.
  ALooper_addFd(looper_, fd, ALOOPER_POLL_CALLBACK, looper_events(interest),
                &LooperRequest::on_socket, this);
  socket_fd_ = fd;
}

void LooperRequest::unwatch_socket() {
  if (socket_fd_ < 0) return;
  ALooper_removeFd(looper_, socket_fd_);
  socket_fd_ = -1;
}

void LooperRequest::arm_timer(Millis at) {
  // Clamped so that the seconds fit a 32-bit time_t (armeabi-v7a): 68 years of uptime.
  constexpr std::uint64_t kMaxMs = 0x7fffffffULL * 1000U;
  const std::uint64_t ms = at.count() < kMaxMs ? at.count() : kMaxMs;
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(ms / 1000U);
  spec.it_value.tv_nsec = static_cast<long>((ms % 1000U) * 1000000U);
  // An all-zero it_value disarms the timer; a deadline at 0 means "now".
  if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
  (void)timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void LooperRequest::finish() {
  done_ = true;
  unwatch_socket();
  const itimerspec disarm{};
  (void)timerfd_settime(timer_fd_, 0, &disarm, nullptr);
  on_done_(context_, client_.result());
}

}  // namespace stepback::examples
