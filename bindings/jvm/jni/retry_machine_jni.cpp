// dev.stepback.RetryMachine: a stepback_retry (the C API's core part) for an app that makes
// its attempts itself (OkHttp, HttpURLConnection) and wants stepback's schedule. Its 256
// bytes are allocated when the Kotlin object is made and freed by close().
#include "glue.hpp"

namespace {

using stepback::jni::from_handle;

}  // namespace

extern "C" {

// The policy is the Kotlin Policy's fields (Policy.encode), checked by get_policy; the seed
// is the app's entropy (SecureRandom), so that a fleet does not retry in step.
JNIEXPORT jlong JNICALL Java_dev_stepback_RetryMachine_nativeCreate(JNIEnv* env, jobject,
                                                                    jlong seed, jboolean idempotent,
                                                                    jlongArray encoded) {
  stepback_policy policy;
  if (!stepback::jni::get_policy(env, encoded, &policy)) return 0;
  auto* retry = static_cast<stepback_retry*>(stepback::jni::allocate(sizeof(stepback_retry)));
  if (retry == nullptr) {
    stepback::jni::throw_status(env, STEPBACK_E_STORAGE, "no memory for the retry machine");
    return 0;
  }
  const stepback_status status =
      stepback_retry_init(retry, sizeof *retry, &policy, static_cast<std::uint64_t>(seed),
                          idempotent == JNI_TRUE, nullptr);
  if (status != STEPBACK_OK) {
    stepback::jni::release(retry);
    stepback::jni::throw_status(env, status, stepback_strerror(status));
    return 0;
  }
  return stepback::jni::to_handle(retry);
}

JNIEXPORT jint JNICALL Java_dev_stepback_RetryMachine_nativeStep(JNIEnv* env, jobject, jlong handle,
                                                                 jlong now_ms, jlongArray out) {
  stepback_next next{};
  stepback_retry_step(from_handle<stepback_retry>(handle), now_ms, &next);
  return stepback::jni::put_next(env, out, next);
}

// http_status 0 with a failure kind when no response came; server_delay_ms < 0: none given.
JNIEXPORT jint JNICALL Java_dev_stepback_RetryMachine_nativeReport(JNIEnv* env, jobject,
                                                                   jlong handle, jlong now_ms,
                                                                   jint http_status, jint failure,
                                                                   jlong server_delay_ms,
                                                                   jlongArray out) {
  stepback_next next{};
  const auto status =
      static_cast<std::uint16_t>(http_status < 0 || http_status > 999 ? 0 : http_status);
  stepback_retry_report(from_handle<stepback_retry>(handle), now_ms, status,
                        static_cast<stepback_failure>(failure),
                        server_delay_ms < 0 ? STEPBACK_NEVER : server_delay_ms, &next);
  return stepback::jni::put_next(env, out, next);
}

JNIEXPORT void JNICALL Java_dev_stepback_RetryMachine_nativeNetworkAvailable(JNIEnv*, jobject,
                                                                             jlong handle,
                                                                             jlong now_ms) {
  stepback_retry_network_available(from_handle<stepback_retry>(handle), now_ms);
}

JNIEXPORT void JNICALL Java_dev_stepback_RetryMachine_nativeCancel(JNIEnv*, jobject, jlong handle,
                                                                   jlong now_ms) {
  stepback_retry_cancel(from_handle<stepback_retry>(handle), now_ms);
}

JNIEXPORT jint JNICALL Java_dev_stepback_RetryMachine_nativeRetries(JNIEnv*, jobject,
                                                                    jlong handle) {
  return static_cast<jint>(stepback_retry_retries(from_handle<stepback_retry>(handle)));
}

JNIEXPORT void JNICALL Java_dev_stepback_RetryMachine_nativeDestroy(JNIEnv*, jobject,
                                                                    jlong handle) {
  stepback::jni::release(from_handle<stepback_retry>(handle));
}

}  // extern "C"
