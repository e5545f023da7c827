package dev.stepback

/** A GET with retries, Range resumes and checkpoints, into a file: the body goes to
 *  PATH.part and its record to PATH.part.state (or [startFile]'s statePath), and PATH.part
 *  becomes PATH when it succeeds; a later process that starts the same URL and path goes on
 *  from the last checkpoint. Its 192 KiB (buffers, paths, the record, the options' strings)
 *  are native memory, allocated here and freed by [close]. [stack] must outlive it. */
class Download(stack: Stack, options: Options = Options()) : Transfer(Transfer.DOWNLOAD, stack, options) {
    /** Starts downloading [url] into [path]; throws [StepbackException] for a bad URL, a
     *  file that cannot be opened, or a record of another URL (nothing changed on disk). */
    fun startFile(url: String, path: String, statePath: String? = null) =
        nativeStartFile(open(), cString(url)!!, cString(path)!!, cString(statePath))

    /** Bytes of the body the file holds, resumed ones included. */
    val delivered get() = nativeDelivered(open())
    /** Where this start went on from (0: the beginning). */
    val resumedFrom get() = nativeResumedFrom(open())

    private external fun nativeStartFile(handle: Long, url: ByteArray, path: ByteArray, statePath: ByteArray?)
    private external fun nativeDelivered(handle: Long): Long
    private external fun nativeResumedFrom(handle: Long): Long
}
