"""`stepback get` and `stepback upload` through HTTP proxies on loopback: the scripted proxy
(tests/support/scripted_proxy.py) for the faults a real proxy will not produce (a cut CONNECT,
502/503, garbage, a 407 loop) and for what reaches the proxy and the origin; squid and
tinyproxy (Debian's packages, each with its own configuration in a temporary folder, on free
loopback ports: a system proxy is neither used nor touched) with and without Basic
credentials, from the flags and from the environment, no_proxy honoured. The origin is nginx
over TLS with the PKI of tests/integration/make_certs.sh.

usage: proxy_cli_test.py STEPBACK_BINARY NGINX MAKE_CERTS_SH UPLOAD_SERVER_PY CASE
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from cli_support import check, free_port, nginx_conf, start_nginx, start_server, wait_until

BINARY, NGINX, MAKE_CERTS, UPLOAD_SERVER = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = b"through a proxy, byte for byte\n" * 3200  # About 100 KB, text for stdout.
PROXY_VARS = ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy",
              "ALL_PROXY", "no_proxy", "NO_PROXY")
# Quick retries, whatever profile the build chose.
FAST = ["--profile", "desktop", "--max-backoff", "0.05"]

LOG_FORMAT = '$server_port $request_uri $status "$http_proxy_authorization"'
SERVERS = """  server {{
    listen 127.0.0.1:{tls} ssl;
    ssl_certificate {pki}/server.pem;
    ssl_certificate_key {pki}/server.key;
    root {dir}/www;
  }}
  server {{
    listen 127.0.0.1:{wrong} ssl;
    ssl_certificate {pki}/wrong_host.pem;
    ssl_certificate_key {pki}/wrong_host.key;
    root {dir}/www;
  }}
  server {{
    listen 127.0.0.1:{plain};
    root {dir}/www;
  }}"""


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def env_with(**proxy_vars):
    """The environment without any proxy variable of the machine, plus `proxy_vars`."""
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    env.update(proxy_vars)
    return env


def run(command, *args, env=None):
    p = subprocess.run([BINARY, command, *args], capture_output=True, text=True, timeout=60,
                       env=env if env is not None else env_with())
    return p.returncode, p.stdout, p.stderr


def get(*args, env=None):
    return run("get", *FAST, *args, env=env)


class Origin:
    """nginx on loopback: TLS with a certificate for 127.0.0.1 (tls), TLS with one for
    other.example only (wrong), plain HTTP (plain); all serve /small.bin."""

    def __init__(self, tmp):
        self.dir = tmp
        self.pki = os.path.join(tmp, "pki")
        subprocess.run(["bash", MAKE_CERTS, shutil.which("openssl"), self.pki], check=True,
                       capture_output=True)
        self.ca = os.path.join(self.pki, "ca.pem")
        os.makedirs(os.path.join(tmp, "www"))
        with open(os.path.join(tmp, "www", "small.bin"), "wb") as f:
            f.write(SMALL)
        self.tls, self.wrong, self.plain = free_port(), free_port(), free_port()
        servers = SERVERS.format(tls=self.tls, wrong=self.wrong, plain=self.plain, dir=tmp,
                                 pki=self.pki)
        self.proc = start_nginx(NGINX, tmp, nginx_conf(tmp, LOG_FORMAT, servers),
                                lambda: all(listening(p)
                                            for p in (self.tls, self.wrong, self.plain)))

    def url(self, port=None):
        if port == self.plain:
            return f"http://127.0.0.1:{port}/small.bin"
        return f"https://127.0.0.1:{port or self.tls}/small.bin"

    def log(self):
        path = os.path.join(self.dir, "access.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return f.read().splitlines()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class ScriptedProxy:
    def __init__(self, tmp, name, script, auth=None):
        self.log_file = os.path.join(tmp, name + ".log")
        port_file = os.path.join(tmp, name + ".port")
        script_path = os.path.join(HERE, "..", "support", "scripted_proxy.py")
        args = [sys.executable, script_path, "--port-file", port_file, "--log-file", self.log_file, "--script", script, "--lifetime", "60"]
        if auth:
            args += ["--auth", auth]
        self.proc, self.port = start_server(args, port_file, "the scripted proxy",
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def url(self, userinfo=""):
        return f"http://{userinfo}127.0.0.1:{self.port}"

    def log(self):
        if not os.path.exists(self.log_file):
            return []
        with open(self.log_file) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def basic(credentials):
    return "Basic " + base64.b64encode(credentials.encode()).decode()


def expect(result, code, args, words=None, never=()):
    got, out, err = result
    check(got == code, f"{args}: exit {got}, expected {code}; stderr: {err}")
    if words:
        check(words in err, f"{args}: no '{words}' in stderr: {err}")
    for secret in never:
        check(secret not in err and secret not in out, f"{args}: '{secret}' was printed")
    return out


def with_origin(body):
    tmp = tempfile.mkdtemp(prefix="stepback-proxy-")
    os.chmod(tmp, 0o777)  # squid, started as root, runs as its own user.
    origin = None
    try:
        origin = Origin(tmp)
        body(tmp, origin)
    finally:
        if origin:
            origin.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def case_scripted_faults():
    def body(tmp, origin):
        ca = ["--cacert", origin.ca]
        # A cut CONNECT and a 503 are retried like a failed connect; then the tunnel stands.
        proxy = ScriptedProxy(tmp, "retry", "cut,503,ok")
        args = [origin.url(), "--proxy", proxy.url(), *ca]
        out = expect(get(*args), 0, args)
        check(out.encode() == SMALL, "the body differs")
        log = proxy.log()
        check([r["answer"] for r in log] == ["cut", "503", "ok"], f"proxy log: {log}")
        check(all(r["method"] == "CONNECT" and r["target"] == f"127.0.0.1:{origin.tls}"
                  for r in log), f"proxy log: {log}")
        proxy.stop()
        # 502 every time: retried until the retries run out (exit 3), naming the answer.
        proxy = ScriptedProxy(tmp, "gateway", "502")
        args = [origin.url(), "--proxy", proxy.url(), "--max-retries", "1", *ca]
        expect(get(*args), 3, args, "answered CONNECT with 502 Bad Gateway")
        check(len(proxy.log()) == 2, f"proxy log: {proxy.log()}")
        proxy.stop()
        # Garbage, and a status that is neither 2xx, 407 nor a gateway's: once, exit 6.
        for script, words in [("garbage", "did not answer CONNECT in HTTP"),
                              ("403", "answered CONNECT with 403 Forbidden")]:
            proxy = ScriptedProxy(tmp, script, script)
            args = [origin.url(), "--proxy", proxy.url(), *ca]
            expect(get(*args), 6, args, words)
            check(len(proxy.log()) == 1, f"{script}: retried: {proxy.log()}")
            proxy.stop()
        # A 407 loop: one CONNECT, never retried, its own exit code.
        proxy = ScriptedProxy(tmp, "auth_loop", "407")
        args = [origin.url(), "--proxy", proxy.url(), *ca]
        expect(get(*args), 15, args, "proxy authentication required")
        check(len(proxy.log()) == 1, f"407 retried: {proxy.log()}")
        proxy.stop()

    with_origin(body)


def case_scripted_credentials():
    def body(tmp, origin):
        ca = ["--cacert", origin.ca]
        secret = "p@ss w:rd"
        encoded = "p%40ss%20w%3Ard"
        proxy = ScriptedProxy(tmp, "auth", "ok", auth="user:" + secret)
        never = (secret, encoded, basic("user:" + secret)[6:])
        # Percent-encoded credentials go to the proxy alone, as Basic; nothing prints them.
        args = [origin.url(), "--proxy", proxy.url(f"user:{encoded}@"), "--trace", *ca]
        out = expect(get(*args), 0, args, never=never)
        check(out.encode() == SMALL, "the body differs")
        log = proxy.log()
        check(len(log) == 1 and log[0]["proxy_authorization"] == basic("user:" + secret),
              f"proxy log: {log}")
        check(origin.log() and all(line.endswith('"-"') for line in origin.log()),
              f"Proxy-Authorization reached the origin: {origin.log()}")
        # Refused credentials: 407 once, exit 15, the password never printed.
        args = [origin.url(), "--proxy", proxy.url("user:wrong%21@"), *ca]
        expect(get(*args), 15, args, "refused the credentials", never=("wrong!", "wrong%21"))
        check(len(proxy.log()) == 2, f"407 retried: {proxy.log()}")
        # Through the tunnel the certificate is checked against the origin's name: a server
        # whose certificate is for other.example fails verification (exit 5).
        args = [origin.url(origin.wrong), "--proxy", proxy.url(f"user:{encoded}@"), *ca]
        expect(get(*args), 5, args)
        # Plain http:// goes to the proxy in absolute form with the credentials (http_proxy,
        # lower case); the origin never sees them.
        before = len(origin.log())
        env = env_with(http_proxy=proxy.url(f"user:{encoded}@"))
        args = [origin.url(origin.plain)]
        out = expect(get(*args, env=env), 0, args, never=never)
        check(out.encode() == SMALL, "the forwarded body differs")
        last = proxy.log()[-1]
        check(last["method"] == "GET" and last["target"] == origin.url(origin.plain) and
              last["proxy_authorization"] == basic("user:" + secret), f"proxy log: {last}")
        check(origin.log()[before:] == [f'{origin.plain} /small.bin 200 "-"'],
              f"origin log: {origin.log()[before:]}")
        # HTTP_PROXY in upper case is not read (as curl: CGI sets it from a request header).
        count = len(proxy.log())
        env = env_with(HTTP_PROXY=proxy.url(f"user:{encoded}@"))
        expect(get(*args, env=env), 0, args)
        check(len(proxy.log()) == count, "HTTP_PROXY was used")
        # A proxy URL that does not parse is a usage error that does not echo it.
        args = [origin.url(), "--proxy", "socks5://user:hunter2@127.0.0.1:1080"]
        expect(get(*args), 2, args, "invalid proxy URL in --proxy", never=("hunter2",))
        env = env_with(https_proxy="https://user:hunter2@127.0.0.1:1")
        expect(get(origin.url(), env=env), 2, "https_proxy", "invalid proxy URL in https_proxy",
               never=("hunter2",))
        proxy.stop()

    with_origin(body)


class Squid:
    """squid on two loopback ports: `open` (no credentials) and `authed` (Basic, checked by
    basic_ncsa_auth against an htpasswd file made with openssl passwd -apr1)."""

    def __init__(self, tmp, user, password):
        self.dir = os.path.join(tmp, "squid")
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o777)
        hashed = subprocess.run(["openssl", "passwd", "-apr1", password], check=True,
                                capture_output=True, text=True).stdout.strip()
        htpasswd = os.path.join(self.dir, "htpasswd")
        with open(htpasswd, "w") as f:
            f.write(f"{user}:{hashed}\n")
        os.chmod(htpasswd, 0o644)
        self.open, self.authed = free_port(), free_port()
        helper = next(p for p in ("/usr/lib/squid/basic_ncsa_auth",
                                  "/usr/lib/squid3/basic_ncsa_auth") if os.path.exists(p))
        conf = os.path.join(self.dir, "squid.conf")
        with open(conf, "w") as f:
            f.write(f"""http_port 127.0.0.1:{self.open} name=open
