package dev.stepback

/** The retry loop of one operation the app performs itself (OkHttp, HttpURLConnection):
 *  [step] says SEND or WAIT_UNTIL, [report] takes what the attempt gave, under [policy]
 *  (refused with a [StepbackException] when out of its limits); [seed] is the app's entropy
 *  (a fleet with equal seeds retries in step). Its 256 bytes are native, freed by [close]. */
class RetryMachine(seed: Long, idempotent: Boolean, policy: Policy = Policy.default()) : java.io.Closeable {
    private var handle = 0L
    private val raw = LongArray(5)

    /** The last answer (the same object every call). */
    val next = Next()

    init {
        Stepback.load()
        handle = nativeCreate(seed, idempotent, policy.encode())
    }

    fun step(nowMs: Long): Next {
        nativeStep(open(), nowMs, raw)
        return next.load(raw)
    }

    /** The attempt's HTTP status, or 0 with a [failure] (`stepback_failure`: 6 a reset, 7 a
     *  timeout, ...) when no response came; [serverDelayMs] is Retry-After in ms, or -1. */
    fun report(nowMs: Long, httpStatus: Int, failure: Int = 0, serverDelayMs: Long = -1): Next {
        require(failure in 0..13) { "failure $failure is not a stepback_failure" }
        nativeReport(open(), nowMs, httpStatus, failure, serverDelayMs, raw)
        return next.load(raw)
    }

    fun networkAvailable(nowMs: Long) = nativeNetworkAvailable(open(), nowMs)
    fun cancel(nowMs: Long) = nativeCancel(open(), nowMs)
    val retries get() = nativeRetries(open())

    override fun close() {
        if (handle != 0L) nativeDestroy(handle)
        handle = 0L
    }

    private fun open(): Long {
        check(handle != 0L) { "the retry machine is closed" }
        return handle
    }

    private external fun nativeCreate(seed: Long, idempotent: Boolean, policy: LongArray): Long
    private external fun nativeStep(handle: Long, nowMs: Long, out: LongArray): Int
    private external fun nativeReport(handle: Long, nowMs: Long, httpStatus: Int, failure: Int,
                                      serverDelayMs: Long, out: LongArray): Int
    private external fun nativeNetworkAvailable(handle: Long, nowMs: Long)
    private external fun nativeCancel(handle: Long, nowMs: Long)
    private external fun nativeRetries(handle: Long): Int
    private external fun nativeDestroy(handle: Long)
}
