"""What the loopback test servers share: their common options, the listening sockets, TLS,
the port announcement, the request log, the bounded lifetime and HTTP/1.1 request reading.

Standard library only. Each server (tests/integration/scripted_server.py,
dual_stack_server.py, dns_server.py, tests/transfer/upload_server.py,
tests/integration/memorystore/memorystore_server.py) keeps only what is its own: its options,
what it answers and its log records. A server finds this module by looking for support/ in the
folders above its own, so it still does when its folder moves:

    sys.path.insert(0, next(str(p / "support") for p in pathlib.Path(__file__).resolve().parents
                            if (p / "support" / "loopback_server.py").is_file()))
    import loopback_server

The contract with the tests that start a server (the C++ fixtures, the Python test scripts):
  - it listens on loopback on an ephemeral port (port 0) and writes that port to
    --port-file once it accepts connections (written to a temporary name and renamed, so a
    reader never sees half a number), or prints its URL when it is given no port file;
  - it writes a request's log record BEFORE it answers the request: a client that has read
    the answer, and a test that reads the log right after, find the record there however late
    the server's thread runs (EventLog);
  - it exits by itself after --lifetime seconds, or as soon as the process that started it is
    gone, so a test that fails or is killed leaves no server behind.
"""

import argparse
import json
import os
import socket
import ssl
import struct
import threading
import time

# How often the main thread checks the lifetime and the parent, in seconds.
_TICK = 0.2

