// dev.stepback.Upload: a stepback_upload (144 KiB with its buffers) in storage allocated
// when the Kotlin object is made and freed by close(). Calls that can emit events (step,
// pause, resume, cancel, network_available) pass the Kotlin object to the callback.
#include "glue.hpp"

namespace {

using Native = stepback::jni::Transfer<stepback_upload>;
using stepback::jni::Calling;
using stepback::jni::from_handle;

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_dev_stepback_Upload_nativeCreate(JNIEnv* env, jobject, jlong stack,
                                                              jbyteArray agent, jlong max_time_ms,
                                                              jlong max_rate) {
  auto* n = static_cast<Native*>(stepback::jni::allocate(sizeof(Native)));
  if (n == nullptr) {
    stepback::jni::throw_status(env, STEPBACK_E_STORAGE, "no memory for the upload");
    return 0;
  }
  n->dispatch = stepback::jni::Dispatch{};
  if (!stepback::jni::make_options(env, &n->options, &n->dispatch, n->user_agent, agent,
                                   max_time_ms, max_rate)) {
    stepback::jni::release(n);
    return 0;
  }
  const stepback_status status = stepback_upload_init(
      &n->object, sizeof n->object, from_handle<stepback_stack>(stack), &n->options);
  if (status != STEPBACK_OK) {
    stepback::jni::throw_status(env, status, "the upload's options were refused");
    stepback::jni::release(n);
    return 0;
  }
  return stepback::jni::to_handle(n);
}

JNIEXPORT void JNICALL Java_dev_stepback_Upload_nativeStartFile(JNIEnv* env, jobject, jlong handle,
                                                                jbyteArray url, jbyteArray path,
                                                                jbyteArray state_path,
                                                                jlong chunk_size,
                                                                jbyteArray content_type) {
  auto* n = from_handle<Native>(handle);
  stepback::jni::Utf8 u(env, url), p(env, path), s(env, state_path), t(env, content_type);
  if (u.get() == nullptr || p.get() == nullptr || (state_path != nullptr && s.get() == nullptr) ||
      (content_type != nullptr && t.get() == nullptr)) {
    return;
  }
  if (chunk_size < 0) {
    stepback::jni::throw_status(env, STEPBACK_E_INVALID_ARGUMENT, "a negative chunk size");
    return;
  }
  const stepback_status status = stepback_upload_start_file(
      &n->object, u.get(), p.get(), s.get(), static_cast<std::uint64_t>(chunk_size), t.get());
  if (status != STEPBACK_OK) {
    stepback::jni::throw_status(env, status, stepback_upload_message(&n->object));
  }
}

JNIEXPORT jint JNICALL Java_dev_stepback_Upload_nativeStep(JNIEnv* env, jobject self, jlong handle,
                                                           jlong now_ms, jlongArray out) {
  auto* n = from_handle<Native>(handle);
  stepback_next next{};
  {
    Calling calling(n->dispatch, env, self);
    stepback_upload_step(&n->object, now_ms, &next);
  }
  return stepback::jni::put_next(env, out, next);
}

JNIEXPORT void JNICALL Java_dev_stepback_Upload_nativePause(JNIEnv* env, jobject self, jlong handle,
                                                            jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  Calling calling(n->dispatch, env, self);
  stepback_upload_pause(&n->object, now_ms);
}

JNIEXPORT void JNICALL Java_dev_stepback_Upload_nativeResume(JNIEnv* env, jobject self,
                                                             jlong handle, jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  Calling calling(n->dispatch, env, self);
  stepback_upload_resume(&n->object, now_ms);
}

JNIEXPORT void JNICALL Java_dev_stepback_Upload_nativeCancel(JNIEnv* env, jobject self,
                                                             jlong handle, jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  Calling calling(n->dispatch, env, self);
  stepback_upload_cancel(&n->object, now_ms);
}

JNIEXPORT void JNICALL Java_dev_stepback_Upload_nativeNetworkAvailable(JNIEnv* env, jobject self,
                                                                       jlong handle, jlong now_ms) {
  auto* n = from_handle<Native>(handle);
  Calling calling(n->dispatch, env, self);
  stepback_upload_network_available(&n->object, now_ms);
}

JNIEXPORT jboolean JNICALL Java_dev_stepback_Upload_nativePaused(JNIEnv*, jobject, jlong handle) {
  return stepback_upload_paused(&from_handle<Native>(handle)->object) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jlong JNICALL Java_dev_stepback_Upload_nativeCommitted(JNIEnv*, jobject, jlong handle) {
  return stepback::jni::to_jlong(stepback_upload_committed(&from_handle<Native>(handle)->object));
}

// The session URI, or null while there is none. A session URI is a URL: 2 KiB holds the ones
// Cloud Storage gives.
JNIEXPORT jstring JNICALL Java_dev_stepback_Upload_nativeSession(JNIEnv* env, jobject,
                                                                 jlong handle) {
  char uri[2048];
  if (stepback_upload_session(&from_handle<Native>(handle)->object, uri, sizeof uri) < 0) {
    return nullptr;
  }
  return env->NewStringUTF(uri);
}

JNIEXPORT jstring JNICALL Java_dev_stepback_Upload_nativeResult(JNIEnv* env, jobject, jlong handle,
                                                                jlongArray out) {
  stepback_result result{};
  stepback_upload_result(&from_handle<Native>(handle)->object, &result);
  return stepback::jni::put_result(env, out, result);
}

JNIEXPORT void JNICALL Java_dev_stepback_Upload_nativeDestroy(JNIEnv*, jobject, jlong handle) {
  auto* n = from_handle<Native>(handle);
  if (n == nullptr) return;
  stepback_upload_destroy(&n->object);
  stepback::jni::release(n);
}

}  // extern "C"
