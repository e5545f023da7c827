"""Reachability is learned from attempts, not guessed from the route table.

`stepback get` in network namespaces this script makes, with servers it starts inside them:

  loopback      a namespace with only loopback up (an offline sandbox, a container without a
                network): a server on 127.0.0.1 and one on an address of the device's own
                (192.0.2.10 on lo) answer at once; no wait for a network
  loopback_dns  the same namespace with tests/integration/dns_server.py on 127.0.0.1: a name
                resolves and connects (::1 refused, 127.0.0.1 answers), NXDOMAIN ends at once
                (exit 6), SERVFAIL is retried and given up on (exit 3), a silent resolver
                cannot stretch --deadline, a slow one answers
  closed_lan    two namespaces joined by a veth, no default route: the server on the LAN
  vpn_split     no default route but 0.0.0.0/1 and 128.0.0.0/1 through the link, as a VPN
                installs them: the server behind it
  offline       only loopback, the server elsewhere: the download waits for a network
                ("there is no network"), spending no retry, and goes on once a link and a
                default route come (the rtnetlink watch, tools/network_watch.cpp)
  offline_dns   as offline, the name's DNS server out of reach too
  offline_limit only loopback, the server elsewhere, --offline-limit 1: exit 16 in about 1 s

usage: reachability_test.py STEPBACK_BINARY DNS_SERVER_PY CASE
Root only (namespaces); exits 77 (skipped) where namespaces cannot be made. Every run of the
program is bounded by a timeout; every namespace is deleted at the end.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from cli_support import check, ip, namespaces_unavailable, start_server, trace_events

BINARY, DNS_SERVER = sys.argv[1], sys.argv[2]
ID = f"{os.getpid() % 100000}"
CLI, SRV = f"sbre-c-{ID}", f"sbre-s-{ID}"
SERVER = "10.83.9.1"  # On the server namespace's loopback, reached over the link.
LOCAL = "192.0.2.10"  # An address of the client's own (TEST-NET-1, on its lo).
BODY = b"reachable\n"

# A plain HTTP server on one address (cli_support.RespondingServer), in whatever namespace it
# is started: the port goes to the port file once it listens; it ends with its parent or
# after 120 s. argv: the folder of cli_support.py, the address, the port file, the body.
SERVE = r"""
import sys
sys.path.insert(0, sys.argv[1])
import cli_support
import loopback_server
body = sys.argv[4].encode()
server = cli_support.RespondingServer(
    lambda n, head: cli_support.http_response("200 OK", [], body, close=True), sys.argv[2])
