"""Runs `stepback demo` and `stepback get` on loopback and checks output and exit codes.

usage: get_demo_test.py STEPBACK_BINARY CASE
Each CASE is one CTest test (see tests/tools/CMakeLists.txt). Self-contained: the demo
brings its own HTTPS server; `get` runs against a closed port and a small plain-HTTP
server started here on 127.0.0.1.
"""

import base64
import errno
import hashlib
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

from cli_support import anchor_file, check, free_port, trace_events, wait_until

BINARY = sys.argv[1]

DEMO_BODY = "hello from the stepback demo\n"


def run(*args, timeout=20):
    """Runs the program; returns (exit code, stdout, stderr, seconds)."""
    start = time.monotonic()
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


class StatusServer:
    """A plain-HTTP/1.1 server on 127.0.0.1 answering with `responses` in order (then the
    last one again), one response per connection (Connection: close)."""

    def __init__(self, responses):
        self.responses = responses
        self.served = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            conn, _ = self.sock.accept()
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                status, body = self.responses[min(self.served, len(self.responses) - 1)]
                self.served += 1
                conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n"
                             f"Connection: close\r\n\r\n".encode() + body)


def case_demo_runs():
    code, out, err, seconds = run("demo")
    check(code == 0, f"demo exited {code}, stderr: {err}")
    check(out == DEMO_BODY, f"demo body {out!r}")
    check(seconds < 15, f"demo took {seconds:.1f} s")
    lines = err.splitlines()
    expected = [
        r"attempt 1: 503 Service Unavailable, retrying in \d+\.\d\d s$",
        r"attempt 2: 429 Too Many Requests, retrying in \d+\.\d\d s( \(Retry-After\))?$",
        r"attempt 3: 200 OK$",
        r"stepback demo: 3 attempts, 1 connection opened \(kept alive between attempts\), so no "
        r"TLS resumption; peak TLS arena \d+ bytes",
    ]
    attempts = [l for l in lines if not l.startswith("stepback demo: HTTPS server")
                and not l.startswith("stepback demo: it answers")]
    check(len(attempts) == len(expected), f"demo progress lines: {attempts}")
    for pattern, line in zip(expected, attempts):
        check(re.match(pattern, line), f"demo line {line!r} does not match {pattern!r}")
    # Full jitter's first wait is anything up to the 1 s initial delay.
    first = float(re.search(r"retrying in (\S+) s", attempts[0]).group(1))
    check(0.0 <= first <= 1.0, f"first wait {first} s")
    # Retry-After: 1 means the second wait is never shorter than 1 s.
    second = float(re.search(r"retrying in (\S+) s", attempts[1]).group(1))
    check(second >= 1.0, f"second wait {second} s is shorter than Retry-After")


def case_demo_trace():
    for profile in ["desktop", "mobile"]:
        args = ["demo", "--trace", "--profile", profile]
        code, out, err, seconds = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        check(out == DEMO_BODY, f"{args}: body {out!r}")
        check(seconds < 15, f"{args} took {seconds:.1f} s")
        events = trace_events(err, args)
        kinds = [e["event"] for e in events]
        check(kinds == ["attempt", "response", "wait", "attempt", "response", "wait", "attempt",
                        "response", "done"], f"{args}: event sequence {kinds}")
        check([e["n"] for e in events if e["event"] == "attempt"] == [1, 2, 3],
              f"{args}: attempt numbers")
        check([e["status"] for e in events if e["event"] == "response"] == [503, 429, 200],
              f"{args}: statuses")
        waits = [e for e in events if e["event"] == "wait"]
        check(waits[0]["reason"] == "backoff" and 0 <= waits[0]["ms"] <= 1000,
              f"{args}: first wait {waits[0]}")
        # Retry-After: 1, then the second retry's jittered backoff (at most 2 s).
        check(waits[1]["reason"] == "retry_after" and 1000 <= waits[1]["ms"] <= 3000,
              f"{args}: second wait {waits[1]}")
        done = events[-1]
        check(done["outcome"] == "success" and done["attempts"] == 3 and done["status"] == 200,
              f"{args}: done {done}")
        check(done["connections"] == 1, f"{args}: keep-alive not used: {done}")
        check(type(done["arena_peak"]) is int and 0 < done["arena_peak"] <= 1024 * 1024,
              f"{args}: arena_peak {done}")
        # The waits really happened: the last attempt starts after both.
        check(events[6]["t_ms"] >= waits[0]["ms"] + waits[1]["ms"], f"{args}: waits skipped")


def case_demo_close():
    # The server closes after each response: every retry opens a new connection (and may
    # resume the TLS session; whether it does is reported, not required here).
    args = ["demo", "--close", "--trace"]
    code, out, err, seconds = run(*args)
    check(code == 0 and out == DEMO_BODY, f"{args} exited {code}, stderr: {err}")
    check(seconds < 15, f"{args} took {seconds:.1f} s")
    done = trace_events(err, args)[-1]
    check(done["event"] == "done" and done["attempts"] == 3 and done["connections"] == 3,
          f"{args}: done {done}")
    # The reconnection offered the saved TLS session (a TLS 1.3 ticket) and the server took it.
    check(done["resumed"] is True, f"{args}: the last reconnection did not resume: {done}")


