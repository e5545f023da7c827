#!/usr/bin/env python3
"""A scripted HTTP/1.1 server over TLS (or plain TCP) for the integration tests.

Standard library only. It listens on an ephemeral loopback port, writes the port to
--port-file once it accepts, and answers each request it reads with the next action of the
--script JSON list (the last action repeats). Every connection runs in its own thread, so a
client that gives up on a slow connection can reconnect at once.

An action is an object; every field is optional:
  status, reason      the status line (default 200 OK)
  headers             [[name, value], ...] sent after Content-Length / Transfer-Encoding
  body                text body; body_hex: bytes as hex; pattern: N bytes of pattern_byte()
  chunked             send the body in chunks of `chunk` bytes (default 1000)
  close               send "Connection: close" and close after the response
  delay               seconds to sleep before answering (the slow-response case)
  reset_after         send the head and this many body bytes, then reset (RST) the connection
  raw / raw_hex       send exactly these bytes, then close (garbage)
  close_idle_after    keep the connection after the response, then close it (no
                      Connection: close) after this many seconds of waiting for a request
  ranges              honor "Range: bytes=N-" (with If-Range matching the action's ETag
                      header, or no If-Range): 206 with the rest of the body from N
  header_bytes        add an X-Padding header of this many bytes (oversized heads)
  retry_info_proto    seconds: the body is a google.rpc.Status carrying a RetryInfo with this
                      retry_delay, Content-Type application/x-protobuf (bytes built by hand)
  retry_info_json     seconds: the same in its JSON form, Content-Type application/json
  early               seconds: answer as soon as the request head is read, without reading
                      its body, wait this long (the answer reaches the client; a close at
                      once could discard it with the reset), then close: the unread body
                      bytes make the close a reset, which fails the client's send. A server
                      that refuses an upload early, e.g. 413 before an 8 MB body

--log-file gets one line per event, flushed at once, for the test to read:
  handshake conn=N version=TLSv1.3 reused=0|1
  request conn=N method=GET target=/x body=LEN range=N|- if_range=VALUE|-

--full-queue S keeps the listener's accept queue full for S seconds after the port file is
written (backlog 0, filled by the server's own connections), so a client's SYN is dropped and
the kernel retransmits it after about a second: a slow connect on loopback.

The server exits by itself after --lifetime seconds, or when its parent process is gone.
"""

import argparse
import json
import os
import socket
import ssl
import struct
import sys
import threading
import time

LOCK = threading.Lock()
STATE = {"next": 0, "conns": 0}


def pattern_byte(i):
    """Byte i of the deterministic body pattern; the C++ tests compute the same."""
    return (i * 7 + i // 251) & 0xFF


def pattern(n):
    return bytes(pattern_byte(i) for i in range(n))


def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def length_delimited(field, payload):
    """A protobuf field of wire type 2 (bytes, strings, messages)."""
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def retry_info_status(seconds):
    """A serialized google.rpc.Status{code: 14, message, details: [Any{RetryInfo}]}."""
    whole = int(seconds)
    nanos = int(round((seconds - whole) * 1e9))
    duration = b""  # google.protobuf.Duration{seconds = 1, nanos = 2}
    if whole:
        duration += varint(1 << 3 | 0) + varint(whole)
    if nanos:
        duration += varint(2 << 3 | 0) + varint(nanos)
    retry_info = length_delimited(1, duration)  # RetryInfo.retry_delay = 1
    any_detail = (length_delimited(1, b"type.googleapis.com/google.rpc.RetryInfo") +
                  length_delimited(2, retry_info))  # Any{type_url = 1, value = 2}
    return (varint(1 << 3 | 0) + varint(14) +  # code = 1 (UNAVAILABLE)
            length_delimited(2, b"try again later") +  # message = 2
            length_delimited(3, any_detail))  # details = 3


def retry_info_json(seconds):
    return json.dumps({"error": {
        "code": 503, "message": "try again later", "status": "UNAVAILABLE",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "OVERLOADED"},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo",
             "retryDelay": "%gs" % seconds},
        ]}}).encode()


