"""`stepback get --system-resolver`: the system's getaddrinfo (glibc, nsswitch) against
tests/integration/dns_server.py, in a network and mount namespace of the test's own.

glibc asks only port 53 of the servers of /etc/resolv.conf, so the script runs itself again
under `unshare --net --mount` and, inside: brings loopback up, makes the mounts private,
bind-mounts its own resolv.conf (nameserver 127.0.0.1, timeout:1 attempts:1),
nsswitch.conf (hosts: files dns) and hosts (127.0.0.1 localhost only) over /etc's, and starts
dns_server.py on 127.0.0.1:53 and a plain HTTP server on 127.0.0.1. Traffic stays on that
namespace's loopback; the mounts end with it.

  resolves  a name with A 127.0.0.1 (and AAAA ::1, refused) is looked up and fetched (exit 0)
  nxdomain  NXDOMAIN ends at once: one attempt, exit 6, "no such host 'NAME'"
  silent    a server that never answers cannot stretch --deadline 3 (the run ends within
            6 s), and a worker left blocked in getaddrinfo (timeout:30) does not hold the
            process at its exit
  conflict  --system-resolver with --dns-servers is a usage error (exit 2; no namespace)

usage: get_system_resolver_test.py STEPBACK_BINARY DNS_SERVER_PY CASE
Root only (namespaces); exits 77 (skipped) where they cannot be made. Every run is bounded by
a timeout.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

from cli_support import check, http_response, start_server, trace_events, RespondingServer

BINARY, DNS_SERVER = sys.argv[1], sys.argv[2]
SKIP = 77
INSIDE = "STEPBACK_SYSTEM_RESOLVER_TEST_INSIDE"  # Set in the namespace's run of this script.
BODY = b"named\n"
RESOLV_CONF = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"


def run(*args, timeout=30):
    """Runs the program; (exit code, stdout, stderr, seconds). A run that outlives `timeout`
    fails the test (a hang), the program killed."""
    start = time.monotonic()
    try:
        p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        sys.exit(f"FAIL: {args} still running after {timeout} s (killed); stderr: {e.stderr!r}")
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def sh(*argv):
    """Runs a setup command (ip, mount); fails the test when it fails."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    check(p.returncode == 0, f"{' '.join(argv)}: {p.stderr.strip()}")


MOUNTED = []  # The targets bind-mounted over, in order (unmounted in reverse at the end).


def bind_file(tmp, name, text, target):
    """Writes `text` to tmp/name and bind-mounts it over `target` (in this mount namespace)."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    sh("mount", "--bind", path, target)
    MOUNTED.append(target)


def unmount_all():
    """Undoes bind_file(): a file mounted over stays busy (cannot be removed) until then."""
    while MOUNTED:
        subprocess.run(["umount", MOUNTED.pop()], capture_output=True, timeout=10)


def unavailable():
    """Why the namespaces cannot be made here, or None."""
    if os.geteuid() != 0:
        return "not root"
    for tool in ("unshare", "ip", "mount"):
        if shutil.which(tool) is None:
            return f"no {tool} program"
    try:
        p = subprocess.run(["unshare", "--net", "--mount", "true"], capture_output=True,
                           text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return "unshare --net --mount did not return within 10 s"
    if p.returncode != 0:
        return f"unshare --net --mount failed: {p.stderr.strip()}"
    return None


def in_namespace(case):
    """Runs this script for `case` under unshare; its exit code."""
    env = dict(os.environ)
    env[INSIDE] = "1"
    argv = ["unshare", "--net", "--mount", "--", sys.executable, os.path.abspath(__file__),
            BINARY, DNS_SERVER, case]
    try:
        return subprocess.run(argv, env=env, timeout=120).returncode
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: the namespace's run of {case} still running after 120 s (killed)")


def set_up(tmp):
    """The namespace's loopback, /etc files and DNS server; returns (dns process, its log)."""
    sh("ip", "link", "set", "lo", "up")
    sh("mount", "--make-rprivate", "/")
    bind_file(tmp, "resolv.conf", RESOLV_CONF, "/etc/resolv.conf")
    bind_file(tmp, "nsswitch.conf", "hosts: files dns\n", "/etc/nsswitch.conf")
    bind_file(tmp, "hosts", "127.0.0.1 localhost\n", "/etc/hosts")
    port_file, log = os.path.join(tmp, "dns.port"), os.path.join(tmp, "dns.log")
    dns, port = start_server([sys.executable, DNS_SERVER, "--port", "53", "--port-file", port_file,
                              "--log-file", log, "--lifetime", "90"], port_file, "dns_server.py",
                             stderr=subprocess.PIPE)
    check(port == 53, f"dns_server.py is on port {port}, not 53")
    return dns, log


