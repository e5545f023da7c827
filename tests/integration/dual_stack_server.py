#!/usr/bin/env python3
"""A plain-HTTP/1.1 server on ::1 and 127.0.0.1, the same port on both, for Happy Eyeballs.

Standard library only. Every request gets 200 with the body "v6" or "v4": the family of the
listener that accepted it, so a test can tell which connection won the race. The port goes
to --port-file once both listen. Exits after --lifetime seconds, or when its parent is gone.
"""

import argparse
import os
import socket
import threading
import time


def serve(listener, body):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=answer, args=(conn, body), daemon=True).start()


def answer(conn, body):
    with conn:
        conn.settimeout(10)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n" + body)
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--lifetime", type=float, default=120.0)
    args = parser.parse_args()
    for _ in range(50):
        v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        v6.bind(("::1", 0))
        port = v6.getsockname()[1]
        v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            v4.bind(("127.0.0.1", port))
            break
        except OSError:
            v6.close()
            v4.close()
    else:
        raise SystemExit("no port free on both ::1 and 127.0.0.1")
    for listener, body in ((v6, b"v6"), (v4, b"v4")):
        listener.listen(16)
        threading.Thread(target=serve, args=(listener, body), daemon=True).start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(args.port_file + ".tmp", args.port_file)
    parent = os.getppid()
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end and os.getppid() == parent:
        time.sleep(0.2)


if __name__ == "__main__":
    main()
