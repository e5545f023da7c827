#!/usr/bin/env python3
"""Round trips of `stepback get` over the latency test bench (bench/netbench/netbench.sh).

What is asserted is what the network makes deterministic: how many round trips (RTT) each part
of a request takes, as an integer, round(ms / RTT), never a wall-clock tolerance. At 50 ms RTT
a count only moves when something costs 25 ms more than the protocol needs: a whole extra
exchange, or a sleep.

The server is this script (--serve) in the server namespace: a Python ssl (OpenSSL) server on
10.77.0.2 / fd77::2, port 8443 (TLS 1.2 and 1.3) and 8412 (TLS 1.2 only), with a P-256
certificate signed by a throwaway CA made with openssl at test time. It logs with
time.monotonic(), per connection:
  accept   when accept() returns: the client's ACK of the SYN-ACK arrived (and with it, sent
           at once after it, the ClientHello); syn_rtt_ms: the kernel's own SYN-ACK -> ACK
           round trip (TCP_INFO tcpi_rtt of the new socket);
  hello    when the first byte (the ClientHello) is readable;
  tls      handshake done: version, session_reused, the handshake messages read and written
           with their times (OpenSSL's message callback), hence the server's own processing
           time ("busy") and the number of ClientHellos (2 would be a HelloRetryRequest);
  req      a request head complete;  resp  its response written.
With RTT T (the bench delays each direction by T/2), a fresh TLS 1.3 GET:
  the client's SYN leaves at 0; the SYN-ACK is back at T; the client sends the ACK and the
  ClientHello at once: the server accepts at 1.5 T with the ClientHello (accept -> hello:
  0 RTT); ServerHello..Finished reach the client at 2 T, which sends Finished and the request
  at once: the server has the request at 2.5 T (accept -> request: 1 RTT); the response is at
  the client at 3 T (client: attempt -> response 3 RTT).
  TLS 1.2 (full handshake): one more exchange: accept -> request 2 RTT, client 4.
  A resumed session (TLS 1.3 PSK-ECDHE, or a TLS 1.2 abbreviated handshake): accept ->
  request 1 RTT.
  A retry on a kept connection after a wait W: the server wrote the 503 at s; the client has it
  at s + T/2, waits W and sends the request at once: it arrives at s + W + T (1 RTT: no
  connect, no handshake); the client's retry, attempt -> done: 1 RTT.
  A retry on a new, resumed connection: the server accepts at s + W + 2 T and has the request
  at s + W + 3 T (3 RTT); the client's retry: 3 RTT (connect, handshake, request).
The test server's processing (its handshake messages; request -> response written), timed on
its own clock, is not a round trip: it is taken out of the counts (1-5 ms here). What is left
besides the round trips: stepback's own work (its handshake crypto, about 4 ms on this
machine) and the bench's delay programs being late.
Scheduling: on a machine whose cores are busy with other work (builds), a woken process waits
for a core; at 50 ms RTT that alone moved counts (a SYN-ACK -> ACK of 67 ms was seen, with the
delay programs at nice -10). So the client and the server run SCHED_FIFO (chrt -f 10; nice -10
where chrt cannot), and so do this bench's delay programs (raised to chrt -f 20 after `up`).
Stalls: this machine (a VM) also stops now and then as a whole, both cores at the same
moment, for 5-25 ms, which even a SCHED_FIFO process sees as an oversleep. At 50 ms RTT one
such stall inside an exchange can move a count. A watchdog (--watch-stalls: chrt -f 30, 1 ms
sleeps) logs every oversleep of 5 ms or more; a case whose count is off while the watchdog saw
a stall during its run is void and runs again (twice at most; the table says so). A count off
without a stall fails.

Cases, per RTT (one bench bring-up each; default 50, 150 and 300 ms): a small GET over IPv4
(desktop and --profile mobile) and IPv6, TLS 1.2, a 503 (Retry-After: 1) then 200 on the kept
connection, a 503 with Connection: close then 200 on a resumed TLS 1.3 and TLS 1.2 session, and
a multi-megabyte GET (its handshake counted, its transfer not; one connection, the exact
body). Then with 2% loss each way at 50 ms RTT: a small and a multi-megabyte GET, asserting
only success and the exact body (loss makes timing random).
Prints a markdown table and a closing "N passed, N failed" line. About 65 s.

Run (as root):  bench/netbench/roundtrips_test.py STEPBACK_CLI [--rtts 50,150,300] [--loss 2]
Exit: 0 all cases passed, 1 a case failed, 77 the bench cannot run here (not root, no
network namespaces, no NFQUEUE, no openssl, ...), with the reason printed.
Environment: NETBENCH_ID (default "rt": namespaces sbnb-cli-rt and sbnb-srv-rt), NFQ_DELAY
(as for netbench.sh), KEEP_TMP=1 keeps the temp dir (server log, client traces).
Needs: what netbench.sh needs, python3, openssl, chrt (util-linux). The bench is torn down at
exit (also on SIGINT/SIGTERM).
"""
import argparse
import atexit
import hashlib
import json
import os
import random
import select
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NETBENCH = os.path.join(HERE, "netbench.sh")
SRV_V4, SRV_V6 = "10.77.0.2", "fd77::2"
PORT_TLS13, PORT_TLS12 = 8443, 8412   # 8443 offers TLS 1.2 and 1.3; 8412 TLS 1.2 only
SMALL_BYTES = 1024
IO_TIMEOUT = 60.0          # every socket operation of the server
SERVER_LIFETIME = 900.0    # the server stops by itself after this
CLIENT_TIMEOUT = 120       # one `stepback get`, seconds
RETRY_AFTER_S = 1


