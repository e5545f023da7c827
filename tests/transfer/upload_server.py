#!/usr/bin/env python3
"""A resumable-upload server (Google's protocol) over TLS or plain TCP, for the tests.

Standard library only; one session store in memory. It listens on an ephemeral loopback
port, writes the port to --port-file once it accepts, and serves:

  POST /upload?uploadType=resumable&name=NAME   opens a session: 200 with Location, the
        session URI (X-Upload-Content-Length gives the size; without it the size comes with
        the last chunk). A JSON body (the object's metadata) may name the object too.
  PUT SESSION with Content-Range: bytes A-B/N (or A-B/*): a chunk. A may lie below what is
        held (the overlap must match and is skipped) but not above it; every chunk but the
        last is a multiple of 256 KiB. Answers 308 with Range: bytes=0-K (no Range while
        nothing is held) or, once all N bytes are held, 200 with the object's metadata.
  PUT SESSION with Content-Range: bytes */N (or */*) and no body: a status query, answered
        the same way (200 again once complete).
  Anything else: 400 with a reason, which the tests treat as a client bug.

Finished objects are written to --objects/NAME, so a test can compare them byte for byte.

Faults come from --script, a JSON list of objects, each applied once to one request:
  on        "post", "chunk" or "query"
  nth       which request of that kind, 1-based (default 1)
  do        what to do instead of answering normally:
    "reset"   read `after` body bytes (default half the chunk), keep `commit` of them
              (default all), then reset the connection (RST) without answering
    "status"  read the whole body, keep `commit` bytes of it (default 0), answer `status`
              (503, 408, 429, ...) with `retry_after` as Retry-After when given
    "drop"    read the whole body, keep none of it, answer 308 with the Range of what was
              held before (none at all while that is 0: "308 without Range")
    "expire"  forget the session: 404 now and for every later request to it
    "stall"   read `after` body bytes (default all), keep `commit` of them (default all),
              then say nothing for `seconds` (default 5) and close
    "corrupt" flip one bit of the chunk's byte `at` (default 0) before keeping it, as a
              network or disk might
    "lie"     (on "final") report a wrong crc32c and md5Hash for the stored object
Integrity, as Cloud Storage does it: the request that completes the object may carry
"x-goog-hash: crc32c=B64[,md5=B64]"; when a digest differs from the stored bytes' the object
is not stored and the answer is 400 (the session is then dead). The object's metadata
carries its crc32c and md5Hash.

--log-file gets one JSON object per request, flushed at once:
  {"conn": N, "method": M, "kind": "post"|"chunk"|"query"|"other", "range": "...",
   "hash": X_GOOG_HASH_SENT_OR_NULL,
   "received": BODY_BYTES_READ, "kept": BYTES_NEWLY_COMMITTED, "overlap": BYTES_OF_THE_CHUNK
   ALREADY_HELD (chunks), "answer": STATUS|"reset"|"stall", "held": BYTES_HELD_AFTER,
   "session": ID}
and {"handshake": N, "reused": 0|1} per TLS handshake.

The server exits by itself after --lifetime seconds, or when its parent process is gone.
"""

import base64
import hashlib
import json
import os
import pathlib
import sys
import threading
import time
import urllib.parse

# tests/support/loopback_server.py: the scaffolding every loopback test server shares.
sys.path.insert(0, next(str(p / "support") for p in pathlib.Path(__file__).resolve().parents
                        if (p / "support" / "loopback_server.py").is_file()))
import loopback_server as base  # noqa: E402

GRANULARITY = 256 * 1024
LOCK = threading.Lock()


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC32C_TABLE = _crc32c_table()


def crc32c_extend(crc, data):
    """CRC-32C (Castagnoli) of the bytes so far (`crc`, 0 for none) followed by `data`."""
    c = crc ^ 0xFFFFFFFF
    table = CRC32C_TABLE
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def b64(raw):
    return base64.b64encode(raw).decode()


def parse_goog_hash(value):
    """{"crc32c": B64, "md5": B64} from an x-goog-hash value."""
    out = {}
    for item in (value or "").split(","):
        name, eq, digest = item.strip().partition("=")
        if eq:
            out[name.strip().lower()] = digest.strip()
    return out


