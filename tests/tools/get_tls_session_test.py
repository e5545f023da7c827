"""`stepback get --tls-session FILE` against nginx over TLS 1.3 with tickets and early data, on
loopback: a run keeps its session in FILE (mode 0600), and the next process resumes it (nginx's
$ssl_session_reused is "r") with its GET in early data (the client's --trace says the server
accepted it); --no-early-data resumes without it; a POST never rides early. A damaged file, or one
made with another server, is said, removed and replaced, and the run shakes hands in full.

usage: get_tls_session_test.py STEPBACK_BINARY NGINX CASE
"""

import os
import stat
import subprocess
import sys
import tempfile

from cli_support import check, free_port, nginx_conf, start_nginx, trace_events, wait_until

BINARY = sys.argv[1]
NGINX = sys.argv[2]

LOG_FORMAT = "$request_method $uri $status reused=$ssl_session_reused early=$ssl_early_data"
SERVER = """  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    ssl_protocols TLSv1.3;
    ssl_session_tickets on;
    ssl_early_data on;
    location = /hello {{ return 200 "hello\\n"; }}
    location = /post {{ return 200 "posted\\n"; }}
  }}"""


class Nginx:
    """nginx with two TLS servers on loopback ports (one certificate), logging per request
    whether the session was resumed and the request came early."""

    def __init__(self, tmp):
        self.dir = tmp
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                        os.path.join(tmp, "key.pem"), "-out", self.cert, "-days", "2", "-subj",
                        "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        self.ports = [free_port(), free_port()]
        while self.ports[1] == self.ports[0]:
            self.ports[1] = free_port()
        servers = "\n".join(SERVER.format(dir=tmp, port=p) for p in self.ports)
        self.proc = start_nginx(
            NGINX, tmp, nginx_conf(tmp, LOG_FORMAT, servers),
            lambda: all(subprocess.run([BINARY, "get", self.url("/probe", p), "--cacert",
                                        self.cert, "--max-retries", "0"],
                                       capture_output=True).returncode == 4
                        for p in self.ports))

    @property
    def cert(self):
        return os.path.join(self.dir, "cert.pem")

    def url(self, path, port=None):
        return f"https://127.0.0.1:{port or self.ports[0]}{path}"

    def requests(self):
        """The access log's lines for /hello and /post (the probes left out)."""
        path = os.path.join(self.dir, "access.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [line for line in f.read().splitlines() if "/probe" not in line]

    def requests_after(self, count):
        """nginx logs a request after answering it: waits (bounded) for `count` lines."""
        wait_until(lambda: len(self.requests()) >= count,
                   lambda: f"nginx logged fewer than {count} requests: {self.requests()}")
        return self.requests()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def get(nginx, session, *args, path="/hello", port=None):
    """One `stepback get --trace` process keeping its session in `session`: exit code, stderr
    and the trace's response events."""
    p = subprocess.run([BINARY, "get", nginx.url(path, port), "--cacert", nginx.cert,
                        "--tls-session", session, "--max-retries", "0", "--trace", *args],
                       capture_output=True, text=True, timeout=60)
    json_lines = "\n".join(line for line in p.stderr.splitlines() if line.startswith("{"))
    responses = [e for e in trace_events(json_lines, args) if e["event"] == "response"]
    return p.returncode, p.stdout, p.stderr, responses


def with_nginx(test):
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            test(nginx, os.path.join(tmp, "session"))
        finally:
            nginx.stop()


def first_run(nginx, session):
    code, out, err, responses = get(nginx, session)
    check(code == 0 and out == "hello\n", f"first run exited {code}: {err}")
    check(os.path.exists(session), "no session file after the first run")
    mode = stat.S_IMODE(os.stat(session).st_mode)
    check(mode == 0o600, f"the session file has mode {oct(mode)}, want 0o600")
    check("early_data" not in responses[0], f"the first run went early: {responses}")


def case_resumes_across_runs():
    def test(nginx, session):
        first_run(nginx, session)
        check(nginx.requests_after(1)[0].startswith("GET /hello 200 reused=. "),
              f"the first run resumed: {nginx.requests()}")
        # A new process: the session from the file, the GET in the first flight.
        code, out, err, responses = get(nginx, session)
        check(code == 0 and out == "hello\n", f"second run exited {code}: {err}")
        check(len(responses) == 1 and responses[0].get("early_data") == "accepted",
              f"the second run's GET did not ride early: {responses}\n{err}")
        log = nginx.requests_after(2)
        check(len(log) == 2 and log[1].startswith("GET /hello 200 reused=r "),
              f"the second run did not resume (or the GET went twice): {log}")
        # --no-early-data: resumed, the GET after the handshake.
        code, out, err, responses = get(nginx, session, "--no-early-data")
        check(code == 0 and "early_data" not in responses[0], f"{code} {responses}: {err}")
        log = nginx.requests_after(3)
        check(log[2] == "GET /hello 200 reused=r early=-", f"--no-early-data: {log}")
        # A POST resumes too, and never rides early.
        code, out, err, responses = get(nginx, session, "-d", "x", path="/post")
        check(code == 0 and out == "posted\n", f"POST exited {code}: {err}")
        check("early_data" not in responses[0], f"the POST went early: {responses}")
        log = nginx.requests_after(4)
        check(log[3] == "POST /post 200 reused=r early=-", f"POST: {log}")
    with_nginx(test)


def case_damaged_file():
    def test(nginx, session):
        first_run(nginx, session)
        with open(session, "r+b") as f:
            f.seek(os.path.getsize(session) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0x40]))
        code, out, err, _ = get(nginx, session)
        check(code == 0 and out == "hello\n", f"a damaged file failed the run ({code}): {err}")
        check("--tls-session: " in err and "corrupt" in err and "in full" in err,
              f"the damaged file was not said: {err}")
        log = nginx.requests_after(2)
        check(log[1].startswith("GET /hello 200 reused=. "), f"resumed anyway: {log}")
        # Replaced by the run's own session, which the next run resumes.
        code, out, err, _ = get(nginx, session)
        check(code == 0 and "--tls-session" not in err, f"{code}: {err}")
        check(nginx.requests_after(3)[2].startswith("GET /hello 200 reused=r "),
              f"the replaced file was not resumed: {nginx.requests()}")
    with_nginx(test)


def case_other_server():
    def test(nginx, session):
        first_run(nginx, session)
        code, out, err, _ = get(nginx, session, port=nginx.ports[1])
        check(code == 0 and out == "hello\n", f"exited {code}: {err}")
        check("--tls-session: " in err and "another host or port" in err, f"not said: {err}")
        log = nginx.requests_after(2)
        check(log[1].startswith("GET /hello 200 reused=. "), f"resumed anyway: {log}")
        # The file now holds the second server's session.
        code, out, err, _ = get(nginx, session, port=nginx.ports[1])
        check(code == 0 and "--tls-session" not in err, f"{code}: {err}")
        check(nginx.requests_after(3)[2].startswith("GET /hello 200 reused=r "),
              f"not resumed: {nginx.requests()}")
    with_nginx(test)


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    CASES[sys.argv[3]]()
