// dev.stepback.Upload's own natives: starting from a file, the bytes committed and the
// session. What every transfer has (create, step, pause, ..., destroy) is transfer_jni.cpp's,
// over the same native object: a stepback_upload (144 KiB with its buffers) with its options'
// storage.
#include "glue.hpp"

namespace {

using Native = stepback::jni::Transfer<stepback_upload>;
using stepback::jni::from_handle;

}  // namespace

extern "C" {

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
    return;
  }
  n->last = stepback::jni::due_now();
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

}  // extern "C"
