// dev.stepback.Download: a stepback_download (192 KiB with its buffers) in storage allocated
// when the Kotlin object is made and freed by close(). Calls that can emit events (step,
// pause, resume, cancel, network_available) pass the Kotlin object to the callback.
#include "glue.hpp"

namespace {

using Native = stepback::jni::Transfer<stepback_download>;
using stepback::jni::Calling;
using stepback::jni::from_handle;

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_dev_stepback_Download_nativeCreate(JNIEnv* env, jobject, jlong stack,
                                                                jbyteArray agent, jlong max_time_ms,
                                                                jlong max_rate) {
  auto* n = static_cast<Native*>(stepback::jni::allocate(sizeof(Native)));
  if (n == nullptr) {
    stepback::jni::throw_status(env, STEPBACK_E_STORAGE, "no memory for the download");
    return 0;
  }
  n->dispatch = stepback::jni::Dispatch{};
  if (!stepback::jni::make_options(env, &n->options, &n->dispatch, n->user_agent, agent,
                                   max_time_ms, max_rate)) {
    stepback::jni::release(n);
    return 0;
  }
  const stepback_status status = stepback_download_init(
      &n->object, sizeof n->object, from_handle<stepback_stack>(stack), &n->options);
  if (status != STEPBACK_OK) {
    stepback::jni::throw_status(env, status, "the download's options were refused");
    stepback::jni::release(n);
    return 0;
  }
  return stepback::jni::to_handle(n);
}

JNIEXPORT void JNICALL Java_dev_stepback_Download_nativeStartFile(JNIEnv* env, jobject,
                                                                  jlong handle, jbyteArray url,
                                                                  jbyteArray path,
                                                                  jbyteArray state_path) {
  auto* n = from_handle<Native>(handle);
  stepback::jni::Utf8 u(env, url), p(env, path), s(env, state_path);
  if (u.get() == nullptr || p.get() == nullptr || (state_path != nullptr && s.get() == nullptr)) {
    return;
  }
  const stepback_status status =
      stepback_download_start_file(&n->object, u.get(), p.get(), s.get());
  if (status != STEPBACK_OK) {
    stepback::jni::throw_status(env, status, stepback_download_message(&n->object));
  }
}

JNIEXPORT jint JNICALL Java_dev_stepback_Download_nativeStep(JNIEnv* env, jobject self,
                                                             jlong handle, jlong now_ms,
                                                             jlongArray out) {
  auto* n = from_handle<Native>(handle);
  stepback_next next{};
  {
    Calling calling(n->dispatch, env, self);
    stepback_download_step(&n->object, now_ms, &next);
  }
  return stepback::jni::put_next(env, out, next);
}

JNIEXPORT void JNICALL Java_dev_stepback_Download_nativePause(JNIEnv* env, jobject self,
                                                              jlong handle, jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  Calling calling(n->dispatch, env, self);
  stepback_download_pause(&n->object, now_ms);
}

JNIEXPORT void JNICALL Java_dev_stepback_Download_nativeResume(JNIEnv* env, jobject self,
                                                               jlong handle, jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  stepback_status status;
  {
    Calling calling(n->dispatch, env, self);
    status = stepback_download_resume(&n->object, now_ms);
  }
  if (status != STEPBACK_OK) {
    stepback::jni::throw_status(env, status, stepback_download_message(&n->object));
  }
}

JNIEXPORT void JNICALL Java_dev_stepback_Download_nativeCancel(JNIEnv* env, jobject self,
                                                               jlong handle, jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  Calling calling(n->dispatch, env, self);
  stepback_download_cancel(&n->object, now_ms);
}

JNIEXPORT void JNICALL Java_dev_stepback_Download_nativeNetworkAvailable(JNIEnv* env, jobject self,
                                                                         jlong handle,
                                                                         jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  Calling calling(n->dispatch, env, self);
  stepback_download_network_available(&n->object, now_ms);
}

JNIEXPORT jboolean JNICALL Java_dev_stepback_Download_nativePaused(JNIEnv*, jobject, jlong handle) {
  return stepback_download_paused(&from_handle<Native>(handle)->object) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jlong JNICALL Java_dev_stepback_Download_nativeDelivered(JNIEnv*, jobject, jlong handle) {
  return stepback::jni::to_jlong(stepback_download_delivered(&from_handle<Native>(handle)->object));
}

JNIEXPORT jlong JNICALL Java_dev_stepback_Download_nativeResumedFrom(JNIEnv*, jobject,
                                                                     jlong handle) {
  return stepback::jni::to_jlong(
      stepback_download_resumed_from(&from_handle<Native>(handle)->object));
}

JNIEXPORT jstring JNICALL Java_dev_stepback_Download_nativeResult(JNIEnv* env, jobject,
                                                                  jlong handle, jlongArray out) {
  stepback_result result{};
  stepback_download_result(&from_handle<Native>(handle)->object, &result);
  return stepback::jni::put_result(env, out, result);
}

JNIEXPORT void JNICALL Java_dev_stepback_Download_nativeDestroy(JNIEnv*, jobject, jlong handle) {
  auto* n = from_handle<Native>(handle);
  if (n == nullptr) return;
  stepback_download_destroy(&n->object);
  stepback::jni::release(n);
}

}  // extern "C"