# ---------------------------------------------------------------- the server (server namespace)

def body_of(n):
    """The deterministic body of /big/N: N pseudo-random bytes (so a misplaced or repeated
    block cannot go unnoticed)."""
    return random.Random(n).randbytes(n)


def tcp_info_rtt_ms(sock):
    """tcpi_rtt of sock, in ms: right after accept(), the SYN-ACK -> ACK round trip."""
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        # struct tcp_info: 8 one-byte fields, then u32 rto, ato, snd_mss, rcv_mss, unacked,
        # sacked, lost, retrans, fackets, 4 x last_*, pmtu, rcv_ssthresh, rtt (16th).
        return struct.unpack_from("I", info, 8 + 15 * 4)[0] / 1000.0
    except (OSError, struct.error):
        return None


def server_busy_ms(t_accept, msgs):
    """The server's own time in the handshake, in ms: from each message it read (the first
    time: from the accept, when the ClientHello arrives with the ACK) to the last message it
    wrote before reading again. Time waiting for the client is not counted."""
    busy, since, last_write = 0.0, t_accept, None
    for t, direction, _ in msgs:
        if direction == "write":
            last_write = t
        elif last_write is not None:  # the first read after a flight: the server's turn ended
            busy += last_write - since
            since, last_write = t, None
    if last_write is not None:
        busy += last_write - since
    return round(busy * 1000, 3)


