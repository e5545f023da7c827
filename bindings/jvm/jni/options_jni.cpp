// dev.stepback.Policy and the transfers' Options as they cross JNI: a policy is a long[] of
// its fields (checked here, then by stepback_policy_valid), and a transfer's strings are
// copied into its native object's own text area, since the C object keeps their pointers.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "glue.hpp"

namespace stepback::jni {
namespace {

bool invalid(JNIEnv* env, const char* why) {
  return throw_status(env, STEPBACK_E_INVALID_ARGUMENT, why);
}

// A field of the encoded policy as T, when it fits T's range.
template <class T>
bool narrow(jlong value, T* out) {
  if (value < 0 || static_cast<std::uint64_t>(value) > std::numeric_limits<T>::max()) {
    return false;
  }
  *out = static_cast<T>(value);
  return true;
}

// Appends the NUL-terminated `text` to the area at *used; null when it does not fit.
const char* keep(const char* text, char* area, std::size_t* used) {
  const std::size_t length = std::strlen(text);
  if (length >= kOptionsTextMax - *used) return nullptr;
  char* copy = area + *used;
  std::memcpy(copy, text, length + 1);
  *used += length + 1;
  return copy;
}

// The headers' encoded names and values (name NUL value NUL ...) kept in the text area.
bool keep_headers(JNIEnv* env, const OptionArgs& args, stepback_header* headers, char* text,
                  std::size_t* used) {
  if (args.header_count < 0 || args.header_count > STEPBACK_MAX_HEADERS) {
    return invalid(env, "more headers than STEPBACK_MAX_HEADERS (32)");
  }
  if (args.header_count == 0) return true;
  if (args.headers == nullptr) return invalid(env, "headers counted but not given");
  const jsize size = env->GetArrayLength(args.headers);
  Utf8 encoded(env, args.headers);
  if (encoded.get() == nullptr) return false;
  const char* at = encoded.get();
  const char* end = at + size;
  for (jint i = 0; i < args.header_count; ++i) {
    const char* fields[2] = {nullptr, nullptr};
    for (const char*& field : fields) {
      if (at >= end) return invalid(env, "the headers' encoding is short");
      field = keep(at, text, used);
      if (field == nullptr) {
        return invalid(env, "the user agent and headers are longer than 4 KiB in all");
      }
      at += std::strlen(at) + 1;
    }
    headers[i] = stepback_header{fields[0], fields[1]};
  }
  return true;
}

}  // namespace

bool get_policy(JNIEnv* env, jlongArray encoded, stepback_policy* policy) {
  if (env->GetArrayLength(encoded) != kPolicyLongs) return invalid(env, "a policy of odd length");
  jlong v[kPolicyLongs];
  env->GetLongArrayRegion(encoded, 0, kPolicyLongs, v);
  std::uint32_t jitter = 0;
  bool fits = narrow(v[0], &policy->initial_delay_ms) && narrow(v[1], &policy->multiplier) &&
              narrow(v[2], &jitter) && narrow(v[3], &policy->jitter_range_ms) &&
              narrow(v[4], &policy->max_backoff_ms) && narrow(v[5], &policy->max_retries) &&
              narrow(v[6], &policy->total_deadline_ms) && (v[7] == 0 || v[7] == 1) &&
              narrow(v[8], &policy->max_server_delay_ms) && (v[9] == 0 || v[9] == 1);
  for (int i = 0; fits && i < STEPBACK_POLICY_EXTRA_STATUSES; ++i) {
    fits = narrow(v[10 + i], &policy->extra_retryable[i]);
  }
  policy->jitter = static_cast<stepback_jitter>(jitter);
  policy->honor_server_delay = v[7] == 1;
  policy->retry_all = v[9] == 1;
  if (!fits || jitter > static_cast<std::uint32_t>(STEPBACK_JITTER_NONE) ||
      !stepback_policy_valid(policy)) {
    return invalid(env,
                   "the retry policy is out of its limits (1 <= initial delay <= max backoff <= "
                   "86400000 ms, 2 <= multiplier <= 16, jitter range and max server delay <= "
                   "86400000 ms, deadline 0 or >= initial delay, extra statuses in [400, 655])");
  }
  return true;
}

void put_policy(JNIEnv* env, jlongArray out, const stepback_policy& policy) {
  jlong v[kPolicyLongs] = {policy.initial_delay_ms,
                           policy.multiplier,
                           static_cast<jlong>(policy.jitter),
                           policy.jitter_range_ms,
                           policy.max_backoff_ms,
                           policy.max_retries,
                           static_cast<jlong>(policy.total_deadline_ms),
                           policy.honor_server_delay ? 1 : 0,
                           policy.max_server_delay_ms,
                           policy.retry_all ? 1 : 0};
  for (int i = 0; i < STEPBACK_POLICY_EXTRA_STATUSES; ++i) v[10 + i] = policy.extra_retryable[i];
  env->SetLongArrayRegion(out, 0, kPolicyLongs, v);
}

bool make_options(JNIEnv* env, const OptionArgs& args, Dispatch* dispatch, stepback_policy* policy,
                  stepback_header* headers, char* text, stepback_options* options) {
  stepback_options_default(options);
  options->on_event = on_event;
  options->event_context = dispatch;
  if (args.policy != nullptr) {
    if (!get_policy(env, args.policy, policy)) return false;
    options->policy = policy;
  }
  if (args.max_redirects > 255) return invalid(env, "more than 255 redirects");
  if (args.max_redirects >= 0)
    options->max_redirects = static_cast<std::uint32_t>(args.max_redirects);
  if (args.max_time_ms < 0 || args.max_rate < 0) {
    return invalid(env, "a negative max time or max rate");
  }
  options->max_time_ms = args.max_time_ms;
  options->max_rate = static_cast<std::uint64_t>(args.max_rate);
  std::size_t used = 0;
  if (args.user_agent != nullptr) {
    Utf8 agent(env, args.user_agent);
    if (agent.get() == nullptr) return false;
    options->user_agent = keep(agent.get(), text, &used);
    if (options->user_agent == nullptr) return invalid(env, "the user agent is longer than 4 KiB");
  }
  if (!keep_headers(env, args, headers, text, &used)) return false;
  options->headers = args.header_count > 0 ? headers : nullptr;
  options->header_count = static_cast<std::size_t>(args.header_count);
  return true;
}

}  // namespace stepback::jni

extern "C" {

JNIEXPORT void JNICALL Java_dev_stepback_Policy_nativeDefault(JNIEnv* env, jclass, jlongArray out) {
  stepback_policy policy;
  stepback_policy_default(&policy);
  stepback::jni::put_policy(env, out, policy);
}

JNIEXPORT void JNICALL Java_dev_stepback_Policy_nativeFromProfile(JNIEnv* env, jclass,
                                                                  jlongArray out) {
  stepback_policy policy;
  stepback_policy_from_profile(&policy);
  stepback::jni::put_policy(env, out, policy);
}

}  // extern "C"
