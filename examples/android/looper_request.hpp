// Drives a stepback::https::Client from an Android ALooper (the native side of a thread
// that has a Looper: the main thread, a HandlerThread, or an ANativeActivity's).
//
// Two file descriptors are registered with the looper: the client's socket (while the
// client waits for I/O) and a timerfd on CLOCK_BOOTTIME armed at the client's next
// deadline. CLOCK_BOOTTIME is the clock stepback::platform::monotonic_now() reads on
// Android, so a backoff wait that spans a suspend ends on time when the device wakes
// (the timer does not wake the device itself). Nothing blocks the looper except
// getaddrinfo() for a host name; use numeric hosts or resolve elsewhere if that matters.
#ifndef STEPBACK_EXAMPLES_ANDROID_LOOPER_REQUEST_HPP_
#define STEPBACK_EXAMPLES_ANDROID_LOOPER_REQUEST_HPP_

#include <android/looper.h>

#include "stepback/https/client.hpp"

namespace stepback::examples {

// Steps one started Client from `looper` until it is done, then calls `on_done`. Every
// call, and every callback, happens on the looper's thread. Not copyable; `client` must
// outlive it.
class LooperRequest {
 public:
  // Called once with the client's result; `context` is the one given to the constructor.
  using DoneFn = void (*)(void* context, const https::ClientResult& result);

  LooperRequest(ALooper* looper, https::Client& client, DoneFn on_done, void* context);
  ~LooperRequest();
  LooperRequest(const LooperRequest&) = delete;
  LooperRequest& operator=(const LooperRequest&) = delete;

  // Registers with the looper and takes the first step (client.start() must have
  // succeeded). False, with nothing registered, if the timerfd could not be made.
  [[nodiscard]] bool start();
  // Cancels the request; on_done still runs, from this call.
  void cancel();
  // The default network changed (ConnectivityManager.NetworkCallback, see network_jni.cpp):
  // the client drops what ran on the old one (https::Client::network_changed) and is stepped
  // at once.
  void network_changed(const https::NetworkInfo& network);
  // What the request waits for after its last step, for an app that hands a long wait to
  // WorkManager instead of staying alive (https::RunHint).
  https::RunHint run_hint() const { return client_.run_hint(last_); }

 private:
  static int on_timer(int fd, int events, void* self);
  static int on_socket(int fd, int events, void* self);
  // Steps the client at the current time and registers for what it needs next.
  void advance();
  void watch_socket(int fd, https::IoInterest interest);
  void unwatch_socket();
  void arm_timer(Millis at);
  void finish();

  ALooper* looper_;
  https::Client& client_;
  DoneFn on_done_;
  void* context_;
  int timer_fd_ = -1;
  int socket_fd_ = -1;  // The client fd registered with the looper, -1 if none.
  bool done_ = false;
  https::ClientNext last_;  // The client's answer to the last step().
};

}  // namespace stepback::examples

#endif  // STEPBACK_EXAMPLES_ANDROID_LOOPER_REQUEST_HPP_
