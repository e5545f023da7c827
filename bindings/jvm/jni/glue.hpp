// What the JNI glue's files share: the method IDs cached at load, the per-call link from a
// C callback back to the Kotlin object that made the call, and the conversions at the
// boundary (a step's answer into a long[], C strings, exceptions).
//
// Every native object (stack, download, upload, retry machine) is allocated once, when its
// Kotlin object is made, and freed by close(); a transfer's steps allocate nothing in C.
#ifndef STEPBACK_BINDINGS_JVM_GLUE_HPP_
#define STEPBACK_BINDINGS_JVM_GLUE_HPP_

#include <jni.h>

#include <cstddef>
#include <cstdint>

#include "stepback/stepback.h"

namespace stepback::jni {

// The Kotlin object whose call is under way, for the event callback: set by a Calling guard
// around every C call that can emit events (step, pause, resume, cancel), null otherwise.
struct Dispatch {
  JNIEnv* env = nullptr;
  jobject self = nullptr;
};

class Calling {
 public:
  Calling(Dispatch& dispatch, JNIEnv* env, jobject self) : dispatch_(dispatch) {
    dispatch_.env = env;
    dispatch_.self = self;
  }
  ~Calling() {
    dispatch_.env = nullptr;
    dispatch_.self = nullptr;
  }
  Calling(const Calling&) = delete;
  Calling& operator=(const Calling&) = delete;

 private:
  Dispatch& dispatch_;
};

// Where a transfer's options keep their text (user agent, header names and values): the C
// object keeps the pointers, so the bytes live in the native side, not in Java arrays.
constexpr std::size_t kOptionsTextMax = 4096;

// The policy as a long[] across JNI (dev.stepback.Policy.encode): initial delay, multiplier,
// jitter, jitter range, max backoff, max retries, total deadline, honor server delay (0/1),
// max server delay, retry all (0/1), then the extra retryable statuses.
constexpr int kPolicyLongs = 10 + STEPBACK_POLICY_EXTRA_STATUSES;

// A download's or upload's native side: the C object, what its options point at, and the
// last step's answer (for run_hint).
template <class C>
struct Transfer {
  C object;
  Dispatch dispatch;
  stepback_next last;
  stepback_policy policy;
  stepback_header headers[STEPBACK_MAX_HEADERS];
  char text[kOptionsTextMax];
  stepback_options options;
};

// The answers a transfer keeps as its last step's before it has stepped: DONE before a start;
// after a start, a step due at once (time 0 has passed on the monotonic clock).
inline stepback_next done() {
  stepback_next next{};
  next.kind = STEPBACK_NEXT_DONE;
  next.fd = -1;
  next.at_ms = STEPBACK_NEVER;
  return next;
}
inline stepback_next due_now() {
  stepback_next next = done();
  next.kind = STEPBACK_NEXT_WAIT_UNTIL;
  next.at_ms = 0;
  return next;
}

// Reads a policy encoded as above; false, with StepbackException(INVALID_ARGUMENT) thrown,
// when a field is out of its type's range or stepback_policy_valid refuses it.
bool get_policy(JNIEnv* env, jlongArray encoded, stepback_policy* policy);
// Writes a policy into a long[kPolicyLongs].
void put_policy(JNIEnv* env, jlongArray out, const stepback_policy& policy);

// The Kotlin Options of a transfer, as they cross JNI: the policy (null: the profile's), the
// user agent (null: none), the headers as NUL-terminated name, value, name, value, ...
// (null: none), max redirects (< 0: the profile's), max time and max rate.
struct OptionArgs {
  jlongArray policy;
  jbyteArray user_agent;
  jbyteArray headers;
  jint header_count;
  jint max_redirects;
  jlong max_time_ms;
  jlong max_rate;
};

// Fills `options` from `args`, copying the strings into `text` and the fields into `headers`
// and the policy into `policy`. False, with an exception thrown, for anything refused.
bool make_options(JNIEnv* env, const OptionArgs& args, Dispatch* dispatch, stepback_policy* policy,
                  stepback_header* headers, char* text, stepback_options* options);

// stepback_event_fn for every transfer: context is the transfer's Dispatch. Calls
// dev.stepback.Transfer.onNativeEvent with primitives, plus a String only when the event
// has words (progress events have none).
void on_event(void* context, const stepback_event* event);

// Writes *next into `out` (a long[5]: kind, fd, flags (1 read, 2 write), at_ms, outcome);
// returns the kind.
jint put_next(JNIEnv* env, jlongArray out, const stepback_next& next);
// Reads a next written by put_next back (for stepback_poll_wait).
stepback_next get_next(jint kind, jint fd, jint flags, jlong at_ms);

// Writes a result into `out` (a long[4]: outcome, http_status, error, attempts) and returns
// its message as a String.
jstring put_result(JNIEnv* env, jlongArray out, const stepback_result& result);

// Writes a run hint into `out` (a long[5]: state, run_at_ms, unmetered, not_roaming,
// bytes_left with -1 for unknown).
void put_run_hint(JNIEnv* env, jlongArray out, const stepback_run_hint& hint);

// An unsigned count as a Java long: STEPBACK_UNKNOWN becomes -1, the rest is clamped.
jlong to_jlong(std::uint64_t value);

// Throws dev.stepback.StepbackException(status, message); returns false for `return` chains.
bool throw_status(JNIEnv* env, stepback_status status, const char* message);

// A NUL-terminated UTF-8 byte[] (made by Kotlin's cString()) pinned for one call; null
// stays null. The JVM may copy the bytes (its choice, at start only, never in a step).
class Utf8 {
 public:
  Utf8(JNIEnv* env, jbyteArray bytes);
  ~Utf8();
  Utf8(const Utf8&) = delete;
  Utf8& operator=(const Utf8&) = delete;
  const char* get() const { return chars_; }

 private:
  JNIEnv* env_;
  jbyteArray bytes_;
  jbyte* elements_ = nullptr;
  const char* chars_ = nullptr;
};

// The native object behind a handle; null for 0 (a closed object: Kotlin checks first).
template <class T>
T* from_handle(jlong handle) {
  return reinterpret_cast<T*>(static_cast<std::intptr_t>(handle));
}
template <class T>
jlong to_handle(T* object) {
  return static_cast<jlong>(reinterpret_cast<std::intptr_t>(object));
}

// Storage for T from the C heap, aligned for the C objects; null when memory is short.
void* allocate(std::size_t size);
void release(void* storage);

}  // namespace stepback::jni

#endif  // STEPBACK_BINDINGS_JVM_GLUE_HPP_