def case_demo_retry_after():
    # The server's Retry-After comes first, then the second retry's own jittered backoff
    # (at most 2 s in both profiles: 1 s doubled), so a fleet told 3 s spreads after it.
    args = ["demo", "--trace", "--retry-after", "3"]
    code, out, err, seconds = run(*args)
    check(code == 0 and out == DEMO_BODY, f"{args} exited {code}, stderr: {err}")
    waits = [e for e in trace_events(err, args) if e["event"] == "wait"]
    check(len(waits) == 2 and waits[1]["reason"] == "retry_after" and
          3000 <= waits[1]["ms"] <= 3000 + 2000, f"{args}: waits {waits}")


def case_get_refused():
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        args = ["get", f"https://127.0.0.1:{port}/", "--cacert", anchor_file(tmp),
                "--max-retries", "1", "--max-backoff", "1"]
        code, out, err, _ = run(*args)
        check(code == 3, f"{args} exited {code}, stderr: {err}")
        check(out == "", f"{args}: stdout {out!r}")
        lines = err.splitlines()
        check(len(lines) == 3, f"{args}: stderr {lines}")
        # The message names the address tried and what happened to it.
        refused = f"could not connect: 127.0.0.1:{port} (Connection refused) (connect)"
        check(re.match("attempt 1: " + re.escape(refused) + r", retrying in (0\.\d\d|1\.00) s$",
                       lines[0]), f"{args}: line {lines[0]!r}")
        check(lines[1] == "attempt 2: " + refused, f"{args}: {lines[1]!r}")
        check(lines[2].startswith("stepback get: stopped after 2 attempts: retries_exhausted"),
              f"{args}: {lines[2]!r}")

        code, out, err, _ = run(*args, "--trace")
        check(code == 3, f"{args} --trace exited {code}, stderr: {err}")
        events = trace_events(err, args)
        kinds = [e["event"] for e in events]
        check(kinds == ["attempt", "error", "wait", "attempt", "error", "done"],
              f"{args}: events {kinds}")
        check(all(e["kind"] == "connect" and e["message"] for e in events
                  if e["event"] == "error"), f"{args}: errors {events}")
        check(events[2]["reason"] == "backoff" and events[2]["ms"] <= 1000, f"{events[2]}")
        check(events[-1]["outcome"] == "retries_exhausted" and events[-1]["attempts"] == 2
              and "status" not in events[-1], f"{args}: done {events[-1]}")


def case_get_http_status():
    # 503 is retried; 404 is terminal and its body goes to stdout.
    server = StatusServer([("503 Service Unavailable", b"busy\n"), ("404 Not Found", b"gone\n")])
    args = ["get", f"http://127.0.0.1:{server.port}/x", "--max-backoff", "0.2"]
    code, out, err, _ = run(*args)
    check(code == 4, f"{args} exited {code}, stderr: {err}")
    check(out == "gone\n", f"{args}: stdout {out!r}")
    check("attempt 2: 404 Not Found" in err and "terminal_status" in err, f"{args}: {err!r}")

    # A POST is not re-sent after a 500: the server may have acted on it.
    server = StatusServer([("500 Internal Server Error", b"oops\n")])
    args = ["get", f"http://127.0.0.1:{server.port}/", "--data", "x=1", "--trace"]
    code, out, err, _ = run(*args)
    check(code == 4, f"{args} exited {code}, stderr: {err}")
    done = trace_events(err, args)[-1]
    check(done["outcome"] == "not_idempotent" and done["attempts"] == 1, f"{args}: {done}")

    server = StatusServer([("200 OK", b"fine\n")])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "body")
        args = ["get", f"http://127.0.0.1:{server.port}/", "-o", path, "--trace"]
        code, out, err, _ = run(*args)
        check(code == 0 and out == "", f"{args} exited {code}, stdout {out!r}, stderr {err}")
        with open(path) as f:
            check(f.read() == "fine\n", f"{args}: file body")
        done = trace_events(err, args)[-1]
        check(done["event"] == "done" and done["status"] == 200, f"{args}: {done}")


