package dev.stepback

/** A GET with retries, Range resumes and checkpoints, into a file: the body goes to
 *  PATH.part and its record to PATH.part.state (or [startFile]'s statePath), and PATH.part
 *  becomes PATH when it succeeds; a later process that starts the same URL and path goes on
 *  from the last checkpoint. Its 192 KiB (buffers, paths, the record) are native memory,
 *  allocated here and freed by [close]. [stack] must outlive it.
 *  [maxTimeMs]: an overall limit, waits included (0: none); [maxRate]: bytes a second at
 *  most (0: no limit). */
class Download(stack: Stack, userAgent: String? = null, maxTimeMs: Long = 0, maxRate: Long = 0) : Transfer() {
    init {
        Stepback.load()
        check(stack.handle != 0L) { "the stack is closed" }
        handle = nativeCreate(stack.handle, cString(userAgent), maxTimeMs, maxRate)
    }

    /** Starts downloading [url] into [path]; throws [StepbackException] for a bad URL, a
     *  file that cannot be opened, or a record of another URL (nothing changed on disk). */
    fun startFile(url: String, path: String, statePath: String? = null) =
        nativeStartFile(open(), cString(url)!!, cString(path)!!, cString(statePath))

    override fun step(nowMs: Long): Next {
        nativeStep(open(), nowMs, raw)
        return next.load(raw)
    }

    /** Stops with a checkpoint and closes the connection; steps answer WAIT_UNTIL NEVER
     *  until [resume]. */
    override fun pause(nowMs: Long) = nativePause(open(), nowMs)
    /** Goes on with a paused download (a new request for the bytes after those held). */
    override fun resume(nowMs: Long) = nativeResume(open(), nowMs)
    /** Ends it after a last checkpoint; step once more to see DONE (CANCELLED). */
    override fun cancel(nowMs: Long) = nativeCancel(open(), nowMs)
    override fun networkAvailable(nowMs: Long) = nativeNetworkAvailable(open(), nowMs)
    override val paused get() = nativePaused(open())
    /** Bytes of the body the file holds, resumed ones included. */
    val delivered get() = nativeDelivered(open())
    /** Where this start went on from (0: the beginning). */
    val resumedFrom get() = nativeResumedFrom(open())

    override fun result(): Result {
        val message = nativeResult(open(), raw)
        return Result.of(raw, message)
    }

    override fun destroy(handle: Long) = nativeDestroy(handle)

    private external fun nativeCreate(stack: Long, userAgent: ByteArray?, maxTimeMs: Long, maxRate: Long): Long
    private external fun nativeStartFile(handle: Long, url: ByteArray, path: ByteArray, statePath: ByteArray?)
    private external fun nativeStep(handle: Long, nowMs: Long, out: LongArray): Int
    private external fun nativePause(handle: Long, nowMs: Long)
    private external fun nativeResume(handle: Long, nowMs: Long)
    private external fun nativeCancel(handle: Long, nowMs: Long)
    private external fun nativeNetworkAvailable(handle: Long, nowMs: Long)
    private external fun nativePaused(handle: Long): Boolean
    private external fun nativeDelivered(handle: Long): Long
    private external fun nativeResumedFrom(handle: Long): Long
    private external fun nativeResult(handle: Long, out: LongArray): String
    private external fun nativeDestroy(handle: Long)
}
