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
  trickle_head        seconds: send the head a byte at a time, this many seconds apart, then
                      the body at once (a slowloris head; not with chunked)
  trickle_after       send the head and this many body bytes, then the rest a byte at a time,
                      trickle_gap seconds apart (default 0.05): a body that trickles, until
                      the client goes away (not with chunked)
  raw / raw_hex       send exactly these bytes, then close (garbage)
  close_idle_after    keep the connection after the response, then close it (no
                      Connection: close) after this many seconds of waiting for a request
  ranges              honor "Range: bytes=N-" (with If-Range matching the action's ETag
                      header, or no If-Range): 206 with the rest of the body from N
  header_bytes        add an X-Padding header of this many bytes (oversized heads)
  record_after        send the head and this many body bytes, then, beside TLS on the raw
                      socket, the header of a TLS record of record_length bytes (default
                      16640, the most TLS 1.2 allows) and a few bytes of it; then wait for
                      the client to go. A record larger than a client's TLS input buffer
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

--tls 1.2|1.3|any limits the TLS versions; a comma-separated list ("1.3,1.2") gives each
connection its own, in the order they are accepted, the last for every later one.

--full-queue S keeps the listener's accept queue full for S seconds after the port file is
written (backlog 0, filled by the server's own connections), so a client's SYN is dropped and
the kernel retransmits it after about a second: a slow connect on loopback.

The server exits by itself after --lifetime seconds, or when its parent process is gone.
"""

import argparse
import json
import os
import pathlib
import socket
import sys
import threading
import time

# tests/support/loopback_server.py: the scaffolding every loopback test server shares.
sys.path.insert(0, next(str(p / "support") for p in pathlib.Path(__file__).resolve().parents
                        if (p / "support" / "loopback_server.py").is_file()))
import loopback_server as base  # noqa: E402

LOCK = threading.Lock()
STATE = {"next": 0}


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


class Server(base.ConnectionServer):
    def __init__(self, args):
        # One context per version range of --tls, used by connection number; the last serves
        # every later connection.
        self.contexts = [base.tls_context(args.cert, args.key, v) for v in args.tls]
        super().__init__(self.contexts[0])
        with open(args.script, encoding="utf-8") as f:
            self.script = json.load(f)
        if not self.script:
            raise SystemExit("empty script")
        self.log = base.EventLog(args.log_file).write

    def peek_action(self):
        with LOCK:
            return self.script[min(STATE["next"], len(self.script) - 1)]

    def next_action(self):
        with LOCK:
            i = min(STATE["next"], len(self.script) - 1)
            STATE["next"] += 1
            return self.script[i]

    def context_for(self, conn_id):
        return self.contexts[min(conn_id, len(self.contexts)) - 1]

    def handshake(self, sock, conn_id):
        self.log("handshake conn=%d version=%s reused=%d"
                 % (conn_id, sock.version(), int(sock.session_reused)))

    def error(self, conn_id, e):
        self.log("error conn=%d %s" % (conn_id, type(e).__name__))

    def serve(self, sock, conn_id):
        reader = base.HttpReader(sock)
        while True:
            head = reader.read_head()
            if head is None:
                return
            method, target, headers = head
            if self.peek_action().get("early"):
                self.log("request conn=%d method=%s target=%s body=unread"
                         % (conn_id, method, target))
                action = self.next_action()
                self.respond(sock, action, headers)
                time.sleep(float(action["early"]))
                return
            body = reader.read_body(base.content_length(headers))
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
        chunked = bool(a.get("chunked"))
        fields = [("Transfer-Encoding", "chunked") if chunked else ("Content-Length", len(body))]
        close = bool(a.get("close"))
        if close:
            fields.append(("Connection", "close"))
        fields += [tuple(h) for h in headers]
        if a.get("header_bytes"):
            fields.append(("X-Padding", "p" * int(a["header_bytes"])))
        data = base.http_head(status, a.get("reason", "Status"), fields)
        if "record_after" in a:
            sock.sendall(data + body[: int(a["record_after"])])
            length = int(a.get("record_length", 16640))
            # Application data (23), TLS 1.2's record version, the length; the TLS layer
            # above never sees these bytes.
            os.write(sock.fileno(), bytes([23, 3, 3]) + length.to_bytes(2, "big") + bytes(16))
            raw = socket.socket(fileno=os.dup(sock.fileno()))
            raw.settimeout(10)
            try:
                while raw.recv(4096):
                    pass
            except OSError:
                pass
            raw.close()
            return False
        if "reset_after" in a:
            sock.sendall(data + body[: int(a["reset_after"])])
            time.sleep(0.05)  # Let the bytes leave before the reset overtakes them.
            base.reset(sock)
            return False
        if "trickle_head" in a:
            for i in range(len(data)):
                sock.sendall(data[i:i + 1])
                time.sleep(float(a["trickle_head"]))
            sock.sendall(body)
            return not close
        if "trickle_after" in a:
            sent = int(a["trickle_after"])
            sock.sendall(data + body[:sent])
            for i in range(sent, len(body)):
                time.sleep(float(a.get("trickle_gap", 0.05)))
                sock.sendall(body[i:i + 1])
            return not close
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
        fillers = []
        if args.full_queue > 0:
            # Backlog 0 queues one connection; the next SYN finds the queue full and is dropped.
            listener = base.tcp_listener(backlog=0)
            fillers.append(socket.create_connection(listener.getsockname(), timeout=2))
        else:
            listener = base.tcp_listener()
        self.port = listener.getsockname()[1]
        base.announce(self.port, args.port_file)
        if fillers:
            time.sleep(args.full_queue)
            queued, _ = listener.accept()  # The filler itself; now the queue has room.
            queued.close()
            for f in fillers:
                f.close()
        self.start(listener)
        base.wait_for_end(args.lifetime)
        base.exit_now()


def tls_versions(text):
    """--tls: 1.2, 1.3 or any, or a comma-separated list of them, one per connection in the
    order they are accepted, the last for every later one (a server that changes its
    versions between connections, as mixed backends behind one address do)."""
    versions = text.split(",")
    for v in versions:
        if v not in base.TLS_VERSIONS:
            raise argparse.ArgumentTypeError("unknown TLS version range %r (%s)"
                                             % (v, ", ".join(sorted(base.TLS_VERSIONS))))
    return versions


def main():
    p = base.argument_parser(__doc__)
    p.add_argument("--script", required=True)
    base.add_log_argument(p)
    base.add_tls_arguments(p)
    p.add_argument("--tls", type=tls_versions, default=["any"])
    p.add_argument("--full-queue", type=float, default=0.0)
    args = p.parse_args()
    Server(args).run(args)


if __name__ == "__main__":
    sys.exit(main())
