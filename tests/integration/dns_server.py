#!/usr/bin/env python3
"""A scripted DNS server (UDP and TCP) for the resolver's integration tests.

Standard library only. It binds one ephemeral port on 127.0.0.1 for both UDP and TCP,
writes the port to --port-file once both listen, and answers each query by the first label
of the name asked for (up to its first '-', so "nx-typo.test" is "nx"):

  ok        A 127.0.0.1 and AAAA ::1 (TTL 60)
  v4        A 127.0.0.1; AAAA: NOERROR with no answer
  v6        AAAA ::1; A: NOERROR with no answer
  many      A 127.0.0.1 and AAAA ::1 ten times: more IPv6 addresses than a resolver keeps
  nodata    NOERROR with no answer for both
  nx        NXDOMAIN (with an SOA in the authority section, as real servers send)
  servfail  SERVFAIL
  refused   REFUSED
  silent    no reply at all
  slow      the `ok` answer after --delay seconds (other queries are answered meanwhile)
  garbage   40 random bytes, not DNS at all
  short     the query's ID with QR set and the message cut inside the question (malformed)
  tc        over UDP a truncated reply (TC=1, no answer); over TCP the `ok` answer
  anything else: NXDOMAIN

--log-file gets one line per query, flushed at once:
  query proto=udp|tcp name=N type=A|AAAA|T from=ADDRESS
--listen ADDRESS binds another IPv4 address than 127.0.0.1, and --answer ADDRESS makes `ok`
answer that A record instead of 127.0.0.1 (a server in a network namespace). --port PORT
binds that port instead of an ephemeral one (53 for the system's resolver, which asks no
other; in a network namespace of the test's own).
The server exits by itself after --lifetime seconds, or when its parent process is gone.
"""

import pathlib
import random
import socket
import struct
import sys
import threading
import time

# tests/support/loopback_server.py: the scaffolding every loopback test server shares.
sys.path.insert(0, next(str(p / "support") for p in pathlib.Path(__file__).resolve().parents
                        if (p / "support" / "loopback_server.py").is_file()))
import loopback_server as base  # noqa: E402

TYPE_A, TYPE_AAAA, TYPE_SOA = 1, 28, 6
NOERROR, FORMERR, SERVFAIL, NXDOMAIN, REFUSED = 0, 1, 2, 3, 5


def parse_query(data):
    """(id, flags, name, qtype, question bytes) of a query, or None if it is not one."""
    if len(data) < 12:
        return None
    qid, flags, qdcount = struct.unpack("!HHH", data[:6])
    if qdcount < 1:
        return None
    labels, i = [], 12
    while True:
        if i >= len(data):
            return None
        n = data[i]
        i += 1
        if n == 0:
            break
        if n & 0xC0 or i + n > len(data):
            return None
        labels.append(data[i:i + n].decode("ascii", "replace"))
        i += n
    if i + 4 > len(data):
        return None
    qtype, _qclass = struct.unpack("!HH", data[i:i + 4])
    return qid, flags, ".".join(labels).lower(), qtype, data[12:i + 4]


def behaviour(name):
    first = name.split(".", 1)[0]
    return first.split("-", 1)[0]


def message(qid, query_flags, question, rcode, answers=(), authority=(), tc=False):
    flags = 0x8000 | (query_flags & 0x0100) | 0x0080 | rcode  # QR, RD copied, RA.
    if tc:
        flags |= 0x0200
    head = struct.pack("!HHHHHH", qid, flags, 1, len(answers), len(authority), 0)
    return head + question + b"".join(answers) + b"".join(authority)


def record(rtype, rdata, ttl=60):
    # The owner is a pointer to the question's name at offset 12.
    return struct.pack("!HHHIH", 0xC00C, rtype, 1, ttl, len(rdata)) + rdata


def soa():
    mname = b"\x02ns\x04test\x00"
    rname = b"\x0ahostmaster\x04test\x00"
    rdata = mname + rname + struct.pack("!IIIII", 1, 3600, 600, 86400, 60)
    return record(TYPE_SOA, rdata, 60)


def ok_answer(qtype, v4=True, v6=True):
    if qtype == TYPE_A and v4:
        return [record(TYPE_A, socket.inet_pton(socket.AF_INET, ARGS.answer))]
    if qtype == TYPE_AAAA and v6:
        return [record(TYPE_AAAA, socket.inet_pton(socket.AF_INET6, "::1"))]
    return []