def queries(log):
    with open(log) as f:
        return f.read()


def case_resolves(tmp, log):
    # ok-*.test has A 127.0.0.1 and AAAA ::1; the server listens on 127.0.0.1 only.
    server = RespondingServer(lambda n, head: http_response("200 OK", [], BODY, close=True))
    args = ["get", "--system-resolver", f"http://ok-sys.test:{server.port}/", "--max-retries", "0"]
    code, out, err, _ = run(*args)
    check(code == 0 and out == BODY.decode(), f"{args} exited {code}, stdout {out!r}, stderr {err}")
    check("name=ok-sys.test" in queries(log), f"dns_server.py was not asked: {queries(log)!r}")
    check(len(server.heads) == 1 and "host: ok-sys.test:" in server.heads[0], f"{server.heads}")


def case_nxdomain(tmp, log):
    args = ["get", "--system-resolver", "http://nx-sys.test:8080/", "--trace"]
    code, _, err, seconds = run(*args)
    check(code == 6, f"{args} exited {code}, stderr: {err}")
    events = trace_events(err, args)
    done = events[-1]
    check(done["event"] == "done" and done["attempts"] == 1, f"{args}: {done}")
    errors = [e for e in events if e["event"] == "error"]
    check(len(errors) == 1 and "no such host 'nx-sys.test'" in errors[0]["message"],
          f"{args}: {errors}")
    check("name=nx-sys.test" in queries(log), f"dns_server.py was not asked: {queries(log)!r}")
    code, _, err, _ = run(*args[:-1])
    check(code == 6 and "no such host 'nx-sys.test'" in err, f"{args} exited {code}: {err}")
    print(f"nxdomain: exit {code} after {seconds:.1f} s: {errors[0]['message']}")


def silent_run(name):
    """`get --deadline 3` of a name the server never answers; (exit code, seconds, errors)."""
    args = ["get", "--system-resolver", f"http://{name}:8080/", "--deadline", "3", "--trace"]
    code, _, err, seconds = run(*args, timeout=20)
    check(code != 0 and seconds < 6.0, f"{args} exited {code} after {seconds:.1f} s: {err}")
    errors = [e for e in trace_events(err, args) if e["event"] == "error"]
    check(errors and all(name in e["message"] for e in errors), f"{args}: {errors}")
    print(f"silent {name}: exit {code} after {seconds:.1f} s, {len(errors)} errors, last: "
          f"{errors[-1]['message']}")
    return code


def case_silent(tmp, log):
    # timeout:1 attempts:1: each getaddrinfo gives up after about a second (EAI_AGAIN).
    code = silent_run("silent-sys.test")
    check(code == 3, f"gave up with exit {code}, not 3 (retries given up)")
    check("name=silent-sys.test" in queries(log), f"dns_server.py was not asked: {queries(log)!r}")
    # timeout:30: the worker is still in getaddrinfo when --deadline ends the run; the program
    # leaves it and exits all the same.
    bind_file(tmp, "resolv-long.conf", "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n",
              "/etc/resolv.conf")
    code = silent_run("silent-blocked.test")
    check(code == 3, f"gave up with exit {code}, not 3 (retries given up)")
    check("name=silent-blocked.test" in queries(log), f"not asked: {queries(log)!r}")


def case_conflict():
    for args in (["--system-resolver", "--dns-servers", "127.0.0.1"],
                 ["--dns-servers", "127.0.0.1", "--system-resolver"]):
        code, out, err, _ = run("get", "http://x.test/", *args)
        check(code == 2 and "--system-resolver and --dns-servers exclude each other" in err
              and out == "", f"{args} exited {code}: {err}")


CASES = {"resolves": case_resolves, "nxdomain": case_nxdomain, "silent": case_silent,
         "conflict": case_conflict}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} BINARY DNS_SERVER {'|'.join(CASES)}")
    CASE = sys.argv[3]
    if CASE == "conflict":
        case_conflict()
    elif os.environ.get(INSIDE) != "1":
        why = unavailable()
        if why is not None:
            print(f"SKIP: {why} (the test needs a network and mount namespace of its own)")
            sys.exit(SKIP)
        sys.exit(in_namespace(CASE))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            dns = None
            try:
                dns, log = set_up(tmp)
                CASES[CASE](tmp, log)
            finally:
                if dns is not None:
                    dns.kill()
                    dns.wait(timeout=10)
                unmount_all()