class Server:
    def __init__(self, tmp, lifetime):
        self.tmp = tmp
        self.lifetime = lifetime
        self.log_lock = threading.Lock()
        self.log = open(os.path.join(tmp, "server.log"), "a", buffering=1)
        self.next_id = 0
        self.flaky_seen = {}
        self.flaky_lock = threading.Lock()
        self.bodies = {}
        self.ctx = {}
        for port, maxv in ((PORT_TLS13, ssl.TLSVersion.TLSv1_3),
                           (PORT_TLS12, ssl.TLSVersion.TLSv1_2)):
            c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            c.minimum_version = ssl.TLSVersion.TLSv1_2
            c.maximum_version = maxv
            c.load_cert_chain(os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem"))
            # Each handshake message read or written, timed: the server's own processing time
            # is then known, and a HelloRetryRequest (a second ClientHello) would show.
            c._msg_callback = self.on_message
            self.ctx[port] = c
        self.local = threading.local()

    def on_message(self, _conn, direction, _version, content_type, msg_type, _data):
        msgs = getattr(self.local, "msgs", None)
        if msgs is not None and content_type == ssl._TLSContentType.HANDSHAKE:
            msgs.append((time.monotonic(), direction, int(msg_type)))

    def emit(self, **ev):
        with self.log_lock:
            self.log.write(json.dumps(ev) + "\n")

    def route(self, target):
        """(status, extra headers, body, close after) for a request target."""
        path = target.split("?", 1)[0]
        parts = path.strip("/").split("/")
        if parts == ["small"]:
            return 200, [], b"s" * SMALL_BYTES, False
        if len(parts) == 2 and parts[0] == "big" and parts[1].isdigit():
            n = min(int(parts[1]), 64_000_000)
            if n not in self.bodies:
                self.bodies[n] = body_of(n)
            return 200, [], self.bodies[n], False
        # /flaky/TOKEN/keep|close: the first request for TOKEN gets a 503 with Retry-After
        # (the connection kept, or closed after it), the later ones a 200.
        if len(parts) == 3 and parts[0] == "flaky" and parts[2] in ("keep", "close"):
            with self.flaky_lock:
                seen = self.flaky_seen.get(parts[1], 0)
                self.flaky_seen[parts[1]] = seen + 1
            if seen == 0:
                close = parts[2] == "close"
                headers = [f"Retry-After: {RETRY_AFTER_S}"]
                if close:
                    headers.append("Connection: close")
                return 503, headers, b"busy, try again\n", close
            return 200, [], b"s" * SMALL_BYTES, False
        return 404, [], b"not found\n", False

    def handle(self, conn, port, cid, t_accept):
        try:
            conn.settimeout(IO_TIMEOUT)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            r, _, _ = select.select([conn], [], [], IO_TIMEOUT)
            if not r:
                self.emit(ev="error", id=cid, t=time.monotonic(), what="no ClientHello")
                return
            t_hello = time.monotonic()
            if not conn.recv(1, socket.MSG_PEEK):
                self.emit(ev="error", id=cid, t=t_hello, what="closed before the ClientHello")
                return
            self.emit(ev="hello", id=cid, t=t_hello)
            self.local.msgs = msgs = []
            # wrap_socket detaches conn: from here on the socket is `tls`.
            tls = conn = self.ctx[port].wrap_socket(conn, server_side=True,
                                                    do_handshake_on_connect=False)
            tls.do_handshake()
            self.local.msgs = None
            self.emit(ev="tls", id=cid, t=time.monotonic(), version=tls.version(),
                      cipher=tls.cipher()[0], reused=tls.session_reused,
                      client_hellos=sum(1 for m in msgs if m[1] == "read" and m[2] == 1),
                      busy_ms=server_busy_ms(t_accept, msgs),
                      msgs=[[round((t - t_hello) * 1000, 2), d[0], m] for t, d, m in msgs])
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = tls.recv(65536)
                    if not chunk:
                        self.emit(ev="eof", id=cid, t=time.monotonic())
                        return
                    buf += chunk
                    if len(buf) > 65536:
                        raise ValueError("request head too long")
                t_req = time.monotonic()
                head, buf = buf.split(b"\r\n\r\n", 1)
                line = head.split(b"\r\n", 1)[0].decode("latin-1")
                method, target = (line.split(" ") + ["", ""])[:2]
                status, headers, body, close = self.route(target)
                self.emit(ev="req", id=cid, t=t_req, method=method, target=target, status=status)
                reason = {200: "OK", 404: "Not Found", 503: "Service Unavailable"}[status]
                resp = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}",
                        "Content-Type: application/octet-stream"] + headers
                tls.sendall(("\r\n".join(resp) + "\r\n\r\n").encode() + body)
                self.emit(ev="resp", id=cid, t=time.monotonic(), status=status)
                if close:
                    conn.shutdown(socket.SHUT_RDWR)
                    self.emit(ev="closed", id=cid, t=time.monotonic())
                    return
        except (OSError, ValueError, ssl.SSLError) as e:
            self.emit(ev="error", id=cid, t=time.monotonic(), what=str(e))
        finally:
            conn.close()

    def run(self):
        listeners = []
        for port in (PORT_TLS13, PORT_TLS12):
            ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            ls.bind(("::", port))
            ls.listen(64)
            listeners.append((ls, port))
        print("ready", flush=True)
        end = time.monotonic() + self.lifetime
        while time.monotonic() < end:
            r, _, _ = select.select([ls for ls, _ in listeners], [], [], 1.0)
            for ls, port in listeners:
                if ls not in r:
                    continue
                conn, peer = ls.accept()
                t_accept = time.monotonic()
                self.next_id += 1
                cid = self.next_id
                v4 = peer[0].startswith("::ffff:")
                self.emit(ev="accept", id=cid, t=t_accept, port=port, family=4 if v4 else 6,
                          syn_rtt_ms=tcp_info_rtt_ms(conn))
                threading.Thread(target=self.handle, args=(conn, port, cid, t_accept),
                                 daemon=True).start()


# ---------------------------------------------------------------- the stall watchdog

STALL_MS = 5.0  # an oversleep this long or longer is a stall


def watch_stalls(path, lifetime):
    """Sleeps 1 ms at a time (run SCHED_FIFO above everything else of the test) and appends
    "start end oversleep_ms" (monotonic) to path for every oversleep of STALL_MS or more: the
    moments the machine itself did not run its highest-priority process. Stops after lifetime
    or when its parent is gone."""
    parent = os.getppid()
    end = time.monotonic() + lifetime
    with open(path, "a", buffering=1) as f:
        while time.monotonic() < end and os.getppid() == parent:
            t0 = time.monotonic()
            time.sleep(0.001)
            t1 = time.monotonic()
            over = (t1 - t0) * 1000 - 1.0
            if over >= STALL_MS:
                f.write(f"{t0:.6f} {t1:.6f} {over:.1f}\n")


