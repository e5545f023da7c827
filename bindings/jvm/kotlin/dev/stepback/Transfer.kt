package dev.stepback

/** What a [Download] and an [Upload] share: the main-loop contract (step, wait, step again),
 *  pause, resume, cancel, events and the result. One thread uses a transfer at a time; the
 *  listener runs on it, inside the step (or pause, resume, cancel) that causes the event, and
 *  must not call back into the same transfer. A listener that throws stops the events of
 *  that call, and the exception comes out of it; the transfer can be stepped again. */
abstract class Transfer internal constructor() : java.io.Closeable {
    /** Called for each event with a reused [Event] (valid during the call only). */
    var listener: ((Event) -> Unit)? = null

    /** The last step's answer (the same object every step). */
    val next = Next()

    internal var handle: Long = 0L
    internal val raw = LongArray(5)
    private val event = Event()

    /** Advances the transfer at [nowMs] (from [Stepback.monotonicMs]); bounded work, never
     *  blocks. Wait for what the answer says (its descriptor or its time), then step again. */
    abstract fun step(nowMs: Long): Next
    abstract fun pause(nowMs: Long)
    abstract fun resume(nowMs: Long)
    abstract fun cancel(nowMs: Long)
    /** Connectivity returned or the network changed: step again after it. */
    abstract fun networkAvailable(nowMs: Long)
    abstract val paused: Boolean
    /** How it ended; meaningful once a step answered DONE. */
    abstract fun result(): Result

    /** Steps and waits in poll(2) until DONE, for a worker thread (a WorkManager Worker, a
     *  test); cancels when [timeoutMs] passes first. A main loop steps instead. */
    fun runToCompletion(timeoutMs: Long): Result {
        val end = Stepback.monotonicMs() + timeoutMs
        var now = Stepback.monotonicMs()
        while (step(now).kind != Next.DONE) {
            if (now >= end) {
                cancel(now)
                step(now)
                break
            }
            Stepback.pollWait(next, now)
            now = Stepback.monotonicMs()
        }
        return result()
    }

    override fun close() {
        if (handle != 0L) destroy(handle)
        handle = 0L
    }

    internal abstract fun destroy(handle: Long)

    internal fun open(): Long {
        check(handle != 0L) { "the transfer is closed" }
        return handle
    }

    // The JNI glue calls this from inside the native call that emits the event (its method
    // ID is looked up once, when the library loads).
    @Suppress("unused")
    protected fun onNativeEvent(kind: Int, attempt: Int, httpStatus: Int, failure: Int, outcome: Int,
                                bytes: Long, total: Long, rate: Long, waitMs: Long, atMs: Long,
                                message: String?) {
        val call = listener ?: return
        event.set(kind, attempt, httpStatus, failure, outcome, bytes, total, rate, waitMs, atMs, message)
        call(event)
    }
}