def case_get_usage():
    bad = [
        ([], "a URL is required"),
        (["ftp://example.com/"], "invalid URL"),
        (["https://example.com/", "--bogus"], "unknown option '--bogus'"),
        (["https://example.com/", "--profile", "tablet"],
         "invalid --profile 'tablet' (allowed: desktop, mobile)"),
        (["https://example.com/", "--jitter", "wobbly"], "invalid --jitter 'wobbly' (allowed: seed,"),
        # Regression: a switch given a value ("--trace=no") was taken as the switch itself.
        (["https://example.com/", "--trace=no"], "--trace takes no value"),
        (["https://example.com/", "--pin", "md5/x"], "invalid --pin 'md5/x' (expected sha256/"),
        (["https://example.com/", "--max-retries", "x"], "invalid --max-retries 'x'"),
        (["https://example.com/", "--max-retries"], "--max-retries needs a value"),
        (["https://example.com/", "--max-backoff", "0"], "invalid --max-backoff '0'"),
        (["https://example.com/", "--deadline", "0.5"], "--deadline must be 0"),
        (["https://example.com/", "-H", "no colon"], "invalid header 'no colon'"),
        (["https://example.com/", "--cacert", "a", "--capath", "b"], "exclude each other"),
        (["https://example.com/", "https://example.org/"], "unexpected argument"),
        (["https://example.com/", "--cacert", "/nonexistent/ca.pem"], "no usable CA"),
        (["http://127.0.0.1:1/", "-X", "GE T"], "invalid request"),
        # Regression: -X '' silently sent a GET.
        (["http://127.0.0.1:1/", "-X", ""], "-X needs a method"),
        (["http://127.0.0.1:1/", "-H", "Host:"], "cannot remove Host"),
        (["http://127.0.0.1:1/", "-H", "Content-Length: 5"], "frames the body itself"),
        (["http://127.0.0.1:1/", "-H", "Connection: close"], "manages the connection"),
    ]
    for extra, message in bad:
        code, out, err, _ = run("get", *extra)
        check(code == 2, f"get {extra} exited {code}, stderr: {err!r}")
        check(err.startswith("stepback get: ") and message in err,
              f"get {extra}: stderr {err!r} lacks {message!r}")
        check(out == "", f"get {extra}: stdout {out!r}")
    code, out, err, _ = run("demo", "--bogus")
    check(code == 2 and "unknown option '--bogus'" in err, f"demo --bogus: {code} {err!r}")
    code, out, err, _ = run("demo", "--retry-after", "x")
    check(code == 2 and "invalid --retry-after 'x' (expected 0.." in err,
          f"demo --retry-after x: {code} {err!r}")
    for command in ["get", "demo"]:
        code, out, err, _ = run(command, "--help")
        check(code == 0 and out.startswith(f"usage: stepback {command}"), f"{command} --help")
    code, out, _, _ = run("get", "--help")
    for n in range(8):
        check(re.search(rf"^  {n}  ", out, re.M), f"get --help lacks exit code {n}")


def case_get_local_io():
    port = free_port()
    code, _, err, _ = run("get", f"http://127.0.0.1:{port}/", "--data", "@/nonexistent/body")
    check(code == 7 and "cannot read --data file" in err, f"--data: {code} {err!r}")
    code, _, err, _ = run("get", f"http://127.0.0.1:{port}/", "-o", "/nonexistent/dir/out")
    check(code == 7 and "cannot open" in err, f"-o: {code} {err!r}")


class CutServer:
    """A plain-HTTP/1.1 server on 127.0.0.1 serving BODY (100000 bytes) once per connection:
    the first response stops after `cut` bytes (Content-Length says 100000) and closes; later
    ones are whole. With `etag`, it sends that ETag and honours "Range: bytes=N-" (with a
    matching If-Range) by a 206. Records each request's head."""

    BODY = b"".join(b"%09d\n" % i for i in range(10000))  # 100000 ASCII bytes.

    def __init__(self, cut, etag=None):
        self.cut, self.etag, self.heads = cut, etag, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            conn, _ = self.sock.accept()
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                head = data.decode("latin-1").lower()
                self.heads.append(head)
                # Read the request body too: closing with unread bytes sends a reset, which
                # can cut the response the client is still reading (seen under qemu).
                m = re.search(r"\r\ncontent-length: (\d+)\r\n", head)
                want = int(m.group(1)) if m else 0
                got = len(data) - (data.find(b"\r\n\r\n") + 4)
                while got < want:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    got += len(chunk)
                body, status, extra = self.BODY, "200 OK", ""
                if self.etag:
                    extra += f"ETag: {self.etag}\r\n"
                    m = re.search(r"\r\nrange: bytes=(\d+)-\r\n", head)
                    if m and f"if-range: {self.etag}".lower() in head:
                        start = int(m.group(1))
                        extra += f"Content-Range: bytes {start}-{len(body) - 1}/{len(body)}\r\n"
                        body, status = body[start:], "206 Partial Content"
                sent = body[: self.cut] if len(self.heads) == 1 else body
                conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{extra}"
                             f"Connection: close\r\n\r\n".encode() + sent)


def case_get_cut_stdout():
    # Regression: a body cut at 30000 bytes and retried came out on stdout as the
    # 30000 bytes followed by the whole body (130000 bytes) with exit 0. With no validator to
    # resume with, stdout cannot start over: exit 8, and stdout holds a prefix of the body.
    server = CutServer(cut=30000)
    args = ["get", f"http://127.0.0.1:{server.port}/o", "--max-backoff", "0.2"]
    p = subprocess.run([BINARY, *args], capture_output=True, timeout=30)
    check(p.returncode == 8, f"{args} exited {p.returncode}, stderr: {p.stderr!r}")
    check(CutServer.BODY.startswith(p.stdout) and len(p.stdout) <= 30000,
          f"{args}: stdout is not a prefix of the body ({len(p.stdout)} bytes)")
    check(b"nothing was spliced" in p.stderr, f"{args}: {p.stderr!r}")