def answer(data, proto):
    """The reply to `data` over `proto` ("udp" or "tcp"): bytes, or None for no reply, or
    ("delay", seconds, bytes)."""
    q = parse_query(data)
    if q is None:
        return None
    qid, qflags, name, qtype, question = q
    kind = behaviour(name)
    if kind == "ok":
        return message(qid, qflags, question, NOERROR, ok_answer(qtype))
    if kind == "v4":
        return message(qid, qflags, question, NOERROR, ok_answer(qtype, v6=False))
    if kind == "v6":
        return message(qid, qflags, question, NOERROR, ok_answer(qtype, v4=False))
    if kind == "many":
        copies = 10 if qtype == TYPE_AAAA else 1
        return message(qid, qflags, question, NOERROR, ok_answer(qtype) * copies)
    if kind == "nodata":
        return message(qid, qflags, question, NOERROR, authority=[soa()])
    if kind == "servfail":
        return message(qid, qflags, question, SERVFAIL)
    if kind == "refused":
        return message(qid, qflags, question, REFUSED)
    if kind == "silent":
        return None
    if kind == "slow":
        return ("delay", ARGS.delay, message(qid, qflags, question, NOERROR, ok_answer(qtype)))
    if kind == "garbage":
        return bytes(random.getrandbits(8) for _ in range(40))
    if kind == "short":
        full = message(qid, qflags, question, NOERROR)
        return full[:12 + 3]
    if kind == "tc":
        if proto == "udp":
            return message(qid, qflags, question, NOERROR, tc=True)
        return message(qid, qflags, question, NOERROR, ok_answer(qtype))
    return message(qid, qflags, question, NXDOMAIN, authority=[soa()])


def type_name(data):
    q = parse_query(data)
    if q is None:
        return "-", "-"
    return q[2], {TYPE_A: "A", TYPE_AAAA: "AAAA"}.get(q[3], str(q[3]))


def serve_udp(sock):
    while True:
        data, peer = sock.recvfrom(65535)
        name, qtype = type_name(data)
        LOG.write(f"query proto=udp name={name} type={qtype} from={peer[0]}")
        reply = answer(data, "udp")
        if reply is None:
            continue
        if isinstance(reply, tuple):
            _, seconds, payload = reply
            threading.Timer(seconds, sock.sendto, (payload, peer)).start()
            continue
        sock.sendto(reply, peer)


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class TcpServer(base.ConnectionServer):
    timeout = None  # A resolver may keep its connection open between queries.

    def serve(self, conn, conn_id):
        while True:
            head = recv_exact(conn, 2)
            if head is None:
                return
            data = recv_exact(conn, struct.unpack("!H", head)[0])
            if data is None:
                return
            name, qtype = type_name(data)
            LOG.write(f"query proto=tcp name={name} type={qtype} from={conn.getpeername()[0]}")
            reply = answer(data, "tcp")
            if reply is None:
                continue
            if isinstance(reply, tuple):
                time.sleep(reply[1])
                reply = reply[2]
            conn.sendall(struct.pack("!H", len(reply)) + reply)


def bind(kinds):
    """UDP and TCP sockets of `kinds` on --port, or on one ephemeral port without it."""
    if ARGS.port == 0:
        return base.bind_same_port(kinds)
    made = []
    for host, kind in kinds:
        s = socket.socket(socket.AF_INET, kind)
        if kind == socket.SOCK_STREAM:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, ARGS.port))
        made.append(s)
    return made, ARGS.port


def main():
    (udp, tcp), port = bind([(ARGS.listen, socket.SOCK_DGRAM),
                             (ARGS.listen, socket.SOCK_STREAM)])
    tcp.listen(16)
    threading.Thread(target=serve_udp, args=(udp,), daemon=True).start()
    TcpServer().start(tcp)
    base.announce(port, ARGS.port_file)
    base.wait_for_end(ARGS.lifetime)
    base.exit_now()


if __name__ == "__main__":
    parser = base.argument_parser(__doc__)
    base.add_log_argument(parser, required=False)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--listen", default="127.0.0.1")
    parser.add_argument("--answer", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    ARGS = parser.parse_args()
    LOG = base.EventLog(ARGS.log_file)
    main()
