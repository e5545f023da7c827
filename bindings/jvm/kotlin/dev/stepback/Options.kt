package dev.stepback

/** How a retry's wait is drawn from t = min(initialDelay * multiplier^n, maxBackoff)
 *  (`stepback_jitter`). */
object Jitter {
    /** min(t + U[0, jitterRange], maxBackoff). */
    const val SEED = 0
    /** U[0, t]. */
    const val FULL = 1
    /** t/2 + U[0, t - t/2]. */
    const val EQUAL = 2
    /** min(maxBackoff, U[initialDelay, 3 * previous]). */
    const val DECORRELATED = 3
    /** t. */
    const val NONE = 4
}

/** What a retry loop may do (`stepback_policy`): start from [default] or [fromProfile] and
 *  change fields with copy(). The native side checks it where it is used (a transfer's
 *  [Options], a [RetryMachine]) and refuses one out of its limits with a [StepbackException]
 *  (INVALID_ARGUMENT): 1 <= initialDelayMs <= maxBackoffMs <= 86400000; 2 <= multiplier <=
 *  16; jitterRangeMs and maxServerDelayMs <= 86400000; totalDeadlineMs 0 (none) or in
 *  [initialDelayMs, 400 days]; [extraRetryable]: up to 8 more retryable statuses in [400, 655]
 *  besides 408, 429 and 500-599. */
data class Policy(val initialDelayMs: Long, val multiplier: Int, val jitter: Int, val jitterRangeMs: Long,
                  val maxBackoffMs: Long, val maxRetries: Int, val totalDeadlineMs: Long,
                  val honorServerDelay: Boolean, val maxServerDelayMs: Long, val retryAll: Boolean,
                  val extraRetryable: IntArray = IntArray(0)) {
    init {
        require(extraRetryable.size <= EXTRA_STATUSES) { "more than $EXTRA_STATUSES extra retryable statuses" }
    }

    /** The fields as the JNI glue reads them (options_jni.cpp, get_policy). */
    internal fun encode(): LongArray {
        val v = LongArray(ENCODED)
        v[0] = initialDelayMs; v[1] = multiplier.toLong(); v[2] = jitter.toLong(); v[3] = jitterRangeMs
        v[4] = maxBackoffMs; v[5] = maxRetries.toLong(); v[6] = totalDeadlineMs
        v[7] = if (honorServerDelay) 1 else 0; v[8] = maxServerDelayMs; v[9] = if (retryAll) 1 else 0
        extraRetryable.forEachIndexed { i, status -> v[10 + i] = status.toLong() }
        return v
    }

    // An IntArray compares by identity in a data class; a policy compares by its statuses.
    override fun equals(other: Any?) = other is Policy && encode().contentEquals(other.encode())
    override fun hashCode() = encode().contentHashCode()
    override fun toString() =
        "Policy(initialDelayMs=$initialDelayMs, multiplier=$multiplier, jitter=$jitter, " +
            "jitterRangeMs=$jitterRangeMs, maxBackoffMs=$maxBackoffMs, maxRetries=$maxRetries, " +
            "totalDeadlineMs=$totalDeadlineMs, honorServerDelay=$honorServerDelay, " +
            "maxServerDelayMs=$maxServerDelayMs, retryAll=$retryAll, " +
            "extraRetryable=${extraRetryable.contentToString()})"

    companion object {
        const val EXTRA_STATUSES = 8
        private const val ENCODED = 10 + EXTRA_STATUSES

        /** The library's documented defaults (no device profile): 1 s doubling up to 32 s,
         *  6 retries, seeded jitter. */
        @JvmStatic fun default(): Policy {
            Stepback.load()
            return decode(LongArray(ENCODED).also { nativeDefault(it) })
        }

        /** The policy of the device profile the native library was built with
         *  ([Stepback.profileName]): what a transfer uses when its [Options] name none. */
        @JvmStatic fun fromProfile(): Policy {
            Stepback.load()
            return decode(LongArray(ENCODED).also { nativeFromProfile(it) })
        }

        private fun decode(v: LongArray) =
            Policy(v[0], v[1].toInt(), v[2].toInt(), v[3], v[4], v[5].toInt(), v[6], v[7] != 0L, v[8], v[9] != 0L,
                   v.copyOfRange(10, ENCODED).filter { it != 0L }.map { it.toInt() }.toIntArray())

        @JvmStatic private external fun nativeDefault(out: LongArray)
        @JvmStatic private external fun nativeFromProfile(out: LongArray)
    }
}

/** How a [Download] or an [Upload] runs (`stepback_options`), read once when it is made.
 *  [policy]: null for the device profile's. [userAgent]: null for none. [headers]: fields
 *  sent with every request, at most [MAX_HEADERS]; the user agent and the headers are copied
 *  into the transfer's native storage, 4 KiB in all. [maxRedirects]: 0-255, -1 for the
 *  profile's (an upload follows none). [maxTimeMs]: an overall limit, waits included (0:
 *  none; downloads only). [maxRate]: bytes a second at most (0: no limit). Too many or too
 *  long headers, or an invalid policy, are refused with a [StepbackException]. */
data class Options(val policy: Policy? = null, val userAgent: String? = null,
                   val headers: List<Pair<String, String>> = emptyList(), val maxRedirects: Int = -1,
                   val maxTimeMs: Long = 0, val maxRate: Long = 0) {
    init {
        require(maxRedirects >= -1) { "maxRedirects $maxRedirects: -1 (the profile's) or 0-255" }
        require(maxTimeMs >= 0 && maxRate >= 0) { "a negative maxTimeMs or maxRate" }
    }

    /** name NUL value NUL ... for the JNI glue (options_jni.cpp); null when there are none. */
    internal fun encodeHeaders(): ByteArray? {
        if (headers.isEmpty()) return null
        val out = java.io.ByteArrayOutputStream()
        for ((name, value) in headers) {
            out.write(cString(name)!!)
            out.write(cString(value)!!)
        }
        return out.toByteArray()
    }

    companion object {
        const val MAX_HEADERS = 32
    }
}
