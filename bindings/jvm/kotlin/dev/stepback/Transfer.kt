package dev.stepback

/** What a transfer waits for, for an OS scheduler (WorkManager): when it next needs to run
 *  ([runAtMs], monotonic; [Next.NEVER] when there is no time) and what network ([unmetered],
 *  [notRoaming]); [bytesLeft] is -1 when not known. [state] is one of the constants below
 *  (`stepback_run_state`; a value added to the C API later comes through as its number). */
data class RunHint(val state: Int, val runAtMs: Long, val unmetered: Boolean, val notRoaming: Boolean,
                   val bytesLeft: Long) {
    companion object {
        /** Working: keep stepping. */
        const val RUNNING = 0
        /** Nothing to do until [runAtMs]. */
        const val WAITING = 1
        /** Until a usable network comes (or [runAtMs]). */
        const val WAITING_NETWORK = 2
        /** Until the app resumes it. */
        const val PAUSED = 3
        const val DONE = 4
        /** Finished for now without losing anything (its retries ran out, its checkpoint or
         *  session kept): start it again from that record at [runAtMs]. */
        const val DEFERRED = 5
    }
}

/** What a [Download] and an [Upload] share: the main-loop contract (step, wait, step again),
 *  pause, resume, cancel, events and the result. One thread uses a transfer at a time; the
 *  listener runs on it, inside the step (or pause, resume, cancel) that causes the event, and
 *  must not call back into the same transfer. A listener that throws stops the events of
 *  that call, and the exception comes out of it; the transfer can be stepped again. The
 *  native calls are declared here once; [type] says which C object is behind the handle. */
abstract class Transfer internal constructor(private val type: Int, stack: Stack, options: Options) :
    java.io.Closeable {
    /** Called for each event with a reused [Event] (valid during the call only). */
    var listener: ((Event) -> Unit)? = null

    /** The last step's answer (the same object every step). */
    val next = Next()

    internal var handle: Long = 0L
    private val raw = LongArray(5)
    private val event = Event()

    init {
        Stepback.load()
        check(stack.handle != 0L) { "the stack is closed" }
        require(type != UPLOAD || options.maxTimeMs == 0L) { "an upload has no overall time limit (maxTimeMs)" }
        handle = nativeCreate(type, stack.handle, options.policy?.encode(), cString(options.userAgent),
                              options.encodeHeaders(), options.headers.size, options.maxRedirects,
                              options.maxTimeMs, options.maxRate)
    }

    /** Advances the transfer at [nowMs] (from [Stepback.monotonicMs]); bounded work, never
     *  blocks. Wait for what the answer says (its descriptor or its time), then step again. */
    fun step(nowMs: Long): Next {
        nativeStep(type, open(), nowMs, raw)
        return next.load(raw)
    }

    /** Stops (a download with a checkpoint, an upload keeping its session) and closes the
     *  connection; steps answer WAIT_UNTIL NEVER until [resume]. */
    fun pause(nowMs: Long) = nativeControl(type, open(), PAUSE, nowMs)
    /** Goes on with a paused transfer (a download asks for the bytes after those held). */
    fun resume(nowMs: Long) = nativeControl(type, open(), RESUME, nowMs)
    /** Ends it (a download after a last checkpoint; an upload's session stays open on the
     *  server); step once more to see DONE (CANCELLED). */
    fun cancel(nowMs: Long) = nativeControl(type, open(), CANCEL, nowMs)
    /** Connectivity returned or the network changed: step again after it. */
    fun networkAvailable(nowMs: Long) = nativeControl(type, open(), NETWORK_AVAILABLE, nowMs)
    val paused get() = nativePaused(type, open())

    /** What it waits for after the last step's answer (after a start and before its first
     *  step, as if a step were due at once), for handing a long wait to an OS scheduler. */
    fun runHint(): RunHint {
        nativeRunHint(type, open(), raw)
        return RunHint(raw[0].toInt(), raw[1], raw[2] != 0L, raw[3] != 0L, raw[4])
    }

    /** How it ended; meaningful once a step answered DONE. */
    fun result(): Result {
        val message = nativeResult(type, open(), raw)
        return Result.of(raw, message)
    }

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
        if (handle != 0L) nativeDestroy(type, handle)
        handle = 0L
    }

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

    private external fun nativeCreate(type: Int, stack: Long, policy: LongArray?, userAgent: ByteArray?,
                                      headers: ByteArray?, headerCount: Int, maxRedirects: Int, maxTimeMs: Long,
                                      maxRate: Long): Long
    private external fun nativeStep(type: Int, handle: Long, nowMs: Long, out: LongArray): Int
    private external fun nativeControl(type: Int, handle: Long, action: Int, nowMs: Long)
    private external fun nativePaused(type: Int, handle: Long): Boolean
    private external fun nativeRunHint(type: Int, handle: Long, out: LongArray)
    private external fun nativeResult(type: Int, handle: Long, out: LongArray): String
    private external fun nativeDestroy(type: Int, handle: Long)

    // Must match transfer_jni.cpp's constants.
    internal companion object {
        const val DOWNLOAD = 0
        const val UPLOAD = 1
        private const val PAUSE = 0
        private const val RESUME = 1
        private const val CANCEL = 2
        private const val NETWORK_AVAILABLE = 3
    }
}
