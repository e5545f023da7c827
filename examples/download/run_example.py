"""Runs examples/download against nginx on loopback (the test examples.download).

usage: run_example.py --nginx NGINX --openssl OPENSSL --tests TESTS_DIR -- [EMULATOR...] EXAMPLE

nginx serves a 6 MiB file over TLS at 1 MiB/s per connection, so that a run can be killed
mid-body:
  - killed (SIGKILL) once a checkpoint is stored, then run again: it goes on from the
    checkpoint (a 206 in nginx's log), prints progress, and FILE is the server's file, with
    FILE.part and its record gone;
  - killed, the file replaced on the server, run again: the old part is not spliced onto the
    new file (If-Range), FILE is the new one;
  - a 404: exit 1, no FILE.
Every wait is bounded: each subprocess has a timeout, each poll a limit.
"""

import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import example_support  # noqa: E402 (examples/example_support.py)

SIZE = 6 * 1024 * 1024
LOG_FORMAT = "$request_method $uri $status $body_bytes_sent"
SERVER = """  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    root {dir}/www;
    limit_rate 1m;
  }}"""


def run(app, *args):
    p = subprocess.run(app + list(args), capture_output=True, timeout=90)
    err = p.stderr.decode(errors="replace")
    print("+", " ".join(args), f"-> exit {p.returncode}\n{err[-2000:]}", flush=True)
    return p.returncode, err


def killed_after_checkpoint(support, app, url, out, cert):
    """Starts the example and SIGKILLs it once a checkpoint record exists."""
    proc = subprocess.Popen(app + [url, out, cert], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        support.wait_until(lambda: os.path.exists(out + ".part.state"),
                           "no checkpoint record within 20 s", limit=20, proc=proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stderr.close()
    kept = os.path.getsize(out + ".part")
    support.check(0 < kept < SIZE, f"the killed run kept {kept} bytes")
    print(f"killed with {kept} bytes in {out}.part", flush=True)
    return kept


def main():
    opts, support = example_support.parse(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        cert, _ = example_support.self_signed(opts.openssl, tmp)
        www = os.path.join(tmp, "www")
        os.makedirs(www)
        served = os.path.join(www, "big.bin")
        first = random.Random(1).randbytes(SIZE)
        with open(served, "wb") as f:
            f.write(first)
        nginx, port = example_support.start_nginx(support, opts.nginx, tmp, LOG_FORMAT, SERVER)
        url = f"https://127.0.0.1:{port}/big.bin"
        log = os.path.join(tmp, "access.log")
        try:
            # Killed, then run again: it goes on from the checkpoint.
            out = os.path.join(tmp, "resumed.bin")
            killed_after_checkpoint(support, opts.app, url, out, cert)
            code, err = run(opts.app, url, out, cert)
            support.check(code == 0, f"the second run exited {code}")
            support.check("going on from byte " in err, "the second run did not resume")
            support.check(f"of {SIZE} bytes" in err, "no progress lines")
            with open(out, "rb") as f:
                support.check(f.read() == first, "the file differs from the server's")
            for leftover in (out + ".part", out + ".part.state"):
                support.check(not os.path.exists(leftover), f"{leftover} is left")
            with open(log) as f:
                statuses = [line.split()[2] for line in f if line.startswith("GET ")]
            support.check(statuses[-1] == "206", f"nginx answered {statuses}, last not 206")
            print("kill and resume: ok", flush=True)

            # Killed, the file replaced, run again: never spliced.
            out = os.path.join(tmp, "replaced.bin")
            killed_after_checkpoint(support, opts.app, url, out, cert)
            second = random.Random(2).randbytes(SIZE)
            with open(served + ".new", "wb") as f:
                f.write(second)
            os.utime(served + ".new", (time.time() + 5, time.time() + 5))  # Another ETag.
            os.replace(served + ".new", served)
            code, err = run(opts.app, url, out, cert)
            support.check(code == 0, f"the run after the change exited {code}")
            with open(out, "rb") as f:
                support.check(f.read() == second, "the file is not the new version whole")
            print("replaced on the server: ok", flush=True)

            # A 404: exit 1, no file.
            out = os.path.join(tmp, "missing.bin")
            code, err = run(opts.app, f"https://127.0.0.1:{port}/missing.bin", out, cert)
            support.check(code == 1 and not os.path.exists(out), f"404: exit {code}")
            print("404: ok", flush=True)
        finally:
            nginx.kill()
            nginx.wait(10)
    print("download: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