TLS_VERSIONS = {
    "1.2": (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
    "1.3": (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3),
    "any": (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3),
}


# --- Options.

def argument_parser(doc, lifetime=120.0, port_file_required=True):
    """An ArgumentParser described by the first line of `doc`, with --port-file and
    --lifetime (seconds; 0: no limit)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--port-file", required=port_file_required,
                   help="write the port here once the server accepts" +
                        ("" if port_file_required else " (without it, print the URL)"))
    p.add_argument("--lifetime", type=float, default=lifetime,
                   help="seconds until the server exits by itself (default %(default)s; 0: "
                        "no limit)")
    return p


def add_tls_arguments(parser, required=False):
    """--cert and --key: the server's certificate chain and key (PEM); TLS when given."""
    tls = "" if required else "; TLS when given, else plain TCP"
    parser.add_argument("--cert", required=required,
                        help="the server's certificate chain (PEM)" + tls)
    parser.add_argument("--key", required=required, help="its private key (PEM)")


def add_log_argument(parser, required=True):
    """--log-file: the request log the tests read (EventLog)."""
    parser.add_argument("--log-file", required=required,
                        help="append a record of each request here, before answering it")


# --- TLS.

def tls_context(cert, key, versions="any"):
    """A server-side SSLContext with `cert` and `key`, limited to TLS_VERSIONS[versions]; None
    without a certificate (plain TCP)."""
    if not cert:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.minimum_version, context.maximum_version = TLS_VERSIONS[versions]
    return context


# --- The log.

class EventLog:
    """The log a test reads: one line per event, appended and flushed at once.

    Write a request's record before answering it, never after: the test reads the log as soon
    as its client has the answer. `delay` holds every write back that many seconds, as a
    server thread that runs late on a loaded machine would (upload_server.py's --log-delay).
    Without a path it writes nothing."""

    def __init__(self, path, delay=0.0):
        self._file = open(path, "a", encoding="utf-8", buffering=1) if path else None
        self._delay = delay
        self._lock = threading.Lock()

    def write(self, line):
        if self._file is None:
            return
        if self._delay > 0:
            time.sleep(self._delay)
        with self._lock:
            self._file.write(line + "\n")

    def json(self, record):
        """One JSON object per line, keys sorted."""
        self.write(json.dumps(record, sort_keys=True))


# --- Sockets.

def tcp_listener(host="127.0.0.1", port=0, backlog=16):
    """A listening TCP socket on `host`:`port` (0: an ephemeral port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(backlog)
    return listener


def bind_same_port(kinds, tries=50):
    """Sockets bound to one ephemeral port, one per (host, socket type) of `kinds`: the first
    gets a port from the kernel, the others take the same one, or all start over on another
    (`tries` times). An IPv6 socket is IPv6 only; a stream socket is not yet listening.
    Returns (sockets, port)."""
    for _ in range(tries):
        made = []
        port = 0
        try:
            for host, kind in kinds:
                family = socket.AF_INET6 if ":" in host else socket.AF_INET
                s = socket.socket(family, kind)
                made.append(s)
                if family == socket.AF_INET6:
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                if kind == socket.SOCK_STREAM:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((host, port))
                port = s.getsockname()[1]
            return made, port
        except OSError:
            for s in made:
                s.close()
    raise SystemExit("no port free on all of %s" % ", ".join(h for h, _ in kinds))


def reset(sock):
    """Makes the close a reset (RST): SO_LINGER 0, so the peer sees no orderly end."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass


# --- Lifetime.

def announce(port, port_file, url=None):
    """Tells the tests the port: written to `port_file` (to a temporary name, then renamed),
    or, without one, `url` (or the port) printed."""
    if port_file:
        tmp = port_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("%d\n" % port)
        os.rename(tmp, port_file)
    else:
        print(url if url else port, flush=True)


def wait_for_end(lifetime, watch_parent=True):
    """Returns after `lifetime` seconds (0: never), or once the parent process is gone when
    `watch_parent`."""
    parent = os.getppid()
    end = time.monotonic() + lifetime if lifetime > 0 else None
    while end is None or time.monotonic() < end:
        if watch_parent and os.getppid() != parent:
            return
        time.sleep(_TICK)


def exit_now():
    """Ends the process at once, its connection threads included."""
    os._exit(0)


# --- Connections.

class ConnectionServer:
    """Serves each connection accepted on its listeners in a thread of its own: wraps it in
    TLS when it has a context, then hands it to serve(). Subclasses override serve() and, for
    their logs, handshake() and error()."""

    # Each connection's socket timeout in seconds (None: blocking).
    timeout = 10.0
    # What ends a connection quietly (reported to error()) instead of with a traceback.
    errors = (OSError, ssl.SSLError, ValueError)

    def __init__(self, context=None):
        self.context = context
        self.port = 0
        self._conns = 0
        self._lock = threading.Lock()

    def serve(self, sock, conn_id):
        """Serves one connection (numbered from 1 in the order they were accepted)."""
        raise NotImplementedError

    def handshake(self, sock, conn_id):
        """Called after a TLS handshake, before serve()."""

    def error(self, conn_id, e):
        """Called when one of `errors` ended the connection."""

    def context_for(self, conn_id):
        """The TLS context connection `conn_id` is served with (None: plain TCP)."""
        return self.context

    def accept(self, listener):
        """Accepts on `listener` for ever, a thread per connection (run it in a thread)."""
        while True:
            raw, _ = listener.accept()
            with self._lock:
                self._conns += 1
                conn_id = self._conns
            threading.Thread(target=self._connection, args=(raw, conn_id), daemon=True).start()

    def start(self, *listeners):
        """Accepts on every listener, each in a thread of its own."""
        for listener in listeners:
            threading.Thread(target=self.accept, args=(listener,), daemon=True).start()

    def run(self, listener, port_file, lifetime, watch_parent=True, url=None):
        """Serves `listener` until the lifetime ends or the parent is gone, then exits: the
        usual main loop of a server with one listener."""
        self.port = listener.getsockname()[1]
        self.start(listener)
        announce(self.port, port_file, url)
        wait_for_end(lifetime, watch_parent)
        exit_now()

    def _connection(self, raw, conn_id):
        raw.settimeout(self.timeout)
        sock = raw
        try:
            context = self.context_for(conn_id)
            if context is not None:
                sock = context.wrap_socket(raw, server_side=True)
                self.handshake(sock, conn_id)
            self.serve(sock, conn_id)
        except self.errors as e:
            self.error(conn_id, e)
        finally:
            try:
                sock.close()
            except OSError:
                pass


# --- HTTP/1.1.

class HttpReader:
    """Reads request heads and bodies from a socket, keeping the bytes it read ahead."""

    # A head larger than this is refused (ValueError).
    max_head = 65536

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()

    def read_head(self):
        """(method, target, headers) of the next request, or None when the peer closed first.
        Header names are lower-cased; a repeated field keeps its last value."""
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > self.max_head:
                raise ValueError("request head too large")
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data
        end = self.buf.index(b"\r\n\r\n")
        head = bytes(self.buf[:end])
        del self.buf[:end + 4]
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return method, target, headers

    def read_body(self, n):
        """The next `n` bytes, or None when the peer closed before they all came."""
        while len(self.buf) < n:  # A bytearray appends in place: multi-megabyte bodies.
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data
        body = bytes(self.buf[:n])
        del self.buf[:n]
        return body


def content_length(headers):
    return int(headers.get("content-length", "0"))


def http_head(status, reason, headers=()):
    """The bytes of a response head: the status line, the (name, value) fields, the blank
    line."""
    lines = ["HTTP/1.1 %d %s" % (status, reason)] + ["%s: %s" % (n, v) for n, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