def case_get_cut_file():
    # The same cut with -o FILE: the file starts over and ends byte-exact, renamed from .part.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "object")
        server = CutServer(cut=30000)
        args = ["get", f"http://127.0.0.1:{server.port}/o", "--max-backoff", "0.2", "-o", out]
        code, _, err, _ = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        with open(out, "rb") as f:
            check(f.read() == CutServer.BODY, f"{args}: the file differs from the body")
        check(not os.path.exists(out + ".part"), f"{args}: {out}.part left behind")


def case_get_resume():
    # With a strong ETag the retry asks for the missing bytes only, pinned with If-Range.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "object")
        server = CutServer(cut=30000, etag='"v1"')
        args = ["get", f"http://127.0.0.1:{server.port}/o", "--max-backoff", "0.2", "-o", out,
                "--trace"]
        code, _, err, _ = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        with open(out, "rb") as f:
            check(f.read() == CutServer.BODY, f"{args}: the file differs from the body")
        check(len(server.heads) == 2 and "range: bytes=30000-" in server.heads[1]
              and 'if-range: "v1"' in server.heads[1], f"{args}: requests {server.heads!r}")
        done = [e for e in trace_events(err, args) if e["event"] == "done"][-1]
        check(done["delivered"] == 100000 and done["refetched"] == 0, f"{args}: {done}")


def case_get_failed_keeps_file():
    # A failed run leaves an existing FILE as it was and no FILE.part.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "object")
        with open(out, "w") as f:
            f.write("old contents\n")
        server = StatusServer([("404 Not Found", b"gone\n")])
        args = ["get", f"http://127.0.0.1:{server.port}/o", "-o", out]
        code, _, err, _ = run(*args)
        check(code == 4, f"{args} exited {code}, stderr: {err}")
        with open(out) as f:
            check(f.read() == "old contents\n", f"{args}: the existing file was changed")
        check(not os.path.exists(out + ".part"), f"{args}: {out}.part left behind")


def case_get_output_fifo():
    # Regression: -o renamed FILE.part over FILE even when FILE was not a regular file, so
    # `-o /dev/null` as root replaced the device with a regular file. Written to a FIFO here.
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "pipe")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
        reader.start()
        server = StatusServer([("200 OK", b"through the pipe\n")])
        args = ["get", f"http://127.0.0.1:{server.port}/o", "-o", fifo]
        code, _, err, _ = run(*args)
        reader.join(5)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        check(stat.S_ISFIFO(os.stat(fifo).st_mode), f"{args}: the FIFO was replaced")
        check(got == [b"through the pipe\n"], f"{args}: the reader got {got!r}")
        check(not os.path.exists(fifo + ".part"), f"{args}: {fifo}.part left behind")


def case_get_closed_stdio():
    # Regression: started with stdout closed, the first socket became fd 1 and the
    # body was written back to the server. fds 0-2 are now opened on /dev/null first (stdout
    # read-only: the body cannot be written, exit 7, see get.stdout_closed).
    body = b"x" * 50000
    for redirect, want in ((">&-", 7), ("2>&-", 0), ("<&- >&- 2>&-", 7)):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        received = []

        def serve():
            conn, _ = sock.accept()
            with conn:
                conn.settimeout(2)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                extra = b""
                try:
                    while True:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        extra += chunk
                except OSError:
                    pass
                received.append(extra)

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        cmd = f'exec "$0" get http://127.0.0.1:{port}/ {redirect}'
        p = subprocess.run(["bash", "-c", cmd, BINARY], capture_output=True, timeout=30)
        t.join(5)
        check(p.returncode == want, f"{redirect}: exited {p.returncode}, want {want}")
        check(received == [b""], f"{redirect}: the server got {len(received[0]) if received else '?'} "
                                 "stray bytes after the request")


def case_get_stdout_closed():
    # Regression: with stdout closed (`>&-`) a 100 KB body ended with exit 0, lost without a
    # word. Now exit 7, saying so; a body small enough for the stdio buffer fails at the flush.
    for size in (100_000, 10):
        body = b"y" * size
        server = RawServer([b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                            % size + body])
        cmd = f'exec "$0" get http://127.0.0.1:{server.port}/ >&-'
        p = subprocess.run(["bash", "-c", cmd, BINARY], capture_output=True, text=True, timeout=30)
        check(p.returncode == 7, f"{size} bytes: exited {p.returncode}, stderr {p.stderr!r}")
        want = "stepback get: cannot write the body to stdout: " + os.strerror(errno.EBADF)
        check(want in p.stderr, f"{size} bytes: stderr {p.stderr!r}")
        # heads: logged before the answer is sent, so complete once the client has exited.
        check(len(server.heads) == 1, f"{size} bytes: {len(server.heads)} requests, want 1")