http_port 127.0.0.1:{self.authed} name=authed
visible_hostname stepback-test
pid_filename {self.dir}/squid.pid
access_log stdio:{self.dir}/access.log
cache_log {self.dir}/cache.log
cache_store_log none
netdb_filename none
coredump_dir {self.dir}
cache deny all
cache_mem 8 MB
pinger_enable off
shutdown_lifetime 0 seconds
auth_param basic program {helper} {htpasswd}
auth_param basic children 1 startup=1
auth_param basic realm stepback
acl open_port myportname open
acl authed_users proxy_auth REQUIRED
http_access allow open_port
http_access allow authed_users
http_access deny all
""")
        self.proc = subprocess.Popen([shutil.which("squid") or "/usr/sbin/squid", "-N", "-f",
                                      conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     cwd=self.dir)
        def failed():
            cache_log = os.path.join(self.dir, "cache.log")
            said = open(cache_log).read()[-600:] if os.path.exists(cache_log) else ""
            return f"squid did not start; its cache.log ends: {said}"
        wait_until(lambda: listening(self.open) and listening(self.authed), failed)

    def log(self):
        path = os.path.join(self.dir, "access.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return f.read().splitlines()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Tinyproxy:
    """tinyproxy on a loopback port, with BasicAuth when given credentials."""

    def __init__(self, tmp, name, user=None, password=None):
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o777)
        self.port = free_port()
        conf = os.path.join(self.dir, "tinyproxy.conf")
        with open(conf, "w") as f:
            f.write(f"""Port {self.port}
