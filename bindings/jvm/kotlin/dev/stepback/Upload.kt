package dev.stepback

/** A resumable upload (Google's protocol: Cloud Storage, Firebase Storage): a POST opens a
 *  session, chunks go as PUTs, a failure asks the server what it holds and goes on from
 *  there. Its 144 KiB are native memory, allocated here and freed by [close]. [stack] must
 *  outlive it. [maxRate]: bytes a second at most (0: no limit). */
class Upload(stack: Stack, userAgent: String? = null, maxRate: Long = 0) : Transfer() {
    init {
        Stepback.load()
        check(stack.handle != 0L) { "the stack is closed" }
        handle = nativeCreate(stack.handle, cString(userAgent), 0, maxRate)
    }

    /** Starts uploading the file [path] to the session initiation [url], in chunks of
     *  [chunkSize] bytes (a multiple of 262144; 0: 8 MiB). With [statePath], the session is
     *  saved there as it goes, so that a later process goes on with it. Throws
     *  [StepbackException] for a file that cannot be read or a state file of another upload. */
    fun startFile(url: String, path: String, statePath: String? = null, chunkSize: Long = 0,
                  contentType: String? = null) =
        nativeStartFile(open(), cString(url)!!, cString(path)!!, cString(statePath), chunkSize,
                        cString(contentType))

    override fun step(nowMs: Long): Next {
        nativeStep(open(), nowMs, raw)
        return next.load(raw)
    }

    /** Stops keeping the session; steps answer WAIT_UNTIL NEVER until [resume]. */
    override fun pause(nowMs: Long) = nativePause(open(), nowMs)
    override fun resume(nowMs: Long) = nativeResume(open(), nowMs)
    /** Ends it; the session stays open on the server. Step once more to see DONE. */
    override fun cancel(nowMs: Long) = nativeCancel(open(), nowMs)
    override fun networkAvailable(nowMs: Long) = nativeNetworkAvailable(open(), nowMs)
    override val paused get() = nativePaused(open())
    /** Bytes the server has said it holds. */
    val committed get() = nativeCommitted(open())
    /** The session URI, or null before the session is open. */
    val session: String? get() = nativeSession(open())

    override fun result(): Result {
        val message = nativeResult(open(), raw)
        return Result.of(raw, message)
    }

    override fun destroy(handle: Long) = nativeDestroy(handle)

    private external fun nativeCreate(stack: Long, userAgent: ByteArray?, maxTimeMs: Long, maxRate: Long): Long
    private external fun nativeStartFile(handle: Long, url: ByteArray, path: ByteArray, statePath: ByteArray?,
                                         chunkSize: Long, contentType: ByteArray?)
    private external fun nativeStep(handle: Long, nowMs: Long, out: LongArray): Int
    private external fun nativePause(handle: Long, nowMs: Long)
    private external fun nativeResume(handle: Long, nowMs: Long)
    private external fun nativeCancel(handle: Long, nowMs: Long)
    private external fun nativeNetworkAvailable(handle: Long, nowMs: Long)
    private external fun nativePaused(handle: Long): Boolean
    private external fun nativeCommitted(handle: Long): Long
    private external fun nativeSession(handle: Long): String?
    private external fun nativeResult(handle: Long, out: LongArray): String
    private external fun nativeDestroy(handle: Long)
}
