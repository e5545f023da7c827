"""`stepback get -o FILE` against servers that lie: never a spliced or short file
with exit 0, never a signed URL changed, never "integrity verified" of bytes no longer on disk.

usage: get_lying_test.py STEPBACK_BINARY CASE
  signed_url     a V4-signed URL whose first response is cut: the resume goes to the URL as
                 signed (the server checks the query byte for byte, as Cloud Storage does),
                 the generation pinned by x-goog-if-generation-match
  splice_etag    --range-size 16K; the server ignores If-Range and, from the third piece on,
                 serves the pieces of another version (another ETag): the file is that version
                 whole, fetched again, never v1's head and v2's tail
  splice_lm      the same with no ETag and a later Last-Modified
  splice_resume  a checkpoint of v1 (no digests announced), then a server serving v2's parts
                 under another ETag and ignoring If-Range: v2 whole
  short_part     every request, the unranged one too, answered "206 bytes 0-16383/100000":
                 an error, no FILE, never a 16,384-byte file with exit 0
  flipped_part   a checkpoint over 60,000 bytes with x-goog-hash, then one bit flipped in
                 FILE.part at byte 1000: the part is found damaged and fetched again; the
                 file is the object
Every server is plain HTTP on 127.0.0.1 in this process; every run has a timeout.
"""

import base64
import hashlib
import os
import random
import re
import subprocess
import sys
import tempfile

from cli_support import RespondingServer, check, http_response, trace_events

BINARY = sys.argv[1]
SIZE = 100_000
V1 = random.Random(1).randbytes(SIZE)
V2 = random.Random(2).randbytes(SIZE)
SIGNED_QUERY = ("X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p.iam%2F20261129%2F"
                "auto%2Fstorage%2Fgoog4_request&X-Goog-Date=20261129T000000Z&X-Goog-Expires=900"
                "&X-Goog-SignedHeaders=host&X-Goog-Signature=5d2f0a")


def crc32c(data):
    crc = 0xFFFFFFFF
    table = crc32c.table
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


crc32c.table = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    crc32c.table.append(_c)


def goog_hash(data):
    crc = base64.b64encode(crc32c(data).to_bytes(4, "big")).decode()
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    return f"crc32c={crc},md5={md5}"


def cut(fields, body, n):
    """A 200 with `fields` announcing all of `body`, cut after `n` body bytes (the
    connection closes there)."""
    whole = http_response("200 OK", fields, body, close=True)
    return whole[: len(whole) - len(body) + n]


def requested_range(head):
    m = re.search(r"\r\nrange: bytes=(\d+)-(\d*)\r\n", head, re.I)
    if not m:
        return None
    last = int(m.group(2)) if m.group(2) else SIZE - 1
    return int(m.group(1)), min(last, SIZE - 1)


def part(body, first, last, fields):
    return http_response("206 Partial Content",
                    [*fields, ("Content-Range", f"bytes {first}-{last}/{SIZE}")],
                    body[first:last + 1])


def run(*args, timeout=60):
    p = subprocess.run([BINARY, *args], capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def case_signed_url():
    def respond(n, head):
        line = head.split("\r\n", 1)[0]
        if line != f"GET /bkt/obj?{SIGNED_QUERY} HTTP/1.1":
            return http_response("403 Forbidden", [], b"<Error><Code>SignatureDoesNotMatch</Code>"
                            b"</Error>", close=True)
        fields = [("ETag", '"v1"'), ("x-goog-generation", "1001"),
                  ("x-goog-hash", goog_hash(V1))]
        r = requested_range(head)
        if r is None:
            return cut(fields, V1, 30_000)
        pinned = re.search(r"\r\nx-goog-if-generation-match: (\d+)\r\n", head, re.I)
        if pinned and pinned.group(1) != "1001":
            return http_response("412 Precondition Failed", [], b"", close=True)
        return part(V1, r[0], r[1], fields)
    server = RespondingServer(respond)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "obj")
        args = ["get", f"http://127.0.0.1:{server.port}/bkt/obj?{SIGNED_QUERY}", "-o", out,
                "--max-backoff", "0.2", "--trace"]
        code, _, err = run(*args)
        check(code == 0, f"exit {code}: {err[-600:]}")
        check(read(out) == V1, "the file differs from the object")
        check(len(server.heads) == 2, f"requests: {server.heads}")
        second = server.heads[1]
        check(second.startswith(f"get /bkt/obj?{SIGNED_QUERY.lower()} http/1.1"),
              f"the resume changed the signed URL: {second.splitlines()[0]}")
        check("range: bytes=30000-" in second and "x-goog-if-generation-match: 1001" in second,
              f"the resume is not pinned: {second}")
        check(any(e["event"] == "integrity" and e.get("verified") for e in
                  trace_events(err, args)), "no verified integrity event")


