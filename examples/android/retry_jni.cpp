// A thin JNI bridge to stepback's retry machine, for apps that make their requests from
// Kotlin or Java (OkHttp, HttpURLConnection) and want stepback's schedule, budget and
// Retry-After handling. Kotlin asks nativeStep() what to do, performs the attempt itself,
// tells nativeReport() how it went, and schedules the next step with a Handler or a
// coroutine delay. See docs/android.md for the Kotlin side.
//
// Times are milliseconds of SystemClock.elapsedRealtime(), which is CLOCK_BOOTTIME, the
// clock stepback::platform::monotonic_now() reads on Android: suspend counts.
//
// Every call must come from one thread (the main thread, say). No heap: the machines live
// in a fixed table of kSlots. Needs only <jni.h> and stepback's own headers, so it builds
// with -ffreestanding (scripts/check_android.sh compiles it that way).
#include <jni.h>

#include <cstdint>

#include "stepback/core/retry_machine.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"

namespace {

// What nativeStep() and nativeReport() answer besides a deadline (>= 0).
constexpr jlong kSendNow = -1;   // Perform an attempt now, then call nativeReport().
constexpr jlong kDoneBase = -2;  // kDoneBase - r: done with stepback::Outcome r.
constexpr jint kNoSlot = -1;     // nativeCreate(): every slot is in use.
constexpr int kSlots = 8;        // Requests under way at once.

// What every request of the app shares: the OS-seeded generator and the retry budget.
stepback::Xoshiro128 g_random = stepback::platform::make_os_random(nullptr);
stepback::RetryBudget g_budget(stepback::profiles::active.budget);
const stepback::RetryContext g_context{stepback::profiles::active.retry, g_random, &g_budget};

struct Slot {
  bool used = false;
  stepback::RetryMachine machine{g_context};
};
Slot g_slots[kSlots];

// The slot `handle` names, or null for a bad or free handle.
Slot* slot(jint handle) {
  if (handle < 0 || handle >= kSlots || !g_slots[handle].used) return nullptr;
  return &g_slots[handle];
}

stepback::Millis millis(jlong ms) {
  return stepback::Millis(ms < 0 ? 0U : static_cast<std::uint64_t>(ms));
}

// The machine's answer as one jlong, per the constants above.
jlong encode(const stepback::Next& next) {
  switch (next.kind) {
    case stepback::Next::Kind::kSend:
      return kSendNow;
    case stepback::Next::Kind::kWaitUntil:
      // Millis::max() (no deadline) cannot come back here; clamp anyway.
      return static_cast<jlong>(next.at.count() > 0x7fffffffffffffffULL ? 0x7fffffffffffffffULL
                                                                        : next.at.count());
    case stepback::Next::Kind::kDone:
      break;
  }
  return kDoneBase - static_cast<jlong>(next.outcome);
}

}  // namespace

extern "C" {

// Starts a request; returns its handle, or -1 when kSlots requests are already under way.
JNIEXPORT jint JNICALL Java_com_example_stepback_NativeRetry_nativeCreate(JNIEnv*, jclass,
                                                                          jboolean idempotent) {
  for (jint i = 0; i < kSlots; ++i) {
    if (g_slots[i].used) continue;
    g_slots[i].machine = stepback::RetryMachine(
        g_context, idempotent ? stepback::Idempotent::kYes : stepback::Idempotent::kNo);
    g_slots[i].used = true;
    return i;
  }
  return kNoSlot;
}

// What to do at `now_ms`: a deadline to step again at, kSendNow, or done.
JNIEXPORT jlong JNICALL Java_com_example_stepback_NativeRetry_nativeStep(JNIEnv*, jclass,
                                                                         jint handle,
                                                                         jlong now_ms) {
  Slot* s = slot(handle);
  if (s == nullptr) return kDoneBase - static_cast<jlong>(stepback::Outcome::kCancelled);
  return encode(s->machine.step(millis(now_ms)));
}

// Reports the attempt kSendNow asked for: `http_status` > 0 with `retry_after_ms` (< 0: the
// response had no Retry-After), or 0 when no response arrived; answers like nativeStep().
JNIEXPORT jlong JNICALL Java_com_example_stepback_NativeRetry_nativeReport(
    JNIEnv*, jclass, jint handle, jlong now_ms, jint http_status, jlong retry_after_ms) {
  Slot* s = slot(handle);
  if (s == nullptr) return kDoneBase - static_cast<jlong>(stepback::Outcome::kCancelled);
  stepback::AttemptResult result = stepback::AttemptResult::transport(stepback::Failure::kReset);
  if (http_status > 0 && http_status < 1000) {
    const auto status = static_cast<std::uint16_t>(http_status);
    result = retry_after_ms < 0 ? stepback::AttemptResult::http(status)
                                : stepback::AttemptResult::http(status, millis(retry_after_ms),
                                                                stepback::DelaySource::kRetryAfter);
  }
  return encode(s->machine.report(millis(now_ms), result));
}

// Connectivity is back (ConnectivityManager.NetworkCallback.onAvailable): a backoff wait
// shortens; call nativeStep() again for the new deadline.
JNIEXPORT void JNICALL Java_com_example_stepback_NativeRetry_nativeNetworkAvailable(JNIEnv*, jclass,
                                                                                    jint handle,
                                                                                    jlong now_ms) {
  if (Slot* s = slot(handle)) s->machine.network_available(millis(now_ms));
}

// Ends the request (if it has not ended) and frees its slot.
JNIEXPORT void JNICALL Java_com_example_stepback_NativeRetry_nativeRelease(JNIEnv*, jclass,
                                                                           jint handle) {
  if (Slot* s = slot(handle)) {
    s->machine.cancel();
    s->used = false;
  }
}

}  // extern "C"
