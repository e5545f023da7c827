"""`stepback get` with a curl user's habits, against servers on loopback
(cli_support.RespondingServer): -o -, -O, -L, -C -, -x, -d and --data-binary with curl's
content type, -f and --fail-with-body (exit 22), -i and -I, -s, -v with credentials masked,
-k taken with a warning and nothing turned off, --retry, --connect-timeout, -m, bundled short options, and the curl options
stepback does not take named with its own spelling.

usage: get_curl_test.py STEPBACK_BINARY CASE
Each CASE is one CTest test (see tests/tools/CMakeLists.txt).
"""

import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

from cli_support import RespondingServer, anchor_file, check, http_response

BINARY = sys.argv[1]
PROXY_VARS = ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy",
              "ALL_PROXY", "no_proxy", "NO_PROXY")
BODY = b"".join(b"%09d\n" % i for i in range(2000))  # 20000 ASCII bytes.
# Quick retries, whatever profile the build chose.
FAST = ["--profile", "desktop", "--max-backoff", "0.05"]


def run(*args, cwd=None, stdin=None, timeout=30):
    """Runs `stepback get ARGS`; returns (exit code, stdout bytes, stderr text)."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    p = subprocess.run([BINARY, "get", *args], capture_output=True, timeout=timeout, cwd=cwd,
                       input=stdin, env=env)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def serving(status, body=BODY, fields=()):
    """A RespondingServer answering every request with `status`, `fields` and `body` (a HEAD
    with the head alone)."""
    def respond(n, head):
        out = http_response(status, fields, body)
        return out[:out.index(b"\r\n\r\n") + 4] if head.startswith("HEAD ") else out
    return RespondingServer(respond)


def url(server, path="/object.bin"):
    return f"http://127.0.0.1:{server.port}{path}"


def usage_error(args, *parts, cwd=None):
    """Checks that `get ARGS` is refused as a usage error: exit 2, one line naming `parts`."""
    code, out, err = run(*args, cwd=cwd)
    check(code == 2, f"{args}: exit {code}, want 2; stderr {err!r}")
    check(out == b"", f"{args}: wrote to stdout: {out!r}")
    check(err.startswith("stepback get: ") and err.count("\n") == 1,
          f"{args}: want one line on stderr, got {err!r}")
    for part in parts:
        check(part in err, f"{args}: stderr {err!r} lacks {part!r}")
    return err


def case_stdout_dash():
    server = serving("200 OK")
    with tempfile.TemporaryDirectory() as tmp:
        code, out, err = run(url(server), "-o", "-", cwd=tmp)
        check(code == 0 and out == BODY, f"-o -: exit {code}, {len(out)} bytes, stderr {err!r}")
        check(os.listdir(tmp) == [], f"-o - left files: {os.listdir(tmp)}")
        code, out, err = run(url(server), "-o-", "--data-binary", "x", cwd=tmp)
        check(code == 0 and out == BODY, f"-o- with a body: exit {code}, stderr {err!r}")
        check(os.listdir(tmp) == [], f"-o- left files: {os.listdir(tmp)}")
    usage_error([url(server), "-o", "-", "--state", "s"], "--state needs -o FILE")

    # No validator to resume with and stdout cannot start over: a cut body is an error exit
    # (8) with a prefix of it written, never a short success.
    def cut(n, head):
        whole = http_response("200 OK", [], BODY, close=True)
        return whole[:-5000] if n == 0 else whole
    server = RespondingServer(cut)
    code, out, err = run(url(server), "-o", "-", *FAST)
    check(code == 8, f"a cut body on -o -: exit {code} with {len(out)} bytes, {err!r}")
    check(BODY.startswith(out) and len(out) < len(BODY), f"-o -: {len(out)} bytes, not a prefix")

    # With a strong ETag the same run goes on by Range: the whole body, once.
    def resumed(n, head):
        if n == 0:
            return http_response("200 OK", [("ETag", '"v1"')], BODY, close=True)[:-5000]
        start = len(BODY) - 5000
        return http_response("206 Partial Content",
                             [("ETag", '"v1"'),
                              ("Content-Range", f"bytes {start}-{len(BODY) - 1}/{len(BODY)}")],
                             BODY[start:])
    server = RespondingServer(resumed)
    code, out, err = run(url(server), "-o", "-", *FAST)
    check(code == 0 and out == BODY, f"-o - resumed: exit {code}, {len(out)} bytes, {err!r}")
    check("range: bytes=15000-" in server.heads[1], f"resume: {server.heads[1]!r}")


def case_remote_name():
    server = serving("200 OK")
    with tempfile.TemporaryDirectory() as tmp:
        code, out, err = run("-O", url(server, "/dir/archive.tar?sig=abc"), cwd=tmp)
        check(code == 0 and out == b"", f"-O: exit {code}, stdout {out!r}, stderr {err!r}")
        check(os.listdir(tmp) == ["archive.tar"], f"-O made {os.listdir(tmp)}")
        with open(os.path.join(tmp, "archive.tar"), "rb") as f:
            check(f.read() == BODY, "-O: the file differs from the body")
        # As curl's: no URL decoding.
        code, _, err = run("--remote-name", url(server, "/a%20b.txt"), cwd=tmp)
        check(code == 0 and os.path.exists(os.path.join(tmp, "a%20b.txt")),
              f"--remote-name %20: exit {code}, {os.listdir(tmp)}, {err!r}")
        for path, part in (("/dir/", "names no file"), ("/", "names no file"),
                           ("/dir/.", "'.'"), ("/dir/..", "'..'"), ("/a\\b", "plain file name")):
            usage_error(["-O", url(server, path)], "-O:", part, cwd=tmp)
        usage_error(["-O", "-o", "x", url(server)], "-O and -o exclude each other", cwd=tmp)
        check(sorted(os.listdir(tmp)) == ["a%20b.txt", "archive.tar"],
              f"refusals made files: {os.listdir(tmp)}")


def case_location_continue():
    # -L and -C - are what stepback does anyway: accepted, the redirect followed.
    def respond(n, head):
        if head.startswith("GET /old "):
            return http_response("301 Moved Permanently", [("Location", "/new")], b"")
        return http_response("200 OK", [], BODY)
    server = RespondingServer(respond)
    for args in (["-L"], ["--location"], ["-C", "-"], ["--continue-at", "-"], ["-LC-"]):
        code, out, err = run(url(server, "/old"), *args)
        check(code == 0 and out == BODY, f"{args}: exit {code}, {len(out)} bytes, {err!r}")
    usage_error([url(server), "-C", "100"], "-C 100", "resume is automatic", "-C -")


def case_proxy_alias():
    # -x is --proxy: an http:// request goes to the proxy in absolute form.
    proxy = serving("200 OK")
    for flag in ("-x", "--proxy"):
        code, out, err = run("http://origin.test/object.bin", flag,
                             f"http://127.0.0.1:{proxy.port}")
        check(code == 0 and out == BODY, f"{flag}: exit {code}, stderr {err!r}")
        check(proxy.heads[-1].startswith("get http://origin.test:80/object.bin http/1.1"),
              proxy.heads[-1])


def case_data():
    server = serving("200 OK", b"ok\n")
    with tempfile.TemporaryDirectory() as tmp:
        lines = os.path.join(tmp, "lines.txt")
        with open(lines, "wb") as f:
            f.write(b"a=1\r\nb=2\n")
        cases = [
            (["-d", "x=1"], b"x=1", "application/x-www-form-urlencoded"),
            (["--data", "x=1", "-d", "y=2"], b"x=1&y=2", "application/x-www-form-urlencoded"),
            # -d drops CR and LF from a file, as curl's; --data-binary keeps them.
            (["-d", "@" + lines], b"a=1b=2", "application/x-www-form-urlencoded"),
            (["--data-binary", "@" + lines], b"a=1\r\nb=2\n", "application/x-www-form-urlencoded"),
            (["--data-raw", "@" + lines], ("@" + lines).encode(),
             "application/x-www-form-urlencoded"),
            (["-d", "x=1", "-H", "Content-Type: application/json"], b"x=1", "application/json"),
            (["-d@" + lines, "-XPUT"], b"a=1b=2", "application/x-www-form-urlencoded"),
        ]
        for args, body, content_type in cases:
            code, out, err = run(url(server), *args)
            check(code == 0 and out == b"ok\n", f"{args}: exit {code}, stderr {err!r}")
            head = server.heads[-1]
            method = "put" if "-XPUT" in args else "post"
            check(head.startswith(method + " "), f"{args}: {head!r}")
            check(server.bodies[-1] == body, f"{args}: body {server.bodies[-1]!r}, want {body!r}")
            check(head.count("content-type:") == 1
                  and f"content-type: {content_type}\r\n" in head, f"{args}: {head!r}")
        # @- reads stdin.
        code, _, err = run(url(server), "-d", "@-", stdin=b"from\r\nstdin")
        check(code == 0 and server.bodies[-1] == b"fromstdin", f"-d @-: {code} {err!r}")
        code, _, err = run(url(server), "-d", "@" + os.path.join(tmp, "missing"))
        check(code == 7 and "cannot read --data file" in err, f"-d @missing: {code} {err!r}")


def case_fail():
    not_found = serving("404 Not Found", b"the error page\n")
    with tempfile.TemporaryDirectory() as tmp:
        # Without -f: stepback's own exit 4, the error page written (as before).
        code, out, err = run(url(not_found))
        check(code == 4 and out == b"the error page\n", f"no -f: exit {code}, stdout {out!r}")
        for args in (["-f"], ["--fail"], ["-fsSL"]):
            code, out, err = run(url(not_found), *args)
            check(code == 22 and out == b"", f"{args}: exit {code}, stdout {out!r}, {err!r}")
            check("404" in err and "exit 22" in err, f"{args}: stderr {err!r}")
        # -o FILE: nothing written, an existing FILE kept, no FILE.part left.
        path = os.path.join(tmp, "object")
        with open(path, "w") as f:
            f.write("old\n")
        code, _, err = run(url(not_found), "-f", "-o", path)
        check(code == 22, f"-f -o: exit {code}, {err!r}")
        check(os.listdir(tmp) == ["object"] and open(path).read() == "old\n",
              f"-f -o: files {os.listdir(tmp)}")
        # A request that is not a download, and a HEAD.
        code, out, _ = run(url(not_found), "-f", "-d", "x=1")
        check(code == 22 and out == b"", f"-f -d: exit {code}, stdout {out!r}")
        code, out, _ = run(url(not_found), "-fI")
        check(code == 22 and out == b"", f"-fI: exit {code}, stdout {out!r}")
        code, out, _ = run(url(not_found), "--fail-with-body")
        check(code == 22 and out == b"the error page\n", f"--fail-with-body: {code} {out!r}")
        usage_error([url(not_found), "-f", "--fail-with-body"], "exclude each other")
    # A retryable error retried to the end: 3 without -f, 22 with it.
    busy = serving("503 Service Unavailable", b"busy\n")
    code, out, _ = run(url(busy), *FAST, "--retry", "1")
    check(code == 3 and out == b"", f"503 without -f: exit {code}, stdout {out!r}")
    code, out, _ = run(url(busy), *FAST, "--retry", "1", "-f")
    check(code == 22 and out == b"", f"503 with -f: exit {code}, stdout {out!r}")
    # Success is untouched.
    code, out, _ = run(url(serving("200 OK")), "-f")
    check(code == 0 and out == BODY, f"-f on 200: exit {code}")
    # -f changes the exit code, not what a download keeps: bytes checkpointed before a 503
    # that outlasted the retries stay in FILE.part for the next run.
    def cut_then_busy(n, head):
        if n == 0:
            return http_response("200 OK", [("ETag", '"v1"')], BODY, close=True)[:-5000]
        return http_response("503 Service Unavailable", [], b"busy\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "object")
        code, _, err = run(url(RespondingServer(cut_then_busy)), *FAST, "--retry", "2", "-f",
                           "-o", path)
        check(code == 22 and "kept" in err, f"-f after a cut: exit {code}, {err!r}")
        check(sorted(os.listdir(tmp)) == ["object.part", "object.part.state"],
              f"-f after a cut: files {os.listdir(tmp)}")


def split_head(out):
    end = out.find(b"\r\n\r\n")
    check(end > 0, f"no head in {out[:200]!r}")
    return out[:end + 4], out[end + 4:]


def case_include_head():
    fields = [("ETag", '"v1"'), ("X-Note", "kept as sent")]
    server = serving("200 OK", BODY, fields)
    code, out, err = run(url(server), "-i")
    check(code == 0, f"-i: exit {code}, {err!r}")
    head, body = split_head(out)
    check(head.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nX-Note: kept as sent\r\n" in head
          and b"\r\nContent-Length: 20000\r\n" in head, f"-i head {head!r}")
    check(body == BODY, f"-i: the body after the head differs ({len(body)} bytes)")
    for args in (["-I"], ["--head"]):
        code, out, err = run(url(server), *args)
        check(code == 0, f"{args}: exit {code}, {err!r}")
        check(server.heads[-1].startswith("head /object.bin "), server.heads[-1])
        head, body = split_head(out)
        check(head.startswith(b"HTTP/1.1 200 OK\r\n") and body == b"", f"{args}: {out!r}")
    # A redirect's head is not the final one; an empty body still gets its head.
    def respond(n, head):
        if head.startswith("GET /old "):
            return http_response("302 Found", [("Location", "/empty")], b"moved")
        return http_response("204 No Content", [], b"")
    code, out, err = run(url(RespondingServer(respond), "/old"), "-i")
    check(code == 0 and out.startswith(b"HTTP/1.1 204 No Content\r\n") and b"302" not in out,
          f"-i after a redirect: exit {code}, {out!r}, {err!r}")
    # An HTTP error without -f: its head and body, stepback's exit 4.
    code, out, _ = run(url(serving("404 Not Found", b"gone\n")), "-i")
    check(code == 4 and out.startswith(b"HTTP/1.1 404 Not Found\r\n")
          and out.endswith(b"\r\n\r\ngone\n"), f"-i on 404: exit {code}, {out!r}")
    with tempfile.TemporaryDirectory() as tmp:
        usage_error([url(server), "-i", "-o", os.path.join(tmp, "f")], "-i with -o FILE", "-v")
        usage_error([url(server), "-i", "-O"], "-i with -o FILE", cwd=tmp)
        # Not a download: the head goes to the file with the body.
        path = os.path.join(tmp, "posted")
        code, _, err = run(url(server), "-i", "-d", "x=1", "-o", path)
        check(code == 0 and open(path, "rb").read().startswith(b"HTTP/1.1 200 OK\r\n"),
              f"-i -d -o: exit {code}, {err!r}")
    usage_error([url(server), "-I", "-d", "x=1"], "-I is a HEAD request", "-d")
    usage_error([url(server), "-I", "-X", "GET"], "-I is a HEAD request", "-X")


def case_silent():
    server = serving("200 OK")
    code, out, err = run(url(server), "-s")
    check(code == 0 and out == BODY and err == "", f"-s: exit {code}, stderr {err!r}")
    code, out, err = run(url(server))
    check("attempt 1: 200 OK" in err, f"without -s: stderr {err!r}")
    # Errors are still said.
    code, out, err = run(url(serving("404 Not Found", b"gone\n")), "--silent")
    check(code == 4 and err.startswith("stepback get: stopped after 1 attempt")
          and "attempt 1:" not in err, f"-s on 404: exit {code}, stderr {err!r}")
    code, out, err = run(url(serving("503 Service Unavailable", b"busy\n")), "-s", *FAST,
                         "--retry", "2")
    check(code == 3 and "retrying" not in err and "stopped after 3 attempts" in err,
          f"-s on 503: exit {code}, stderr {err!r}")
    usage_error([url(server), "-s", "--trace"], "--trace")


def case_verbose():
    server = serving("200 OK", b"ok\n", [("X-Reply", "yes")])
    proxy_url = f"http://user:proxysecret@127.0.0.1:{server.port}"
    code, out, err = run("http://origin.test/v", "-v", "--oauth2-bearer", "tokensecret",
                         "-x", proxy_url)
    check(code == 0 and out == b"ok\n", f"-v: exit {code}, stderr {err!r}")
    lines = err.splitlines()
    check(lines[0] == "> GET http://origin.test:80/v HTTP/1.1", f"-v: first line {lines[0]!r}")
    for want in ("> Authorization: Bearer [masked]", "> Proxy-Authorization: Basic [masked]",
                 "> ", "< HTTP/1.1 200 OK", "< X-Reply: yes", "< ", "attempt 1: 200 OK"):
        check(want in lines, f"-v: no line {want!r} in {lines}")
    check(lines.index("> ") < lines.index("< HTTP/1.1 200 OK") < lines.index("< "),
          f"-v: order {lines}")
    check("tokensecret" not in err and "proxysecret" not in err
          and "dXNlcjpwcm94eXNlY3JldA" not in err, f"-v printed a credential: {err!r}")
    # The server did get them.
    check("authorization: bearer tokensecret" in server.heads[-1], server.heads[-1])
    # -H 'Authorization: ...' is masked too, its scheme kept; a bare token entirely.
    code, _, err = run(url(server), "--verbose", "-H", "Authorization: Basic c2VjcmV0")
    check(code == 0 and "> Authorization: Basic [masked]" in err.splitlines()
          and "c2VjcmV0" not in err, f"-v -H Authorization: {err!r}")
    code, _, err = run(url(server), "-v", "-H", "authorization:baretoken")
    check("> authorization: [masked]" in err.splitlines() and "baretoken" not in err,
          f"-v bare token: {err!r}")
    usage_error([url(server), "-v", "--trace"], "--trace")


def tls_server(tmp, body):
    """A one-thread HTTPS server on loopback with a fresh self-signed certificate (no CA
    vouches for it): answers each handshake that completes with 200 and `body`. Returns
    (port, certificate path)."""
    key, cert = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days",
                    "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=30)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(30)

    def serve():
        for _ in range(8):  # Bounded: the test makes a few connections.
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.settimeout(10)
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(4096)
                    tls.sendall(http_response("200 OK", (), body, close=True))
            except (ssl.SSLError, OSError):
                pass  # The client refused the certificate.

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], cert


def case_insecure():
    # -k is taken, with a warning even under -s, and turns nothing off.
    server = serving("200 OK", b"ok\n")
    for args in (["-k"], ["--insecure"], ["-sk"], ["-fsSLk"]):
        code, out, err = run(url(server), *args)
        check(code == 0 and out == b"ok\n", f"{args}: exit {code}, {out!r}, {err!r}")
        check("-k/--insecure is ignored" in err and "--cacert FILE" in err and "--pin" in err,
              f"{args}: no warning: {err!r}")
    with tempfile.TemporaryDirectory() as tmp:
        port, cert = tls_server(tmp, b"secret\n")
        code, out, err = run(f"https://127.0.0.1:{port}/", "-k", *FAST, "--retry", "0")
        check(code == 5 and out == b"" and "is ignored" in err,
              f"-k against a self-signed server: exit {code}, want 5; {out!r}, {err!r}")
        # The same server with its certificate trusted answers: the 5 above was verification.
        code, out, err = run(f"https://127.0.0.1:{port}/", "-k", "--cacert", cert, *FAST)
        check(code == 0 and out == b"secret\n", f"--cacert: exit {code}, {out!r}, {err!r}")


def case_retry():
    busy = serving("503 Service Unavailable", b"busy\n")
    for retries in (0, 2):
        before = len(busy.heads)
        code, _, err = run(url(busy), *FAST, "--retry", str(retries))
        check(code == 3, f"--retry {retries}: exit {code}, {err!r}")
        check(len(busy.heads) - before == retries + 1,
              f"--retry {retries}: {len(busy.heads) - before} requests")
    usage_error([url(busy), "--retry", "1001"], "invalid --retry '1001'", "0..1000")


def case_timeouts():
    # A server that takes the connection and never answers the TLS handshake: the handshake's
    # own limit (10 s on the desktop profile) is --connect-timeout's.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    held = []
    threading.Thread(target=lambda: [held.append(listener.accept()) for _ in range(8)],
                     daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        code, _, err = run(f"https://127.0.0.1:{port}/", "--cacert", anchor_file(tmp), *FAST,
                           "--retry", "0", "--connect-timeout", "0.5")
        seconds = time.monotonic() - start
        check(code == 3 and seconds < 5 and "TLS handshake timed out" in err,
              f"--connect-timeout 0.5: exit {code} after {seconds:.1f} s, {err!r}")
        usage_error([f"https://127.0.0.1:{port}/", "--connect-timeout", "0"],
                    "invalid --connect-timeout '0'")
    # -m is --max-time: a server that holds the answer.
    server = RespondingServer(lambda n, head: time.sleep(10))
    start = time.monotonic()
    code, _, err = run(url(server), "-m", "0.5")
    seconds = time.monotonic() - start
    check(code == 9 and seconds < 5, f"-m 0.5: exit {code} after {seconds:.1f} s, {err!r}")


def case_unknown_options():
    target = "http://127.0.0.1:1/"
    mapped = [
        (["--retry-max-time", "5"], "--retry-max-time", "stepback spells it --deadline"),
        (["--pinnedpubkey", "sha256//x"], "--pinnedpubkey", "--pin sha256/"),
        (["-u", "a:b"], "-u", "--oauth2-bearer"),
        (["--user", "a:b"], "--user", "--token-file"),
        (["--compressed"], "--compressed", "identity"),
        (["-T", "file"], "-T", "-X PUT --data-binary @FILE"),
        (["-D", "h.txt"], "-D", "-i writes"),
        (["-w", "%{http_code}"], "-w", "--trace"),
        (["-Y", "100"], "-Y", "--speed-limit"),
        (["--http2"], "--http2", "HTTP/1.1"),
        (["-b", "a=b"], "-b", "-H 'Cookie:"),
        # In a bundle, the letter is named.
        (["-sLb", "a=b"], "-b", "-H 'Cookie:"),
    ]
    for args, name, spelling in mapped:
        err = usage_error([target, *args], f"unknown option '{name}': ", spelling)
        check("allowed:" not in err, f"{args}: {err!r}")
    # An option curl does not have either: the usual list.
    usage_error([target, "--bogus"], "unknown option '--bogus' (allowed: ", "-o", "--retry")


def case_aliases():
    server = serving("200 OK", b"ok\n")
    code, _, err = run(url(server), "-A", "probe/2", "--header", "X-One: 1", "--request", "PATCH",
                       "--data", "x", "--output", os.devnull)
    check(code == 0, f"aliases: exit {code}, {err!r}")
    head = server.heads[-1]
    check(head.startswith("patch ") and "user-agent: probe/2\r\n" in head
          and "x-one: 1\r\n" in head, head)
    code, out, err = run("--url", url(server), "-XGET")
    check(code == 0 and out == b"ok\n" and server.heads[-1].startswith("get "),
          f"--url: exit {code}, {err!r}")
    usage_error(["--url", url(server), url(server)], "one URL only")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    CASES[sys.argv[2]]()
    print("ok")