def splice_server(versions_by_request, validator, serve=True):
    """A server that ignores If-Range: the n-th request gets the version
    versions_by_request(n) (V1 or V2), whole (200) or the part asked for (206). Without
    `serve`, the respond function alone (for a server already running)."""
    def respond(n, head):
        body = versions_by_request(n)
        v = "v1" if body is V1 else "v2"
        if validator == "etag":
            fields = [("ETag", f'"{v}"')]
        else:
            fields = [("Last-Modified", "Sun, 29 Nov 2026 01:00:00 GMT" if v == "v1"
                       else "Sun, 29 Nov 2026 02:00:00 GMT")]
        r = requested_range(head)
        if r is None:
            return http_response("200 OK", fields, body)
        return part(body, r[0], r[1], fields)
    return RespondingServer(respond) if serve else respond


def splice_case(validator):
    server = splice_server(lambda n: V1 if n < 2 else V2, validator)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "obj")
        args = ["get", f"http://127.0.0.1:{server.port}/o", "-o", out, "--range-size", "16K",
                "--max-backoff", "0.2", "--trace"]
        code, _, err = run(*args)
        check(code == 0, f"exit {code}: {err[-600:]}")
        body = read(out)
        check(body == V2, f"spliced: the file is {'v1' if body == V1 else 'neither version'}"
              f" ({len(body)} bytes; head of v1: {body[:16384] == V1[:16384]}, tail of v2: "
              f"{body[-1000:] == V2[-1000:]})")
        events = trace_events(err, args)
        check(any(e["event"] == "error" and "another version" in e.get("message", "")
                  for e in events), f"the change was not said: {events}")


def case_splice_etag():
    splice_case("etag")


def case_splice_lm():
    splice_case("lm")


def case_splice_resume():
    # First run: v1 cut at 60,000 bytes, no digests, --max-retries 0: a checkpoint is kept.
    def first(n, head):
        return cut([("ETag", '"v1"')], V1, 60_000)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "obj")
        server = RespondingServer(first)
        code, _, err = run("get", f"http://127.0.0.1:{server.port}/o", "-o", out,
                           "--max-retries", "0")
        check(code == 3 and os.path.exists(out + ".part.state"), f"first run: exit {code}: {err}")
        # Second run: the object is v2; the server ignores If-Range.
        server.respond = splice_server(lambda n: V2, "etag", serve=False)
        code, _, err = run("get", f"http://127.0.0.1:{server.port}/o", "-o", out,
                           "--max-backoff", "0.2")
        check(code == 0, f"second run: exit {code}: {err}")
        check(read(out) == V2, "the file is not v2 whole (spliced onto v1's checkpoint?)")


def case_short_part():
    def respond(n, head):
        return part(V1, 0, 16383, [("ETag", '"v1"')])
    server = RespondingServer(respond)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "obj")
        for extra in ([], ["--range-size", "16K"]):
            args = ["get", f"http://127.0.0.1:{server.port}/o", "-o", out, "--max-retries", "2",
                    "--max-backoff", "0.2", *extra]
            code, _, err = run(*args)
            check(code != 0, f"{extra}: exit 0 with a short file")
            check(not os.path.exists(out), f"{extra}: FILE left behind")
            check("206" in err, f"{extra}: the error does not say why: {err}")


def case_flipped_part():
    fields = [("ETag", '"v1"'), ("x-goog-hash", goog_hash(V1))]
    def first(n, head):
        return cut(fields, V1, 60_000)
    def later(n, head):
        r = requested_range(head)
        return http_response("200 OK", fields, V1) if r is None else part(V1, r[0], r[1], fields)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "obj")
        server = RespondingServer(first)
        code, _, err = run("get", f"http://127.0.0.1:{server.port}/o", "-o", out,
                           "--max-retries", "0")
        check(code == 3 and os.path.exists(out + ".part.state"), f"first run: exit {code}: {err}")
        kept = bytearray(read(out + ".part"))
        check(len(kept) == 60_000 and bytes(kept) == V1[:60_000], f"{len(kept)} bytes kept")
        kept[1000] ^= 0x01
        with open(out + ".part", "wb") as f:
            f.write(kept)
        server.respond = later
        args = ["get", f"http://127.0.0.1:{server.port}/o", "-o", out, "--max-backoff", "0.2"]
        code, _, err = run(*args)
        check(code == 0, f"second run: exit {code}: {err}")
        check(read(out) == V1, "the file differs from the object (the damaged part was kept)")
        check("no longer holds" in err and "starting over" in err, f"not said: {err}")
        check(all("range:" not in h for h in server.heads[1:]),
              f"resumed a damaged part: {server.heads}")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} BINARY {'|'.join(CASES)}")
    CASES[sys.argv[2]]()
    print(f"{sys.argv[2]}: ok")