class Server:
    def __init__(self, args):
        with open(args.script, encoding="utf-8") as f:
            self.script = json.load(f)
        if not self.script:
            raise SystemExit("empty script")
        self.log_file = open(args.log_file, "a", encoding="utf-8", buffering=1)
        self.context = None
        if args.cert:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(args.cert, args.key)
            versions = {
                "1.2": (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
                "1.3": (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3),
                "any": (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3),
            }[args.tls]
            self.context.minimum_version, self.context.maximum_version = versions

    def log(self, line):
        with LOCK:
            self.log_file.write(line + "\n")

    def peek_action(self):
        with LOCK:
            return self.script[min(STATE["next"], len(self.script) - 1)]

    def next_action(self):
        with LOCK:
            i = min(STATE["next"], len(self.script) - 1)
            STATE["next"] += 1
            return self.script[i]

    def serve_connection(self, raw, conn_id):
        raw.settimeout(10)
        sock = raw
        try:
            if self.context is not None:
                sock = self.context.wrap_socket(raw, server_side=True)
                self.log("handshake conn=%d version=%s reused=%d"
                         % (conn_id, sock.version(), int(sock.session_reused)))
            buf = b""
            while True:
                head, buf = read_head(sock, buf)
                if head is None:
                    return
                method, target, length, headers = head
                if self.peek_action().get("early"):
                    self.log("request conn=%d method=%s target=%s body=unread"
                             % (conn_id, method, target))
                    action = self.next_action()
                    self.respond(sock, action, headers)
                    time.sleep(float(action["early"]))
                    return
                body, buf = read_body(sock, buf, length)
                if body is None:
                    return
                self.log("request conn=%d method=%s target=%s body=%d range=%s if_range=%s"
                         % (conn_id, method, target, len(body),
                            headers.get("range", "-").replace("bytes=", "").rstrip("-") or "-",
                            headers.get("if-range", "-")))
                action = self.next_action()
                if not self.respond(sock, action, headers):
                    return
                if action.get("close_idle_after"):
                    time.sleep(float(action["close_idle_after"]))
                    return
        except (OSError, ssl.SSLError, ValueError) as e:
            self.log("error conn=%d %s" % (conn_id, type(e).__name__))
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def respond(self, sock, a, request_headers=None):
        """Sends one response; returns whether the connection stays open."""
        if a.get("delay"):
            time.sleep(float(a["delay"]))
        if "raw" in a or "raw_hex" in a:
            data = a["raw"].encode("latin-1") if "raw" in a else bytes.fromhex(a["raw_hex"])
            sock.sendall(data)
            return False
        headers = list(a.get("headers", []))
        if "retry_info_proto" in a:
            body = retry_info_status(float(a["retry_info_proto"]))
            headers.append(["Content-Type", "application/x-protobuf"])
        elif "retry_info_json" in a:
            body = retry_info_json(float(a["retry_info_json"]))
            headers.append(["Content-Type", "application/json; charset=utf-8"])
        elif "pattern" in a:
            body = pattern(int(a["pattern"]))
        elif "body_hex" in a:
            body = bytes.fromhex(a["body_hex"])
        else:
            body = a.get("body", "").encode("latin-1")
        status = int(a.get("status", 200))
        request_headers = request_headers or {}
        wanted = request_headers.get("range", "")
        if a.get("ranges") and status == 200 and wanted.startswith("bytes=") and wanted.endswith("-"):
            etag = dict((n.lower(), v) for n, v in headers).get("etag")
            if_range = request_headers.get("if-range")
            start = int(wanted[6:-1])
            if (if_range is None or if_range == etag) and start < len(body):
                headers.append(["Content-Range", "bytes %d-%d/%d" % (start, len(body) - 1, len(body))])
                body = body[start:]
                status = 206
        head = ["HTTP/1.1 %d %s" % (status, a.get("reason", "Status"))]
        chunked = bool(a.get("chunked"))
        head.append("Transfer-Encoding: chunked" if chunked else "Content-Length: %d" % len(body))
        close = bool(a.get("close"))
        if close:
            head.append("Connection: close")
        for name, value in headers:
            head.append("%s: %s" % (name, value))
        if a.get("header_bytes"):
            head.append("X-Padding: " + "p" * int(a["header_bytes"]))
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        if "reset_after" in a:
            sock.sendall(data + body[: int(a["reset_after"])])
            time.sleep(0.05)  # Let the bytes leave before the reset overtakes them.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if chunked:
            size = int(a.get("chunk", 1000))
            for i in range(0, len(body), size):
                part = body[i:i + size]
                data += b"%x\r\n" % len(part) + part + b"\r\n"
            data += b"0\r\n\r\n"
        else:
            data += body
        sock.sendall(data)
        return not close

    def run(self, args):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        fillers = []
        if args.full_queue > 0:
            # Backlog 0 queues one connection; the next SYN finds the queue full and is dropped.
            listener.listen(0)
            filler = socket.create_connection(listener.getsockname(), timeout=2)
            fillers.append(filler)
        else:
            listener.listen(16)
        listener.settimeout(0.2)
        tmp = args.port_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("%d\n" % listener.getsockname()[1])
        os.rename(tmp, args.port_file)
        if fillers:
            time.sleep(args.full_queue)
            queued, _ = listener.accept()  # The filler itself; now the queue has room.
            queued.close()
            for f in fillers:
                f.close()
        parent = os.getppid()
        end = time.monotonic() + args.lifetime
        while time.monotonic() < end and os.getppid() == parent:
            try:
                raw, _ = listener.accept()
            except socket.timeout:
                continue
            with LOCK:
                STATE["conns"] += 1
                conn_id = STATE["conns"]
            threading.Thread(target=self.serve_connection, args=(raw, conn_id),
                             daemon=True).start()
        os._exit(0)


def read_head(sock, buf):
    """Reads one request head: (method, target, body length, headers) and the bytes after it,
    or (None, b"")."""
    while b"\r\n\r\n" not in buf:
        if len(buf) > 65536:
            raise ValueError("request head too large")
        data = sock.recv(65536)
        if not data:
            return None, b""
        buf += data
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    length = 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return (method, target, length, headers), buf


def read_body(sock, buf, length):
    """Reads a body of `length` bytes: the body and the bytes after it, or (None, b"")."""
    buf = bytearray(buf)  # Appends in place: a multi-megabyte body in 16 KiB records.
    while len(buf) < length:
        data = sock.recv(65536)
        if not data:
            return None, b""
        buf += data
    return bytes(buf[:length]), bytes(buf[length:])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--script", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log-file", required=True)
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--tls", choices=["1.2", "1.3", "any"], default="any")
    p.add_argument("--lifetime", type=float, default=120.0)
    p.add_argument("--full-queue", type=float, default=0.0)
    args = p.parse_args()
    Server(args).run(args)


if __name__ == "__main__":
    sys.exit(main())
