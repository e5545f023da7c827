// The JNI glue's shared part: the load hook (method IDs cached once), the event callback,
// the conversions, dev.stepback.Stepback's functions and dev.stepback.Stack.
#include "glue.hpp"

#include <cstdlib>

namespace stepback::jni {
namespace {

// Cached at load: calling back into Kotlin from inside a step looks nothing up.
jmethodID g_on_event = nullptr;
jclass g_exception_class = nullptr;  // A global reference, kept for the process's life.
jmethodID g_exception_init = nullptr;

// Event words become a Java String; NewStringUTF needs modified UTF-8, and a server's reason
// phrase may hold any byte, so the words are copied as ASCII (others become '?'), cut at a
// length a log line needs.
constexpr std::size_t kMessageMax = 512;

jstring ascii_string(JNIEnv* env, const char* text) {
  char ascii[kMessageMax];
  std::size_t n = 0;
  for (; text[n] != '\0' && n + 1 < sizeof ascii; ++n) {
    const auto c = static_cast<unsigned char>(text[n]);
    ascii[n] = (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  ascii[n] = '\0';
  return env->NewStringUTF(ascii);
}

}  // namespace

void on_event(void* context, const stepback_event* event) {
  auto* dispatch = static_cast<Dispatch*>(context);
  JNIEnv* env = dispatch->env;
  // A listener that threw earlier in this call: no further Java calls until it returns.
  if (env == nullptr || dispatch->self == nullptr || env->ExceptionCheck()) return;
  jstring message = nullptr;
  if (event->message[0] != '\0') {
    message = ascii_string(env, event->message);
    if (message == nullptr) return;  // OutOfMemoryError pending; step() throws it.
  }
  env->CallVoidMethod(dispatch->self, g_on_event, static_cast<jint>(event->kind),
                      static_cast<jint>(event->attempt), static_cast<jint>(event->http_status),
                      static_cast<jint>(event->failure), static_cast<jint>(event->outcome),
                      to_jlong(event->bytes), to_jlong(event->total), to_jlong(event->rate),
                      static_cast<jlong>(event->wait_ms), static_cast<jlong>(event->at_ms),
                      message);
  // A throw from the listener stays pending, and step() (or pause, ...) rethrows it in
  // Kotlin; the rest of this call's events are dropped. Checked right after the call, as
  // -Xcheck:jni requires.
  const bool listener_threw = env->ExceptionCheck() == JNI_TRUE;
  if (message != nullptr) env->DeleteLocalRef(message);
  if (listener_threw) dispatch->self = nullptr;
}

jint put_next(JNIEnv* env, jlongArray out, const stepback_next& next) {
  const jlong values[5] = {static_cast<jlong>(next.kind), static_cast<jlong>(next.fd),
                           (next.want_read ? 1 : 0) | (next.want_write ? 2 : 0),
                           static_cast<jlong>(next.at_ms), static_cast<jlong>(next.outcome)};
  env->SetLongArrayRegion(out, 0, 5, values);
  return static_cast<jint>(next.kind);
}

stepback_next get_next(jint kind, jint fd, jint flags, jlong at_ms) {
  stepback_next next{};
  next.kind = static_cast<stepback_next_kind>(kind);
  next.fd = fd;
  next.want_read = (flags & 1) != 0;
  next.want_write = (flags & 2) != 0;
  next.at_ms = at_ms;
  next.outcome = STEPBACK_OUTCOME_SUCCESS;
  return next;
}

jstring put_result(JNIEnv* env, jlongArray out, const stepback_result& result) {
  const jlong values[4] = {static_cast<jlong>(result.outcome),
                           static_cast<jlong>(result.http_status), static_cast<jlong>(result.error),
                           static_cast<jlong>(result.attempts)};
  env->SetLongArrayRegion(out, 0, 4, values);
  return ascii_string(env, result.message);
}

void put_run_hint(JNIEnv* env, jlongArray out, const stepback_run_hint& hint) {
  const jlong values[5] = {static_cast<jlong>(hint.state), static_cast<jlong>(hint.run_at_ms),
                           hint.unmetered ? 1 : 0, hint.not_roaming ? 1 : 0,
                           to_jlong(hint.bytes_left)};
  env->SetLongArrayRegion(out, 0, 5, values);
}

jlong to_jlong(std::uint64_t value) {
  if (value == STEPBACK_UNKNOWN) return -1;
  return value > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<jlong>(value);
}

bool throw_status(JNIEnv* env, stepback_status status, const char* message) {
  if (env->ExceptionCheck()) return false;
  jstring text = ascii_string(env, message);
  if (text == nullptr) return false;
  auto* error = static_cast<jthrowable>(
      env->NewObject(g_exception_class, g_exception_init, static_cast<jint>(status), text));
  if (error != nullptr) env->Throw(error);
  return false;
}

Utf8::Utf8(JNIEnv* env, jbyteArray bytes) : env_(env), bytes_(bytes) {
  if (bytes == nullptr) return;
  const jsize length = env->GetArrayLength(bytes);
  elements_ = env->GetByteArrayElements(bytes, nullptr);
  if (elements_ == nullptr) return;  // OutOfMemoryError pending.
  if (length == 0 || elements_[length - 1] != 0) {
    throw_status(env, STEPBACK_E_INVALID_ARGUMENT, "a string is not NUL-terminated");
    return;
  }
  chars_ = reinterpret_cast<const char*>(elements_);
}

Utf8::~Utf8() {
  if (elements_ != nullptr) env_->ReleaseByteArrayElements(bytes_, elements_, JNI_ABORT);
}

void* allocate(std::size_t size) {
  // calloc's memory is aligned for any standard type, hence for STEPBACK_ALIGN (8).
  return std::calloc(1, size);
}

void release(void* storage) { std::free(storage); }

}  // namespace stepback::jni

using stepback::jni::from_handle;
using stepback::jni::to_handle;

extern "C" {

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass transfer = env->FindClass("dev/stepback/Transfer");
  if (transfer == nullptr) return JNI_ERR;
  stepback::jni::g_on_event =
      env->GetMethodID(transfer, "onNativeEvent", "(IIIIIJJJJJLjava/lang/String;)V");
  jclass exception = env->FindClass("dev/stepback/StepbackException");
  if (stepback::jni::g_on_event == nullptr || exception == nullptr) return JNI_ERR;
  stepback::jni::g_exception_init = env->GetMethodID(exception, "<init>", "(ILjava/lang/String;)V");
  stepback::jni::g_exception_class = static_cast<jclass>(env->NewGlobalRef(exception));
  if (stepback::jni::g_exception_init == nullptr || stepback::jni::g_exception_class == nullptr) {
    return JNI_ERR;
  }
  return JNI_VERSION_1_6;
}

JNIEXPORT jlong JNICALL Java_dev_stepback_Stepback_monotonicMs(JNIEnv*, jclass) {
  return stepback_monotonic_ms();
}

JNIEXPORT jboolean JNICALL Java_dev_stepback_Stepback_nativePollWait(JNIEnv*, jclass, jint kind,
                                                                     jint fd, jint flags,
                                                                     jlong at_ms, jlong now_ms) {
  const stepback_next next = stepback::jni::get_next(kind, fd, flags, at_ms);
  return stepback_poll_wait(&next, now_ms) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jstring JNICALL Java_dev_stepback_Stepback_profileName(JNIEnv* env, jclass) {
  return env->NewStringUTF(stepback_profile_name());
}

JNIEXPORT jstring JNICALL Java_dev_stepback_Stepback_outcomeName(JNIEnv* env, jclass,
                                                                 jint outcome) {
  return env->NewStringUTF(stepback_outcome_name(static_cast<stepback_outcome>(outcome)));
}

JNIEXPORT jstring JNICALL Java_dev_stepback_Stepback_statusName(JNIEnv* env, jclass, jint status) {
  return env->NewStringUTF(stepback_strerror(static_cast<stepback_status>(status)));
}

// Stack: the storage (128 KiB, with the TLS arena) is allocated here, once per Stack.
JNIEXPORT jlong JNICALL Java_dev_stepback_Stack_nativeCreate(JNIEnv* env, jobject,
                                                             jbyteArray ca_utf8) {
  stepback::jni::Utf8 ca(env, ca_utf8);
  if (ca_utf8 != nullptr && ca.get() == nullptr) return 0;
  auto* stack = static_cast<stepback_stack*>(stepback::jni::allocate(sizeof(stepback_stack)));
  if (stack == nullptr) {
    stepback::jni::throw_status(env, STEPBACK_E_STORAGE, "no memory for the stack");
    return 0;
  }
  const stepback_status status = stepback_stack_init(stack, sizeof *stack, ca.get());
  if (status != STEPBACK_OK) {
    stepback::jni::throw_status(env, status, stepback_stack_message(stack));
    stepback_stack_destroy(stack);
    stepback::jni::release(stack);
    return 0;
  }
  return to_handle(stack);
}

JNIEXPORT void JNICALL Java_dev_stepback_Stack_nativeDestroy(JNIEnv*, jobject, jlong handle) {
  auto* stack = from_handle<stepback_stack>(handle);
  if (stack == nullptr) return;
  stepback_stack_destroy(stack);
  stepback::jni::release(stack);
}

}  // extern "C"