class Session:
    def __init__(self, sid, name, size):
        self.sid = sid
        self.name = name
        self.size = size  # None while unknown.
        self.data = bytearray()
        self.complete = False
        self.crc = 0            # CRC-32C of data.
        self.rejected = False   # Completed with digests that differ: never stored.
        self.lie = False        # Report wrong digests for the stored object.


class Server(base.ConnectionServer):
    timeout = 30.0

    def __init__(self, args):
        super().__init__(base.tls_context(args.cert, args.key))
        self.args = args
        self.faults = []
        if args.script:
            with open(args.script, encoding="utf-8") as f:
                self.faults = json.load(f)
        for fault in self.faults:
            fault.setdefault("nth", 1)
            fault["used"] = False
        self.counts = {"post": 0, "chunk": 0, "query": 0, "other": 0}
        self.sessions = {}
        self.next_sid = 1
        # --log-delay: a slow server thread, whose records come late (but still before the
        # answers they describe).
        self.log = base.EventLog(args.log_file, args.log_delay).json

    def fault_for(self, kind):
        """The fault scripted for this request of `kind`, if any (counts the request)."""
        with LOCK:
            self.counts[kind] += 1
            n = self.counts[kind]
            for fault in self.faults:
                if not fault["used"] and fault["on"] == kind and fault["nth"] == n:
                    fault["used"] = True
                    return fault
        return None

    # --- Connections.

    def handshake(self, sock, conn_id):
        self.log({"handshake": conn_id, "reused": int(sock.session_reused)})

    def error(self, conn_id, e):
        self.log({"conn": conn_id, "error": type(e).__name__})

    def serve(self, sock, conn_id):
        reader = Reader(sock)
        while True:
            head = reader.read_head()
            if head is None:
                return
            if not self.handle(sock, reader, conn_id, *head):
                return

    def handle(self, sock, reader, conn_id, method, target, headers):
        """Serves one request; returns whether the connection stays open."""
        length = int(headers.get("content-length", "0"))
        path, _, query = target.partition("?")
        record = {"conn": conn_id, "method": method, "target": target,
                  "range": headers.get("content-range", "-"), "received": 0, "kept": 0,
                  "hash": headers.get("x-goog-hash")}
        if method == "POST" and path == "/upload":
            record["kind"] = "post"
            return self.open_session(sock, reader, headers, query, length, record)
        if method == "PUT" and path.startswith("/session/"):
            sid = path[len("/session/"):]
            content_range = headers.get("content-range", "")
            kind = "query" if content_range.startswith("bytes *") else "chunk"
            record["kind"] = kind
            record["session"] = sid
            return self.put(sock, reader, sid, content_range, kind, length, record,
                            headers.get("x-goog-hash"))
        record["kind"] = "other"
        reader.read_body(length)
        return self.answer(sock, 400, record, body=b"unknown request")

    def open_session(self, sock, reader, headers, query, length, record):
        fault = self.fault_for("post")
        body = reader.read_body(length)
        record["received"] = len(body)
        params = urllib.parse.parse_qs(query)
        if params.get("uploadType") != ["resumable"]:
            return self.answer(sock, 400, record, body=b"uploadType=resumable is required")
        name = params.get("name", [""])[0]
        if not name and body:
            name = json.loads(body.decode("utf-8")).get("name", "")
        if not name or "/" in name or name.startswith("."):
            return self.answer(sock, 400, record, body=b"a plain object name is required")
        size = headers.get("x-upload-content-length")
        if fault is not None:
            return self.fault_answer(sock, fault, record)
        with LOCK:
            sid = "s%d" % self.next_sid
            self.next_sid += 1
            self.sessions[sid] = Session(sid, name, int(size) if size is not None else None)
        record["session"] = sid
        scheme = "https" if self.context is not None else "http"
        location = "%s://127.0.0.1:%d/session/%s" % (scheme, self.port, sid)
        return self.answer(sock, 200, record, headers=[("Location", location)])

    def put(self, sock, reader, sid, content_range, kind, length, record, goog_hash):
        fault = self.fault_for(kind)
        with LOCK:
            session = self.sessions.get(sid)
        if session is None:
            reader.read_body(length)
            return self.answer(sock, 404, record, body=b"no such upload session (expired)")
        if session.rejected:
            reader.read_body(length)
            return self.answer(sock, 400, record, body=b"the upload failed its integrity check")
        if fault is not None and fault["do"] == "expire":
            with LOCK:
                self.sessions.pop(sid, None)
            reader.read_body(length)
            return self.answer(sock, 404, record, body=b"the upload session expired")
        parsed = parse_content_range(content_range)
        if parsed is None:
            reader.read_body(length)
            return self.answer(sock, 400, record, body=b"bad Content-Range")
        first, last, total = parsed
        if total is not None:
            if session.size is not None and session.size != total:
                reader.read_body(length)
                return self.answer(sock, 400, record, body=b"the total size changed")
            session.size = total
        if first is None:  # A status query.
            reader.read_body(length)
            if length != 0:
                return self.answer(sock, 400, record, body=b"a status query has no body")
            if fault is not None:
                return self.fault_answer(sock, fault, record, session)
            with LOCK:
                if session.size is not None and len(session.data) > session.size:
                    return self.answer(sock, 400, record, body=b"the size is below what is held")
                self.maybe_complete(session, record, goog_hash)
            if session.rejected:
                return self.answer(sock, 400, record, session=session,
                                   body=b"the upload failed its integrity check")
            return self.status(sock, session, record)
        if length != last - first + 1:
            reader.read_body(length)
            return self.answer(sock, 400, record, body=b"Content-Length does not match the range")
        final = total is not None and last + 1 == total
        if not final and length % GRANULARITY != 0:
            reader.read_body(length)
            return self.answer(sock, 400, record, body=b"chunks must be multiples of 256 KiB")
        if first > len(session.data):
            reader.read_body(length)
            return self.answer(sock, 400, record, body=b"the chunk starts beyond what is held")
        # Bytes of this chunk the server already holds: a client that never sends a
        # committed byte again keeps this at 0.
        record["overlap"] = max(0, min(len(session.data) - first, length))
        if fault is not None and fault["do"] in ("reset", "stall"):
            after = int(fault.get("after", length // 2 if fault["do"] == "reset" else length))
            body = reader.read_body(min(after, length))
            record["received"] = len(body)
            self.keep(session, first, body[: int(fault.get("commit", len(body)))], record,
                      goog_hash)
            if fault["do"] == "stall":
                record["answer"] = "stall"
                record["held"] = len(session.data)
                self.log(record)
                time.sleep(float(fault.get("seconds", 5)))
                return False
            record["answer"] = "reset"
            record["held"] = len(session.data)
            self.log(record)
            time.sleep(0.05)
            base.reset(sock)
            return False
        body = reader.read_body(length)
        record["received"] = len(body)
        if fault is not None and fault["do"] == "corrupt":
            body = bytearray(body)
            body[int(fault.get("at", 0))] ^= 0x01
            fault = None
        elif fault is not None and fault["do"] == "lie":
            session.lie = True
            fault = None
        if fault is not None:
            if fault["do"] == "status":
                self.keep(session, first, body[: int(fault.get("commit", 0))], record, goog_hash)
            return self.fault_answer(sock, fault, record, session)
        if not self.keep(session, first, body, record, goog_hash):
            return self.answer(sock, 400, record, body=b"the overlap differs from what is held")
        if session.rejected:
            return self.answer(sock, 400, record, session=session,
                               headers=[("Content-Type", "application/json; charset=UTF-8")],
                               body=json.dumps({"error": {
                                   "code": 400, "message": "Provided digests do not match "
                                   "the calculated ones: %s" % record.get("mismatch")}}).encode())
        return self.status(sock, session, record)

    def keep(self, session, first, data, record, goog_hash):
        """Appends what `data` (the bytes from `first`) adds; False if the overlap differs.
        The request that completes the object is checked against its x-goog-hash."""
        with LOCK:
            held = len(session.data)
            overlap = held - first
            if data[:overlap] != session.data[first:first + min(overlap, len(data))]:
                return False
            fresh = data[overlap:] if overlap < len(data) else b""
            session.data += fresh
            session.crc = crc32c_extend(session.crc, fresh)
            record["kept"] = len(fresh)
            self.maybe_complete(session, record, goog_hash)
        return True

    def maybe_complete(self, session, record, goog_hash):
        """Completes the object once its size is known and every byte is held (LOCK held)."""
        if session.size is not None and len(session.data) == session.size and not session.complete:
            session.complete = True
            sent = parse_goog_hash(goog_hash)
            mine = {"crc32c": b64(session.crc.to_bytes(4, "big")),
                    "md5": b64(hashlib.md5(bytes(session.data)).digest())}
            wrong = [k for k in ("crc32c", "md5")
                     if k in sent and sent[k] != mine[k] and not session.lie]
            if wrong:
                session.rejected = True
                record["mismatch"] = ",".join(wrong)
            else:
                self.store(session)

    def store(self, session):
        if self.args.objects:
            path = os.path.join(self.args.objects, session.name)
            with open(path + ".tmp", "wb") as f:
                f.write(session.data)
            os.rename(path + ".tmp", path)

    def status(self, sock, session, record):
        if session.complete:
            data = bytes(session.data)
            metadata = json.dumps({
                "kind": "storage#object", "bucket": "test", "name": session.name,
                "size": str(len(data)),
                "crc32c": b64((session.crc ^ (1 if session.lie else 0)).to_bytes(4, "big")),
                "md5Hash": b64(hashlib.md5(data + (b"lie" if session.lie else b"")).digest()),
                "sha256": hashlib.sha256(data).hexdigest()}).encode()
            return self.answer(sock, 200, record, body=metadata,
                               headers=[("Content-Type", "application/json; charset=UTF-8")],
                               session=session)
        return self.answer(sock, 308, record, headers=held_range(session), session=session)

    def fault_answer(self, sock, fault, record, session=None):
        do = fault["do"]
        if do == "status":
            headers = []
            if "retry_after" in fault:
                headers.append(("Retry-After", str(fault["retry_after"])))
            return self.answer(sock, int(fault["status"]), record, headers=headers,
                               body=b"injected failure", session=session)
        if do == "drop":
            return self.answer(sock, 308, record, headers=held_range(session), session=session)
        raise ValueError("unknown fault " + do)

    def answer(self, sock, status, record, headers=(), body=b"", session=None):
        reason = {200: "OK", 308: "Resume Incomplete", 400: "Bad Request", 404: "Not Found",
                  408: "Request Timeout", 429: "Too Many Requests",
                  503: "Service Unavailable"}.get(status, "Status")
        record["answer"] = status
        if session is not None:
            record["held"] = len(session.data)
        # Logged before the answer goes out: a client that has read the answer (and a test
        # reading the log after it) finds the request's record there, however late this
        # thread runs.
        self.log(record)
        sock.sendall(base.http_head(status, reason, [("Content-Length", len(body))] + list(headers))
                     + body)
        return True


def held_range(session):
    held = len(session.data) if session is not None else 0
    return [("Range", "bytes=0-%d" % (held - 1))] if held > 0 else []


def parse_content_range(value):
    """(first, last, total) of "bytes A-B/N", (None, None, total) of "bytes */N"; total is
    None for "*"; None when malformed."""
    if not value.startswith("bytes "):
        return None
    spec, _, total = value[6:].partition("/")
    try:
        total = None if total == "*" else int(total)
        if spec == "*":
            return None, None, total
        first, _, last = spec.partition("-")
        first, last = int(first), int(last)
    except ValueError:
        return None
    if first > last or (total is not None and last >= total):
        return None
    return first, last, total


class Reader(base.HttpReader):
    def read_body(self, n):
        body = super().read_body(n)
        if body is None:
            raise ValueError("connection closed mid-body")
        return body


def main():
    p = base.argument_parser(__doc__)
    base.add_log_argument(p)
    p.add_argument("--script")
    p.add_argument("--objects")
    base.add_tls_arguments(p)
    p.add_argument("--log-delay", type=float, default=0.0,
                   help="seconds each log record waits before it is written (a slow server)")
    args = p.parse_args()
    Server(args).run(base.tcp_listener(), args.port_file, args.lifetime)


if __name__ == "__main__":
    sys.exit(main())
