// The Kotlin side of stepback's JNI binding (bindings/jvm/jni/, libstepback_jni.so over the
// C API, capi/include/stepback/stepback.h). Each class owns one C object, allocated in
// native memory when it is made and freed by close(); nothing is allocated while it runs but
// the event words (a String for an event that has words) and what the app's listener does.
package dev.stepback

/** Library-wide functions: the clock every nowMs argument uses, and a blocking wait. */
object Stepback {
    init {
        System.loadLibrary("stepback_jni")
    }

    /** Monotonic milliseconds: the clock every `nowMs` expects (on Android it counts
     *  suspend, as `SystemClock.elapsedRealtime()`). */
    @JvmStatic external fun monotonicMs(): Long

    /** Sleeps in poll(2) until [next]'s descriptor is ready or its time comes (a minute at
     *  most); true when the descriptor reported readiness. For a worker thread with no event
     *  loop of its own; a main loop registers `next.fd` instead. */
    @JvmStatic fun pollWait(next: Next, nowMs: Long): Boolean =
        nativePollWait(next.kind, next.fd, (if (next.wantRead) 1 else 0) or (if (next.wantWrite) 2 else 0),
                       next.atMs, nowMs)

    /** "desktop" or "mobile": the device profile the native library was built with. */
    @JvmStatic external fun profileName(): String
    @JvmStatic external fun outcomeName(outcome: Int): String
    @JvmStatic external fun statusName(status: Int): String

    @JvmStatic private external fun nativePollWait(kind: Int, fd: Int, flags: Int, atMs: Long, nowMs: Long): Boolean

    /** Makes sure the library is loaded (every class calls it before its first native call). */
    internal fun load() = Unit
}

/** A refusal from the C API: [status] is a `stepback_status` (see [Stepback.statusName]). */
class StepbackException(val status: Int, message: String) : Exception(message)

/** A step's answer: what to wait for before the next step. One object per transfer, filled
 *  again by each step. */
class Next {
    var kind: Int = DONE
        private set
    /** WAIT_IO: the descriptor to wait on; -1 otherwise. */
    var fd: Int = -1
        private set
    var wantRead: Boolean = false
        private set
    var wantWrite: Boolean = false
        private set
    /** WAIT_IO, WAIT_UNTIL: when to step again at the latest ([NEVER]: only after an app
     *  call such as resume). */
    var atMs: Long = NEVER
        private set
    /** DONE: how it ended (`Outcome`). */
    var outcome: Int = 0
        private set

    internal fun load(raw: LongArray): Next {
        kind = raw[0].toInt()
        fd = raw[1].toInt()
        wantRead = raw[2] and 1L != 0L
        wantWrite = raw[2] and 2L != 0L
        atMs = raw[3]
        outcome = raw[4].toInt()
        return this
    }

    override fun toString() = "Next(kind=$kind, fd=$fd, read=$wantRead, write=$wantWrite, atMs=$atMs, outcome=$outcome)"

    companion object {
        const val SEND = 0
        const val WAIT_IO = 1
        const val WAIT_UNTIL = 2
        const val DONE = 3
        const val NEVER = Long.MAX_VALUE
    }
}

/** How a transfer or a retry loop ended (`stepback_outcome`). */
object Outcome {
    const val SUCCESS = 0
    const val RETRIES_EXHAUSTED = 1
    const val DEADLINE = 2
    const val TERMINAL_STATUS = 3
    const val TERMINAL_FAILURE = 4
    const val NOT_IDEMPOTENT = 5
    const val BUDGET_EXHAUSTED = 6
    const val SERVER_DELAY_TOO_LONG = 7
    const val CANCELLED = 8
    const val OFFLINE = 9
}

/** Something that happened in a transfer. The same object is filled for every event of a
 *  transfer: valid during the listener call only (copy what you keep). Byte counts are -1
 *  when not known. */
class Event {
    var kind = 0
        private set
    var attempt = 0
        private set
    var httpStatus = 0
        private set
    var failure = 0
        private set
    var outcome = 0
        private set
    var bytes = 0L
        private set
    var total = 0L
        private set
    var rate = 0L
        private set
    var waitMs = 0L
        private set
    var atMs = 0L
        private set
    var message = ""
        private set

    internal fun set(kind: Int, attempt: Int, httpStatus: Int, failure: Int, outcome: Int, bytes: Long,
                     total: Long, rate: Long, waitMs: Long, atMs: Long, message: String?) {
        this.kind = kind; this.attempt = attempt; this.httpStatus = httpStatus; this.failure = failure
        this.outcome = outcome; this.bytes = bytes; this.total = total; this.rate = rate
        this.waitMs = waitMs; this.atMs = atMs; this.message = message ?: ""
    }

    companion object {
        const val ATTEMPT = 0
        const val RESPONSE = 1
        const val ERROR = 2
        const val WAIT = 3
        const val RESUME = 4
        const val PROGRESS = 5
        const val REDIRECT = 6
        const val COMMITTED = 7
        const val CHECKPOINT = 8
        const val EXPIRED = 9
        const val INTEGRITY = 10
        const val DONE = 11
        const val OTHER = 12
    }
}

/** How a transfer ended: [outcome] (`Outcome`), the last HTTP status (0: none), the last
 *  failure (`stepback_status`, 0: none), the attempts made and words on the failure. */
data class Result(val outcome: Int, val httpStatus: Int, val error: Int, val attempts: Int, val message: String) {
    val succeeded get() = outcome == Outcome.SUCCESS
    override fun toString() =
        "${Stepback.outcomeName(outcome)} (HTTP $httpStatus, ${Stepback.statusName(error)}, $attempts attempts${if (message.length == 0) "" else ": $message"})"

    internal companion object {
        fun of(raw: LongArray, message: String) =
            Result(raw[0].toInt(), raw[1].toInt(), raw[2].toInt(), raw[3].toInt(), message)
    }
}

/** A string for the C API: UTF-8 with its NUL; null stays null. */
internal fun cString(text: String?): ByteArray? {
    if (text == null) return null
    require(text.indexOf('\u0000') < 0) { "a string for stepback holds a NUL character" }
    return (text + "\u0000").toByteArray(Charsets.UTF_8)
}
