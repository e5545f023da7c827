"""capi.python_ctypes: stepback's C API from Python through ctypes, on libstepback.so
(stepback_ctypes.py declares what it uses), against nginx on loopback over TLS:
  - names and storage: stepback_strerror, stepback_outcome_name, and init refusing storage
    that is too small or misaligned with STEPBACK_E_STORAGE;
  - the retry machine: the default policy, a seed, a 503 then a 200, the wait within the
    policy's bounds; a Retry-After; a 404 ends it;
  - a download to a file with progress events through a ctypes callback, stepped with
    stepback_poll_wait, the file checked byte for byte;
  - a download to a sink (a bytearray) stepped from Python's own poll loop, paused mid-body
    and resumed (a 206 in nginx's log), the bytes checked.
Every wait is bounded: the loops by a deadline, each poll by a second, nginx's start by 10 s.

usage: ctypes_test.py --lib LIBSTEPBACK --nginx NGINX --openssl OPENSSL --tests TESTS_DIR
"""

import argparse
import ctypes
import os
import random
import select
import sys
import tempfile
import time
from ctypes import byref, sizeof

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stepback_ctypes as sb  # noqa: E402

FILE_SIZE = 3 * 1024 * 1024 + 17
SINK_SIZE = 2 * 1024 * 1024 + 5
PAUSE_AT = 256 * 1024
LOG_FORMAT = "$request_method $uri $status $body_bytes_sent"
SERVER = """  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    root {dir}/www;
    location /slow/ {{ limit_rate 2m; }}
  }}"""