# ---------------------------------------------------------------- the driver (root namespace)

def netbench(*args, check=True, capture=False, timeout=120):
    return subprocess.run([NETBENCH, *args], check=check, timeout=timeout, text=True,
                          stdout=subprocess.PIPE if capture else None)


def priority(sched):
    """The command prefix the client and the server run under. On a machine whose cores are
    shared (builds), a woken process waits for a core: tens of ms at 50 ms RTT, which the
    round-trip counts must not see. SCHED_FIFO runs them at once; every one of their runs is
    bounded (timeouts), and the kernel keeps 5% of each core for the rest (RT throttling)."""
    if sched == "fifo" and shutil.which("chrt") and subprocess.run(
            ["chrt", "-f", "10", "true"], stderr=subprocess.DEVNULL).returncode == 0:
        return ["chrt", "-f", "10"]
    if sched in ("fifo", "nice"):
        return ["nice", "-n", "-10"]
    return []


def make_certificates(tmp):
    ext = os.path.join(tmp, "ext.cnf")
    with open(ext, "w") as f:
        f.write("[ca_ext]\nbasicConstraints = critical, CA:true\n"
                "keyUsage = critical, keyCertSign, cRLSign\nsubjectKeyIdentifier = hash\n"
                "[leaf]\nbasicConstraints = critical, CA:false\n"
                "keyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\n"
                f"subjectAltName = IP:{SRV_V4}, IP:{SRV_V6}\nauthorityKeyIdentifier = keyid\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    p = lambda name: os.path.join(tmp, name)  # noqa: E731
    run = lambda *a: subprocess.run(["openssl", *a], check=True, timeout=60,  # noqa: E731
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "2",
        "-subj", "/CN=stepback roundtrips test CA", "-config", ext, "-extensions", "ca_ext")
    run("req", "-new", *ec, "-keyout", p("key.pem"), "-out", p("server.csr"),
        "-subj", f"/CN={SRV_V4}")
    run("x509", "-req", "-in", p("server.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"),
        "-set_serial", "0x" + os.urandom(8).hex(), "-days", "2", "-extfile", ext,
        "-extensions", "leaf", "-out", p("cert.pem"))


class Bench:
    def __init__(self, tmp, prio):
        self.tmp = tmp
        self.prio = prio
        self.stalls_path = os.path.join(tmp, "stalls.log")
        open(self.stalls_path, "w").close()
        watch_prio = ["chrt", "-f", "30"] if prio and prio[0] == "chrt" else []
        self.watchdog = subprocess.Popen(
            [*watch_prio, sys.executable, os.path.abspath(__file__), "--watch-stalls",
             self.stalls_path, str(SERVER_LIFETIME)])
        self.server = None
        self.log_pos = 0

    def up(self, rtt, loss=0):
        self.stop_server()
        netbench("up", "--rtt", str(rtt), "--loss", str(loss), "--lifetime", "900")
        self.raise_delay_programs()
        self.server = subprocess.Popen(
            [NETBENCH, "exec", "srv", *self.prio, sys.executable,
             os.path.abspath(__file__), "--serve",
             self.tmp, str(SERVER_LIFETIME)], stdout=subprocess.PIPE, text=True)
        r, _, _ = select.select([self.server.stdout], [], [], 15)
        if not r or self.server.stdout.readline().strip() != "ready":
            raise RuntimeError("the test server did not start in the server namespace")

    def raise_delay_programs(self):
        """The bench's delay programs (nfq_delay, nice -10) release packets late when the cores
        are busy with other work: a SYN-ACK -> ACK of 67 ms at 50 ms RTT was seen (kernel
        tcpi_rtt), a third of a round trip lost to the bench itself. When the client and the
        server run SCHED_FIFO, the delay programs of this test's bench do too, above them."""
        if not self.prio or self.prio[0] != "chrt":
            return
        nb_id = os.environ.get("NETBENCH_ID", "")
        state = os.environ.get("NETBENCH_STATE") or ("/run/sbnb" + (f"-{nb_id}" if nb_id else ""))
        for name in sorted(os.listdir(state)) if os.path.isdir(state) else []:
            if name.startswith("nfq_") and name.endswith(".pid"):
                with open(os.path.join(state, name)) as f:
                    pid = f.read().strip()
                if pid.isdigit():
                    subprocess.run(["chrt", "-f", "-p", "20", pid], check=False,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop_server(self):
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(5)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait(5)
        self.server = None

    def down(self):
        self.stop_server()
        if self.watchdog is not None and self.watchdog.poll() is None:
            self.watchdog.terminate()
            self.watchdog.wait(5)
        self.watchdog = None
        netbench("down", check=False)

    def stalls(self, t_begin, t_end):
        """Oversleeps (ms) of the watchdog that overlap [t_begin, t_end]."""
        found = []
        with open(self.stalls_path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and float(parts[1]) > t_begin and float(parts[0]) < t_end:
                    found.append(float(parts[2]))
        return found

    def server_events(self):
        """The server log's lines written since the last call."""
        with open(os.path.join(self.tmp, "server.log")) as f:
            f.seek(self.log_pos)
            data = f.read()
        # Only whole lines; a line being written is read next time.
        end = data.rfind("\n") + 1
        self.log_pos += len(data[:end].encode())
        return [json.loads(line) for line in data[:end].splitlines() if line.strip()]

    def get(self, stepback, url, name, profile=None, timeout=CLIENT_TIMEOUT):
        """Runs `stepback get URL --trace` in the client namespace. Returns (exit code, trace
        events, output path, server events of the run)."""
        self.server_events()  # skip what came before
        out = os.path.join(self.tmp, name + ".body")
        cmd = [NETBENCH, "exec", "cli", *self.prio, stepback, "get", url, "--cacert",
               os.path.join(self.tmp, "ca.pem"), "--trace", "-o", out]
        if profile:
            cmd += ["--profile", profile]
        self.last_begin = time.monotonic()
        try:
            p = subprocess.run(cmd, timeout=timeout, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        with open(os.path.join(self.tmp, name + ".trace"), "w") as f:
            f.write(err)
        trace = []
        for line in err.splitlines():
            if line.startswith("{"):
                try:
                    trace.append(json.loads(line))
                except ValueError:
                    pass
        # The server logs a response once written; the client has it half an RTT later, so
        # every event of the run is in the log once the client exited. A short grace anyway.
        time.sleep(0.05)
        self.last_end = time.monotonic()
        return rc, trace, out, self.server_events()


class Case:
    """One run of `stepback get` and its checks: each check is (what, measured, expected);
    an RTT count is round(ms / RTT), shown with the ratio itself."""

    def __init__(self, name, rtt):
        self.name, self.rtt = name, rtt
        self.checks = []
        self.shown = {}
        self.done_ms = None
        self.note = ""
        self.trace, self.server = [], []

    def check(self, what, measured, expected, show=None):
        self.checks.append((what, measured, expected))
        self.shown[what] = show if show is not None else str(measured)

    def count(self, what, ms, expected):
        if ms is None:
            self.check(what, None, expected, "-")
            return
        n = round(ms / self.rtt)
        self.check(what, n, expected, f"{n} ({ms / self.rtt:.2f})")

    def show(self, what):
        return self.shown.get(what, "-")

    def failures(self):
        return [(w, m, e) for w, m, e in self.checks if m != e]


def check_body(case, out, want_bytes):
    want = hashlib.sha256(want_bytes).hexdigest()
    try:
        with open(out, "rb") as f:
            data = f.read()
    except OSError:
        data = None
    case.check("body bytes", len(data) if data is not None else None, len(want_bytes))
    got = hashlib.sha256(data).hexdigest() if data is not None else None
    case.check("body sha256", got, want, "exact" if got == want else "DIFFERENT")


def analyse(case, rc, trace, server, *, version, first, conns=1, resumed=False, accept_to_req,
            retry=None):
    """The checks of one run against what the protocol makes deterministic.
    first: RTTs of the first exchange on the client (attempt 1 -> its response);
    accept_to_req: per connection, RTTs from the accept (the ClientHello arrives with the ACK)
    to the request's arrival on the server; retry: None, or (client RTTs from the retry's
    attempt to done, server RTTs from the 503 written to the retry's request less the
    client's wait). The test server's own processing (its handshake messages, and request
    to response written), timed on its clock, is no round trip and is taken out of each."""
    case.check("exit code", rc, 0)
    done = next((e for e in trace if e.get("event") == "done"), None)
    attempts = [e for e in trace if e.get("event") == "attempt"]
    responses = [e for e in trace if e.get("event") == "response"]
    waits = [e for e in trace if e.get("event") == "wait"]
    wait_ms = sum(e.get("ms", 0) for e in waits)
    case.done_ms = done["t_ms"] if done else None
    case.check("status", done.get("status") if done else None, 200)
    case.check("client: attempts", len(attempts), 1 if retry is None else 2)
    if done is not None:
        case.check("client: connections (trace)", done.get("connections"), conns)
        case.check("client: resumed (trace)", done.get("resumed"), resumed)

    accepts = [e for e in server if e["ev"] == "accept"]
    case.check("server: connections", len(accepts), conns)
    case.check("server: errors", [e["what"] for e in server if e["ev"] == "error"], [])
    reqs = [e for e in server if e["ev"] == "req"]
    resps = [e for e in server if e["ev"] == "resp"]
    case.check("server: requests", len(reqs), 1 if retry is None else 2)
    busy = []
    for i, acc in enumerate(accepts):
        evs = [e for e in server if e["id"] == acc["id"]]
        first_of = lambda kind: next((e for e in evs if e["ev"] == kind), None)  # noqa: E731
        hello, tls, req = first_of("hello"), first_of("tls"), first_of("req")
        tag = f"conn {i + 1}: "
        case.count(tag + "SYN-ACK -> ACK / RTT (kernel)", acc.get("syn_rtt_ms"), 1)
        case.count(tag + "accept -> ClientHello / RTT",
                   (hello["t"] - acc["t"]) * 1000 if hello else None, 0)
        case.check(tag + "ClientHellos (2: HelloRetryRequest)",
                   tls["client_hellos"] if tls else None, 1)
        b = tls["busy_ms"] if tls else 0.0
        busy.append(b)
        case.shown[tag + "server busy ms"] = f"{b:.1f}"
        want = accept_to_req[i] if i < len(accept_to_req) else None
        case.count(tag + "accept -> request, less server busy / RTT",
                   (req["t"] - acc["t"]) * 1000 - b if req else None, want)
        case.check(tag + "TLS version", tls["version"] if tls else None, version)
        case.check(tag + "session reused", tls["reused"] if tls else None,
                   resumed and i == len(accepts) - 1 and i > 0)

    def served_ms(k):
        """The server's time on request k: request arrived -> response written."""
        return (resps[k]["t"] - reqs[k]["t"]) * 1000 if len(reqs) > k and len(resps) > k else 0.0

    if first is not None:
        ms = None
        if attempts and responses:
            ms = (responses[0]["t_ms"] - attempts[0]["t_ms"] - (busy[0] if busy else 0.0)
                  - served_ms(0))
        case.count("client: attempt 1 -> response, less server time / RTT", ms, first)
    if retry is not None:
        retry_client, retry_server = retry
        case.check("client: waits", len(waits), 1)
        after_wait = (attempts[1]["t_ms"] - waits[0]["t_ms"] - waits[0]["ms"]
                      if len(attempts) >= 2 and waits else None)
        case.count("client: wait's end -> retry's attempt / RTT", after_wait, 0)
        # A new connection's handshake processing on the server is not a round trip either.
        new_busy = busy[-1] if len(accepts) >= 2 else 0.0
        ms = None
        if done and len(attempts) >= 2:
            ms = done["t_ms"] - attempts[1]["t_ms"] - new_busy - served_ms(1)
        case.count("client: retry's attempt -> done, less server time / RTT", ms, retry_client)
        gap = None
        if len(reqs) >= 2 and resps:
            gap = (reqs[1]["t"] - resps[0]["t"]) * 1000 - wait_ms - new_busy
        case.count("server: 503 written -> retry's request, less wait / RTT", gap, retry_server)
    return done


def main_driver(args):
    if os.geteuid() != 0:
        print("roundtrips_test: SKIP: needs root (network namespaces, iptables)")
        return 77
    if not (os.path.isfile(args.stepback) and os.access(args.stepback, os.X_OK)):
        print(f"roundtrips_test: no stepback CLI at {args.stepback}")
        return 1
    if shutil.which("openssl") is None:
        print("roundtrips_test: SKIP: openssl not found (apt-get install openssl)")
        return 77
    chk = subprocess.run([NETBENCH, "check"], text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120)
    if chk.returncode != 0:
        print(chk.stdout, end="")
        print("roundtrips_test: SKIP: the bench cannot run here" if chk.returncode == 77
              else f"roundtrips_test: netbench.sh check failed ({chk.returncode})")
        return 77 if chk.returncode == 77 else 1

    tmp = tempfile.mkdtemp(prefix="sbnb-roundtrips.")
    bench = Bench(tmp, priority(args.sched))

    def cleanup():
        bench.down()
        if os.environ.get("KEEP_TMP") == "1":
            print(f"roundtrips_test: keeping {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    atexit.register(cleanup)

    def on_signal(signum, _frame):
        sys.exit(128 + signum)  # atexit cleans up

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    make_certificates(tmp)
    stepback = os.path.abspath(args.stepback)
    cases = []
    t_start = time.monotonic()
    u13 = f"https://{SRV_V4}:{PORT_TLS13}"
    u13v6 = f"https://[{SRV_V6}]:{PORT_TLS13}"
    u12 = f"https://{SRV_V4}:{PORT_TLS12}"

    def run(rtt, name, url, profile=None, **kw):
        """One case. A count is only valid when the machine ran: when only RTT counts are off
        and the watchdog saw a stall of the machine during the run, the case runs again (twice
        at most), and the table says so. A count off without a stall is a failure."""
        notes = []
        for attempt in range(3):
            case = Case(name, rtt)
            rc, trace, out, server = bench.get(stepback, url.replace("@", str(attempt)),
                                               f"{len(cases) + 1:02d}.{attempt}", profile)
            case.trace, case.server = trace, server
            analyse(case, rc, trace, server, **kw)
            stalls = bench.stalls(bench.last_begin, bench.last_end)
            # Only a timing can be moved by a stall; anything else off is a failure.
            timing_only = all("/ RTT" in w for w, _, _ in case.failures())
            if not case.failures() or not stalls or not timing_only:
                break
            notes.append(f"run {attempt + 1} void: machine stalled {max(stalls):.0f} ms "
                         f"({'; '.join(f'{w}: {m} != {e}' for w, m, e in case.failures())})")
        case.note = " / ".join(notes)
        cases.append(case)
        return case, out

    for rtt in args.rtts:
        bench.up(rtt)
        # Fresh: connect 1 + TLS 1.3 1 + request/response 1 (TLS 1.2: one more).
        run(rtt, "small GET, TLS 1.3, desktop", u13 + "/small", version="TLSv1.3", first=3,
            accept_to_req=[1])
        run(rtt, "small GET, TLS 1.3, mobile", u13 + "/small", "mobile", version="TLSv1.3",
            first=3, accept_to_req=[1])
        run(rtt, "small GET, TLS 1.3, IPv6", u13v6 + "/small", version="TLSv1.3", first=3,
            accept_to_req=[1])
        run(rtt, "small GET, TLS 1.2", u12 + "/small", version="TLSv1.2", first=4,
            accept_to_req=[2])
        # A retry after the wait: on the kept connection 1 RTT; on a new one, connect +
        # resumed handshake (1 RTT for TLS 1.3 and for an abbreviated TLS 1.2 one) + 1.
        run(rtt, "503, wait, 200 on the kept connection", u13 + f"/flaky/k{rtt}-@/keep",
            version="TLSv1.3", first=3, accept_to_req=[1], retry=(1, 1))
        run(rtt, "503 + close, wait, 200 resumed TLS 1.3", u13 + f"/flaky/r{rtt}-@/close",
            version="TLSv1.3", first=3, conns=2, resumed=True, accept_to_req=[1, 1],
            retry=(3, 3))
        run(rtt, "503 + close, wait, 200 resumed TLS 1.2", u12 + f"/flaky/s{rtt}-@/close",
            version="TLSv1.2", first=4, conns=2, resumed=True, accept_to_req=[2, 1],
            retry=(3, 3))
        # A bulk transfer's round trips depend on slow start and the windows: not counted,
        # but the handshake before it is, and the body must be exact.
        case, out = run(rtt, f"{args.big_bytes / 1e6:g} MB GET", u13 + f"/big/{args.big_bytes}",
                        version="TLSv1.3", first=None, accept_to_req=[1])
        check_body(case, out, body_of(args.big_bytes))

    if args.loss > 0:
        # Loss makes timing random: only success and the exact body.
        rtt = args.loss_rtt
        bench.up(rtt, args.loss)
        for name, path, body in (("small GET", "/small", b"s" * SMALL_BYTES),
                                 (f"{args.loss_bytes / 1e6:g} MB GET", f"/big/{args.loss_bytes}",
                                  body_of(args.loss_bytes))):
            case = Case(f"{name}, {args.loss:g}% loss", rtt)
            rc, trace, out, _ = bench.get(stepback, u13 + path, f"{len(cases) + 1:02d}")
            done = next((e for e in trace if e.get("event") == "done"), None)
            case.done_ms = done["t_ms"] if done else None
            case.check("exit code", rc, 0)
            case.check("status", done.get("status") if done else None, 200)
            check_body(case, out, body)
            case.shown["attempts"] = str(done.get("attempts")) if done else "-"
            cases.append(case)

    bench.stop_server()
    netbench("down", check=False)
    elapsed = time.monotonic() - t_start

    print()
    print("Round trips: round(ms / RTT), the ratio in parentheses. Client: the --trace events'")
    print("t_ms; server: its monotonic clock. The test server's own processing, timed on its")
    print("clock (handshake: 'busy'; request -> response written), is taken out of the counts.")
    print("A->R = accept (the ClientHello arrives with the ACK) -> request arrived, connection")
    print("1 / 2; retry = 503 written -> the retry's request arrived, less the client's wait.")
    print("Every connection is also checked: SYN-ACK -> ACK 1 RTT (kernel's tcpi_rtt),")
    print("accept -> ClientHello 0 RTT, one ClientHello (no HelloRetryRequest).")
    print()
    cols = [("client done", None),
            ("client 1st exchange", "client: attempt 1 -> response, less server time / RTT"),
            ("client retry", "client: retry's attempt -> done, less server time / RTT"),
            ("server A->R c1", "conn 1: accept -> request, less server busy / RTT"),
            ("server A->R c2", "conn 2: accept -> request, less server busy / RTT"),
            ("server retry", "server: 503 written -> retry's request, less wait / RTT"),
            ("busy ms c1/c2", None), ("conns", "server: connections"),
            ("TLS", "conn 1: TLS version"), ("resumed", "client: resumed (trace)"),
            ("body", "body sha256")]
    print("| RTT | case | " + " | ".join(c for c, _ in cols) + " | result |")
    print("|" + " --- |" * (len(cols) + 3))
    passed = failed = 0
    for c in cases:
        bad = c.failures()
        passed += not bad
        failed += bool(bad)
        cells = []
        for title, key in cols:
            if title == "client done":
                cells.append("-" if c.done_ms is None else
                             f"{c.done_ms} ms ({c.done_ms / c.rtt:.2f} RTT)")
            elif title == "busy ms c1/c2":
                b = [c.shown[k] for k in ("conn 1: server busy ms", "conn 2: server busy ms")
                     if k in c.shown]
                cells.append("/".join(b) or "-")
            else:
                cells.append(c.show(key).replace("TLSv", ""))
        result = "FAIL" if bad else ("ok (run again: stall)" if c.note else "ok")
        print(f"| {c.rtt} | {c.name} | " + " | ".join(cells) + f" | {result} |")
    for c in cases:
        if c.note:
            print(f"NOTE: RTT {c.rtt} ms, {c.name}: {c.note}")
    for c in cases:
        for w, m, e in c.failures():
            print(f"FAIL: RTT {c.rtt} ms, {c.name}: {w}: measured {m}, expected {e}")
        if c.failures():
            print("  client trace: " + " ".join(json.dumps(e) for e in c.trace))
            for e in c.server:
                print("  server: " + json.dumps(e))
    all_stalls = bench.stalls(0, float("inf"))
    print(f"Machine stalls of {STALL_MS:g} ms or more seen by the watchdog: {len(all_stalls)}"
          + (f", longest {max(all_stalls):.0f} ms" if all_stalls else ""))
    print()
    print(f"roundtrips_test: {passed} passed, {failed} failed ({elapsed:.0f} s)")
    return 0 if failed == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stepback", nargs="?", help="the stepback CLI to test")
    ap.add_argument("--rtts", default="50,150,300", help="comma-separated RTTs in ms")
    ap.add_argument("--big-bytes", type=int, default=3_000_000, help="the multi-MB GET, bytes")
    ap.add_argument("--loss", type=float, default=2.0, help="loss percent each way (0: none)")
    ap.add_argument("--loss-rtt", type=int, default=50, help="RTT of the loss runs, ms")
    ap.add_argument("--loss-bytes", type=int, default=3_000_000, help="the GET under loss, bytes")
    ap.add_argument("--sched", choices=("fifo", "nice", "none"), default="fifo",
                    help="how the client and the server run: SCHED_FIFO (chrt -f 10, the "
                         "default; nice -n -10 where chrt cannot), nice -n -10, or as is")
    # Helper modes, started by the driver: the server (in the server namespace), the watchdog.
    ap.add_argument("--serve", nargs=2, metavar=("DIR", "LIFETIME_S"))
    ap.add_argument("--watch-stalls", nargs=2, metavar=("FILE", "LIFETIME_S"))
    args = ap.parse_args()
    if args.serve:
        Server(args.serve[0], min(float(args.serve[1]), SERVER_LIFETIME)).run()
        return 0
    if args.watch_stalls:
        watch_stalls(args.watch_stalls[0], min(float(args.watch_stalls[1]), SERVER_LIFETIME))
        return 0
    if not args.stepback:
        ap.error("the path of the stepback CLI is required")
    os.environ.setdefault("NETBENCH_ID", "rt")
    args.rtts = [int(x) for x in args.rtts.split(",") if x]
    args.big_bytes = max(1, min(args.big_bytes, 64_000_000))
    args.loss_bytes = max(1, min(args.loss_bytes, 64_000_000))
    return main_driver(args)


if __name__ == "__main__":
    sys.exit(main())
