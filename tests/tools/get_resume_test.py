"""`stepback get -o FILE` against nginx on loopback: killed with SIGKILL at a random point and
run again, it goes on from its checkpoint and ends byte-exact; redirects are followed as
docs/bodies.md says. nginx is a real server (ranges, If-Range, ETag, limit_rate); its access
log says what was fetched.

usage: get_resume_test.py STEPBACK_BINARY NGINX CASE [N]
CASE is one CTest test (tests/tools/CMakeLists.txt), or `bench N`: N kills at random points,
printing the bytes fetched twice and the checkpoint writes per MiB of each (by hand, see
bench/download_kill.sh).
"""

import base64
import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

from cli_support import check, free_port, nginx_conf, start_nginx, trace_events, wait_until

BINARY = sys.argv[1]
NGINX = sys.argv[2]

SIZE = 6 * 1024 * 1024  # At 1 MiB/s (limit_rate): six seconds of transfer.
RATE = 1024 * 1024
INTERVAL_S = 2  # The desktop profile's checkpoint interval (every 1 MiB and at most every 2 s).
# Every run takes the desktop profile's pace, whatever profile the build chose (mobile: 5 s).
PROFILE = ["--profile", "desktop"]

# What nginx logs of each request, and its servers (str.format: dir, port, port2, rate, md5).
LOG_FORMAT = ('$uri $status $body_bytes_sent "$http_range" "$http_if_range" "$http_authorization"'
              ' $connection')
SERVERS = """  server {{
    listen 127.0.0.1:{port};
    root {dir}/www;
    location /slow/ {{ alias {dir}/www/; limit_rate {rate}; }}
    location /hashed/ {{
      alias {dir}/www/;
      limit_rate {rate};
      add_header x-goog-hash "md5={md5}";
    }}
    location /fast/ {{ alias {dir}/www/; add_header x-goog-hash "md5={md5}"; }}
    location = /latest {{ return 302 /hashed/big.bin; }}
    location = /chain1 {{ return 301 chain2; }}
    location = /chain2 {{ return 307 /slow/small.bin; }}
    location = /loop1 {{ return 302 /loop2; }}
    location = /loop2 {{ return 302 /loop1; }}
    location = /busy30 {{ add_header Retry-After 30 always; return 503; }}
    location = /busy1 {{ add_header Retry-After 1 always; return 503; }}
    location = /elsewhere {{ return 302 http://127.0.0.1:{port2}/small.bin; }}
  }}
  server {{
    listen 127.0.0.1:{port2};
    root {dir}/www;
  }}"""


