package dev.stepback

/** A resumable upload (Google's protocol: Cloud Storage, Firebase Storage): a POST opens a
 *  session, chunks go as PUTs, a failure asks the server what it holds and goes on from
 *  there. Its 144 KiB are native memory, allocated here and freed by [close]. [stack] must
 *  outlive it. An upload has no overall time limit ([Options.maxTimeMs] must be 0) and
 *  follows no redirects. */
class Upload(stack: Stack, options: Options = Options()) : Transfer(Transfer.UPLOAD, stack, options) {
    /** Starts uploading the file [path] to the session initiation [url], in chunks of
     *  [chunkSize] bytes (a multiple of 262144; 0: 8 MiB). With [statePath], the session is
     *  saved there as it goes, so that a later process goes on with it. Throws
     *  [StepbackException] for a file that cannot be read or a state file of another upload. */
    fun startFile(url: String, path: String, statePath: String? = null, chunkSize: Long = 0,
                  contentType: String? = null) =
        nativeStartFile(open(), cString(url)!!, cString(path)!!, cString(statePath), chunkSize,
                        cString(contentType))

    /** Bytes the server has said it holds. */
    val committed get() = nativeCommitted(open())
    /** The session URI, or null before the session is open. */
    val session: String? get() = nativeSession(open())

    private external fun nativeStartFile(handle: Long, url: ByteArray, path: ByteArray, statePath: ByteArray?,
                                         chunkSize: Long, contentType: ByteArray?)
    private external fun nativeCommitted(handle: Long): Long
    private external fun nativeSession(handle: Long): String?
}