def case_get_stdout_reader_gone():
    # Regression: stdout a pipe whose reader went away mid-body: SIGPIPE ended the process
    # with nothing said. Now the write fails with EPIPE: exit 7, saying so.
    size = 4_000_000  # Far more than a pipe holds, so the write after the close fails.
    server = RawServer([b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                        % size + b"z" * size])
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([BINARY, "get", f"http://127.0.0.1:{server.port}/"],
                             stdout=subprocess.PIPE, stderr=err)
        first = p.stdout.read(1000)
        p.stdout.close()  # The reader goes away, as `| head -c 1000` does.
        code = p.wait(timeout=30)
        err.seek(0)
        text = err.read().decode()
    check(first == b"z" * 1000, f"first bytes {first[:20]!r}")
    check(code == 7, f"exited {code} (a negative code is the signal that ended it): {text!r}")
    want = "stepback get: cannot write the body to stdout: " + os.strerror(errno.EPIPE)
    check(want in text, f"stderr {text!r}")


def case_get_max_time():
    # Regression: a run ended by --max-time closed with "stopped after 1 attempt:
    # terminal_failure (the transport failed in a way that is not retried)"; it names the limit.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]

    def hold():
        conn, _ = sock.accept()
        with conn:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
            try:
                conn.recv(1)  # Holds the rest of the body until the client gives up.
            except OSError:
                pass

    threading.Thread(target=hold, daemon=True).start()
    code, out, err, _ = run("get", f"http://127.0.0.1:{port}/", "--max-time", "1.5")
    check(code == 9, f"exit {code}, stderr {err!r}")
    check("stepback get: stopped after 1 attempt: the time limit (--max-time 1.5 s) passed\n"
          in err, f"stderr {err!r}")


def case_get_jitter_seed():
    # --jitter seed is the documented formula itself: capped at 0.2 s, every wait is the cap.
    server = StatusServer([("503 Service Unavailable", b"busy\n")])
    args = ["get", f"http://127.0.0.1:{server.port}/", "--jitter", "seed", "--max-backoff", "0.2",
            "--max-retries", "2", "--trace"]
    code, _, err, _ = run(*args)
    check(code == 3, f"{args} exited {code}, stderr: {err}")
    waits = [e["ms"] for e in trace_events(err, args) if e["event"] == "wait"]
    check(waits == [200, 200], f"{args}: waits {waits}")
    code, _, err, _ = run("get", "http://127.0.0.1:1/", "--jitter", "wild")
    check(code == 2 and "invalid --jitter 'wild'" in err, f"--jitter wild: {code} {err!r}")


def case_get_data_content_type():
    # A body with no declared type is sent as curl's application/x-www-form-urlencoded; -H
    # overrides it.
    server = CutServer(cut=len(CutServer.BODY))
    base = ["get", f"http://127.0.0.1:{server.port}/", "--data", "x=1", "-o", os.devnull]
    code, _, err, _ = run(*base)
    check(code == 0, f"{base} exited {code}, stderr: {err}")
    code, _, err, _ = run(*base, "-H", "Content-Type: text/plain")
    check(code == 0, f"-H Content-Type exited {code}, stderr: {err}")
    check("content-type: application/x-www-form-urlencoded\r\n" in server.heads[0],
          server.heads[0])
    check("content-type: text/plain\r\n" in server.heads[1]
          and "x-www-form-urlencoded" not in server.heads[1], server.heads[1])
    # Regression: -H 'Host: ...' and -H 'User-Agent: ...' were refused; as curl, they
    # replace the defaults, and an empty User-Agent drops the field.
    code, _, err, _ = run(*base, "-H", "Host: api.example.test", "-H", "User-Agent: probe/1")
    check(code == 0, f"-H Host/User-Agent exited {code}, stderr: {err}")
    head = server.heads[2]
    check("host: api.example.test\r\n" in head and head.count("host:") == 1, head)
    check("user-agent: probe/1\r\n" in head and "stepback/" not in head, head)
    code, _, err, _ = run(*base, "-H", "User-Agent:")
    check(code == 0 and "user-agent:" not in server.heads[3], server.heads[3])


class RawServer:
    """Answers each connection on 127.0.0.1 with the next of `responses` (raw bytes)."""

    def __init__(self, responses):
        self.responses, self.served, self.heads = responses, 0, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            conn, _ = self.sock.accept()
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                self.heads.append(data.decode("latin-1"))
                try:
                    conn.sendall(self.responses[min(self.served, len(self.responses) - 1)])
                except OSError:
                    pass  # The client stopped reading (a test of a client that gives up).
                self.served += 1


def case_get_large_head():
    # Regression: 100 header lines of 100 bytes failed with "malformed or too large" (an
    # undocumented 8 KiB limit). The CLI's response-head buffer is 32 KiB, and a head beyond
    # it fails with a message naming the buffer and its size.
    fields = "".join(f"X-Goog-Field-{i:03d}: {'v' * 80}\r\n" for i in range(100))
    ok = RawServer([f"HTTP/1.1 200 OK\r\n{fields}Content-Length: 2\r\n\r\nok".encode()])
    code, out, err, _ = run("get", f"http://127.0.0.1:{ok.port}/")
    check(code == 0 and out == "ok", f"a 10 KB head: exit {code}, stderr {err!r}")
    huge = "".join(f"X-Big-{i:04d}: {'v' * 80}\r\n" for i in range(400))
    big = RawServer([f"HTTP/1.1 200 OK\r\n{huge}Content-Length: 2\r\n\r\nok".encode()])
    code, out, err, _ = run("get", f"http://127.0.0.1:{big.port}/", "--max-retries", "0")
    check(code != 0 and "response-head buffer (ClientBuffers::response_head, 32768 bytes)" in err,
          f"a 37 KB head: exit {code}, stderr {err!r}")


