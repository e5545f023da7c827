// The Kotlin side of examples/android/network_jni.cpp, shown in docs/android.md. The test
// jvm.transfers compiles it against compile-only stand-ins of the android.* classes it uses
// (bindings/jvm/test/android_stubs/); it runs only in an app.
package com.example.stepback

import android.net.ConnectivityManager
import android.net.Network
import android.net.NetworkCapabilities
import android.os.Handler

object NativeNetwork {
    @JvmStatic external fun nativeNetworkChanged(connected: Boolean, metered: Boolean, roaming: Boolean)
    @JvmStatic external fun nativeBindTo(networkHandle: Long)
    @JvmStatic external fun nativeRunIn(nowMs: Long): Long
}

/** Tells the request a LooperRequest drives about the default network; `handler` is the
 *  Handler of that Looper's thread, where the JNI functions must be called. */
fun followDefaultNetwork(connectivityManager: ConnectivityManager, handler: Handler) {
    val callback = object : ConnectivityManager.NetworkCallback() {
        override fun onCapabilitiesChanged(network: Network, caps: NetworkCapabilities) =
            NativeNetwork.nativeNetworkChanged(
                true,
                !caps.hasCapability(NetworkCapabilities.NET_CAPABILITY_NOT_METERED),
                !caps.hasCapability(NetworkCapabilities.NET_CAPABILITY_NOT_ROAMING))
        override fun onLost(network: Network) = NativeNetwork.nativeNetworkChanged(false, false, false)
    }
    connectivityManager.registerDefaultNetworkCallback(callback, handler)
}
