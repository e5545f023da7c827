"""`stepback get` and `stepback upload` with --limit-rate, and stopped by SIGINT, against real
servers on loopback: nginx serving files (get) and tests/transfer/upload_server.py (upload).

usage: rate_pause_test.py STEPBACK_BINARY NGINX UPLOAD_SERVER_PY CASE
       rate_pause_test.py STEPBACK_BINARY NGINX UPLOAD_SERVER_PY bench
CASE is one CTest test (tests/tools/CMakeLists.txt). The limited runs check a generous lower
bound on their time only (a loaded machine may be slower, never faster than the rate allows).
`bench` (by hand) prints the figures of docs/bodies.md: the rate reached against the one asked
for, and the CPU (user + sys) per MiB limited and unlimited.
"""

import json
import os
import re
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from cli_support import check, free_port, nginx_conf, start_nginx, start_server, wait_until

BINARY, NGINX, UPLOAD_SERVER = sys.argv[1], sys.argv[2], sys.argv[3]
MIB = 1024 * 1024

LOG_FORMAT = '$uri $status $body_bytes_sent "$http_range" "$http_if_range"'
SERVERS = """  server {{
    listen 127.0.0.1:{port};
    root {dir}/www;
  }}"""


class Nginx:
    """nginx on a loopback port over a folder of files."""

    def __init__(self, tmp, files):
        self.dir = tmp
        os.makedirs(os.path.join(tmp, "www"))
        for name, data in files.items():
            with open(os.path.join(tmp, "www", name), "wb") as f:
                f.write(data)
        with open(os.path.join(tmp, "www", "ping"), "wb") as f:
            f.write(b"pong\n")
        self.port = free_port()
        self.proc = start_nginx(
            NGINX, tmp, nginx_conf(tmp, LOG_FORMAT, SERVERS.format(dir=tmp, port=self.port)),
            lambda: subprocess.run([BINARY, "get", self.url("/ping"), "--max-retries", "0"],
                                   capture_output=True).returncode == 0)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def log(self):
        with open(os.path.join(self.dir, "access.log")) as f:
            return [line.split(" ", 3) for line in f.read().splitlines()]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class UploadServer:
    """upload_server.py (Google's resumable upload protocol), plain HTTP."""

    def __init__(self, tmp):
        self.objects = os.path.join(tmp, "objects")
        os.makedirs(self.objects)
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            f.write("[]")
        port_file = os.path.join(tmp, "port")
        self.log_file = os.path.join(tmp, "requests.log")
        self.proc, self.port = start_server(
            [sys.executable, UPLOAD_SERVER, "--port-file", port_file, "--log-file",
             self.log_file, "--objects", self.objects, "--script", script, "--lifetime", "120"],
            port_file, "the upload server", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/upload?uploadType=resumable&name={name}"

    def log(self):
        if not os.path.exists(self.log_file):
            return []
        with open(self.log_file) as f:
            return [json.loads(line) for line in f if line.strip()]

    def object(self, name):
        path = os.path.join(self.objects, name)
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            return f.read()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def run(*args, timeout=90):
    """Runs the program; returns (exit code, stdout, stderr, seconds, CPU seconds user + sys)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run([BINARY, *args], capture_output=True, timeout=timeout)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace"), seconds, cpu


def body_of(size, seed):
    return random.Random(seed).randbytes(size)


def case_get_limit():
    # 3 MiB at 1 MiB/s: at least about 3 s (the bucket starts empty), byte-exact.
    data = body_of(3 * MIB, 1)
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp, {"big.bin": data})
        try:
            out = os.path.join(tmp, "big.out")
            args = ["get", nginx.url("/big.bin"), "-o", out, "--limit-rate", "1M"]
            code, _, err, seconds, _ = run(*args)
            check(code == 0, f"{args} exited {code}: {err}")
            with open(out, "rb") as f:
                check(f.read() == data, "the file differs")
            check(seconds >= 0.95 * 3, f"3 MiB at --limit-rate 1M took only {seconds:.2f} s")
            print(f"3 MiB at --limit-rate 1M: {seconds:.2f} s")
        finally:
            nginx.stop()


def case_get_sigint():
    # Ctrl-C in a limited download: exit 130, a checkpoint, words on how to go on; the same
    # command again goes on from the checkpoint with Range and ends byte-exact.
    data = body_of(4 * MIB, 2)
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp, {"big.bin": data})
        try:
            out = os.path.join(tmp, "big.out")
            args = ["get", nginx.url("/big.bin"), "-o", out, "--limit-rate", "1M"]
            p = subprocess.Popen([BINARY, *args], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            part = out + ".part"
            wait_until(lambda: os.path.exists(part) and os.path.getsize(part) >= 256 * 1024,
                       "the first 256 KiB never came", 30, proc=p)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=20)
            check(p.returncode == 130, f"SIGINT: exit {p.returncode}: {err}")
            check("interrupted; kept '" in err and "run the same command again to go on" in err,
                  f"SIGINT said: {err}")
            size = os.path.getsize(part)
            check(size > 0 and os.path.exists(part + ".state"), f"{size} bytes, state missing")
            code, _, err, _, _ = run(*args)
            check(code == 0, f"{args} again exited {code}: {err}")
            check(f"going on from byte {size} of" in err, f"the second run said: {err}")
            with open(out, "rb") as f:
                check(f.read() == data, "the file differs")
            ranged = [r for r in nginx.log() if r[0] == "/big.bin" and r[1] == "206"]
            check(ranged and ranged[-1][3].startswith(f'"bytes={size}-"'),
                  f"no Range from {size}: {nginx.log()}")
        finally:
            nginx.stop()


def case_upload_limit():
    # 1.5 MiB at 256 KiB/s: at least about 6 s, byte-exact; stderr is no terminal, so a plain
    # progress line comes every 5 s (the bytes sent, of the size, the rate).
    data = body_of(MIB * 3 // 2, 3)
    with tempfile.TemporaryDirectory() as tmp:
        server = UploadServer(os.path.join(tmp, "server"))
        try:
            path = os.path.join(tmp, "body.bin")
            with open(path, "wb") as f:
                f.write(data)
            args = ["upload", path, server.url("o"), "--chunk-size", "256K", "--limit-rate",
                    "256K"]
            code, _, err, seconds, _ = run(*args)
            check(code == 0, f"{args} exited {code}: {err}")
            check(server.object("o") == data, "the stored object differs")
            check(seconds >= 0.95 * 6, f"1.5 MiB at --limit-rate 256K took only {seconds:.2f} s")
            lines = re.findall(r"^stepback upload: sent ([0-9.]+) MB of 1\.6 MB \(([0-9]+)%\), "
                               r"([0-9.]+) MB/s(, [0-9]+ s left)?$", err, re.M)
            check(len(lines) >= 1, f"no progress line: {err!r}")
            for _, _, rate, _ in lines:
                check(0.2 <= float(rate) <= 0.3, f"a rate far from 256 KiB/s: {err!r}")
            print(f"1.5 MiB up at --limit-rate 256K: {seconds:.2f} s")
        finally:
            server.stop()


def upload_sigint(with_state):
    # Ctrl-C after the first committed chunk: exit 130, the session kept, words on how to go
    # on; going on as told asks what the server holds and sends only the rest.
    data = body_of(MIB, 4)
    with tempfile.TemporaryDirectory() as tmp:
        server = UploadServer(os.path.join(tmp, "server"))
        try:
            path = os.path.join(tmp, "body.bin")
            with open(path, "wb") as f:
                f.write(data)
            state = os.path.join(tmp, "upload.state")
            args = ["upload", path, server.url("o"), "--chunk-size", "256K", "--limit-rate",
                    "256K"]
            if with_state:
                args += ["--state", state]
            p = subprocess.Popen([BINARY, *args], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            wait_until(lambda: any(r.get("kind") == "chunk" and r.get("answer") == 308
                                   for r in server.log()), "no chunk was committed", 30, proc=p)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=20)
            check(p.returncode == 130, f"SIGINT: exit {p.returncode}: {err}")
            check("interrupted; the server holds " in err, f"SIGINT said: {err}")
            if with_state:
                check(os.path.exists(state), "no state file after SIGINT")
                check(f"the state is in '{state}': run the same command again to go on" in err,
                      f"SIGINT said: {err}")
                again = args
            else:
                marker = "run the same command again with --session '"
                check(marker in err and "' to go on" in err, f"SIGINT said: {err}")
                session = err[err.index(marker) + len(marker):].split("'")[0]
                again = args + ["--session", session]
            posts = len([r for r in server.log() if r.get("kind") == "post"])
            code, _, err, _, _ = run(*again)
            check(code == 0, f"{again} exited {code}: {err}")
            check(server.object("o") == data, "the stored object differs")
            log = server.log()
            check(len([r for r in log if r.get("kind") == "post"]) == posts,
                  f"a new session was opened: {log}")
            check(sum(r.get("overlap", 0) for r in log) == 0, f"held bytes were sent again: {log}")
            if with_state:
                check(not os.path.exists(state), "the state file outlived the upload")
        finally:
            server.stop()


def case_upload_sigint():
    upload_sigint(True)


def case_upload_sigint_session():
    upload_sigint(False)


def case_usage():
    for command in ["get", "upload"]:
        code, out, _, _, _ = run(command, "--help")
        text = out.decode()
        check(code == 0 and "[--limit-rate RATE]" in text and "  --limit-rate RATE " in text,
              f"{command} --help lacks --limit-rate:\n{text}")
        check("Ctrl-C or SIGTERM" in text and "130" in text, f"{command} --help lacks 130")
    code, _, err, _, _ = run("get", "http://127.0.0.1:9/x", "--limit-rate", "10X")
    check(code == 2 and "invalid --limit-rate '10X'" in err and "100K" in err,
          f"--limit-rate 10X: exit {code}: {err}")
    code, _, err, _, _ = run("upload", "/dev/null", "http://127.0.0.1:9/x", "--limit-rate", "2T")
    check(code == 2 and "invalid --limit-rate '2T'" in err, f"--limit-rate 2T: exit {code}: {err}")


def bench():
    # Accuracy: the rate reached (the file's size over the process's whole run, start-up and
    # connect included) against the one asked for, over about 4 s each. CPU: user + sys
    # seconds of the process per MiB, less its start-up (a 5-byte get), limited against
    # unlimited (the same bytes from the same server).
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        big = os.urandom(256 * MIB)
        files = {"r256k.bin": big[:MIB], "r1m.bin": big[:4 * MIB], "r4m.bin": big[:16 * MIB],
                 "r16m.bin": big[:64 * MIB], "big.bin": big}
        nginx = Nginx(tmp, files)
        try:
            out = os.path.join(tmp, "out")
            startup = sum(run("get", nginx.url("/ping"))[4] for _ in range(10)) / 10
            rows.append(f"start-up CPU (get of 5 bytes, mean of 10): {startup * 1000:.2f} ms")

            def per_mib(cpu, size):
                return (cpu - startup) / (size / MIB) * 1000

            for name, rate, label in [("r256k.bin", 256 * 1024, "256K"),
                                      ("r1m.bin", MIB, "1M"), ("r4m.bin", 4 * MIB, "4M"),
                                      ("r16m.bin", 16 * MIB, "16M")]:
                size = len(files[name])
                code, _, err, seconds, cpu = run("get", nginx.url("/" + name), "-o", out,
                                                 "--limit-rate", label)
                check(code == 0, f"{name}: {err}")
                code, _, err, free_s, free_cpu = run("get", nginx.url("/" + name), "-o", out)
                check(code == 0, f"{name}: {err}")
                rows.append(f"get {size // MIB if size >= MIB else 1} MiB --limit-rate {label}: "
                            f"{seconds:.3f} s = {size / seconds / rate * 100:.1f}% of the rate; "
                            f"CPU {per_mib(cpu, size):.2f} ms/MiB limited, "
                            f"{per_mib(free_cpu, size):.2f} unlimited ({free_s:.3f} s)")
            code, _, err, seconds, cpu = run("get", nginx.url("/big.bin"), "-o", out)
            rows.append(f"get 256 MiB unlimited: {seconds:.3f} s; CPU "
                        f"{per_mib(cpu, 256 * MIB):.2f} ms/MiB")
        finally:
            nginx.stop()
        server = UploadServer(os.path.join(tmp, "server"))
        try:
            path = os.path.join(tmp, "body.bin")
            with open(path, "wb") as f:
                f.write(big[:4 * MIB])
            code, _, err, seconds, cpu = run("upload", path, server.url("u1"), "--chunk-size",
                                             "1M", "--limit-rate", "1M")
            check(code == 0, err)
            code, _, err, free_s, free_cpu = run("upload", path, server.url("u2"),
                                                 "--chunk-size", "1M")
            check(code == 0, err)
            # The test server's own time (reading, its pure-Python CRC-32C and MD5 of the
            # object) is in both runs; the difference is what the limit added.
            paced = seconds - free_s
            rows.append(f"upload 4 MiB --limit-rate 1M: {seconds:.3f} s, unlimited "
                        f"{free_s:.3f} s: the limit added {paced:.3f} s = "
                        f"{4 / paced * 100:.1f}% of the rate; CPU "
                        f"{per_mib(cpu, 4 * MIB):.2f} ms/MiB limited, "
                        f"{per_mib(free_cpu, 4 * MIB):.2f} unlimited")
            strace = shutil.which("strace")
            if strace:
                # The pacing itself, from the process's own sends: the chunk's first byte to
                # its last, the test server's time before and after left out.
                trace = os.path.join(tmp, "sends.txt")
                subprocess.run([strace, "-ttt", "-e", "trace=sendto", "-o", trace, BINARY,
                                "upload", path, server.url("u3"), "--chunk-size", "4M",
                                "--limit-rate", "1M"], capture_output=True, check=True)
                first, last, sent = None, None, 0
                with open(trace) as f:
                    for line in f:
                        if "sendto(" not in line or " = " not in line:
                            continue
                        stamp = float(line.split(" ", 1)[0])
                        if first is None and '"PUT ' in line:
                            first = stamp
                            continue
                        if first is not None:
                            sent += int(line.rsplit(" = ", 1)[1])
                            last = stamp
                rows.append(f"upload 4 MiB in one chunk --limit-rate 1M, its sends (strace): "
                            f"{sent} B in {last - first:.3f} s = "
                            f"{sent / (last - first) / MIB * 100:.1f}% of the rate")
        finally:
            server.stop()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("\n".join(rows))


CASES = {
    "get_limit": case_get_limit,
    "get_sigint": case_get_sigint,
    "upload_limit": case_upload_limit,
    "upload_sigint": case_upload_sigint,
    "upload_sigint_session": case_upload_sigint_session,
    "usage": case_usage,
}

if __name__ == "__main__":
    if sys.argv[4] == "bench":
        bench()
    else:
        CASES[sys.argv[4]]()
