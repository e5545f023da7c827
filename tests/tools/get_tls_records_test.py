"""`stepback get --tls-max-fragment` against nginx over TLS on loopback: nginx (OpenSSL)
honours max_fragment_length, so a large file arrives in small records, over TLS 1.2 (mbedTLS
negotiates the extension there only); without it nginx sends full 16 KiB records, which the
default build takes and the small-RAM build (preset small-ram, a 4 KiB TLS input buffer)
refuses at once, naming the buffer. nginx's access log says which version each request got.

usage: get_tls_records_test.py STEPBACK_BINARY NGINX TLS_IN_CONTENT_LEN CASE
TLS_IN_CONTENT_LEN is the build's STEPBACK_TLS_IN_CONTENT_LEN (16384 by default).
"""

import os
import random
import subprocess
import sys
import tempfile

from cli_support import check, free_port, nginx_conf, start_nginx, wait_until

BINARY = sys.argv[1]
NGINX = sys.argv[2]
IN_CONTENT_LEN = int(sys.argv[3])
SIZE = 300 * 1024 + 5

LOG_FORMAT = "$uri $status $body_bytes_sent $ssl_protocol"
SERVERS = """  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    root {dir}/www;
  }}"""


class Nginx:
    """nginx over TLS on a loopback port, serving big.bin, with a self-signed certificate."""

    def __init__(self, tmp):
        self.dir = tmp
        os.makedirs(os.path.join(tmp, "www"))
        self.big = random.Random(11).randbytes(SIZE)
        with open(os.path.join(tmp, "www", "big.bin"), "wb") as f:
            f.write(self.big)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                        os.path.join(tmp, "key.pem"), "-out", self.cert, "-days", "2", "-subj",
                        "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        self.port = free_port()
        # Ready when it answers: a 404 (exit 4).
        self.proc = start_nginx(
            NGINX, tmp, nginx_conf(tmp, LOG_FORMAT, SERVERS.format(dir=tmp, port=self.port)),
            lambda: subprocess.run([BINARY, "get", self.url("/probe"), "--cacert", self.cert,
                                    "--max-retries", "0"], capture_output=True).returncode == 4)

    @property
    def cert(self):
        return os.path.join(self.dir, "cert.pem")

    def url(self, path):
        return f"https://127.0.0.1:{self.port}{path}"

    def log(self):
        path = os.path.join(self.dir, "access.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [line.split(" ") for line in f.read().splitlines()]

    def protocols(self):
        """The TLS version of each request for big.bin, from the access log."""
        return [fields[3] for fields in self.log() if fields[0] == "/big.bin"]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def get(nginx, tmp, *args):
    out = os.path.join(tmp, "big.out")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([BINARY, "get", nginx.url("/big.bin"), "--cacert", nginx.cert, "-o", out,
                        "--max-retries", "2", *args], capture_output=True, text=True, timeout=60)
    body = None
    if os.path.exists(out):
        with open(out, "rb") as f:
            body = f.read()
    return p.returncode, p.stderr, body


def logged_protocols(nginx, count):
    """nginx logs a request after answering it: waits (bounded) for `count` lines."""
    wait_until(lambda: len(nginx.protocols()) >= count,
               lambda: f"nginx logged fewer than {count} requests: {nginx.protocols()}")
    return nginx.protocols()


def with_nginx(test):
    with tempfile.TemporaryDirectory() as tmp:
        nginx = Nginx(tmp)
        try:
            test(nginx, tmp)
        finally:
            nginx.stop()


def case_max_fragment():
    # Asked for 4 KiB records, nginx sends them (over TLS 1.2), and every build takes them.
    def test(nginx, tmp):
        code, err, body = get(nginx, tmp, "--tls-max-fragment", "4096")
        check(code == 0, f"--tls-max-fragment 4096 exited {code}: {err}")
        check(body == nginx.big, "the file differs")
        check(logged_protocols(nginx, 1) == ["TLSv1.2"], f"protocols: {nginx.protocols()}")
    with_nginx(test)


def case_full_records():
    # Not asked, nginx sends 16 KiB records: the default build takes them (over TLS 1.3), the
    # small-RAM build refuses the first one at once, naming its buffer (exit 6, no retry).
    def test(nginx, tmp):
        code, err, body = get(nginx, tmp, "--tls-max-fragment", "0")
        if IN_CONTENT_LEN >= 16384:
            check(code == 0, f"exited {code}: {err}")
            check(body == nginx.big, "the file differs")
            check(logged_protocols(nginx, 1) == ["TLSv1.3"], f"protocols: {nginx.protocols()}")
            return
        check(code == 6, f"exited {code}, want 6: {err}")
        check(f"more than the TLS input buffer takes ({IN_CONTENT_LEN} bytes: "
              "STEPBACK_TLS_IN_CONTENT_LEN); max_fragment_length was not asked for" in err, err)
        check("stopped after 1 attempt" in err, err)
        check(body is None, "a file was left behind")
    with_nginx(test)


def case_default():
    # Without the flag the default build asks nothing (TLS 1.3); the small-RAM build asks for
    # the largest length its buffers take, 4096 (TLS 1.2), and gets the whole file.
    def test(nginx, tmp):
        code, err, body = get(nginx, tmp)
        check(code == 0, f"exited {code}: {err}")
        check(body == nginx.big, "the file differs")
        want = "TLSv1.3" if IN_CONTENT_LEN >= 16384 else "TLSv1.2"
        check(logged_protocols(nginx, 1) == [want], f"protocols: {nginx.protocols()}, want {want}")
    with_nginx(test)


def case_range_pieces():
    # Not asked for small records (TLS 1.3, full ones), but fetched in 2 KiB pieces: no
    # response is larger than a piece and its head, so every record fits even the small-RAM
    # build's 4 KiB buffer, and the file arrives whole from as many 206s.
    def test(nginx, tmp):
        code, err, body = get(nginx, tmp, "--tls-max-fragment", "0", "--range-size", "2K")
        check(code == 0, f"--range-size 2K exited {code}: {err}")
        check(body == nginx.big, "the file differs")
        pieces = -(-SIZE // 2048)
        check(logged_protocols(nginx, pieces) == ["TLSv1.3"] * pieces,
              f"protocols: {nginx.protocols()}, want {pieces} requests over TLSv1.3")
    with_nginx(test)


def case_usage():
    p = subprocess.run([BINARY, "get", "https://127.0.0.1:1/", "--tls-max-fragment", "8192"],
                       capture_output=True, text=True, timeout=20)
    check(p.returncode == 2, f"exited {p.returncode}: {p.stderr}")
    check("invalid --tls-max-fragment '8192' (expected 512, 1024, 2048, 4096 or 0 (none))"
          in p.stderr, p.stderr)


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    CASES[sys.argv[4]]()