Listen 127.0.0.1
Timeout 30
PidFile "{self.dir}/tinyproxy.pid"
LogFile "{self.dir}/tinyproxy.log"
LogLevel Connect
MaxClients 20
""" + (f"BasicAuth {user} {password}\n" if user else ""))
        self.proc = subprocess.Popen([shutil.which("tinyproxy") or "/usr/bin/tinyproxy", "-d",
                                      "-c", conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        wait_until(lambda: listening(self.port), "tinyproxy did not start")

    def requests(self):
        path = os.path.join(self.dir, "tinyproxy.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [line for line in f.read().splitlines() if "Request (file descriptor" in line]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def upload_through(tmp, proxy_url, env_proxy=False):
    """`stepback upload` over TLS through `proxy_url` to tests/transfer/upload_server.py."""
    server_dir = os.path.join(tmp, "upload-" + str(len(os.listdir(tmp))))
    objects = os.path.join(server_dir, "objects")
    os.makedirs(objects)
    pki = os.path.join(server_dir, "pki")
    subprocess.run(["bash", MAKE_CERTS, shutil.which("openssl"), pki], check=True,
                   capture_output=True)
    port_file = os.path.join(server_dir, "port")
    server, port = start_server([sys.executable, UPLOAD_SERVER, "--port-file", port_file,
                                 "--log-file", os.path.join(server_dir, "log"), "--objects",
                                 objects, "--lifetime", "60", "--cert",
                                 os.path.join(pki, "server.pem"), "--key",
                                 os.path.join(pki, "server.key")], port_file, "the upload server",
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        path = os.path.join(server_dir, "body.bin")
        data = bytes((i * 7) & 0xFF for i in range(256 * 1024 + 99))
        with open(path, "wb") as f:
            f.write(data)
        url = f"https://127.0.0.1:{port}/upload?uploadType=resumable&name=o"
        args = [path, url, "--chunk-size", "256K", "--cacert", os.path.join(pki, "ca.pem")]
        if env_proxy:
            result = run("upload", *args, env=env_with(HTTPS_PROXY=proxy_url))
        else:
            result = run("upload", *args, "--proxy", proxy_url)
        expect(result, 0, ["upload", *args, proxy_url])
        with open(os.path.join(objects, "o"), "rb") as f:
            check(f.read() == data, "the uploaded object differs")
    finally:
        server.kill()
        server.wait()


def case_squid():
    def body(tmp, origin):
        ca = ["--cacert", origin.ca]
        squid = Squid(tmp, "user", "s3cret")
        try:
            open_url = f"http://127.0.0.1:{squid.open}"
            authed_url = f"http://user:s3cret@127.0.0.1:{squid.authed}"
            # no_proxy (and its spelling with a port) keeps a host off the proxy.
            for no_proxy in ("127.0.0.1", f"localhost,127.0.0.1:{origin.tls}"):
                env = env_with(https_proxy=open_url, no_proxy=no_proxy)
                out = expect(get(origin.url(), *ca, env=env), 0, f"no_proxy={no_proxy}")
                check(out.encode() == SMALL, "the body differs")
            # From the flag, without credentials; then from the environment with them.
            args = [origin.url(), "--proxy", open_url, *ca]
            out = expect(get(*args), 0, args)
            check(out.encode() == SMALL, "the body differs through squid")
            env = env_with(https_proxy=authed_url)
            out = expect(get(origin.url(), *ca, env=env), 0, "https_proxy with credentials",
                         never=("s3cret",))
            check(out.encode() == SMALL, "the body differs through squid")
            # No credentials, or wrong ones, on the port that needs them: exit 15.
            args = [origin.url(), "--proxy", f"http://127.0.0.1:{squid.authed}", *ca]
            expect(get(*args), 15, args, "proxy authentication required")
            args = [origin.url(), "--proxy", f"http://user:nope@127.0.0.1:{squid.authed}", *ca]
            expect(get(*args), 15, args, "refused the credentials", never=("nope",))
            # --noproxy '*' and --proxy '' override the environment.
            env = env_with(https_proxy=f"http://127.0.0.1:{squid.authed}")
            expect(get(origin.url(), "--noproxy", "*", *ca, env=env), 0, "--noproxy '*'")
            expect(get(origin.url(), "--proxy", "", *ca, env=env), 0, "--proxy ''")
            # Plain http:// forwarded (http_proxy), squid fetching it itself.
            env = env_with(http_proxy=authed_url)
            out = expect(get(origin.url(origin.plain), env=env), 0, "http_proxy forward")
            check(out.encode() == SMALL, "the forwarded body differs")
            # A forward proxy's 407 is the proxy's, as a tunnel's: exit 15, not 4.
            env = env_with(http_proxy=f"http://127.0.0.1:{squid.authed}")
            expect(get(origin.url(origin.plain), env=env), 15, "http_proxy without credentials",
                   "the proxy asked for credentials")
            # squid logs a transaction when it ends (and the readiness probes, connections
            # without a request, as error:transaction-end-before-headers): wait for the
            # transactions of the runs above, then count them.
            def counts():
                log = squid.log()
                connects = [line for line in log if f" CONNECT 127.0.0.1:{origin.tls} " in line]
                forward = f" GET http://127.0.0.1:{origin.plain}/small.bin user "
                return (sum(" TCP_TUNNEL/200 " in line for line in connects),
                        sum(" TCP_DENIED/407 " in line for line in connects),
                        sum(forward in line for line in log))

            wait_until(lambda: all(n >= want for n, want in zip(counts(), (2, 2, 1))),
                       lambda: f"squid's log lacks runs: {squid.log()}")
            check(counts() == (2, 2, 1),
                  f"two tunnels (not the no_proxy runs), two 407, one forwarded GET: "
                  f"{squid.log()}")
            upload_through(tmp, authed_url)
        finally:
            squid.stop()

    with_origin(body)


def case_tinyproxy():
    def body(tmp, origin):
        ca = ["--cacert", origin.ca]
        plain = Tinyproxy(tmp, "tinyproxy-open")
        authed = Tinyproxy(tmp, "tinyproxy-auth", "user", "s3cret")
        try:
            plain_url = f"http://127.0.0.1:{plain.port}"
            authed_url = f"http://user:s3cret@127.0.0.1:{authed.port}"
            env = env_with(HTTPS_PROXY=plain_url, NO_PROXY=".localhost, 127.0.0.1")
            expect(get(origin.url(), *ca, env=env), 0, "NO_PROXY")
            check(plain.requests() == [], f"NO_PROXY: tinyproxy got {plain.requests()}")
            args = [origin.url(), "--proxy", plain_url, *ca]
            out = expect(get(*args), 0, args)
            check(out.encode() == SMALL, "the body differs through tinyproxy")
            check(len(plain.requests()) == 1 and
                  f"CONNECT 127.0.0.1:{origin.tls} " in plain.requests()[0],
                  f"tinyproxy log: {plain.requests()}")
            # A download to a file (transfer::Download, its checkpoints) from HTTPS_PROXY.
            env = env_with(HTTPS_PROXY=authed_url)
            target = os.path.join(tmp, "small.out")
            expect(get(origin.url(), "-o", target, *ca, env=env), 0,
                   "HTTPS_PROXY with credentials, -o", never=("s3cret",))
            with open(target, "rb") as f:
                check(f.read() == SMALL, "the downloaded file differs through tinyproxy")
            args = [origin.url(), "--proxy", f"http://127.0.0.1:{authed.port}", *ca]
            expect(get(*args), 15, args, "proxy authentication required")
            env = env_with(http_proxy=authed_url)
            out = expect(get(origin.url(origin.plain), env=env), 0, "http_proxy forward")
            check(out.encode() == SMALL, "the forwarded body differs")
            upload_through(tmp, authed_url, env_proxy=True)
        finally:
            plain.stop()
            authed.stop()

    with_origin(body)


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[5] not in CASES:
        sys.exit("usage: proxy_cli_test.py STEPBACK NGINX MAKE_CERTS UPLOAD_SERVER " +
                 "|".join(CASES))
    CASES[sys.argv[5]]()
