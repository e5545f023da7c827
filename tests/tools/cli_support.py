"""What the scripts that test the built `stepback` program share (tests/tools/*_test.py):
a trust anchor no server uses, the failure check, the bounded wait for a state, a server
started on a port file, the reader of --trace output, an nginx on loopback, a scripted HTTP
server on tests/support/loopback_server.py, and `ip` for the scripts that make network
namespaces.
Imported from the scripts' own folder (and by bench/'s scripts and
tests/integration/memorystore/)."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import loopback_server  # noqa: E402


# A trust anchor that no server uses: `get https://...` needs one to get as far as the
# connect, whether or not the machine has a system CA bundle.
TEST_ANCHOR = """-----BEGIN CERTIFICATE-----
MIIBvTCCAWOgAwIBAgIUU+DKFP8Eg4sXkGdO1Oh6xqpw0HAwCgYIKoZIzj0EAwIw
MzExMC8GA1UEAwwoc3RlcGJhY2sgdGVzdCBhbmNob3IgKG5vIHNlcnZlciB1c2Vz
IGl0KTAgFw0yNjExMjIwMjI4MjBaGA8yMTI2MTAyOTAyMjgyMFowMzExMC8GA1UE
Awwoc3RlcGJhY2sgdGVzdCBhbmNob3IgKG5vIHNlcnZlciB1c2VzIGl0KTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABJLpcL7fnM4s45XyS6IGYMAcPx3WM3RMcKF5
Dw2IvbhCdhzCv5yeMB9fP8myr87G5irkku/xb93DfNEF5mOj3r+jUzBRMB0GA1Ud
DgQWBBTdcmqB0IFxhJk/vUnE7K7XVtoxPTAfBgNVHSMEGDAWgBTdcmqB0IFxhJk/
vUnE7K7XVtoxPTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIGDs
dMKJcZUVxxcozn9Xt6JV1C57Iyk2E+oeH1A9yomAAiEA0ML5Q5juiDm9XXNOM+I2
Y7zkb0+mkXKnxvvd+7o4Sf8=
-----END CERTIFICATE-----
"""


def anchor_file(tmp):
    """TEST_ANCHOR written to tmp/anchor.pem; returns its path."""
    path = os.path.join(tmp, "anchor.pem")
    with open(path, "w") as f:
        f.write(TEST_ANCHOR)
    return path


def check(condition, message):
    """Ends the test with FAIL: message when condition is false."""
    if not condition:
        sys.exit("FAIL: " + message)


def wait_until(cond, what, limit=10, proc=None, every=0.01):
    """Polls cond() every `every` s until it gives a true value, and returns that value: a wait
    for a state, never for a time. Ends the test with FAIL: WHAT when `limit` s pass first, or
    when the process `proc` (a Popen, if given) has exited with cond() still false; `what` may
    be a function, called for the text only then."""
    deadline = time.monotonic() + limit
    while True:
        got = cond()
        if got:
            return got
        ended = proc is not None and proc.poll() is not None
        if ended or time.monotonic() >= deadline:
            got = cond()  # What the process did before it ended.
            if got:
                return got
            text = what() if callable(what) else what
            why = f"exit {proc.returncode}" if ended else f"not within {limit} s"
            sys.exit(f"FAIL: {text} ({why})")
        time.sleep(every)


def port_in(port_file):
    """The port a server wrote to `port_file`, or None while it has not."""
    try:
        with open(port_file) as f:
            text = f.read().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


def start_server(argv, port_file, what, limit=10, **popen):
    """Starts `argv` (subprocess.Popen with `popen`), a server that writes its port to
    `port_file` once it accepts; returns (process, port). Ends the test with FAIL: WHAT did not
    start (its stderr when piped) when it exits first or `limit` s pass, killing it."""
    proc = subprocess.Popen(argv, **popen)

    def failed():
        proc.kill()
        said = proc.communicate()[1]
        said = said.decode(errors="replace") if isinstance(said, bytes) else said
        return f"{what} did not start" + (f": {said.strip()}" if said else "")
    port = wait_until(lambda: port_in(port_file), failed, limit, proc=proc)
    return proc, port


def trace_events(err, args):
    """Parses --trace output: one JSON object per line, each with an event name and a t_ms
    that never goes back; `args` names the run in failure messages."""
    events = []
    last_t = 0
    for line in err.splitlines():
        try:
            e = json.loads(line)
        except json.JSONDecodeError as x:
            sys.exit(f"FAIL: {args}: not JSON ({x}): {line!r}")
        check(isinstance(e.get("event"), str), f"{args}: no event in {e}")
        check(type(e.get("t_ms")) is int and e["t_ms"] >= last_t, f"{args}: bad t_ms in {e}")
        last_t = e["t_ms"]
        events.append(e)
    return events


def ip(*args, check_rc=True):
    """Runs `ip ARGS`; ends the test with FAIL when it fails and check_rc is set."""
    p = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check_rc and p.returncode != 0:
        sys.exit(f"FAIL: ip {' '.join(args)}: {p.stderr.strip()}")
    return p


def namespaces_unavailable(probe):
    """Why network namespaces cannot be made here (not root, or `ip netns add` fails), or
    None; `probe` names the namespace it tries."""
    if os.geteuid() != 0:
        return "not root"
    p = ip("netns", "add", probe, check_rc=False)
    if p.returncode != 0:
        return f"cannot make a network namespace: {p.stderr.strip()}"
    ip("netns", "del", probe, check_rc=False)
    return None


class RespondingServer(loopback_server.ConnectionServer):
    """A plain-HTTP/1.1 server on `address` (127.0.0.1 unless named), a thread per connection
    and keep-alive: `respond(n, head)` gives the bytes to send for the n-th request (0-based),
    whose head is its request line and fields as text (names in lower case), or None to close.
    `heads` keeps each head in lower case, `bodies` each request body (its Content-Length
    bytes, read before `respond` is asked); a response that says Connection: close closes."""

    def __init__(self, respond, address="127.0.0.1"):
        super().__init__()
        self.respond, self.heads, self.bodies = respond, [], []
        listener = loopback_server.tcp_listener(address)
        self.port = listener.getsockname()[1]
        self.start(listener)

    def serve(self, sock, conn_id):
        reader = loopback_server.HttpReader(sock)
        while (request := reader.read_head()) is not None:
            method, target, fields = request
            head = (f"{method} {target} HTTP/1.1\r\n"
                    + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n")
            body = reader.read_body(loopback_server.content_length(fields))
            if body is None:
                return
            with self._lock:
                n = len(self.heads)
                self.heads.append(head.lower())
                self.bodies.append(body)
            out = self.respond(n, head)
            if out is None:
                return
            sock.sendall(out)
            if b"\r\nconnection: close\r\n" in out[: out.find(b"\r\n\r\n") + 2].lower():
                return


def http_response(status, fields, body, close=False):
    """The bytes of a response: `status` ("200 OK"), the (name, value) `fields`,
    Content-Length, Connection: close when `close`, and `body`."""
    lines = "".join(f"{k}: {v}\r\n" for k, v in fields)
    connection = "Connection: close\r\n" if close else ""
    return (f"HTTP/1.1 {status}\r\n{lines}Content-Length: {len(body)}\r\n{connection}\r\n"
            .encode() + body)


def free_port():
    """A loopback port nothing listens on now (bound, then released)."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def nginx_conf(directory, log_format, servers):
    """An nginx.conf for one foreground nginx process with everything under `directory`: the
    access log in `log_format` (access.log) and the `servers` blocks, as text."""
    return f"""daemon off;
master_process off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log info;
events {{ worker_connections 64; }}
http {{
  log_format sb '{log_format}';
  access_log {directory}/access.log sb;
  client_body_temp_path {directory}/client_body;
  proxy_temp_path {directory}/proxy;
  fastcgi_temp_path {directory}/fastcgi;
  uwsgi_temp_path {directory}/uwsgi;
  scgi_temp_path {directory}/scgi;
  default_type application/octet-stream;
{servers}
}}
"""


def start_nginx(nginx, directory, conf, ready):
    """Writes `conf` to directory/nginx.conf and starts `nginx` on it; returns the process once
    ready() is true (10 s at most: else the test fails)."""
    path = os.path.join(directory, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    proc = subprocess.Popen([nginx, "-c", path, "-p", directory], stderr=subprocess.DEVNULL)

    def failed():
        proc.kill()
        proc.wait()
        return "nginx did not come up"
    wait_until(ready, failed, 10, proc=proc, every=0.05)
    return proc
