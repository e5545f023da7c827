// The Kotlin side of examples/android/retry_jni.cpp, shown in docs/android.md. The test
// jvm.transfers compiles it against compile-only stand-ins of the android.* classes it uses
// (bindings/jvm/test/android_stubs/); it runs only in an app.
package com.example.stepback

import android.os.Handler
import android.os.Looper
import android.os.SystemClock

object NativeRetry {
    init { System.loadLibrary("myapp_native") }
    const val SEND_NOW = -1L
    @JvmStatic external fun nativeCreate(idempotent: Boolean): Int
    @JvmStatic external fun nativeStep(handle: Int, nowMs: Long): Long
    @JvmStatic external fun nativeReport(handle: Int, nowMs: Long, httpStatus: Int, retryAfterMs: Long): Long
    @JvmStatic external fun nativeNetworkAvailable(handle: Int, nowMs: Long)
    @JvmStatic external fun nativeRelease(handle: Int)
}

/** Runs `attempt` until stepback says done; `attempt` calls back with (status, retryAfterMs). */
class RetriedCall(
    private val attempt: (done: (status: Int, retryAfterMs: Long) -> Unit) -> Unit,
    private val finished: (outcome: Int) -> Unit,
    idempotent: Boolean = true
) {
    private val handler = Handler(Looper.getMainLooper())
    private val handle = NativeRetry.nativeCreate(idempotent)
    private val stepRunnable = Runnable { follow(NativeRetry.nativeStep(handle, SystemClock.elapsedRealtime())) }

    fun start() = handler.post(stepRunnable)

    private fun follow(next: Long) {
        when {
            next == NativeRetry.SEND_NOW -> attempt { status, retryAfterMs ->
                handler.post {   // back on the main thread, as the bridge requires
                    follow(NativeRetry.nativeReport(handle, SystemClock.elapsedRealtime(), status, retryAfterMs))
                }
            }
            next >= 0 -> handler.postDelayed(stepRunnable, maxOf(0L, next - SystemClock.elapsedRealtime()))
            else -> { NativeRetry.nativeRelease(handle); finished((-2L - next).toInt()) }
        }
    }
}
