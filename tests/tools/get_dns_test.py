"""`stepback get` with names: c-ares against tests/integration/dns_server.py on 127.0.0.1.

usage: get_dns_test.py STEPBACK_BINARY DNS_SERVER_PY TRAP_LIBRARY|- CASE
TRAP_LIBRARY (tests/tools/getaddrinfo_trap.cpp) is preloaded into every run: a call of
getaddrinfo() or gethostbyname() ends the program with exit code 97. "-" runs without it
(cross builds, where the program runs under qemu-user).
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

from cli_support import check, start_server

BINARY, DNS_SERVER, TRAP = sys.argv[1], sys.argv[2], sys.argv[3]


def run(*args, timeout=30):
    env = dict(os.environ)
    if TRAP != "-":
        env["LD_PRELOAD"] = TRAP
    start = time.monotonic()
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout, env=env)
    check(p.returncode != 97, f"{args}: getaddrinfo() was called: {p.stderr}")
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


class DnsServer:
    def __init__(self, tmp):
        port_file = os.path.join(tmp, "dns.port")
        self.process, self.port = start_server(
            [sys.executable, DNS_SERVER, "--port-file", port_file, "--lifetime", "60"], port_file,
            "dns_server.py")

    def servers(self):
        return f"127.0.0.1:{self.port}"

    def stop(self):
        self.process.kill()
        self.process.wait()


class OkServer:
    """Plain HTTP on 127.0.0.1 only (so ::1, which the name also has, is refused)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            conn, _ = self.sock.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nnamed\n")


def events(err):
    return [json.loads(line) for line in err.splitlines()]


def with_dns(body):
    with tempfile.TemporaryDirectory() as tmp:
        dns = DnsServer(tmp)
        try:
            body(dns)
        finally:
            dns.stop()


def case_nxdomain():
    # A typo'd host ends at once: one attempt, exit 6, a message naming host and answer.
    def body(dns):
        args = ["get", "http://nx-typo.test:8080/", "--dns-servers", dns.servers(), "--trace"]
        code, out, err, _ = run(*args)
        check(code == 6, f"{args} exited {code}, stderr: {err}")
        e = events(err)
        done = e[-1]
        check(done["event"] == "done" and done["attempts"] == 1, f"{args}: {done}")
        errors = [x for x in e if x["event"] == "error"]
        check(len(errors) == 1 and "nx-typo.test" in errors[0]["message"]
              and "NXDOMAIN" in errors[0]["message"], f"{args}: {errors}")
        code, out, err, _ = run(*args[:-1])
        check(code == 6 and "no such host 'nx-typo.test'" in err, f"{args} exited {code}: {err}")
    with_dns(body)


def case_name():
    # ok-*.test has ::1 and 127.0.0.1; the server listens on 127.0.0.1 only.
    def body(dns):
        server = OkServer()
        args = ["get", f"http://ok-cli.test:{server.port}/", "--dns-servers", dns.servers()]
        code, out, err, _ = run(*args)
        check(code == 0 and out == "named\n", f"{args} exited {code}, stdout {out!r}, stderr {err}")
    with_dns(body)


def case_silent_deadline():
    # A resolver that never answers cannot stretch --deadline 3 (it made it 10.5 s once).
    def body(dns):
        args = ["get", "http://silent-cli.test:8080/", "--dns-servers", dns.servers(),
                "--deadline", "3", "--trace"]
        code, out, err, seconds = run(*args)
        check(code == 3, f"{args} exited {code}, stderr: {err}")
        check(seconds < 5.0, f"{args} took {seconds:.1f} s (deadline 3 s)")
        errors = [x for x in events(err) if x["event"] == "error"]
        check(errors and all("silent-cli.test" in x["message"] for x in errors), f"{errors}")
    with_dns(body)


def case_usage():
    code, _, err, _ = run("get", "http://x.test/", "--dns-servers", "not a server")
    check(code == 2 and "--dns-servers" in err, f"exited {code}: {err}")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[4] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} BINARY DNS_SERVER TRAP|- {'|'.join(CASES)}")
    CASES[sys.argv[4]]()
