package dev.stepback

/** What every HTTPS transfer of the process goes through: TLS with the trust anchors of
 *  [caFile] (a PEM or DER bundle, or a hashed directory; null: the system's store), the
 *  wall clock and the resolver. Make one per process, before the threads that use it;
 *  close it after every transfer that uses it. Its 128 KiB (the TLS arena) are native. */
class Stack(caFile: String? = null) : java.io.Closeable {
    internal var handle: Long = 0L
        private set

    init {
        Stepback.load()
        handle = nativeCreate(cString(caFile))
    }

    override fun close() {
        if (handle != 0L) nativeDestroy(handle)
        handle = 0L
    }

    private external fun nativeCreate(caUtf8: ByteArray?): Long
    private external fun nativeDestroy(handle: Long)
}
