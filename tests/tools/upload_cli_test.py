"""Runs `stepback upload` against tests/transfer/upload_server.py on loopback.

usage: upload_cli_test.py STEPBACK_BINARY UPLOAD_SERVER_PY MAKE_CERTS_SH CASE
Each CASE is one CTest test (see tests/tools/CMakeLists.txt). The server runs plain HTTP, or
TLS with a throwaway PKI made by tests/integration/make_certs.sh (openssl) for `tls`.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from cli_support import check, start_server, trace_events, wait_until

BINARY, SERVER, MAKE_CERTS = sys.argv[1], sys.argv[2], sys.argv[3]
CHUNK = 256 * 1024


def pattern(size):
    """Bytes that differ at every offset of interest (no 256 KiB period)."""
    return bytes((i * 7 + i // 251 + i // 65521) & 0xFF for i in range(size))


class Server:
    """upload_server.py with `faults`, plain or TLS, in a temporary folder."""

    def __init__(self, tmp, faults=(), tls=False):
        self.dir = tmp
        self.objects = os.path.join(tmp, "objects")
        os.makedirs(self.objects)
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            json.dump(list(faults), f)
        port_file = os.path.join(tmp, "port")
        self.log_file = os.path.join(tmp, "requests.log")
        args = [sys.executable, SERVER, "--port-file", port_file, "--log-file", self.log_file,
                "--objects", self.objects, "--script", script, "--lifetime", "60"]
        self.ca = None
        if tls:
            pki = os.path.join(tmp, "pki")
            subprocess.run(["bash", MAKE_CERTS, shutil.which("openssl"), pki], check=True,
                           capture_output=True)
            args += ["--cert", os.path.join(pki, "server.pem"), "--key",
                     os.path.join(pki, "server.key")]
            self.ca = os.path.join(pki, "ca.pem")
        self.process, self.port = start_server(args, port_file, "the upload server",
                                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.scheme = "https" if tls else "http"

    def url(self, name="object"):
        return "%s://127.0.0.1:%d/upload?uploadType=resumable&name=%s" % (
            self.scheme, self.port, name)

    def log(self):
        if not os.path.exists(self.log_file):
            return []
        with open(self.log_file) as f:
            return [json.loads(line) for line in f if line.strip()]

    def kinds(self, kind):
        return [r for r in self.log() if r.get("kind") == kind]

    def object(self, name="object"):
        path = os.path.join(self.objects, name)
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            return f.read()

    def stop(self):
        self.process.kill()
        self.process.wait()


def run(*args, timeout=60):
    """Runs the program; returns (exit code, stdout, stderr)."""
    p = subprocess.run([BINARY, "upload", *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def with_server(faults=(), tls=False, size=4 * CHUNK + 1234):
    """Decorator-free helper: a temp dir, a body file of `size` bytes and a server."""
    tmp = tempfile.mkdtemp(prefix="stepback-upload-cli-")
    body = pattern(size)
    path = os.path.join(tmp, "body.bin")
    with open(path, "wb") as f:
        f.write(body)
    return tmp, path, body, Server(os.path.join(tmp, "server"), faults, tls)


def expect_metadata(out, size, args):
    try:
        metadata = json.loads(out)
    except json.JSONDecodeError:
        sys.exit(f"FAIL: {args}: stdout is not the object's metadata: {out!r}")
    check(metadata.get("size") == str(size), f"{args}: metadata {metadata}")


def case_runs():
    # A reset mid-chunk (part of it kept) and a 503: one line per exchange, a byte-exact
    # object, no committed byte sent twice, the cost line at the end.
    faults = [{"on": "chunk", "nth": 2, "do": "reset", "after": 100000, "commit": 60000},
              {"on": "chunk", "nth": 4, "do": "status", "status": 503}]
    tmp, path, body, server = with_server(faults)
    try:
        args = [path, server.url(), "--chunk-size", "256K", "--max-backoff", "0.5"]
        code, out, err = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        expect_metadata(out, len(body), args)
        check(server.object() == body, f"{args}: the stored object differs from the file")
        check(sum(r.get("overlap", 0) for r in server.kinds("chunk")) == 0,
              f"{args}: committed bytes were sent again: {server.log()}")
        lines = err.splitlines()
        check(re.match(r"session 1: POST: 200 OK$", lines[0]), f"first line {lines[0]!r}")
        check(re.match(r"stepback upload: session http://127\.0\.0\.1:\d+/session/s1$", lines[1]),
              f"session line {lines[1]!r}")
        check(re.match(r"chunk 2: bytes 0-262143: 308 Resume Incomplete, committed 262144 of "
                       r"1049810 \(24%\)$", lines[2]), f"chunk line {lines[2]!r}")
        check(any(re.match(r"chunk 3: bytes 262144-524287: .*\((reset|timeout)\), retrying in "
                           r"\d+\.\d\d s$", l) for l in lines), f"no reset line in {lines}")
        check(any(re.match(r"query 4: 308 Resume Incomplete, committed 322144 of 1049810", l)
                  for l in lines), f"no query line in {lines}")
        check(any(re.match(r"chunk \d+: bytes 322144-584287: ", l) for l in lines),
              f"no chunk from the committed offset in {lines}")
        check(any("503 Service Unavailable, retrying in" in l for l in lines), f"no 503 in {lines}")
        check(re.match(r"stepback upload: integrity verified: crc32c [A-Za-z0-9+/]{6}==$",
                       lines[-1]), f"integrity line {lines[-1]!r}")
        last = lines[-2]
        m = re.match(r"stepback upload: 1049810 bytes in \d+ exchanges; (\d+) body bytes sent "
                     r"\(\d\.\d\d\d per byte\), \d+\.\d\d s$", last)
        check(m, f"summary line {last!r}")
        sent = int(m.group(1))
        check(sent <= len(body) + 2 * CHUNK, f"sent {sent} for {len(body)} with two faults")
        print(f"bytes sent: {sent} for a body of {len(body)} (2 faults)")
    finally:
        server.stop()
        shutil.rmtree(tmp)


def case_trace():
    faults = [{"on": "chunk", "nth": 1, "do": "drop"},
              {"on": "chunk", "nth": 3, "do": "status", "status": 429, "retry_after": 1}]
    tmp, path, body, server = with_server(faults)
    try:
        args = [path, server.url(), "--chunk-size", "512K", "--trace"]
        code, out, err = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        expect_metadata(out, len(body), args)
        check(server.object() == body, f"{args}: the stored object differs")
        events = trace_events(err, args)
        kinds = [e["event"] for e in events]
        # POST; a chunk dropped (308, nothing held: a wait, no query); the chunk again; the
        # next met by 429 (Retry-After: 1); a query; that chunk again; the short last one.
        expected = ["session", "response",
                    "chunk", "response", "committed", "error", "wait",
                    "chunk", "response", "committed",
                    "chunk", "response", "wait",
                    "query", "response", "committed",
                    "chunk", "response", "committed",
                    "chunk", "response", "committed", "done"]
        check(kinds == expected, f"{args}: events {kinds}")
        chunks = [e for e in events if e["event"] == "chunk"]
        check([(c["offset"], c["size"]) for c in chunks] ==
              [(0, 2 * CHUNK), (0, 2 * CHUNK), (2 * CHUNK, 2 * CHUNK), (2 * CHUNK, 2 * CHUNK),
               (4 * CHUNK, 1234)], f"{args}: chunks {chunks}")
        waits = [e for e in events if e["event"] == "wait"]
        # Retry-After's second, then the chunk's first jittered backoff (at most 1 s).
        check(waits[1]["reason"] == "retry_after" and 1000 <= waits[1]["ms"] <= 2000,
              f"{args}: waits {waits}")
        done = events[-1]
        check(done["outcome"] == "success" and done["status"] == 200 and
              done["committed"] == len(body) and done["size"] == len(body) and
              done["sessions"] == 1 and done["exchanges"] == 7, f"{args}: done {done}")
        # Two chunks went twice, whole: one fault each, one chunk each.
        check(done["sent"] == len(body) + 4 * CHUNK, f"{args}: sent {done['sent']}")
        check(done["session"].startswith("http://127.0.0.1:"), f"{args}: session {done}")
    finally:
        server.stop()
        shutil.rmtree(tmp)


def case_session():
    # The first run gives up (no retries) after two chunks and names its session; the second
    # continues it: a status query, then only the missing bytes, no second POST.
    tmp, path, body, server = with_server([{"on": "chunk", "nth": 3, "do": "status",
                                            "status": 503}])
    try:
        args = [path, server.url(), "--chunk-size", "256K", "--max-retries", "0"]
        code, out, err = run(*args)
        check(code == 3, f"{args} exited {code}, stderr: {err}")
        check(out == "", f"{args}: stdout {out!r}")
        m = re.search(r"continue it with --session '([^']+)'", err)
        check(m, f"{args}: no session to continue in {err!r}")
        check("the server holds 524288 of 1049810 bytes" in err, f"{args}: {err!r}")
        args = [path, "--session", m.group(1), "--chunk-size", "256K", "--trace"]
        code, out, err = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        expect_metadata(out, len(body), args)
        check(server.object() == body, f"{args}: the stored object differs")
        check(len(server.kinds("post")) == 1, f"{args}: a second session was opened")
        events = trace_events(err, args)
        check(events[0]["event"] == "query", f"{args}: first event {events[0]}")
        check(events[-1]["sent"] == len(body) - 2 * CHUNK, f"{args}: done {events[-1]}")
        check(sum(r.get("overlap", 0) for r in server.kinds("chunk")) == 0,
              f"{args}: committed bytes were sent again")
    finally:
        server.stop()
        shutil.rmtree(tmp)


def case_expired():
    tmp, path, body, server = with_server([{"on": "chunk", "nth": 2, "do": "expire"}])
    try:
        args = [path, server.url(), "--chunk-size", "256K"]
        code, out, err = run(*args)
        check(code == 4, f"{args} exited {code}, stderr: {err}")
        check("404 Not Found, the session expired" in err, f"{args}: {err!r}")
        check("terminal_status (the upload session expired" in err, f"{args}: {err!r}")
        check("--session" not in err, f"{args}: offers to continue an expired session: {err!r}")
        check(server.object() is None, f"{args}: an object was stored")
    finally:
        server.stop()
        shutil.rmtree(tmp)


def case_tls():
    tmp, path, body, server = with_server([{"on": "chunk", "nth": 2, "do": "status",
                                            "status": 408}], tls=True)
    try:
        args = [path, server.url(), "--chunk-size", "256K", "--cacert", server.ca, "--trace"]
        code, out, err = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        expect_metadata(out, len(body), args)
        check(server.object() == body, f"{args}: the stored object differs")
        done = trace_events(err, args)[-1]
        check(done["sent"] <= len(body) + CHUNK, f"{args}: done {done}")
        # Without the CA the handshake does not verify: exit 5, never retried.
        code, out, err = run(path, server.url("other"), "--max-backoff", "0.2",
                             "--cacert", os.path.join(server.dir, "pki", "other_ca.pem"))
        check(code == 5, f"untrusted server: exit {code}, stderr: {err}")
    finally:
        server.stop()
        shutil.rmtree(tmp)


def case_usage():
    tmp = tempfile.mkdtemp(prefix="stepback-upload-cli-")
    try:
        path = os.path.join(tmp, "body.bin")
        with open(path, "wb") as f:
            f.write(b"x" * 10)
        url = "http://127.0.0.1:9/upload?uploadType=resumable&name=o"
        for args, code, words in [
                ([path, url, "--chunk-size", "1000"], 2, "multiple of 256 KiB"),
                ([path, url, "--chunk-size", "0"], 2, "multiple of 256 KiB"),
                ([path], 2, "or --state FILE is required"),
                ([], 2, "FILE and a URL are required"),
                ([path, "ftp://x/"], 2, "invalid URL"),
                ([path, url, "--session", "nonsense"], 2, "invalid --session"),
                ([path, url, "--bogus"], 2, "unknown option"),
                ([path, url, "-H", "no colon"], 2, "invalid header"),
                # The shared flag table: upload takes every retry flag get takes.
                ([path, url, "--jitter", "bogus"], 2, "invalid --jitter 'bogus' (allowed: seed,"),
                ([path, url, "--trace=yes"], 2, "--trace takes no value"),
                ([os.path.join(tmp, "missing"), url], 7, "cannot read"),
                ([tmp, url], 7, "not a regular file")]:
            c, out, err = run(*args)
            check(c == code and words in err, f"{args}: exit {c}, stderr {err!r}")
        c, out, err = run("--help")
        check(c == 0 and "exit codes:" in out and "--chunk-size" in out, f"--help: {c} {out!r}")
        # A closed port: connection refused is retried, then given up (exit 3).
        c, out, err = run(path, url, "--max-retries", "1", "--max-backoff", "0.1", "--jitter",
                          "none")
        check(c == 3 and "retries_exhausted" in err, f"refused: exit {c}, stderr {err!r}")
    finally:
        shutil.rmtree(tmp)


# --- The --state record, read and rewritten here as the library frames it:
# "SBTS", version u16, 0 u16, length u32, protobuf message, CRC-32C u32 (all little-endian).

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def fields(data):
    """[(number, wire type, value)] of a protobuf message (varint, fixed32, bytes only)."""
    out, i = [], 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 2:
            n, i = read_varint(data, i)
            value, i = data[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wire)
        out.append((number, wire, value))
    return out


def encode_fields(items):
    out = b""
    for number, wire, value in items:
        out += varint(number << 3 | wire)
        if wire == 0:
            out += varint(value)
        elif wire == 5:
            out += value
        else:
            out += varint(len(value)) + value
    return out


def frame(message, version=1):
    head = b"SBTS" + version.to_bytes(2, "little") + b"\0\0" + len(message).to_bytes(4, "little")
    return head + message + crc32c(head + message).to_bytes(4, "little")


def unframe(record):
    check(record[:4] == b"SBTS", "not a state record")
    length = int.from_bytes(record[8:12], "little")
    check(crc32c(record[:12 + length]) == int.from_bytes(record[12 + length:], "little"),
          "the state record's CRC does not match")
    return record[12:12 + length]


def retry_state(record):
    """(retries, wait_remaining_ms, release_wall_ms) of a state record."""
    retry = dict((n, v) for n, _, v in fields(unframe(record))).get(10, b"")
    values = dict((n, v) for n, _, v in fields(retry))
    release = values.get(3, 0)
    if release >= 1 << 63:
        release -= 1 << 64
    return values.get(1, 0), values.get(2, 0), release


def with_release(record, release_wall_ms):
    """The record with RetryState.release_wall_ms replaced (a wall clock that moved)."""
    items = fields(unframe(record))
    out = []
    for number, wire, value in items:
        if number == 10:
            retry = [(n, w, v) for n, w, v in fields(value) if n != 3]
            retry.append((3, 0, release_wall_ms))
            value = encode_fields(retry)
        out.append((number, wire, value))
    return frame(encode_fields(out))


class Traced:
    """`stepback upload ... --trace` running, its events read as they come."""

    def __init__(self, args):
        self.args = args
        self.process = subprocess.Popen([BINARY, "upload", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.events = []

    def next_event(self, timeout=30):
        deadline = time.monotonic() + timeout
        line = self.process.stderr.readline()
        check(time.monotonic() < deadline, f"{self.args}: no event within {timeout} s")
        if not line:
            return None
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            sys.exit(f"FAIL: {self.args}: not JSON: {line!r}")
        self.events.append(event)
        return event

    def until(self, predicate):
        while True:
            event = self.next_event()
            check(event is not None, f"{self.args}: ended before the awaited event: {self.events}")
            if predicate(event):
                return event

    def kill(self):
        self.process.kill()
        self.process.wait()

    def finish(self):
        while self.next_event() is not None:
            pass
        out = self.process.stdout.read()
        return self.process.wait(), out


def saved_wait(state, timeout=5):
    """Waits until the state file records a wait (it is written just after the wait event
    is printed), then returns its retry state."""
    def saved():
        if not os.path.exists(state):
            return None
        retry = retry_state(open(state, "rb").read())
        return retry if retry[1] > 0 else None
    return wait_until(saved, "the wait was never saved", timeout, every=0.005)


def state_args(path, server, state, *extra):
    return [path, server.url(), "--chunk-size", "256K", "--state", state, "--trace", *extra]


def case_state_kills():
    # Killed during a backoff wait, during a chunk, and between chunks; each time the same
    # command goes on: the same session, from what the server holds, after what was left of
    # the wait. In the end the object is byte-exact, one session was opened, and no byte the
    # server held was sent again.
    size = 12 * CHUNK + 1234
    faults = [{"on": "chunk", "nth": 4, "do": "status", "status": 503},
              {"on": "chunk", "nth": 9, "do": "stall", "commit": 100000, "seconds": 20}]
    tmp, path, body, server = with_server(faults, size=size)
    state = os.path.join(tmp, "upload.state")
    try:
        # 1. Killed in the wait after the 503.
        run1 = Traced(state_args(path, server, state))
        wait = run1.until(lambda e: e["event"] == "wait")
        retries, remaining, release = saved_wait(state)
        run1.kill()
        check(retries == 1 and 0 < remaining <= wait["ms"], f"saved retry state "
              f"{(retries, remaining, release)} for the wait {wait}")

        # 2. Restored: the rest of the wait, a query, then on until the server stalls mid-chunk.
        run2 = Traced(state_args(path, server, state))
        first = run2.next_event()
        check(first["event"] == "restored" and first["retries"] == 1 and
              first["wait_ms"] <= remaining and first["committed"] == 3 * CHUNK,
              f"restored {first}")
        second = run2.next_event()
        if first["wait_ms"] > 0:
            check(second["event"] == "wait" and second["ms"] == first["wait_ms"],
                  f"the restored wait: {second}")
            second = run2.next_event()
        check(second["event"] == "query", f"first exchange {second}")
        wait_until(lambda: any(r.get("answer") == "stall" for r in server.kinds("chunk")),
                   "the server never stalled", 20)
        run2.kill()

        # 3. Restored after a kill mid-chunk; killed again between two chunks.
        run3 = Traced(state_args(path, server, state))
        first = run3.next_event()
        check(first["event"] == "restored" and first["wait_ms"] == 0, f"restored {first}")
        check(run3.next_event()["event"] == "query", f"{run3.events}")
        run3.until(lambda e: e["event"] == "committed")
        run3.until(lambda e: e["event"] == "committed")
        run3.kill()

        # 4. To the end.
        run4 = Traced(state_args(path, server, state))
        code, out = run4.finish()
        check(code == 0, f"the last run exited {code}: {run4.events}")
        expect_metadata(out, size, run4.args)
        check(server.object() == body, "the stored object differs from the file")
        check(len(server.kinds("post")) == 1, f"{len(server.kinds('post'))} sessions opened")
        check(sum(r.get("overlap", 0) for r in server.kinds("chunk")) == 0,
              "committed bytes were sent again")
        check(not os.path.exists(state), "the state file was not removed")
        received = sum(r.get("received", 0) for r in server.kinds("chunk"))
        check(received <= size + 3 * CHUNK, f"the server received {received} for {size}")
        done = run4.events[-1]
        print(f"body bytes the server received over four runs (a 503, three kills): "
              f"{received} for {size}; the last run wrote the state {done['state_writes']} "
              f"times for {sum(1 for e in run4.events if e['event'] == 'chunk')} chunks")
    finally:
        server.stop()
        shutil.rmtree(tmp)


def case_state_wall_clock():
    # The state saved during a wait; the wall clock then moves between runs.
    tmp, path, body, server = with_server([{"on": "chunk", "nth": 2, "do": "status",
                                            "status": 503}])
    state = os.path.join(tmp, "upload.state")
    try:
        run1 = Traced(state_args(path, server, state, "--max-backoff", "20"))
        run1.until(lambda e: e["event"] == "wait")
        retries, remaining, release = saved_wait(state)
        run1.kill()
        saved = open(state, "rb").read()
        check(remaining > 0, f"no wait saved: {(retries, remaining, release)}")
        now = int(time.time() * 1000)

        # Set back an hour (or rebooted into a clock that is behind): no longer than was left.
        with open(state, "wb") as f:
            f.write(with_release(saved, now + 3_600_000))
        run = Traced(state_args(path, server, state, "--max-backoff", "20"))
        first = run.next_event()
        check(first["event"] == "restored" and first["wait_ms"] == remaining,
              f"clock set back: {first}, {remaining} ms were left")
        run.kill()

        # Set forward a day: the wait is over, not negative.
        with open(state, "wb") as f:
            f.write(with_release(saved, now - 86_400_000))
        run = Traced(state_args(path, server, state, "--max-backoff", "20"))
        first = run.next_event()
        check(first["event"] == "restored" and first["wait_ms"] == 0, f"clock forward: {first}")
        check(run.next_event()["event"] == "query", f"{run.events}")
        code, out = run.finish()
        check(code == 0 and server.object() == body, f"exit {code}: {run.events}")
    finally:
        server.stop()
        shutil.rmtree(tmp)


def case_state_refused():
    # Damaged, cut, foreign, newer and mismatched state files are refused (exit 7) and left
    # as they are; nothing is sent.
    tmp, path, body, server = with_server([{"on": "chunk", "nth": 2, "do": "status",
                                            "status": 503}])
    state = os.path.join(tmp, "upload.state")
    try:
        code, out, err = run(path, server.url(), "--chunk-size", "256K", "--state", state,
                             "--max-retries", "0")
        check(code == 3 and os.path.exists(state), f"first run: exit {code}, {err}")
        good = open(state, "rb").read()
        flipped = bytearray(good)
        flipped[20] ^= 0x01
        other = with_release(good, 5)  # A valid record, to be made another upload's below.
        items = [(n, w, (v + 1 if n == 4 else v)) for n, w, v in fields(unframe(other))]
        cases = [
            (b"", "cut short"),
            (good[: len(good) // 2], "cut short"),
            (bytes(flipped), "damaged"),
            (b'{"session": "https://example/"}', "not a stepback transfer state"),
            (frame(unframe(good), version=2), "newer stepback"),
            (frame(encode_fields(items)), "is for a body of"),
        ]
        requests = len(server.log())
        for content, words in cases:
            with open(state, "wb") as f:
                f.write(content)
            code, out, err = run(path, server.url(), "--chunk-size", "256K", "--state", state)
            check(code == 7 and words in err, f"{words}: exit {code}, stderr {err!r}")
            check(open(state, "rb").read() == content, f"{words}: the state file was changed")
        check(len(server.log()) == requests, "a refused state file still led to requests")
        # The good record again: the upload goes on (a fresh retry loop) and finishes.
        with open(state, "wb") as f:
            f.write(good)
        code, out, err = run(path, server.url(), "--chunk-size", "256K", "--state", state)
        check(code == 0 and server.object() == body, f"resumed: exit {code}, {err}")
        check(len(server.kinds("post")) == 1, "a second session was opened")
    finally:
        server.stop()
        shutil.rmtree(tmp)


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[4] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} BINARY UPLOAD_SERVER MAKE_CERTS {'|'.join(CASES)}")
    CASES[sys.argv[4]]()
