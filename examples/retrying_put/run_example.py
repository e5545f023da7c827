"""Runs examples/retrying_put against real servers on loopback (the test examples.retrying_put).

usage: run_example.py --nginx NGINX --openssl OPENSSL --tests TESTS_DIR -- [EMULATOR...] EXAMPLE

PUT: nginx over TLS with `dav_methods PUT` stores the file. In front of it, a fault front
answers the first connection itself (TLS with nginx's certificate) with a 503 once it has read
the request, and passes every later connection through to nginx byte for byte. The front
speaks TLS 1.3 and nginx (before 1.23.4, by default) only up to 1.2: the client offers the
front's TLS 1.3 session on its next connection, which nginx refuses, and must connect again
with a full handshake. The example must retry after the 503, nginx must log one PUT, and the
stored file must be the local one.

POST: a loopback HTTPS server (tests/tools/cli_support.py's RespondingServer, which keeps every
request head and body) answers the first POST with an error and the next with 200:
  - 503, no key: retried, since a 503 says the server did not act on the request;
  - 500, no key: not retried, since the server may have acted: exit 1, one POST;
  - 500, --idempotency-key: retried, both POSTs carry the key and the whole file: exit 0.
Every wait is bounded: each subprocess has a timeout, each server socket one too.
"""

import os
import random
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import example_support  # noqa: E402 (examples/example_support.py)

LOG_FORMAT = "$request_method $uri $status $request_length"
SERVER = """  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    root {dir}/www;
    client_max_body_size 16m;
    location /uploads/ {{
      dav_methods PUT;
      create_full_put_path on;
    }}
  }}"""


def pipe(src, dst):
    """Copies src to dst until src ends (or fails), then ends dst's sending side."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def fault_front(support, tls, upstream):
    """A loopback port in front of `upstream`: connection 1 gets a 503 from here, the others go
    through. Returns the server; its `answered` lists (method, body bytes) of what it refused."""
    loopback_server, http_response = support.loopback_server, support.http_response

    class Front(loopback_server.ConnectionServer):
        answered = []

        def serve(self, sock, conn_id):
            if conn_id == 1:
                sock = tls.wrap_socket(sock, server_side=True)
                reader = loopback_server.HttpReader(sock)
                method, _, fields = reader.read_head()
                body = reader.read_body(loopback_server.content_length(fields))
                self.answered.append((method, len(body)))
                sock.sendall(http_response("503 Service Unavailable", [], b"busy\n", close=True))
                sock.close()
                return
            with socket.create_connection(("127.0.0.1", upstream), timeout=10) as up:
                back = threading.Thread(target=pipe, args=(up, sock), daemon=True)
                back.start()
                pipe(sock, up)
                back.join(10)

    front = Front()
    listener = loopback_server.tcp_listener()
    front.port = listener.getsockname()[1]
    front.start(listener)
    return front


def run(app, *args):
    p = subprocess.run(app + list(args), capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    print("+", " ".join(args), f"-> exit {p.returncode}\n{err}", flush=True)
    return p.returncode, p.stdout, err


def case_put(opts, support, tmp, cert, tls):
    www = os.path.join(tmp, "www")
    os.makedirs(os.path.join(www, "uploads"))
    data = random.Random(7).randbytes(300 * 1024 + 7)
    local = os.path.join(tmp, "data.bin")
    with open(local, "wb") as f:
        f.write(data)
    nginx, port = example_support.start_nginx(support, opts.nginx, tmp, LOG_FORMAT, SERVER)
    try:
        front = fault_front(support, tls, port)
        url = f"https://127.0.0.1:{front.port}/uploads/data.bin"
        code, _, err = run(opts.app, local, url, cert)
        support.check(code == 0, f"PUT exited {code}")
        support.check("attempt 1: HTTP 503" in err and "attempt 2: HTTP 201" in err,
                      "PUT: not a 503, then a 201")
        support.check(front.answered == [("PUT", len(data))],
                      f"the front refused {front.answered}, not one whole PUT")
        with open(os.path.join(www, "uploads", "data.bin"), "rb") as f:
            support.check(f.read() == data, "the stored file differs from the local one")

        def puts():
            with open(os.path.join(tmp, "access.log")) as f:
                return [line for line in f.read().splitlines() if line.startswith("PUT ")]
        logged = support.wait_until(puts, "nginx logged no PUT")
        support.check(len(logged) == 1 and logged[0].split()[2] == "201",
                      f"nginx logged {logged}")
    finally:
        nginx.kill()
        nginx.wait(10)
    print("PUT: ok")


def case_post(opts, support, tmp, cert, tls, status, key, retried):
    data = random.Random(status).randbytes(64 * 1024 + 3)
    local = os.path.join(tmp, f"post{status}.bin")
    with open(local, "wb") as f:
        f.write(data)
    reasons = {500: "Internal Server Error", 503: "Service Unavailable"}

    def respond(n, _head):
        if n == 0:
            return support.http_response(f"{status} {reasons[status]}", [], b"failed\n")
        return support.http_response("200 OK", [], b"created\n")
    server = support.RespondingServer(respond)
    server.context = tls
    args = ["-X", "POST"] + (["--idempotency-key", key] if key else [])
    code, out, err = run(opts.app, *args, local, f"https://127.0.0.1:{server.port}/items", cert)
    what = f"POST answered {status}, {'with' if key else 'without'} a key"
    support.check(all(body == data for body in server.bodies), f"{what}: a body differs")
    if retried:
        support.check(code == 0 and out == b"created\n", f"{what}: exit {code}, body {out!r}")
        support.check(len(server.bodies) == 2, f"{what}: {len(server.bodies)} POSTs, not 2")
    else:
        support.check(code == 1 and "not_idempotent after 1 attempt(s)" in err,
                      f"{what}: exit {code}, not ended as not idempotent")
        support.check(len(server.bodies) == 1, f"{what}: {len(server.bodies)} POSTs, not 1")
    if key:
        support.check(all(f"idempotency-key: {key}\r\n" in h for h in server.heads),
                      f"{what}: a POST without the key")
    print(f"{what}: ok")


def main():
    opts, support = example_support.parse(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = example_support.self_signed(opts.openssl, tmp)
        tls = support.loopback_server.tls_context(cert, key)
        case_put(opts, support, tmp, cert, tls)
        case_post(opts, support, tmp, cert, tls, 503, None, retried=True)
        case_post(opts, support, tmp, cert, tls, 500, None, retried=False)
        case_post(opts, support, tmp, cert, tls, 500, "k-7f3a", retried=True)
    print("retrying_put: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
