// The native side of an app's ConnectivityManager.NetworkCallback, for a request driven by a
// LooperRequest: Kotlin forwards the default network's changes, and the Network the app wants
// the transfer on (a cellular one it requested while Wi-Fi has no internet), through JNI.
// Every call happens on the Looper's thread (register the callback with that thread's
// Handler). See docs/android.md, "Following the network".
#ifndef STEPBACK_EXAMPLES_ANDROID_NETWORK_JNI_HPP_
#define STEPBACK_EXAMPLES_ANDROID_NETWORK_JNI_HPP_

#include "looper_request.hpp"
#include "stepback/https/tcp_tls_connector.hpp"

namespace stepback::examples {

// Sends the network callbacks to `request` (null: none) and the binding to `connector` (null:
// none); both must outlive their use, until follow_network(nullptr, nullptr).
void follow_network(LooperRequest* request, https::TcpTlsConnector* connector);

}  // namespace stepback::examples

#endif  // STEPBACK_EXAMPLES_ANDROID_NETWORK_JNI_HPP_