class Nginx:
    """nginx on two loopback ports over a folder with big.bin and small.bin."""

    def __init__(self, tmp):
        self.dir = tmp
        os.makedirs(os.path.join(tmp, "www"))
        self.big = random.Random(7).randbytes(SIZE)
        self.small = b"small object\n" * 100
        self.write("big.bin", self.big)
        self.write("small.bin", self.small)
        self.port, self.port2 = free_port(), free_port()
        servers = SERVERS.format(dir=tmp, port=self.port, port2=self.port2, rate=RATE,
                                 md5=base64.b64encode(hashlib.md5(self.big).digest()).decode())
        self.proc = start_nginx(
            NGINX, tmp, nginx_conf(tmp, LOG_FORMAT, servers),
            lambda: subprocess.run([BINARY, "get", self.url("/small.bin"), "--max-retries", "0"],
                                   capture_output=True).returncode == 0)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)

    def path(self, name):
        return os.path.join(self.dir, "www", name)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def log(self):
        with open(os.path.join(self.dir, "access.log")) as f:
            return [line.split(" ", 3) for line in f.read().splitlines()]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def get(*args, timeout=30):
    p = subprocess.run([BINARY, "get", *PROFILE, *args], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def part_holds(out, size):
    """Whether OUT.part holds more than `size` bytes (the body's bytes written so far)."""
    part = out + ".part"
    return os.path.exists(part) and os.path.getsize(part) > size


def checkpointed(out):
    """Whether OUT.part.state exists: a checkpoint was made (written whole, then renamed)."""
    return os.path.exists(out + ".part.state")


def start_and_stop(args, ready, what, sig=signal.SIGKILL, then=0.0):
    """Runs `stepback get ARGS`, waits (bounded) until ready() holds, the state the signal is
    meant to find (else fails with `what`), and `then` s more, and sends it `sig`; returns the
    process, ended."""
    p = subprocess.Popen([BINARY, "get", *PROFILE, *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        wait_until(ready, what, 30, proc=p)
        time.sleep(then)
        p.send_signal(sig)
        p.stderr_text = p.communicate(timeout=20)[1]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p


def kill_and_resume(nginx, tmp, ready, kill_after):
    """Starts a download, SIGKILLs it `kill_after` s after ready(out) holds, runs it again to
    the end; returns (bytes fetched twice: what the killed run had written past the checkpoint
    the second run went on from, checkpoint writes per MiB of the second run, its checkpoints
    event)."""
    out = os.path.join(tmp, "big.out")
    for leftover in (out, out + ".part", out + ".part.state"):
        if os.path.exists(leftover):
            os.remove(leftover)
    args = [nginx.url("/latest"), "-o", out, "--trace"]
    start_and_stop(args, lambda: ready(out), f"{args}: the download did not get going",
                   then=kill_after)
    check(os.path.exists(out + ".part"), f"killed at {kill_after:.2f} s: no {out}.part")
    # What the killed run had received and written (up to one stdio buffer more was lost).
    written = os.path.getsize(out + ".part")
    code, _, err = get(*args)
    check(code == 0, f"{args} after a kill at {kill_after:.2f} s exited {code}: {err}")
    with open(out, "rb") as f:
        check(f.read() == nginx.big, f"killed at {kill_after:.2f} s: the file differs")
    check(not os.path.exists(out + ".part.state"), "the state file outlived the download")
    events = trace_events(err, args)
    # The MD5 nginx states covers the whole object, the first run's bytes included: the
    # second run took up the first one's MD5 state from the checkpoint.
    verified = [e for e in events if e["event"] == "integrity"]
    check(verified and verified[-1]["verified"] and "md5" in verified[-1]["message"],
          f"killed at {kill_after:.2f} s: no verified MD5 over the whole object: {verified}")
    resumed = [e for e in events if e["event"] == "checkpoints"]
    resumed_from = resumed[0]["resumed_from"] if resumed else 0
    twice = written - resumed_from
    writes = resumed[0]["stored"] if resumed else 0
    mib = (SIZE - (resumed[0]["resumed_from"] if resumed else 0)) / (1024 * 1024)
    return twice, (writes / mib if mib > 0 else 0.0), resumed


def case_kill9():
    # Killed at a random point after the first checkpoint, the second run fetches at most what
    # arrived after the last checkpoint: one interval at the capped rate, plus a buffer.
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            kill_after = random.uniform(0.0, INTERVAL_S + 0.5)
            twice, _, resumed = kill_and_resume(nginx, tmp, checkpointed, kill_after)
            check(resumed and resumed[0]["resumed_from"] > 0,
                  f"killed at {kill_after:.2f} s, the second run did not go on: {resumed}")
            bound = INTERVAL_S * RATE + 512 * 1024
            check(0 <= twice <= bound,
                  f"killed at {kill_after:.2f} s: {twice} bytes fetched twice (bound {bound})")
            ranges = [r for r in nginx.log() if r[0] == "/hashed/big.bin" and r[1] == "206"]
            fields = ranges[-1][3].split('" "') if ranges else []
            check(len(fields) == 3 and fields[0].startswith('"bytes=') and fields[1] != "-",
                  f"the second run sent no Range with If-Range: {nginx.log()}")
        finally:
            nginx.stop()


def case_changed():
    # The object changed between the runs: If-Range makes nginx send it whole, and the file
    # ends as the new object, never the old prefix spliced onto the new one.
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            out = os.path.join(tmp, "big.out")
            args = [nginx.url("/slow/big.bin"), "-o", out, "--trace"]
            start_and_stop(args, lambda: checkpointed(out), "no checkpoint")
            new = random.Random(8).randbytes(SIZE // 2)
            old_mtime = os.stat(nginx.path("big.bin")).st_mtime_ns
            nginx.write("big.bin", new)
            # A new mtime second, so a new ETag and Last-Modified.
            new_mtime = old_mtime + 2 * 10**9
            os.utime(nginx.path("big.bin"), ns=(new_mtime, new_mtime))
            code, _, err = get(*args)
            check(code == 0, f"{args} exited {code}: {err}")
            with open(out, "rb") as f:
                check(f.read() == new, "the file is not the new object")
        finally:
            nginx.stop()


def case_refused_state():
    # A damaged state file, or one of another URL, is refused with words and left alone.
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            out = os.path.join(tmp, "big.out")
            args = [nginx.url("/slow/big.bin"), "-o", out]
            start_and_stop(args, lambda: checkpointed(out), "no checkpoint")
            state = out + ".part.state"
            with open(state, "rb") as f:
                good = f.read()
            code, _, err = get(nginx.url("/small.bin"), "-o", out)
            check(code == 7 and "for another URL" in err, f"another URL: exit {code}: {err}")
            damaged = bytearray(good)
            damaged[len(damaged) // 2] ^= 0x40
            with open(state, "wb") as f:
                f.write(damaged)
            code, _, err = get(*args)
            check(code == 7 and "refusing the state file" in err and "damaged" in err,
                  f"a damaged record: exit {code}: {err}")
            with open(state, "rb") as f:
                check(f.read() == bytes(damaged), "the refused state file was changed")
            # --state keeps a download's checkpoint beside a file; stdout has none.
            code, _, err = get(nginx.url("/small.bin"), "--state", state)
            check(code == 2 and "--state needs -o FILE" in err, f"--state alone: {code}: {err}")
        finally:
            nginx.stop()


def case_sigint():
    # Ctrl-C ends the download after a last checkpoint (exit 130); the next run goes on.
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            out = os.path.join(tmp, "big.out")
            args = [nginx.url("/slow/big.bin"), "-o", out, "--trace"]
            p = start_and_stop(args, lambda: part_holds(out, 0), "no body byte was written",
                               signal.SIGINT)
            check(p.returncode == 130, f"SIGINT: exit {p.returncode}: {p.stderr_text}")
            size = os.path.getsize(out + ".part")
            check(size > 0 and os.path.exists(out + ".part.state"),
                  f"SIGINT left {size} bytes and no state")
            code, _, err = get(*args)
            check(code == 0, f"{args} exited {code}: {err}")
            resumed = [e for e in trace_events(err, args) if e["event"] == "checkpoints"]
            # The last checkpoint was made at the signal: nothing before it is fetched again.
            check(resumed and resumed[0]["resumed_from"] == size, f"{resumed} vs {size}")
            with open(out, "rb") as f:
                check(f.read() == nginx.big, "the file differs")
        finally:
            nginx.stop()


def case_redirects():
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            # A relative 301 then a 307: followed to the end.
            code, out, err = get(nginx.url("/chain1"))
            check(code == 0 and out.encode() == nginx.small, f"chain: exit {code}: {err}")
            # A loop ends with its own exit code and words.
            code, _, err = get(nginx.url("/loop1"))
            check(code == 14 and "loop" in err, f"loop: exit {code}: {err}")
            # --max-redirs 0: the 302 is the answer.
            code, _, err = get(nginx.url("/chain1"), "--max-redirs", "0")
            check(code == 0, f"--max-redirs 0: exit {code}: {err}")
            code, _, err = get(nginx.url("/chain1"), "--max-redirs", "1")
            check(code == 14 and "more than 1 redirect" in err, f"limit: exit {code}: {err}")
            # To another origin: the token is not sent there.
            code, out, err = get(nginx.url("/elsewhere"), "--oauth2-bearer", "secret-token")
            check(code == 0 and out.encode() == nginx.small, f"elsewhere: exit {code}: {err}")
            log = nginx.log()
            first = [r for r in log if r[0] == "/elsewhere"]
            other = [r for r in log if r[0] == "/small.bin"]
            check(first and "secret-token" in first[-1][3], f"the first origin got no token: {log}")
            check(other and "secret-token" not in other[-1][3],
                  f"the token went to another origin: {other}")
        finally:
            nginx.stop()


def case_range_size():
    # --range-size: the object comes in pieces, each a 206 of its range, on one connection,
    # pinned by If-Range after the first, and nginx's MD5 of the whole object checks it.
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            out = os.path.join(tmp, "big.out")
            args = [nginx.url("/fast/big.bin"), "-o", out, "--range-size", "1M", "--trace"]
            code, _, err = get(*args)
            check(code == 0, f"{args}: exit {code}: {err}")
            with open(out, "rb") as f:
                check(f.read() == nginx.big, "the file in pieces differs from the object")
            pieces = [r for r in nginx.log() if r[0] == "/fast/big.bin"]
            mib = 1024 * 1024
            check(len(pieces) == SIZE // mib, f"{len(pieces)} requests for {SIZE // mib} pieces")
            for i, r in enumerate(pieces):
                want = f'"bytes={i * mib}-{(i + 1) * mib - 1}"'
                check(r[1] == "206" and r[2] == str(mib) and r[3].startswith(want),
                      f"piece {i}: {r}, expected 206 of {want}")
                if_range = r[3].split('" "')[1]
                check((i == 0) == (if_range == "-"), f"piece {i}: If-Range '{if_range}'")
            connections = {r[3].rsplit(" ", 1)[1] for r in pieces}
            check(len(connections) == 1, f"the pieces took {len(connections)} connections")
            events = trace_events(err, args)
            attempts = [e for e in events if e["event"] == "attempt"]
            verified = [e for e in events if e["event"] == "integrity"]
            check(len(attempts) == 1, f"the pieces showed as {len(attempts)} attempts")
            check(verified and verified[-1]["verified"] and "md5" in verified[-1]["message"],
                  f"no verified MD5 over the whole object: {verified}")

            # Ctrl-C in the middle of a paced download in pieces; the next run goes on from
            # the checkpoint with a piece that starts there.
            os.remove(out)
            args = [nginx.url("/hashed/big.bin"), "-o", out, "--range-size", "512K"]
            # In the middle: past the first piece.
            p = start_and_stop(args, lambda: part_holds(out, 512 * 1024), "the first piece never "
                               "came whole", signal.SIGINT)
            check(p.returncode == 130, f"Ctrl-C: exit {p.returncode}: {p.stderr_text}")
            kept = os.path.getsize(out + ".part")
            check(0 < kept < SIZE, f"Ctrl-C left {kept} bytes")
            before = len(nginx.log())
            code, _, err = get(*args, "--trace")
            check(code == 0, f"after Ctrl-C: exit {code}: {err}")
            with open(out, "rb") as f:
                check(f.read() == nginx.big, "the file resumed in pieces differs")
            # nginx logs a request when it ends: the piece Ctrl-C cut may be logged after
            # `before`, so the resumed run's piece is looked for, not taken as the next line.
            want = f'"bytes={kept}-{kept + 512 * 1024 - 1}"'
            resumed = [r for r in nginx.log()[before:] if r[3].startswith(want)]
            check(resumed and resumed[0][1] == "206",
                  f"the resumed run asked no 206 of {want}: {nginx.log()[before:before + 3]}")
            verified = [e for e in trace_events(err, args) if e["event"] == "integrity"]
            check(verified and verified[-1]["verified"], f"not verified whole: {verified}")

            # Only a download comes in pieces; a size of 0 is no size.
            code, _, err = get(nginx.url("/small.bin"), "-X", "POST", "--range-size", "4K")
            check(code == 2 and "--range-size" in err, f"POST: exit {code}: {err}")
            code, _, err = get(nginx.url("/small.bin"), "--range-size", "0")
            check(code == 2 and "--range-size" in err, f"0: exit {code}: {err}")
        finally:
            nginx.stop()


def case_network_policy():
    # The networks a download may use, end to end: the network as --network-type says, the
    # policy as --no-metered, --metered-up-to and --no-roaming say. Refused: it waits
    # (--offline-limit), spending no attempt, then exits 16 and keeps what it has.
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            out = os.path.join(tmp, "big.out")
            url = nginx.url("/fast/big.bin")
            # Metered, and the object (6 MiB, known from the response) above 1 MiB: the body
            # stops when its length is known; the part and its state stay for the next run.
            args = [url, "-o", out, "--network-type", "metered", "--metered-up-to", "1M",
                    "--offline-limit", "0.5", "--trace"]
            code, _, err = get(*args)
            check(code == 16, f"metered, above the limit: exit {code}: {err}")
            events = trace_events(err, args)
            waits = [e for e in events if e["event"] == "wait" and e["reason"] == "offline"]
            check(waits and "metered" in waits[0]["message"], f"no metered wait: {events}")
            check(os.path.exists(out + ".part.state"), "the state was not kept")
            # A network it may use: the same command goes on from the part.
            code, _, err = get(url, "-o", out, "--network-type", "metered", "--metered-up-to",
                               "100M")
            check(code == 0, f"metered, below the limit: exit {code}: {err}")
            with open(out, "rb") as f:
                check(f.read() == nginx.big, "the file differs")
            # Refused before anything is sent: roaming, and metered.
            before = len(nginx.log())
            for flags, why in ((["--network-type", "roaming", "--no-roaming"], "roaming"),
                               (["--network-type", "metered", "--no-metered"], "metered")):
                code, _, err = get(nginx.url("/small.bin"), "--offline-limit", "0.3", *flags)
                check(code == 16 and why in err and "--offline-limit" not in err,
                      f"{flags}: exit {code}: {err}")
            check(len(nginx.log()) == before, f"a refused network sent requests: {nginx.log()}")
            # No network at all is no verdict on a server on loopback: it is tried,
            # and answers; tests/tools/reachability_test.py has the destinations it cannot reach.
            code, _, err = get(nginx.url("/small.bin"), "--offline-limit", "0.3",
                               "--network-type", "none")
            check(code == 0, f"no network, a server on loopback: exit {code}: {err}")
            # An upload waits alike on a network it may not use (no server needed: nothing is
            # sent).
            data = os.path.join(tmp, "data.bin")
            with open(data, "wb") as f:
                f.write(b"x" * 1000)
            p = subprocess.run([BINARY, "upload", "--network-type", "metered", "--no-metered",
                                "--offline-limit", "0.3", data, nginx.url("/upload")],
                               capture_output=True, text=True, timeout=30)
            check(p.returncode == 16 and "metered" in p.stderr,
                  f"upload on a metered network: exit {p.returncode}: {p.stderr}")
        finally:
            nginx.stop()


def case_defer():
    # --defer-after: a wait longer than it, or one for a network, saves and exits 17 at once,
    # saying when to run again, on what network and the bytes left (RunHint); the same
    # command then goes on from the part.
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            out = os.path.join(tmp, "big.out")
            url = nginx.url("/fast/big.bin")
            args = [url, "-o", out, "--network-type", "metered", "--metered-up-to", "1M",
                    "--defer-after", "60", "--trace"]
            start = time.monotonic()
            code, _, err = get(*args)
            check(code == 17, f"metered, above the limit: exit {code}: {err}")
            check(time.monotonic() - start < 20, "it waited instead of deferring")
            events = trace_events(err, args)
            deferred = [e for e in events if e["event"] == "deferred"]
            kept = [e for e in events if e["event"] == "checkpoints"]
            check(deferred and kept, f"no deferred or checkpoints event: {events}")
            d = deferred[0]
            check(d["state"] == "waiting_for_network" and d["unmetered"] and
                  not d["not_roaming"] and d["run_in_ms"] is None,
                  f"the hint is not 'an unmetered network': {d}")
            check(d["bytes_left"] == SIZE - kept[0]["delivered"],
                  f"bytes_left {d['bytes_left']}, expected {SIZE} - {kept[0]['delivered']}")
            check(os.path.exists(out + ".part.state"), "the state was not kept")
            code, _, err = get(url, "-o", out, "--network-type", "unmetered", "--defer-after", "60")
            check(code == 0, f"unmetered: exit {code}: {err}")
            with open(out, "rb") as f:
                check(f.read() == nginx.big, "the file differs")
            # nginx logs a request when it ends, which may come after the client is done.
            def logged_ranges():
                return [line[3] for line in nginx.log() if line[0] == "/fast/big.bin"]
            wait_until(lambda: len(logged_ranges()) >= 2,
                       lambda: f"nginx logged no second run: {logged_ranges()}")
            ranges = logged_ranges()
            check(len(ranges) == 2 and f"bytes={kept[0]['delivered']}-" in ranges[1],
                  f"the second run did not go on by Range: {ranges}")
            # A server's Retry-After longer than --defer-after: deferred with its time.
            args = [nginx.url("/busy30"), "--defer-after", "5", "--trace"]
            code, _, err = get(*args)
            check(code == 17, f"Retry-After 30: exit {code}: {err}")
            d = [e for e in trace_events(err, args) if e["event"] == "deferred"]
            # Retry-After's 30 s, then the first jittered backoff (at most 1 s).
            check(d and d[0]["state"] == "waiting" and 29000 <= d[0]["run_in_ms"] <= 31000,
                  f"the hint is not 'in 30 s': {d}")
            code, _, err = get(nginx.url("/busy30"), "--defer-after", "5")
            check(code == 17 and re.search(r"run the same command again in (30|31)\.\d{3} s", err),
                  f"Retry-After 30, in words: exit {code}: {err}")
            # A shorter one is waited out as usual.
            code, _, err = get(nginx.url("/busy1"), "--defer-after", "5", "--max-retries", "1")
            check(code == 3 and "deferred" not in err, f"Retry-After 1: exit {code}: {err}")
            # Only a GET is a transfer that can be saved and taken up again.
            code, _, err = get("-X", "POST", "--data", "x", "--defer-after", "3", url)
            check(code == 2 and "--defer-after is for a GET" in err, f"a POST: exit {code}: {err}")
            # An upload on a network it may not use defers at once, sending nothing.
            data = os.path.join(tmp, "data.bin")
            with open(data, "wb") as f:
                f.write(b"x" * 1000)
            before = len(nginx.log())
            p = subprocess.run([BINARY, "upload", "--network-type", "metered", "--no-metered",
                                "--defer-after", "1", data, nginx.url("/upload")],
                               capture_output=True, text=True, timeout=30)
            check(p.returncode == 17 and "on an unmetered network (1000 bytes left)" in p.stderr,
                  f"upload on a metered network: exit {p.returncode}: {p.stderr}")
            check(len(nginx.log()) == before, f"the upload sent requests: {nginx.log()}")
        finally:
            nginx.stop()


def bench(n):
    # Kills at random points over the whole transfer; prints one line per run and a summary.
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            for _ in range(n):
                kill_after = random.uniform(0.0, SIZE / RATE - 0.6)
                twice, per_mib, _ = kill_and_resume(nginx, tmp, lambda out: part_holds(out, 0),
                                                    kill_after)
                rows.append((kill_after, twice, per_mib))
                print(f"killed at {kill_after:5.2f} s: {twice:8d} bytes fetched twice, "
                      f"{per_mib:.2f} checkpoint writes per MiB after it")
        finally:
            nginx.stop()
    worst = max(r[1] for r in rows)
    print(f"{n} kills: worst {worst} bytes fetched twice ({worst / RATE:.2f} s at the capped rate; "
          f"checkpoint interval {INTERVAL_S} s = {INTERVAL_S * RATE} bytes), mean "
          f"{sum(r[1] for r in rows) / n:.0f}; checkpoint writes per MiB mean "
          f"{sum(r[2] for r in rows) / n:.2f}")


CASES = {
    "kill9": case_kill9,
    "changed": case_changed,
    "refused_state": case_refused_state,
    "sigint": case_sigint,
    "redirects": case_redirects,
    "range_size": case_range_size,
    "network_policy": case_network_policy,
    "defer": case_defer,
}

if __name__ == "__main__":
    if sys.argv[3] == "bench":
        bench(int(sys.argv[4]))
    else:
        CASES[sys.argv[3]]()