def case_get_last_body():
    # Regression: the body of the last retryable answer (a 503 to the end) was never shown,
    # while a 404's is; it now goes to stderr after "gave up", printable bytes only.
    body = b"Down for maintenance until 12:00 UTC\x1b[2J, see status page"
    server = RawServer([b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n" % len(body) + body])
    code, _, err, _ = run("get", f"http://127.0.0.1:{server.port}/", "--max-retries", "1",
                          "--max-backoff", "0.2")
    check(code == 3, f"exit {code}, stderr {err!r}")
    check("the last answer (503) said: Down for maintenance until 12:00 UTC" in err, err)
    check("\x1b" not in err, f"raw escape reached the terminal: {err!r}")
    # Regression: a body's own trailing line end showed as '?' before the line's.
    body = b"Service Unavailable\r\n"
    server = RawServer([b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n" % len(body) + body])
    code, _, err, _ = run("get", f"http://127.0.0.1:{server.port}/", "--max-retries", "1",
                          "--max-backoff", "0.2")
    shown = [line for line in err.splitlines() if "the last answer (503) said: " in line]
    check(code == 3 and len(shown) == 1, f"exit {code}, stderr {err!r}")
    check(shown[0].endswith("said: Service Unavailable"), f"shown {shown[0]!r}")
    # Bounded: of a 100 KB error body, the first 200 bytes and a mark that it goes on.
    long_body = b"{\"error\": \"" + b"w" * 100_000 + b"\"}"
    server = RawServer([b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n" % len(long_body) + long_body])
    code, _, err, _ = run("get", f"http://127.0.0.1:{server.port}/", "--max-retries", "1",
                          "--max-backoff", "0.2")
    check(code == 3, f"long body: exit {code}, stderr {err[:300]!r}")
    shown = [line for line in err.splitlines() if "the last answer (503) said: " in line]
    check(len(shown) == 1, f"long body: stderr {err[:300]!r}")
    said = shown[0].split("the last answer (503) said: ", 1)[1]
    check(said == (long_body[:200].decode() + " [...]"), f"long body: shown {said!r}")
    check(len(err) < 2000, f"long body: {len(err)} bytes on stderr")


def case_get_integrity():
    # Content-MD5 states the body's digest: a corrupted body fails with exit 10, names both
    # digests, and leaves no FILE; the right body passes.
    body = CutServer.BODY
    md5 = base64.b64encode(hashlib.md5(body).digest())
    corrupt = body[:500] + b"X" + body[501:]
    def response(payload):
        return (b"HTTP/1.1 200 OK\r\nContent-MD5: " + md5 + b"\r\nContent-Length: %d\r\n"
                b"Connection: close\r\n\r\n" % len(payload) + payload)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "object")
        server = RawServer([response(corrupt)])
        args = ["get", f"http://127.0.0.1:{server.port}/o", "-o", out, "--trace"]
        code, _, err, _ = run(*args)
        check(code == 10, f"{args} exited {code}, stderr: {err}")
        check("md5 mismatch: expected " + md5.decode() in err, f"{args}: {err!r}")
        check(not os.path.exists(out) and not os.path.exists(out + ".part"), f"{args}: output left")
        server = RawServer([response(body)])
        args = ["get", f"http://127.0.0.1:{server.port}/o", "-o", out, "--trace"]
        code, _, err, _ = run(*args)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        events = trace_events(err, args)
        check(any(e["event"] == "integrity" and e["verified"] for e in events), f"{args}: {events}")


def case_get_token_file():
    # The token is read from the file before every attempt; an expired one (401 with
    # error="invalid_token") gets one fresh read and an immediate attempt, without a backoff;
    # the token never appears in progress lines or traces.
    token = "ya29.a-secret-access-token"
    expired = (b'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer error="invalid_token"\r\n'
               b"Content-Length: 0\r\nConnection: close\r\n\r\n")
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "token")
        with open(path, "w") as f:
            f.write("  " + token + "\n")
        for extra in ([], ["--trace"]):
            server = RawServer([expired, ok])
            args = ["get", f"http://127.0.0.1:{server.port}/", "--token-file", path, *extra]
            code, out, err, _ = run(*args)
            check(code == 0 and out == "ok\n", f"{args} exited {code}, stderr: {err}")
            check(len(server.heads) == 2, f"{args}: {len(server.heads)} requests")
            check(all(f"\r\nAuthorization: Bearer {token}\r\n" in h for h in server.heads),
                  f"{args}: {server.heads!r}")
            check(token not in err and "retrying in" not in err, f"{args}: {err!r}")
        server = RawServer([expired])
        args = ["get", f"http://127.0.0.1:{server.port}/", "--oauth2-bearer", token]
        code, _, err, _ = run(*args)
        check(code == 4 and len(server.heads) == 2, f"{args}: exit {code}, {len(server.heads)} requests")
        check(token not in err, f"{args}: the token was printed: {err!r}")


def slow_body_server(body, pieces, pause):
    """A one-connection server that sends `body` in `pieces` pieces, `pause` seconds apart;
    returns its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    step = -(-len(body) // pieces)

    def serve():
        conn, _ = sock.accept()
        with conn:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
            for i in range(0, len(body), step):
                conn.sendall(body[i:i + step])
                time.sleep(pause)
        sock.close()

    threading.Thread(target=serve, daemon=True).start()
    return sock.getsockname()[1]


def case_get_meter():
    # On a terminal, a body that takes a while shows a live meter: bytes, rate, time left.
    port = slow_body_server(b"m" * 3_000_000, 30, 0.033)  # About 1 s in all.
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([BINARY, "get", f"http://127.0.0.1:{port}/", "-o", os.devnull],
                         stderr=slave, stdout=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    end = time.monotonic() + 20
    while time.monotonic() < end:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    code = p.wait(timeout=20)
    os.close(master)
    check(code == 0, f"exit {code}: {seen!r}")
    check(re.search(rb"\rattempt 1: 200 OK, [0-9.]+ MB of 3.0 MB \([0-9]+%\), [0-9.]+ MB/s, [0-9]+ s left\x1b\[K", seen) is not None,
          f"no meter on the terminal: {seen[-400:]!r}")


def case_get_meter_tmux():
    # The meter in a real terminal (tmux): one line, redrawn in place, with bytes, percent,
    # rate and time left; the line left at the end is the attempt's plain one.
    tmux = shutil.which("tmux")
    check(tmux is not None, "tmux is missing (scripts/setup.sh installs it)")
    port = slow_body_server(b"t" * 4_000_000, 40, 0.05)  # About 2 s.
    server = f"stepback-meter-{os.getpid()}"
    tmp = tempfile.mkdtemp()
    done = os.path.join(tmp, "done")
    command = (f"{shlex.quote(BINARY)} get http://127.0.0.1:{port}/ -o /dev/null; "
               f"echo exit=$? > {shlex.quote(done)}; sleep 60")
    subprocess.run([tmux, "-L", server, "new-session", "-d", "-x", "160", "-y", "12", command],
                   check=True, timeout=10)
    screens = []

    def capture():
        return subprocess.run([tmux, "-L", server, "capture-pane", "-p"], capture_output=True,
                              text=True, timeout=10).stdout

    def captured_then_done():
        screens.append(capture())
        return os.path.exists(done)

    def drawn_to_the_end():
        # The program has exited; tmux may not have drawn its last line yet.
        screen = capture()
        lines = [l for l in screen.splitlines() if l.strip()]
        return screen if lines[-1:] == ["attempt 1: 200 OK"] else None
    try:
        wait_until(captured_then_done, lambda: f"the command did not end: {screens[-1:]!r}", 30,
                   every=0.1)
        final = wait_until(drawn_to_the_end, lambda: f"the final screen: {capture()!r}", 10,
                           every=0.05)
    finally:
        subprocess.run([tmux, "-L", server, "kill-server"], capture_output=True, timeout=10)
    with open(done) as f:
        check(f.read().strip() == "exit=0", f"exit: {open(done).read()!r}")
    meter = re.compile(r"^attempt 1: 200 OK, ([0-9.]+) MB of 4\.0 MB \(([0-9]+)%\), [0-9.]+ MB/s"
                       r"(, [0-9]+ s left)?$")
    seen = []
    for screen in screens:
        lines = [l for l in screen.splitlines() if l.strip()]
        # In place: never a second attempt line on the screen.
        check(sum(l.startswith("attempt 1:") for l in lines) <= 1, f"more than one line: {screen!r}")
        for l in lines:
            m = meter.match(l)
            if m:
                seen.append(int(m.group(2)))
    check(len(set(seen)) >= 2, f"the meter was not seen moving: {seen} in {screens[-5:]!r}")
    check(seen == sorted(seen) and all(0 <= p <= 100 for p in seen), f"percentages: {seen}")
    lines = [l for l in final.splitlines() if l.strip()]
    check(lines == ["attempt 1: 200 OK"], f"the final screen: {final!r}")
    shutil.rmtree(tmp)


def case_get_progress_lines():
    # Not a terminal: plain progress lines every 5 s, each after the attempt's words so far.
    port = slow_body_server(b"p" * 1_200_000, 60, 0.1)  # About 6 s.
    code, out, err, _ = run("get", f"http://127.0.0.1:{port}/", "-o", os.devnull, timeout=40)
    check(code == 0, f"exit {code}: {err!r}")
    lines = err.splitlines()
    check(len(lines) >= 2 and lines[0] == "attempt 1: 200 OK", f"stderr: {err!r}")
    progress = re.compile(r"^stepback get: [0-9.]+ MB of 1\.2 MB \([0-9]+%\), [0-9.]+ MB/s"
                          r"(, [0-9]+ s left)?$")
    check(all(progress.match(l) for l in lines[1:]), f"stderr: {err!r}")
    check("\r" not in err and "\x1b" not in err, f"terminal codes on a pipe: {err!r}")


def case_get_control_bytes():
    # Regression: C1 control bytes in a reason phrase reached the terminal raw
    # (0x9b is a one-byte CSI); everything printed from the network is sanitized.
    server = RawServer([b"HTTP/1.1 404 Not\x9b2J Found\x9b31m\r\nContent-Length: 0\r\n"
                        b"Connection: close\r\n\r\n"])
    p = subprocess.run([BINARY, "get", f"http://127.0.0.1:{server.port}/"], capture_output=True,
                       timeout=20)
    check(p.returncode == 4, f"exit {p.returncode}: {p.stderr!r}")
    check(b"\x9b" not in p.stderr and b"404 Not?2J Found?31m" in p.stderr,
          f"stderr: {p.stderr!r}")


class TrickleServer:
    """A plain-HTTP/1.1 server on 127.0.0.1 that is alive but of no use: each connection gets
    a head that never ends, a byte every `head_gap` seconds (a slowloris), or else the whole
    head (ETag "t1", Content-Length `size`), `burst` body bytes at once and then one byte
    every `body_gap` seconds, until the client goes away. A request with Range: bytes=N- and
    If-Range "t1" gets the rest at once in a 206. Keeps each request head and how each
    connection ended."""

    def __init__(self, size=100000, burst=0, body_gap=0.1, head_gap=None):
        self.size, self.burst, self.body_gap, self.head_gap = size, burst, body_gap, head_gap
        self.body = bytes(i * 7 & 0xFF for i in range(size))
        self.heads, self.ends = [], []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            head = data.decode("latin-1")
            self.heads.append(head)
            wanted = re.search(r"(?im)^range: bytes=(\d+)-\r$", head)
            try:
                if wanted and re.search(r'(?im)^if-range: "t1"\r$', head):
                    start = int(wanted.group(1))
                    conn.sendall(f"HTTP/1.1 206 Partial Content\r\nETag: \"t1\"\r\n"
                                 f"Content-Range: bytes {start}-{self.size - 1}/{self.size}\r\n"
                                 f"Content-Length: {self.size - start}\r\n\r\n".encode()
                                 + self.body[start:])
                    self.ends.append("served")
                    return
                head = (f"HTTP/1.1 200 OK\r\nETag: \"t1\"\r\nContent-Length: {self.size}\r\n"
                        f"\r\n").encode()
                if self.head_gap is not None:
                    head = b"HTTP/1.1 200 OK\r\nX-Slow: "
                    while True:  # A field that never ends.
                        conn.sendall(head[:1])
                        head = head[1:] or b"s"
                        time.sleep(self.head_gap)
                conn.sendall(head + self.body[:self.burst])
                for i in range(self.burst, self.size):
                    time.sleep(self.body_gap)
                    conn.sendall(self.body[i:i + 1])
                self.ends.append("body sent")
            except OSError:
                self.ends.append("client left")


def case_get_speed_limit():
    # A body that trickles below --speed-limit is cut after --speed-time, and the download
    # goes on from where it stopped (Range, If-Range) on a new connection, byte-exact.
    server = TrickleServer(burst=3000)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "body")
        args = ["get", f"http://127.0.0.1:{server.port}/t", "-o", path, "--speed-limit", "1000",
                "--speed-time", "1", "--max-backoff", "0.2"]
        code, out, err, _ = run(*args, timeout=30)
        check(code == 0, f"{args} exited {code}, stderr: {err}")
        check(re.search(r"attempt 1: 200 OK, the response body arrived at \d+ B/s over \d+ ms, "
                        r"below the speed limit of 1000 B/s \(timeout\), retrying in", err),
              f"{args}: stderr {err!r}")
        with open(path, "rb") as f:
            check(f.read() == server.body, f"{args}: the file differs from the body")
        check(len(server.heads) == 2 and re.search(r"(?im)^range: bytes=3\d\d\d-\r$",
                                                   server.heads[1]),
              f"{args}: requests {server.heads}")


def case_get_slow_defaults():
    # "A hostile server cannot hold a client forever with the profile's defaults": a head
    # sent a byte a second ends at the read timeout (30 s), a body at 10 B/s at the first
    # window's end (1 KiB/s over 30 s). Both run at once; each used to run until killed.
    slowloris = TrickleServer(head_gap=1.0)
    trickle = TrickleServer(body_gap=0.1)
    runs = {}
    for name, server in [("head", slowloris), ("body", trickle)]:
        args = [BINARY, "get", f"http://127.0.0.1:{server.port}/", "--profile", "desktop",
                "--max-retries", "0"]
        runs[name] = (args, time.monotonic(), subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    expected = {"head": "the response head did not arrive within the read timeout (30000 ms)",
                "body": "below the speed limit of 1024 B/s"}
    for name, (args, start, p) in runs.items():
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            check(False, f"{args}: still running after 60 s")
        seconds = time.monotonic() - start
        check(p.returncode == 3, f"{args} exited {p.returncode}, stderr: {err}")
        check(expected[name] in err, f"{args}: stderr {err!r}")
        check(29 <= seconds < 45, f"{args} took {seconds:.1f} s")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} BINARY {'|'.join(CASES)}")
    CASES[sys.argv[2]]()
    print("PASS")
