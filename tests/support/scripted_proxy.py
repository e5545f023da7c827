"""A scripted HTTP proxy on loopback, for the faults a real one will not produce (used by
tests/tools/proxy_cli_test.py and tests/integration/proxy_test.cpp): each CONNECT (or
absolute-form request) takes the next answer of --script (the last one repeats):

  ok       tunnel to the target (CONNECT: "200 Connection established", then bytes both ways;
           an absolute-form request: sent on to its origin in origin form, the answer relayed)
  cut      close the connection without answering
  garbage  answer with bytes that are not HTTP
  407      "407 Proxy Authentication Required", whatever the credentials
  NNN      that status (502, 503, 504, 403, ...) with an empty body

With --auth USER:PASSWORD, a request whose Proxy-Authorization is not exactly theirs (Basic)
gets 407 first. Every request is logged (JSON: conn, method, target, proxy_authorization,
answer) before it is answered.
"""

import base64
import json
import pathlib
import socket
import sys
import threading

sys.path.insert(0, next(str(p / "support") for p in pathlib.Path(__file__).resolve().parents
                        if (p / "support" / "loopback_server.py").is_file()))
import loopback_server  # noqa: E402


def pipe(src, dst):
    """Copies src to dst until either ends, then ends both."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Proxy(loopback_server.ConnectionServer):
    def __init__(self, script, auth, log):
        super().__init__()
        self.script = script
        self.auth = "Basic " + base64.b64encode(auth.encode()).decode() if auth else None
        self.log = log
        self.n = 0
        self.count_lock = threading.Lock()

    def next_answer(self):
        with self.count_lock:
            answer = self.script[min(self.n, len(self.script) - 1)]
            self.n += 1
        return answer

    def serve(self, sock, conn_id):
        reader = loopback_server.HttpReader(sock)
        while True:
            request = reader.read_head()
            if request is None:
                return
            method, target, headers = request
            given = headers.get("proxy-authorization")
            if self.auth is not None and given != self.auth:
                answer = "407"
            else:
                answer = self.next_answer()
            self.log.json({"conn": conn_id, "method": method, "target": target,
                           "proxy_authorization": given, "answer": answer})
            if answer == "cut":
                return
            if answer == "garbage":
                sock.sendall(b"SSH-2.0-OpenSSH_9.2\r\n\x00\x01\x02 not http\r\n\r\n")
                return
            if answer != "ok":
                status = int(answer)
                reason = {407: "Proxy Authentication Required", 502: "Bad Gateway",
                          503: "Service Unavailable", 504: "Gateway Timeout",
                          403: "Forbidden"}.get(status, "Other")
                fields = [("Content-Length", "0")]
                if status == 407:
                    fields.append(("Proxy-Authenticate", 'Basic realm="scripted"'))
                sock.sendall(loopback_server.http_head(status, reason, fields))
                continue  # The client may try again on this connection (or close it).
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
                sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if reader.buf:
                    upstream.sendall(bytes(reader.buf))
                threading.Thread(target=pipe, args=(upstream, sock), daemon=True).start()
                pipe(sock, upstream)
                return
            # Absolute form: http://host:port/path, sent on in origin form.
            rest = target.split("://", 1)[1]
            authority, slash, path = rest.partition("/")
            host, _, port = authority.rpartition(":")
            upstream = socket.create_connection((host.strip("[]"), int(port or 80)), timeout=10)
            lines = ["%s /%s HTTP/1.1" % (method, path)]
            lines += ["%s: %s" % (n, v) for n, v in headers.items()
                      if n not in ("proxy-authorization", "connection")]
            lines.append("Connection: close")
            upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            body = reader.read_body(loopback_server.content_length(headers))
            if body:
                upstream.sendall(body)
            # The answer is relayed whole, then this connection ends (Connection: close sent
            # upstream; the client sees the origin's close).
            pipe(upstream, sock)
            return


def main():
    p = loopback_server.argument_parser(__doc__)
    loopback_server.add_log_argument(p)
    p.add_argument("--script", default="ok", help="comma-separated answers (see above)")
    p.add_argument("--auth", help="USER:PASSWORD the proxy requires")
    a = p.parse_args()
    proxy = Proxy(a.script.split(","), a.auth, loopback_server.EventLog(a.log_file))
    proxy.run(loopback_server.tcp_listener(), a.port_file, a.lifetime)


if __name__ == "__main__":
    main()
