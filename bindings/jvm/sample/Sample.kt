// stepback from Kotlin on the JVM: a download stepped from a loop of the app's own, paused
// and resumed in place; options (a policy, a user agent, a header) and what they refuse; an
// upload run to completion on a worker thread; a retry machine for attempts the app makes
// itself. bindings/jvm/test/run_jvm_test.py runs it (the test jvm.transfers) against nginx
// and the resumable-upload server on loopback; docs/android.md shows it.
//
//   Sample download URL FILE CA_FILE PAUSE_AFTER_BYTES
//   Sample options URL FILE CA_FILE   (URL answers 503)
//   Sample upload URL FILE CA_FILE
//   Sample retry
package dev.stepback.sample

import dev.stepback.Download
import dev.stepback.Event
import dev.stepback.Next
import dev.stepback.Options
import dev.stepback.Outcome
import dev.stepback.Policy
import dev.stepback.RetryMachine
import dev.stepback.RunHint
import dev.stepback.Stack
import dev.stepback.Stepback
import dev.stepback.StepbackException
import dev.stepback.Upload
import kotlin.system.exitProcess

// Progress and retries, as lines; one listener serves both transfers.
fun printEvent(e: Event) {
    when (e.kind) {
        Event.PROGRESS -> println("progress ${e.bytes} of ${e.total} bytes")
        Event.RESUME -> println("going on from byte ${e.bytes}")
        Event.COMMITTED -> println("server holds ${e.bytes} bytes")
        Event.ERROR -> println("attempt ${e.attempt}: ${e.message}")
        Event.WAIT -> println("retrying in ${e.waitMs} ms")
    }
}

// The main-loop form: step, wait for what the answer says, step again. Here the wait is
// poll(2) (Stepback.pollWait); an Android Looper registers next.fd and a timer for next.atMs
// instead. Once PAUSE_AFTER bytes are in, the download is paused for a while (nothing moves,
// the connection is closed) and resumed in the same process. Every request carries the user
// agent and the header of the options.
fun download(url: String, path: String, ca: String, pauseAfter: Long): Int {
    val options = Options(userAgent = "stepback-sample/1", headers = listOf("X-Sample" to "jvm"))
    Stack(ca).use { stack ->
        Download(stack, options).use { download ->
            download.listener = ::printEvent
            download.startFile(url, path)
            var now = Stepback.monotonicMs()
            val end = now + 120_000
            var pausedOnce = false
            while (download.step(now).kind != Next.DONE) {
                check(now < end) { "the download did not end within two minutes" }
                if (!pausedOnce && download.delivered >= pauseAfter) {
                    pausedOnce = true
                    download.pause(now)
                    val held = download.delivered
                    val next = download.step(now)
                    check(download.paused && next.kind == Next.WAIT_UNTIL && next.atMs == Next.NEVER) {
                        "a paused download answered $next"
                    }
                    // What a scheduler would be told: nothing to do until the app resumes.
                    val hint = download.runHint()
                    check(hint.state == RunHint.PAUSED) { "paused, the run hint says $hint" }
                    println("paused at byte $held")
                    Thread.sleep(500)  // The app's reason to wait (a metered network, say).
                    check(download.delivered == held) { "bytes arrived while paused" }
                    now = Stepback.monotonicMs()
                    download.resume(now)
                    println("resumed")
                    continue
                }
                Stepback.pollWait(download.next, now)
                now = Stepback.monotonicMs()
            }
            val result = download.result()
            check(download.runHint().state == RunHint.DONE) { "done, the run hint says ${download.runHint()}" }
            println("download: $result, ${download.delivered} bytes")
            return if (result.succeeded) 0 else 1
        }
    }
}

// A policy of the profile's with no retries: a 503 ends the download after its one attempt.
// Options out of their limits are refused when the transfer is made.
fun options(url: String, path: String, ca: String): Int {
    Stack(ca).use { stack ->
        val once = Policy.fromProfile().copy(maxRetries = 0)
        Download(stack, Options(policy = once, userAgent = "stepback-sample/1")).use { download ->
            download.startFile(url, path)
            val result = download.runToCompletion(60_000)
            println("options: $result")
            check(result.outcome == Outcome.RETRIES_EXHAUSTED && result.attempts == 1 && result.httpStatus == 503) {
                "with no retries against a 503: $result"
            }
        }
        val refusals = listOf(
            "multiplier 1" to Options(policy = Policy.default().copy(multiplier = 1)),
            "a 5000-byte header" to Options(headers = listOf("X-Long" to "x".repeat(5000))),
            "33 headers" to Options(headers = List(33) { "X-H$it" to "v" }))
        for ((what, refused) in refusals) {
            val error = try { Download(stack, refused).close(); null } catch (e: StepbackException) { e }
            check(error != null && error.status == 4) { "$what was accepted" }
            println("options: $what refused (${error.message})")
        }
    }
    println("options: ok")
    return 0
}

// The worker-thread form: runToCompletion steps and waits in poll(2) until done.
fun upload(url: String, path: String, ca: String): Int {
    Stack(ca).use { stack ->
        Upload(stack).use { upload ->
            upload.listener = ::printEvent
            upload.startFile(url, path, chunkSize = 256 * 1024, contentType = "application/octet-stream")
            val result = upload.runToCompletion(120_000)
            println("upload: $result, committed ${upload.committed}, session ${upload.session}")
            return if (result.succeeded) 0 else 1
        }
    }
}

// Attempts the app makes itself: a 503, a wait, then a 200.
fun retry(): Int {
    val quick = Policy.default().copy(initialDelayMs = 20, maxBackoffMs = 100, maxRetries = 2)
    RetryMachine(seed = 42, idempotent = true, policy = quick).use { m ->
        var now = Stepback.monotonicMs()
        check(m.step(now).kind == Next.SEND) { "first answer ${m.next}" }
        val wait = m.report(now, 503)
        check(wait.kind == Next.WAIT_UNTIL && wait.atMs > now) { "after a 503: $wait" }
        println("retry: wait ${wait.atMs - now} ms after a 503")
        Thread.sleep(wait.atMs - now)
        now = Stepback.monotonicMs()
        check(m.step(now).kind == Next.SEND) { "after the wait: ${m.next}" }
        val done = m.report(now, 200)
        check(done.kind == Next.DONE && done.outcome == Outcome.SUCCESS && m.retries == 1) {
            "after a 200: $done, ${m.retries} retries"
        }
        m.close()
        val closed = try { m.step(now); false } catch (e: IllegalStateException) { true }
        check(closed) { "a closed retry machine stepped" }
    }
    val refused = try {
        RetryMachine(seed = 1, idempotent = true, policy = quick.copy(initialDelayMs = 0)).close(); null
    } catch (e: StepbackException) { e }
    check(refused != null && refused.status == 4) { "a zero initial delay was accepted" }
    println("retry: ok (${refused.message})")
    return 0
}

fun main(args: Array<String>) {
    val code = when {
        args.size == 5 && args[0] == "download" -> download(args[1], args[2], args[3], args[4].toLong())
        args.size == 4 && args[0] == "options" -> options(args[1], args[2], args[3])
        args.size == 4 && args[0] == "upload" -> upload(args[1], args[2], args[3])
        args.size == 1 && args[0] == "retry" -> retry()
        else -> {
            System.err.println("usage: Sample download URL FILE CA PAUSE_AFTER | options URL FILE CA | upload URL FILE CA | retry")
            2
        }
    }
    exitProcess(code)
}