def check(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def names_and_storage(lib):
    """stepback_strerror and the outcome names; init refuses small or misaligned storage."""
    check(lib.stepback_strerror(sb.OK) == b"ok", "strerror(OK)")
    check(lib.stepback_strerror(sb.E_TLS_VERIFY) == b"tls_verify", "strerror(E_TLS_VERIFY)")
    check(lib.stepback_strerror(sb.E_STORAGE) == b"storage", "strerror(E_STORAGE)")
    check(lib.stepback_outcome_name(sb.OUTCOME_SUCCESS) == b"success", "outcome_name(SUCCESS)")
    check(lib.stepback_outcome_name(sb.OUTCOME_CANCELLED) == b"cancelled",
          "outcome_name(CANCELLED)")

    policy = sb.Policy()
    lib.stepback_policy_default(byref(policy))
    # Too small: a binding that allocated a stale size is told, and nothing is written.
    small = (ctypes.c_uint64 * 2)()
    code = lib.stepback_retry_init(byref(small), sizeof(small), byref(policy), 1, True, None)
    check(code == sb.E_STORAGE, f"retry_init on 16 bytes gave {code}")
    check(list(small) == [0, 0], "retry_init wrote into storage it refused")
    budget = sb.Budget()
    code = lib.stepback_budget_init(byref(budget), sizeof(budget) - 8, 10, 100)
    check(code == sb.E_STORAGE, f"budget_init on 8 bytes gave {code}")
    check(lib.stepback_budget_init(byref(budget), sizeof(budget), 10, 100) == sb.OK, "budget_init")
    small_stack = (ctypes.c_uint64 * 512)()
    code = lib.stepback_stack_init(byref(small_stack), sizeof(small_stack), None)
    check(code == sb.E_STORAGE, f"stack_init on 4 KiB gave {code}")
    # Misaligned: enough bytes, 4 past an 8-byte boundary.
    raw = (ctypes.c_uint64 * (sb.RETRY_SIZE // 8 + 1))()
    code = lib.stepback_retry_init(ctypes.addressof(raw) + 4, sb.RETRY_SIZE, byref(policy), 1,
                                   True, None)
    check(code == sb.E_STORAGE, f"retry_init on misaligned storage gave {code}")
    print("names and storage: ok", flush=True)


def retry_machine(lib):
    """The default policy's first wait after a 503 is t + U[0, jitter_range] with t the
    initial delay; a 200 then ends it with success."""
    policy = sb.Policy()
    lib.stepback_policy_default(byref(policy))
    check(lib.stepback_policy_valid(byref(policy)), "the default policy is not valid")
    check((policy.initial_delay_ms, policy.jitter_range_ms, policy.max_retries) == (1000, 1000, 6),
          "the default policy is not the documented one")
    nxt = sb.Next()

    def machine(seed):
        retry = sb.Retry()
        check(lib.stepback_retry_init(byref(retry), sizeof(retry), byref(policy), seed, True,
                                      None) == sb.OK, "retry_init")
        check(lib.stepback_retry_step(byref(retry), 0, byref(nxt)) == sb.NEXT_SEND,
              "the first step is not SEND")
        return retry

    retry = machine(42)
    kind = lib.stepback_retry_report(byref(retry), 100, 503, sb.FAILURE_NONE, sb.NEVER,
                                     byref(nxt))
    check(kind == sb.NEXT_WAIT_UNTIL, f"a 503 gave next {kind}")
    at = nxt.at_ms
    check(100 + 1000 <= at <= 100 + 2000, f"the wait after a 503 ends at {at}")
    check(lib.stepback_retry_step(byref(retry), at - 1, byref(nxt)) == sb.NEXT_WAIT_UNTIL and
          nxt.at_ms == at, "the wait did not hold until its time")
    check(lib.stepback_retry_step(byref(retry), at, byref(nxt)) == sb.NEXT_SEND,
          "no SEND when the wait ended")
    kind = lib.stepback_retry_report(byref(retry), at + 50, 200, sb.FAILURE_NONE, sb.NEVER,
                                     byref(nxt))
    check(kind == sb.NEXT_DONE and nxt.outcome == sb.OUTCOME_SUCCESS,
          f"a 200 gave next {kind}, outcome {nxt.outcome}")
    check(lib.stepback_retry_retries(byref(retry)) == 1, "not one retry")

    # The same seed draws the same wait; a Retry-After of 5 s lengthens it.
    again = machine(42)
    lib.stepback_retry_report(byref(again), 100, 503, sb.FAILURE_NONE, sb.NEVER, byref(nxt))
    check(nxt.at_ms == at, f"seed 42 drew {nxt.at_ms - 100} ms, then {at - 100} ms")
    delayed = machine(7)
    lib.stepback_retry_report(byref(delayed), 100, 503, sb.FAILURE_NONE, 5000, byref(nxt))
    check(nxt.kind == sb.NEXT_WAIT_UNTIL and 100 + 5000 <= nxt.at_ms <= 100 + 7000,
          f"Retry-After 5000 ms: next {nxt.kind} at {nxt.at_ms}")
    ended = machine(7)
    kind = lib.stepback_retry_report(byref(ended), 100, 404, sb.FAILURE_NONE, sb.NEVER, byref(nxt))
    check(kind == sb.NEXT_DONE and nxt.outcome == sb.OUTCOME_TERMINAL_STATUS,
          f"a 404 gave next {kind}, outcome {nxt.outcome}")
    print(f"retry machine: ok (first wait {at - 100} ms)", flush=True)


def download_to_file(lib, stack, url, path, expected):
    """A download into `path` with progress events, stepped with stepback_poll_wait."""
    events = []

    def on_event(context, event):
        e = event.contents  # Valid only during the call: copy what is kept.
        events.append((e.kind, e.bytes, e.total, e.http_status, e.outcome))

    # The library keeps this pointer: the Python object must outlive the download.
    on_event_fn = sb.EVENT_FN(on_event)
    options = sb.Options()
    lib.stepback_options_default(byref(options))
    options.on_event = on_event_fn
    options.max_time_ms = 30000
    small = (ctypes.c_uint64 * 512)()
    code = lib.stepback_download_init(byref(small), sizeof(small), byref(stack), byref(options))
    check(code == sb.E_STORAGE, f"download_init on 4 KiB gave {code}")
    download = sb.Download()
    check(lib.stepback_download_init(byref(download), sizeof(download), byref(stack),
                                     byref(options)) == sb.OK, "download_init")
    code = lib.stepback_download_start_file(byref(download), url.encode(), path.encode(), None)
    check(code == sb.OK, f"start_file: {lib.stepback_download_message(byref(download))}")

    nxt = sb.Next()
    deadline = time.monotonic() + 40
    now = lib.stepback_monotonic_ms()
    while lib.stepback_download_step(byref(download), now, byref(nxt)) != sb.NEXT_DONE:
        check(time.monotonic() < deadline, "the file download did not end within 40 s")
        lib.stepback_poll_wait(byref(nxt), now)
        now = lib.stepback_monotonic_ms()
    result = sb.Result()
    lib.stepback_download_result(byref(download), byref(result))
    delivered = lib.stepback_download_delivered(byref(download))
    lib.stepback_download_destroy(byref(download))
    del on_event_fn  # Only now may the callback go.

    check(result.outcome == sb.OUTCOME_SUCCESS and result.http_status == 200,
          f"file download: {lib.stepback_outcome_name(result.outcome)}, HTTP "
          f"{result.http_status}, {result.message}")
    check(delivered == len(expected), f"delivered {delivered} bytes")
    with open(path, "rb") as f:
        check(f.read() == expected, "the file differs from the server's")
    check(not os.path.exists(path + ".part"), "the part file is left")
    progress = [e for e in events if e[0] == sb.EVENT_PROGRESS]
    check(len(progress) >= 2, f"{len(progress)} progress events")
    counts = [e[1] for e in progress]
    check(counts == sorted(counts) and 0 < counts[0] and counts[-1] <= len(expected),
          f"progress bytes {counts[:3]}...{counts[-3:]}")
    check(all(e[2] == len(expected) for e in progress), "a progress event without the total")
    check(any(e[0] == sb.EVENT_RESPONSE and e[3] == 200 for e in events), "no RESPONSE 200")
    check(events[-1][0] == sb.EVENT_DONE and events[-1][4] == sb.OUTCOME_SUCCESS,
          f"the last event is {events[-1]}")
    print(f"download to a file: ok ({len(progress)} progress events)", flush=True)


def wait_like_an_app(nxt, now):
    """An app's own loop: poll(2) on the descriptor, at most a second and never past at_ms."""
    timeout = max(0, min(nxt.at_ms - now, 1000))
    if nxt.kind == sb.NEXT_WAIT_IO:
        poller = select.poll()
        poller.register(nxt.fd, (select.POLLIN if nxt.want_read else 0) |
                        (select.POLLOUT if nxt.want_write else 0))
        poller.poll(timeout)
    elif nxt.kind == sb.NEXT_WAIT_UNTIL:
        time.sleep(timeout / 1000)


def download_to_sink(lib, stack, url, expected):
    """A download into a bytearray, paused once PAUSE_AT bytes arrived and resumed."""
    body = bytearray()

    def write(context, offset, data, size):
        if offset != len(body):  # Offsets only grow; a gap would be a bug.
            return False
        body.extend(ctypes.string_at(data, size))
        return True

    def restart(context):
        body.clear()
        return True

    # Kept referenced until the download is destroyed: the library calls them.
    callbacks = (sb.SINK_WRITE_FN(write), sb.SINK_RESTART_FN(restart))
    sink = sb.Sink(callbacks[0], callbacks[1], None)
    options = sb.Options()
    lib.stepback_options_default(byref(options))
    options.max_time_ms = 30000
    download = sb.Download()
    check(lib.stepback_download_init(byref(download), sizeof(download), byref(stack),
                                     byref(options)) == sb.OK, "download_init")
    check(lib.stepback_download_start_sink(byref(download), url.encode(), byref(sink), None, None,
                                           0) == sb.OK,
          f"start_sink: {lib.stepback_download_message(byref(download))}")

    nxt = sb.Next()
    paused_with = None
    deadline = time.monotonic() + 40
    now = lib.stepback_monotonic_ms()
    while lib.stepback_download_step(byref(download), now, byref(nxt)) != sb.NEXT_DONE:
        check(time.monotonic() < deadline, "the sink download did not end within 40 s")
        if paused_with is None and len(body) >= PAUSE_AT:
            # Never from inside a callback: between steps.
            check(len(body) < len(expected), "the body came whole before the pause")
            lib.stepback_download_pause(byref(download), now)
            paused_with = len(body)
            check(lib.stepback_download_paused(byref(download)), "not paused")
            for _ in range(3):
                time.sleep(0.1)
                now = lib.stepback_monotonic_ms()
                kind = lib.stepback_download_step(byref(download), now, byref(nxt))
                check(kind == sb.NEXT_WAIT_UNTIL and nxt.at_ms == sb.NEVER,
                      f"paused, a step gave {kind} at {nxt.at_ms}")
            check(len(body) == paused_with and
                  lib.stepback_download_delivered(byref(download)) == paused_with,
                  "bytes arrived while paused")
            check(lib.stepback_download_resume(byref(download), now) == sb.OK, "resume")
            check(not lib.stepback_download_paused(byref(download)), "still paused")
        wait_like_an_app(nxt, now)
        now = lib.stepback_monotonic_ms()
    result = sb.Result()
    lib.stepback_download_result(byref(download), byref(result))
    lib.stepback_download_destroy(byref(download))
    del callbacks, sink

    check(result.outcome == sb.OUTCOME_SUCCESS, f"sink download: "
          f"{lib.stepback_outcome_name(result.outcome)}, HTTP {result.http_status}, "
          f"{result.message}")
    check(paused_with is not None, "never paused")
    check(bytes(body) == expected, f"the sink holds {len(body)} bytes, not the server's")
    print(f"download to a sink: ok (paused at {paused_with} bytes)", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--lib", "--nginx", "--openssl", "--tests"):
        p.add_argument(name, required=True)
    opts = p.parse_args()
    sys.path.insert(0, os.path.join(opts.tests, "tools"))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(opts.tests)), "examples"))
    import cli_support as support  # noqa: E402 (tests/tools/cli_support.py)
    import example_support  # noqa: E402 (examples/example_support.py: nginx, a certificate)

    lib = sb.load(opts.lib)
    names_and_storage(lib)
    retry_machine(lib)

    with tempfile.TemporaryDirectory() as tmp:
        cert, _ = example_support.self_signed(opts.openssl, tmp)
        os.makedirs(os.path.join(tmp, "www", "slow"))
        file_body = random.Random(1).randbytes(FILE_SIZE)
        sink_body = random.Random(2).randbytes(SINK_SIZE)
        with open(os.path.join(tmp, "www", "slow", "file.bin"), "wb") as f:
            f.write(file_body)
        with open(os.path.join(tmp, "www", "slow", "sink.bin"), "wb") as f:
            f.write(sink_body)
        nginx, port = example_support.start_nginx(support, opts.nginx, tmp, LOG_FORMAT, SERVER)
        # One stack per process, shared by the downloads, destroyed after them.
        stack = sb.Stack()
        try:
            code = lib.stepback_stack_init(byref(stack), sizeof(stack), cert.encode())
            check(code == sb.OK, f"stack_init: {lib.stepback_stack_message(byref(stack))}")
            base = f"https://127.0.0.1:{port}"
            download_to_file(lib, stack, base + "/slow/file.bin", os.path.join(tmp, "out.bin"),
                             file_body)
            download_to_sink(lib, stack, base + "/slow/sink.bin", sink_body)
            with open(os.path.join(tmp, "access.log")) as f:
                statuses = [line.split()[2] for line in f if " /slow/sink.bin " in line]
            check(statuses == ["200", "206"], f"nginx answered the sink download {statuses}")
        finally:
            lib.stepback_stack_destroy(byref(stack))
            nginx.kill()
            nginx.wait(10)
    print("python_ctypes: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
