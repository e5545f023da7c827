#!/usr/bin/env python3
"""A plain-HTTP/1.1 server on ::1 and 127.0.0.1, the same port on both, for Happy Eyeballs.

Standard library only. Every request gets 200 with the body "v6" or "v4": the family of the
listener that accepted it, so a test can tell which connection won the race. The port goes
to --port-file once both listen. Exits after --lifetime seconds, or when its parent is gone.
"""

import pathlib
import socket
import sys

# tests/support/loopback_server.py: the scaffolding every loopback test server shares.
sys.path.insert(0, next(str(p / "support") for p in pathlib.Path(__file__).resolve().parents
                        if (p / "support" / "loopback_server.py").is_file()))
import loopback_server as base  # noqa: E402


class Server(base.ConnectionServer):
    def serve(self, sock, conn_id):
        if base.HttpReader(sock).read_head() is None:
            return
        body = b"v6" if sock.family == socket.AF_INET6 else b"v4"
        sock.sendall(base.http_head(200, "OK", [("Content-Length", 2), ("Connection", "close")])
                     + body)


def main():
    args = base.argument_parser(__doc__).parse_args()
    listeners, port = base.bind_same_port([("::1", socket.SOCK_STREAM),
                                           ("127.0.0.1", socket.SOCK_STREAM)])
    for listener in listeners:
        listener.listen(16)
    Server().start(*listeners)
    base.announce(port, args.port_file)
    base.wait_for_end(args.lifetime)
    base.exit_now()


if __name__ == "__main__":
    main()
