// JNI entry points of com.example.stepback.NativeNetwork (docs/android.md has the Kotlin side).
#include "network_jni.hpp"

#include <jni.h>

#include <cstdint>

#include "stepback/https/tcp/binding.hpp"

namespace stepback::examples {
namespace {

LooperRequest* g_request = nullptr;
https::TcpTlsConnector* g_connector = nullptr;
https::NetworkBinding g_binding;  // The network later connections and lookups go over.

}  // namespace

void follow_network(LooperRequest* request, https::TcpTlsConnector* connector) {
  g_request = request;
  g_connector = connector;
  if (g_connector != nullptr) (void)g_connector->set_binding(&g_binding);
}

}  // namespace stepback::examples

extern "C" {

// The default network changed: onAvailable and onCapabilitiesChanged pass its capabilities
// (metered: !NET_CAPABILITY_NOT_METERED, roaming: !NET_CAPABILITY_NOT_ROAMING), onLost passes
// connected = false.
JNIEXPORT void JNICALL Java_com_example_stepback_NativeNetwork_nativeNetworkChanged(
    JNIEnv*, jclass, jboolean connected, jboolean metered, jboolean roaming) {
  using stepback::examples::g_request;
  if (g_request == nullptr) return;
  stepback::https::NetworkInfo network;
  network.connected = connected == JNI_TRUE;
  network.metered = metered == JNI_TRUE;
  network.roaming = roaming == JNI_TRUE;
  g_request->network_changed(network);
}

// Binds later connections and lookups to the Network whose getNetworkHandle() is `handle`
// (0: the default network again). Then call nativeNetworkChanged() with that network's
// capabilities: the request under way moves to it at once.
JNIEXPORT void JNICALL Java_com_example_stepback_NativeNetwork_nativeBindTo(JNIEnv*, jclass,
                                                                            jlong handle) {
  stepback::examples::g_binding.network = static_cast<std::uint64_t>(handle);
}

// Milliseconds until the request needs to run again (a backoff, a Retry-After), -1 while it
// runs or waits for a network, -2 when there is none or it is done: above a threshold, the
// app saves it and enqueues a WorkManager job with that initial delay instead.
JNIEXPORT jlong JNICALL Java_com_example_stepback_NativeNetwork_nativeRunIn(JNIEnv*, jclass,
                                                                            jlong now_ms) {
  using stepback::examples::g_request;
  if (g_request == nullptr) return -2;
  const stepback::https::RunHint hint = g_request->run_hint();
  using State = stepback::https::RunHint::State;
  if (hint.state == State::kDone) return -2;
  // A deferred transfer (a Download or Upload whose retries ran out, its record kept) is
  // enqueued as a wait is: it runs again at run_at.
  const bool timed = hint.state == State::kWaiting || hint.state == State::kDeferred;
  if (!timed || hint.run_at == stepback::Millis::max()) return -1;
  const auto at = static_cast<jlong>(hint.run_at.count());
  return at > now_ms ? at - now_ms : 0;
}

}  // extern "C"
