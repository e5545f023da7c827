#!/usr/bin/env python3
"""`stepback get --url-file FILE -o OUT` against a loopback server that signs its URLs the
way Cloud Storage and S3 pre-sign theirs (a `sig` query that expires): the body is cut
mid-transfer, the signature then answers with the provider's expiry error, and the test,
playing the app, writes a fresh URL into FILE. Cases:

  s3_403        S3's 403 AccessDenied "Request has expired": the download goes on from the
                cut with the fresh URL (Range and If-Range on the ETag), byte-exact
  gcs_400       the same with Cloud Storage's 400 ExpiredToken
  changed       the object changed behind the fresh URL: its whole body replaces the part
                (If-Range), never spliced
  no_fresh_url  FILE still holds the expired URL: the expiry answer ends the run (exit 4),
                the part and its state kept; the next run with a fresh URL goes on from them
  usage         a URL and --url-file together, an unreadable or empty FILE: exit 2
"""
import hashlib
import http.server
import os
import socketserver
import subprocess
import sys
import tempfile
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_support import check  # noqa: E402

BINARY = sys.argv[1]
SIZE = 1_500_000
CUT = 600_000


def body_of(seed):
    return hashlib.sha256(seed).digest() * (SIZE // 32) + b"x" * (SIZE % 32)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, expiry, url_file):
        super().__init__(("127.0.0.1", 0), Handler)
        self.expiry = expiry  # "s3" or "gcs": which provider's expiry answer
        self.url_file = url_file
        self.body = body_of(b"one")
        self.etag = '"v1"'
        self.expired = set()  # Signatures past their expiry.
        self.log = []  # (sig, range, status)
        self.change_on_refresh = False
        self.refresh_url = True  # Whether the "app" writes a fresh URL at the expiry.
        self.lock = threading.Lock()

    def url(self, sig):
        return f"http://127.0.0.1:{self.server_address[1]}/bucket/object?sig={sig}"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        s = self.server
        sig = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query).get("sig", [""])[0]
        rng = self.headers.get("Range")
        with s.lock:
            expired = sig in s.expired
        if expired:
            if s.expiry == "s3":
                status, body = 403, (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>'
                                     b"AccessDenied</Code><Message>Request has expired</Message>"
                                     b"<X-Amz-Expires>60</X-Amz-Expires></Error>")
            else:
                status, body = 400, (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>"
                                     b"ExpiredToken</Code><Message>Invalid argument.</Message>"
                                     b"<Details>The provided token has expired.</Details></Error>")
            s.log.append((sig, rng, status))
            # The app notices too and signs a fresh URL (before the client asks for it).
            if s.refresh_url:
                with open(s.url_file, "w") as f:
                    f.write(s.url(str(int(sig) + 1)) + "\n")
                if s.change_on_refresh:
                    s.body, s.etag = body_of(b"two"), '"v2"'
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        start = 0
        if rng and self.headers.get("If-Range") == s.etag and rng.startswith("bytes="):
            start = int(rng[len("bytes="):].split("-")[0])
        part = s.body[start:]
        status = 206 if start > 0 else 200
        s.log.append((sig, rng, status))
        self.send_response(status)
        self.send_header("ETag", s.etag)
        self.send_header("Content-Length", str(len(part)))
        if start > 0:
            self.send_header("Content-Range", f"bytes {start}-{SIZE - 1}/{SIZE}")
        self.end_headers()
        if start == 0 and sig == "1":
            # The first answer is cut after CUT bytes, and this signature then expires.
            self.wfile.write(part[:CUT])
            self.wfile.flush()
            with s.lock:
                s.expired.add(sig)
            self.connection.shutdown(2)
            return
        self.wfile.write(part)