loopback_server.announce(server.port, sys.argv[3])
loopback_server.wait_for_end(120)
loopback_server.exit_now()
"""


def make_namespaces():
    """The client namespace (loopback up, nothing else) and the server one (loopback up,
    SERVER on it); no link between them yet."""
    for n in (CLI, SRV):
        ip("netns", "del", n, check_rc=False)
        ip("netns", "add", n)
        ip("-n", n, "link", "set", "lo", "up")
    ip("-n", SRV, "addr", "add", f"{SERVER}/32", "dev", "lo")


def link(routes):
    """Joins the namespaces by a veth (10.83.1.1 <-> 10.83.1.2) and adds `routes` (lists of
    `ip route add` arguments) in the client namespace."""
    ip("link", "add", f"c-{ID}", "netns", CLI, "type", "veth", "peer", "name", f"s-{ID}",
       "netns", SRV)
    ip("-n", CLI, "addr", "add", "10.83.1.1/24", "dev", f"c-{ID}")
    ip("-n", SRV, "addr", "add", "10.83.1.2/24", "dev", f"s-{ID}")
    ip("-n", CLI, "link", "set", f"c-{ID}", "up")
    ip("-n", SRV, "link", "set", f"s-{ID}", "up")
    for r in routes:
        ip("-n", CLI, "route", "add", *r)


def remove_namespaces():
    for n in (CLI, SRV):
        ip("netns", "del", n, check_rc=False)


def start_in(namespace, argv, port_file, tmp):
    """Starts `argv` in `namespace` and waits for its port file; (process, port)."""
    return start_server(["ip", "netns", "exec", namespace, *argv], os.path.join(tmp, port_file),
                        f"{argv[:3]} in {namespace}")


def http_server(namespace, address, tmp, name):
    tools = os.path.dirname(os.path.abspath(__file__))
    return start_in(namespace, [sys.executable, "-c", SERVE, tools, address,
                                os.path.join(tmp, name), BODY.decode()], name, tmp)


def dns_server(namespace, tmp, listen="127.0.0.1", answer="127.0.0.1"):
    return start_in(namespace, [sys.executable, DNS_SERVER, "--port-file",
                                os.path.join(tmp, "dns.port"), "--lifetime", "120", "--delay",
                                "1", "--listen", listen, "--answer", answer], "dns.port", tmp)


def get(*args, timeout=60):
    """`stepback get ARGS --trace` in the client namespace: (exit code, stdout bytes, trace
    events, seconds)."""
    argv = ["ip", "netns", "exec", CLI, BINARY, "get", *args, "--trace"]
    start = time.monotonic()
    p = subprocess.run(argv, capture_output=True, timeout=timeout)
    err = p.stderr.decode(errors="replace")
    return p.returncode, p.stdout, trace_events(err, argv), time.monotonic() - start


def offline_waits(events):
    return [e for e in events if e["event"] == "wait" and e.get("reason") == "offline"]


def expect_reached(url, *extra):
    code, out, events, seconds = get(url, "--max-retries", "0", *extra, timeout=30)
    check(code == 0 and out == BODY, f"{url}: exit {code}, stdout {out!r}, events {events[-3:]}")
    check(not offline_waits(events), f"{url}: waited for a network: {offline_waits(events)}")
    check(seconds < 20, f"{url}: took {seconds:.1f} s")


def case_loopback(tmp):
    make_namespaces()
    ip("-n", CLI, "addr", "add", f"{LOCAL}/32", "dev", "lo")
    servers = [http_server(CLI, "127.0.0.1", tmp, "lo.port"),
               http_server(CLI, LOCAL, tmp, "local.port")]
    try:
        expect_reached(f"http://127.0.0.1:{servers[0][1]}/")
        expect_reached(f"http://{LOCAL}:{servers[1][1]}/")
    finally:
        for p, _ in servers:
            p.kill()


def case_loopback_dns(tmp):
    make_namespaces()
    server, port = http_server(CLI, "127.0.0.1", tmp, "lo.port")
    dns, dns_port = dns_server(CLI, tmp)
    servers = f"127.0.0.1:{dns_port}"
    try:
        # ok-*: ::1 and 127.0.0.1; the server is on 127.0.0.1 alone (Happy Eyeballs).
        expect_reached(f"http://ok-lo.test:{port}/", "--dns-servers", servers)
        expect_reached(f"http://slow-lo.test:{port}/", "--dns-servers", servers)
        code, _, events, seconds = get(f"http://nx-lo.test:{port}/", "--dns-servers", servers,
                                       timeout=30)
        check(code == 6 and seconds < 10, f"NXDOMAIN: exit {code} in {seconds:.1f} s: {events}")
        code, _, events, seconds = get(f"http://servfail-lo.test:{port}/", "--dns-servers",
                                       servers, "--max-retries", "1", "--max-backoff", "0.2",
                                       timeout=30)
        done = [e for e in events if e["event"] == "done"]
        check(code == 3 and done and done[-1]["attempts"] == 2,
              f"SERVFAIL: exit {code} in {seconds:.1f} s: {events[-3:]}")
        check(not offline_waits(events), f"SERVFAIL waited for a network: {events}")
        code, _, events, seconds = get(f"http://silent-lo.test:{port}/", "--dns-servers",
                                       servers, "--deadline", "3", timeout=30)
        check(code == 3 and seconds < 6, f"silent: exit {code} in {seconds:.1f} s: {events[-3:]}")
        check(not offline_waits(events), f"silent waited for a network: {events}")
        # A DNS server that is not running on 127.0.0.1 is reached and refuses: an ordinary
        # failure, retried and given up on, never a wait for a network.
        code, _, events, seconds = get(f"http://ok-lo.test:{port}/", "--dns-servers",
                                       "127.0.0.1:1", "--max-retries", "1", "--max-backoff",
                                       "0.2", timeout=30)
        check(code == 3 and seconds < 10, f"refused DNS: exit {code} in {seconds:.1f} s: "
              f"{events[-3:]}")
        check(not offline_waits(events), f"a refused DNS server waited for a network: {events}")
    finally:
        server.kill()
        dns.kill()


def case_closed_lan(tmp):
    make_namespaces()
    link([])
    server, port = http_server(SRV, "10.83.1.2", tmp, "lan.port")
    try:
        expect_reached(f"http://10.83.1.2:{port}/")
    finally:
        server.kill()


def case_vpn_split(tmp):
    make_namespaces()
    link([["0.0.0.0/1", "via", "10.83.1.2"], ["128.0.0.0/1", "via", "10.83.1.2"]])
    server, port = http_server(SRV, SERVER, tmp, "vpn.port")
    try:
        expect_reached(f"http://{SERVER}:{port}/")
    finally:
        server.kill()


def wait_then_link(url, *extra):
    """Runs `get URL` in the client namespace with only loopback, waits for its offline wait
    in the trace, then links the namespaces with a default route; the download must go on."""
    argv = ["ip", "netns", "exec", CLI, BINARY, "get", url, "--trace", "--max-retries", "2",
            *extra]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    deadline = time.monotonic() + 20
    waiting = False
    try:
        while time.monotonic() < deadline and not waiting:
            line = p.stderr.readline()
            if not line:
                break
            lines.append(line.decode(errors="replace"))
            event = json.loads(lines[-1])
            waiting = event["event"] == "wait" and event.get("reason") == "offline"
        check(waiting, f"{url}: no wait for a network: {''.join(lines)}")
        check("no network" in lines[-1], f"{url}: {lines[-1]}")
        link([["default", "via", "10.83.1.2"]])
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    events = trace_events("".join(lines) + err.decode(errors="replace"), argv)
    check(p.returncode == 0 and out == BODY, f"{url}: exit {p.returncode}: {events[-3:]}")
    done = [e for e in events if e["event"] == "done"]
    check(done and done[-1]["attempts"] == 1, f"{url}: waiting offline spent retries: {done}")


def case_offline(tmp):
    make_namespaces()
    server, port = http_server(SRV, SERVER, tmp, "far.port")
    try:
        wait_then_link(f"http://{SERVER}:{port}/")
    finally:
        server.kill()


def case_offline_dns(tmp):
    make_namespaces()
    # The DNS server listens on the far side of the link that is not there yet.
    ip("-n", SRV, "addr", "add", "10.83.53.1/32", "dev", "lo")
    server, port = http_server(SRV, SERVER, tmp, "far.port")
    dns, dns_port = dns_server(SRV, tmp, listen="10.83.53.1", answer=SERVER)
    try:
        wait_then_link(f"http://v4-far.test:{port}/", "--dns-servers", f"10.83.53.1:{dns_port}")
    finally:
        server.kill()
        dns.kill()


def case_offline_limit(tmp):
    make_namespaces()
    code, _, events, seconds = get(f"http://{SERVER}:8080/", "--offline-limit", "1",
                                   "--max-retries", "2", timeout=30)
    check(code == 16, f"exit {code} in {seconds:.1f} s: {events[-3:]}")
    check(seconds < 10, f"took {seconds:.1f} s for a 1 s offline limit")
    check(len(offline_waits(events)) == 1, f"{events}")


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} BINARY DNS_SERVER {'|'.join(CASES)}")
    why = namespaces_unavailable(f"sbre-probe-{ID}")
    if why is not None:
        print(f"reachability_test: cannot run here: {why}")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as directory:
        try:
            CASES[sys.argv[3]](directory)
        finally:
            remove_namespaces()
    print(f"{sys.argv[3]}: ok")
