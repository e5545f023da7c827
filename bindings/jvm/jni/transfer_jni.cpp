// dev.stepback.Transfer's natives, written once for both C objects: a download and an upload
// differ here only in the functions they call, which a traits struct names, and Kotlin
// passes which one it is (Transfer.DOWNLOAD, Transfer.UPLOAD) with each call. The calls that
// can emit events (step, pause, resume, cancel, network_available) pass the Kotlin object to
// the callback.
#include <cstddef>
#include <cstdint>

#include "glue.hpp"

namespace {

using stepback::jni::Calling;
using stepback::jni::from_handle;

// Must match dev.stepback.Transfer's companion constants.
constexpr jint kDownload = 0;
constexpr jint kUpload = 1;
constexpr jint kPause = 0;
constexpr jint kResume = 1;
constexpr jint kCancel = 2;
constexpr jint kNetworkAvailable = 3;

// The functions a transfer's natives call, named alike for both C objects; resume differs in
// its return type, so each traits struct names its own.
#define STEPBACK_JNI_TRANSFER_FUNCTIONS(kind)                                    \
  using Object = stepback_##kind;                                                \
  static constexpr const char* kNoMemory = "no memory for the " #kind;           \
  static constexpr auto init = stepback_##kind##_init;                           \
  static constexpr auto step = stepback_##kind##_step;                           \
  static constexpr auto pause = stepback_##kind##_pause;                         \
  static constexpr auto cancel = stepback_##kind##_cancel;                       \
  static constexpr auto network_available = stepback_##kind##_network_available; \
  static constexpr auto paused = stepback_##kind##_paused;                       \
  static constexpr auto run_hint = stepback_##kind##_run_hint;                   \
  static constexpr auto result = stepback_##kind##_result;                       \
  static constexpr auto message = stepback_##kind##_message;                     \
  static constexpr auto destroy = stepback_##kind##_destroy;

struct DownloadTraits {
  STEPBACK_JNI_TRANSFER_FUNCTIONS(download)
  static constexpr auto resume = stepback_download_resume;
};

struct UploadTraits {
  STEPBACK_JNI_TRANSFER_FUNCTIONS(upload)
  // An upload's resume cannot fail; it answers as a download's does.
  static stepback_status resume(stepback_upload* upload, std::int64_t now_ms) {
    stepback_upload_resume(upload, now_ms);
    return STEPBACK_OK;
  }
};

#undef STEPBACK_JNI_TRANSFER_FUNCTIONS

template <class T>
using Native = stepback::jni::Transfer<typename T::Object>;

// Calls f(DownloadTraits{}) or f(UploadTraits{}) as `type` says (Kotlin passes only these
// two).
template <class F>
auto on_type(jint type, F&& f) {
  static_assert(kDownload != kUpload);
  return type == kUpload ? f(UploadTraits{}) : f(DownloadTraits{});
}

template <class T>
jlong create(JNIEnv* env, jlong stack, const stepback::jni::OptionArgs& args) {
  auto* n = static_cast<Native<T>*>(stepback::jni::allocate(sizeof(Native<T>)));
  if (n == nullptr) {
    stepback::jni::throw_status(env, STEPBACK_E_STORAGE, T::kNoMemory);
    return 0;
  }
  n->dispatch = stepback::jni::Dispatch{};
  n->last = stepback::jni::done();
  if (!stepback::jni::make_options(env, args, &n->dispatch, &n->policy, n->headers, n->text,
                                   &n->options)) {
    stepback::jni::release(n);
    return 0;
  }
  const stepback_status status =
      T::init(&n->object, sizeof n->object, from_handle<stepback_stack>(stack), &n->options);
  if (status != STEPBACK_OK) {
    stepback::jni::throw_status(env, status, "the transfer's options were refused");
    stepback::jni::release(n);
    return 0;
  }
  return stepback::jni::to_handle(n);
}

template <class T>
jint step(JNIEnv* env, jobject self, jlong handle, jlong now_ms, jlongArray out) {
  auto* n = from_handle<Native<T>>(handle);
  {
    Calling calling(n->dispatch, env, self);
    T::step(&n->object, now_ms, &n->last);
  }
  return stepback::jni::put_next(env, out, n->last);
}

template <class T>
void control(JNIEnv* env, jobject self, jlong handle, jint action, jlong now_ms) {
  auto* n = from_handle<Native<T>>(handle);
  stepback_status status = STEPBACK_OK;
  {
    Calling calling(n->dispatch, env, self);
    switch (action) {
      case kPause:
        T::pause(&n->object, now_ms);
        break;
      case kResume:
        status = T::resume(&n->object, now_ms);
        break;
      case kCancel:
        T::cancel(&n->object, now_ms);
        break;
      case kNetworkAvailable:
        T::network_available(&n->object, now_ms);
        break;
      default:
        status = STEPBACK_E_INVALID_ARGUMENT;
    }
  }
  if (status != STEPBACK_OK) stepback::jni::throw_status(env, status, T::message(&n->object));
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_dev_stepback_Transfer_nativeCreate(
    JNIEnv* env, jobject, jint type, jlong stack, jlongArray policy, jbyteArray user_agent,
    jbyteArray headers, jint header_count, jint max_redirects, jlong max_time_ms, jlong max_rate) {
  const stepback::jni::OptionArgs args{policy,        user_agent,  headers, header_count,
                                       max_redirects, max_time_ms, max_rate};
  return on_type(type, [&](auto t) { return create<decltype(t)>(env, stack, args); });
}

JNIEXPORT jint JNICALL Java_dev_stepback_Transfer_nativeStep(JNIEnv* env, jobject self, jint type,
                                                             jlong handle, jlong now_ms,
                                                             jlongArray out) {
  return on_type(type, [&](auto t) { return step<decltype(t)>(env, self, handle, now_ms, out); });
}

JNIEXPORT void JNICALL Java_dev_stepback_Transfer_nativeControl(JNIEnv* env, jobject self,
                                                                jint type, jlong handle,
                                                                jint action, jlong now_ms) {
  on_type(type, [&](auto t) { control<decltype(t)>(env, self, handle, action, now_ms); });
}

JNIEXPORT jboolean JNICALL Java_dev_stepback_Transfer_nativePaused(JNIEnv*, jobject, jint type,
                                                                   jlong handle) {
  const bool paused = on_type(type, [&](auto t) {
    using T = decltype(t);
    return T::paused(&from_handle<Native<T>>(handle)->object);
  });
  return paused ? JNI_TRUE : JNI_FALSE;
}

// From the last step's answer, which the native side keeps.
JNIEXPORT void JNICALL Java_dev_stepback_Transfer_nativeRunHint(JNIEnv* env, jobject, jint type,
                                                                jlong handle, jlongArray out) {
  on_type(type, [&](auto t) {
    using T = decltype(t);
    auto* n = from_handle<Native<T>>(handle);
    stepback_run_hint hint{};
    T::run_hint(&n->object, &n->last, &hint);
    stepback::jni::put_run_hint(env, out, hint);
  });
}

JNIEXPORT jstring JNICALL Java_dev_stepback_Transfer_nativeResult(JNIEnv* env, jobject, jint type,
                                                                  jlong handle, jlongArray out) {
  return on_type(type, [&](auto t) {
    using T = decltype(t);
    stepback_result result{};
    T::result(&from_handle<Native<T>>(handle)->object, &result);
    return stepback::jni::put_result(env, out, result);
  });
}

JNIEXPORT void JNICALL Java_dev_stepback_Transfer_nativeDestroy(JNIEnv*, jobject, jint type,
                                                                jlong handle) {
  on_type(type, [&](auto t) {
    using T = decltype(t);
    auto* n = from_handle<Native<T>>(handle);
    if (n == nullptr) return;
    T::destroy(&n->object);
    stepback::jni::release(n);
  });
}

}  // extern "C"
