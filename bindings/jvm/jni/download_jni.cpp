// dev.stepback.Download's own natives: starting into a file and the byte counts. What every
// transfer has (create, step, pause, ..., destroy) is transfer_jni.cpp's, over the same
// native object: a stepback_download (192 KiB with its buffers) with its options' storage.
#include "glue.hpp"

namespace {

using Native = stepback::jni::Transfer<stepback_download>;
using stepback::jni::from_handle;

}  // namespace

extern "C" {

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
    return;
  }
  n->last = stepback::jni::due_now();
}

JNIEXPORT jlong JNICALL Java_dev_stepback_Download_nativeDelivered(JNIEnv*, jobject, jlong handle) {
  return stepback::jni::to_jlong(stepback_download_delivered(&from_handle<Native>(handle)->object));
}

JNIEXPORT jlong JNICALL Java_dev_stepback_Download_nativeResumedFrom(JNIEnv*, jobject,
                                                                     jlong handle) {
  return stepback::jni::to_jlong(
      stepback_download_resumed_from(&from_handle<Native>(handle)->object));
}

}  // extern "C"