def run(args, timeout=60):
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def start(tmp, expiry):
    url_file = os.path.join(tmp, "url")
    server = Server(expiry, url_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(url_file, "w") as f:
        f.write(server.url("1") + "\n")
    return server, url_file


def goes_on(expiry):
    with tempfile.TemporaryDirectory() as tmp:
        server, url_file = start(tmp, expiry)
        out = os.path.join(tmp, "out")
        try:
            code, _, err = run(["get", "--url-file", url_file, "-o", out, "--profile", "desktop"])
        finally:
            server.shutdown()
        check(code == 0, f"exit {code}: {err}")
        with open(out, "rb") as f:
            check(f.read() == server.body, "the file differs from the object")
        expected = 403 if expiry == "s3" else 400
        statuses = [(sig, status) for sig, _, status in server.log]
        check(statuses == [("1", 200), ("1", expected), ("2", 206)], f"requests: {server.log}")
        check(server.log[2][1] == f"bytes={CUT}-", f"the fresh URL's range: {server.log}")
        check(f"the URL expired; going on from byte {CUT} with a fresh one" in err, err)
        check("sig=" not in err, f"a signed URL was printed: {err!r}")


def case_s3_403():
    goes_on("s3")


def case_gcs_400():
    goes_on("gcs")


def case_changed():
    with tempfile.TemporaryDirectory() as tmp:
        server, url_file = start(tmp, "s3")
        server.change_on_refresh = True
        out = os.path.join(tmp, "out")
        try:
            code, _, err = run(["get", "--url-file", url_file, "-o", out, "--profile", "desktop"])
        finally:
            server.shutdown()
        check(code == 0, f"exit {code}: {err}")
        with open(out, "rb") as f:
            data = f.read()
        check(data == body_of(b"two"), "not the new object whole (spliced or cut?)")
        check([st for _, _, st in server.log] == [200, 403, 200], f"requests: {server.log}")


def case_no_fresh_url():
    with tempfile.TemporaryDirectory() as tmp:
        server, url_file = start(tmp, "s3")
        server.refresh_url = False
        out = os.path.join(tmp, "out")
        try:
            code, _, err = run(["get", "--url-file", url_file, "-o", out, "--profile", "desktop"])
            check(code == 4, f"exit {code} (expected 4, a final 403): {err}")
            check(not os.path.exists(out), "the output exists after a failed run")
            check(os.path.exists(out + ".part") and os.path.exists(out + ".part.state"),
                  f"the part or its state is gone: {os.listdir(tmp)}")
            check([st for _, _, st in server.log] == [200, 403], f"requests: {server.log}")
            # The app signs a fresh URL later; the next run goes on from the part.
            with open(url_file, "w") as f:
                f.write(server.url("7") + "\n")
            code, _, err = run(["get", "--url-file", url_file, "-o", out, "--profile", "desktop"])
        finally:
            server.shutdown()
        check(code == 0, f"the second run: exit {code}: {err}")
        with open(out, "rb") as f:
            check(f.read() == server.body, "the file differs from the object")
        last = server.log[-1]
        check(last[0] == "7" and last[2] == 206 and last[1].startswith("bytes="),
              f"the second run did not go on by range: {server.log}")
        check(int(last[1][len("bytes="):].rstrip("-")) > 0, f"{server.log}")


def case_usage():
    with tempfile.TemporaryDirectory() as tmp:
        url_file = os.path.join(tmp, "url")
        with open(url_file, "w") as f:
            f.write("http://127.0.0.1:9/x\n")
        code, _, err = run(["get", "http://127.0.0.1:9/x", "--url-file", url_file])
        check(code == 2 and "not both" in err, f"exit {code}: {err}")
        code, _, err = run(["get", "--url-file", os.path.join(tmp, "missing")])
        check(code == 2 and "cannot read a URL" in err, f"exit {code}: {err}")
        with open(url_file, "w") as f:
            f.write("  \n")
        code, _, err = run(["get", "--url-file", url_file])
        check(code == 2 and "cannot read a URL" in err, f"exit {code}: {err}")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} BINARY {'|'.join(CASES)}")
    CASES[sys.argv[2]]()
