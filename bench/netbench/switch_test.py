"""The network-switch bench: a download that loses its network mid-transfer.

Two network namespaces joined by two links, as a phone's Wi-Fi and cellular:

  sbsw-c-ID  a1 10.81.1.1/24  <--veth-->  b1 10.81.1.2/24  sbsw-s-ID  (the server, 10.81.9.1
             a2 10.81.2.1/24  <--veth-->  b2 10.81.2.2/24              on its loopback)

nginx serves a file over TLS on 10.81.9.1 at a capped rate (limit_rate), so the download lasts;
the client's default route goes over a1. Mid-download the test takes that link down and puts
the default route over a2, as a phone walking out of Wi-Fi: packets of the connection under way
go nowhere. `stepback get` learns of it from the kernel (rtnetlink, tools/network_watch.cpp),
ends the exchange at once and goes on by Range over a2; without that (--network-type fixes the
network, so nothing is watched) it waits for the read timeout.

usage: switch_test.py STEPBACK_BINARY NGINX CASE [N]
  switch    one switch: byte-exact, one attempt, no timeout, the time lost printed
  offline   both links down, then up again: the download waits ("there is no network"),
            spending no retry, and goes on when the routes return
  bind      two networks up at once, the routes preferring the first: `--interface` sends the
            connections and the DNS queries over the second (the server sees that link's
            address), a missing device is refused at once, the other link going down leaves a
            bound download alone, the bound one going down and up makes it wait and go on,
            and without the flag the first
  bench N   N switches, then N with the watcher off (--network-type unmetered): the time
            lost per switch, median and worst, printed for docs/https.md
Root only (namespaces); exits 77 (skipped) where namespaces cannot be made.
"""

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "tools"))
from cli_support import check, ip, namespaces_unavailable, nginx_conf, trace_events  # noqa: E402

BINARY = sys.argv[1]
NGINX = sys.argv[2]
ID = f"{os.getpid() % 100000}"
CLI, SRV = f"sbsw-c-{ID}", f"sbsw-s-{ID}"
SERVER = "10.81.9.1"
PORT = 8443
SIZE = 4 * 1024 * 1024
RATE = 1024 * 1024  # Four seconds of transfer.
SWITCH_AFTER = 1.5  # Seconds into the download.
NAME = "ok-switch.test"  # tests/integration/dns_server.py answers "ok-..." names.
DNS_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                          "integration", "dns_server.py")


def up():
    down()
    ip("netns", "add", CLI)
    ip("netns", "add", SRV)
    for n in (CLI, SRV):
        ip("-n", n, "link", "set", "lo", "up")
    for i in (1, 2):
        ip("link", "add", f"a{i}-{ID}", "netns", CLI, "type", "veth", "peer", "name", f"b{i}-{ID}",
           "netns", SRV)
        ip("-n", CLI, "addr", "add", f"10.81.{i}.1/24", "dev", f"a{i}-{ID}")
        ip("-n", SRV, "addr", "add", f"10.81.{i}.2/24", "dev", f"b{i}-{ID}")
        ip("-n", CLI, "link", "set", f"a{i}-{ID}", "up")
        ip("-n", SRV, "link", "set", f"b{i}-{ID}", "up")
    ip("-n", SRV, "addr", "add", f"{SERVER}/32", "dev", "lo")
    ip("-n", CLI, "route", "add", "default", "via", "10.81.1.2")


def down():
    for n in (CLI, SRV):
        ip("netns", "del", n, check_rc=False)


def start_server(tmp):
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    big = random.Random(5).randbytes(SIZE)
    with open(os.path.join(www, "big.bin"), "wb") as f:
        f.write(big)
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=switch", "-addext",
                    f"subjectAltName=IP:{SERVER},DNS:{NAME}"],
                   check=True, capture_output=True)
    servers = f"""  server {{
    listen {SERVER}:{PORT} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    root {www};
    limit_rate {RATE};
  }}"""
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(nginx_conf(tmp, "$uri $status $body_bytes_sent $http_range $remote_addr", servers))
    proc = subprocess.Popen(["ip", "netns", "exec", SRV, NGINX, "-c", conf, "-p", tmp],
                            stderr=subprocess.DEVNULL)
    for _ in range(200):
        probe = subprocess.run(["ip", "netns", "exec", CLI, BINARY, "get", "--max-retries", "0",
                                "--cacert", cert, f"https://{SERVER}:{PORT}/probe"],
                               capture_output=True)
        if probe.returncode == 4:  # A 404: nginx answers.
            return proc, big, cert
        time.sleep(0.05)
    proc.kill()
    sys.exit("FAIL: nginx did not come up in the server namespace")


def download(tmp, cert, change, after, extra=()):
    """Runs a download in the client namespace, calls change() `after` s in; returns (exit
    code, trace events, the file, seconds from the change to the first response over the new
    path, whole run seconds)."""
    out = os.path.join(tmp, "big.out")
    for leftover in (out, out + ".part", out + ".part.state"):
        if os.path.exists(leftover):
            os.remove(leftover)
    args = ["ip", "netns", "exec", CLI, BINARY, "get", "--profile", "desktop", "--cacert", cert,
            f"https://{SERVER}:{PORT}/big.bin", "-o", out, "--trace", *extra]
    start = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    changed_at = time.monotonic() - start
    change()
    err = p.communicate(timeout=120)[1]
    total = time.monotonic() - start
    events = trace_events(err, args)
    body = None
    if os.path.exists(out):
        with open(out, "rb") as f:
            body = f.read()
    # Time lost, on the client's own clock (its t_ms starts with the process, later than this
    # script's clock under load): from the first sign of the switch (the exchange ended by
    # the change, or a failure of it) to the first response after it, over the new path.
    # Without the watcher the sign is the read timeout, so the change's moment (this
    # script's clock, mapped by the process start) begins the count instead.
    t_change = changed_at * 1000
    cut = [e for e in events if e["event"] == "error"]
    begin = min(cut[0]["t_ms"], t_change) if cut else t_change
    after = [e for e in events if e["event"] == "response" and cut and e["t_ms"] >= cut[0]["t_ms"]]
    lost = (after[0]["t_ms"] - begin) / 1000 if after else None
    return p.returncode, events, body, lost, total


def switch_link():
    # Wi-Fi gone: its link down (its routes go with it), the default over the other one.
    ip("-n", CLI, "link", "set", f"a1-{ID}", "down")
    ip("-n", CLI, "route", "replace", "default", "via", "10.81.2.2")


def restore():
    ip("-n", CLI, "link", "set", f"a1-{ID}", "up")
    ip("-n", CLI, "route", "replace", "default", "via", "10.81.1.2")


def case_switch(tmp, cert, big):
    code, events, body, lost, total = download(tmp, cert, switch_link, SWITCH_AFTER)
    check(code == 0, f"exit {code}: {events[-3:]}")
    check(body == big, "the file differs from the object")
    done = [e for e in events if e["event"] == "done"]
    check(done and done[-1]["attempts"] == 1, f"the switch counted as a retry: {done}")
    errors = [e for e in events if e["event"] == "error"]
    check(any("network changed" in e.get("message", "") for e in errors),
          f"the switch was not seen: {errors}")
    check(not any(e.get("kind") == "timeout" for e in errors),
          f"the read timeout ended an attempt: {errors}")
    resumes = [e for e in events if e["event"] == "resume"]
    check(resumes and resumes[-1]["offset"] > 0, f"no resume by Range: {resumes}")
    check(lost is not None, "no response over the new link")
    print(f"switch: {lost:.3f} s from the switch to the first response over the new link; "
          f"whole download {total:.2f} s ({SIZE // RATE} s at the capped rate)")


def case_offline(tmp, cert, big):
    def lose_all():
        # Both links down: no route leaves the device (a lift, a tunnel).
        for i in (1, 2):
            ip("-n", CLI, "link", "set", f"a{i}-{ID}", "down")
        time.sleep(1.0)
        for i in (1, 2):
            ip("-n", CLI, "link", "set", f"a{i}-{ID}", "up")
        ip("-n", CLI, "route", "replace", "default", "via", "10.81.1.2")
    code, events, body, _, _ = download(tmp, cert, lose_all, SWITCH_AFTER)
    check(code == 0, f"exit {code}: {events[-3:]}")
    check(body == big, "the file differs from the object")
    waits = [e for e in events if e["event"] == "wait"]
    check(any(w.get("reason") == "offline" and "no network" in w.get("message", "")
              for w in waits), f"no wait for a network: {waits}")
    done = [e for e in events if e["event"] == "done"]
    check(done and done[-1]["attempts"] == 1, f"waiting offline spent retries: {done}")


def case_bind(tmp, cert, big):
    # A second network beside the first, as a phone's cellular beside its Wi-Fi: the routes
    # prefer a1, a2 carries traffic only for sockets bound to it.
    ip("-n", CLI, "route", "add", "default", "via", "10.81.2.2", "metric", "200")
    port_file, log = os.path.join(tmp, "dns.port"), os.path.join(tmp, "dns.log")
    dns = subprocess.Popen(["ip", "netns", "exec", SRV, sys.executable, DNS_SERVER, "--listen",
                            SERVER, "--answer", SERVER, "--port-file", port_file, "--log-file",
                            log, "--lifetime", "60"])
    try:
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        else:
            sys.exit("FAIL: dns_server.py did not start in the server namespace")
        servers = f"{SERVER}:{int(open(port_file).read())}"
        access = os.path.join(tmp, "access.log")

        def get(*extra):
            for leftover in (log, access):
                open(leftover, "w").close()
            args = ["ip", "netns", "exec", CLI, BINARY, "get", "--cacert", cert, "--max-retries",
                    "0", "--dns-servers", servers, f"https://{NAME}:{PORT}/probe.txt", *extra]
            p = subprocess.run(args, capture_output=True, text=True, timeout=60)
            # nginx logs a request after its response has gone, so the client can be done
            # before the line is written (seen under stress-ng: an empty log); wait for it.
            for _ in range(200):
                if p.returncode != 0 or "/probe.txt" in open(access).read():
                    break
                time.sleep(0.025)
            return p, open(log).read(), open(access).read()

        with open(os.path.join(tmp, "www", "probe.txt"), "w") as f:
            f.write("bound\n")
        for device, source in ((None, "10.81.1.1"), (f"a2-{ID}", "10.81.2.1"),
                               (f"a1-{ID}", "10.81.1.1")):
            p, queries, served = get(*(("--interface", device) if device else ()))
            label = f"--interface {device}" if device else "no --interface"
            check(p.returncode == 0 and p.stdout == "bound\n",
                  f"{label}: exit {p.returncode}: {p.stderr}")
            asked = [line for line in queries.splitlines() if f"name={NAME}" in line]
            check(asked and all(line.endswith(f"from={source}") for line in asked),
                  f"{label}: the DNS queries did not all come from {source}: {queries}")
            check(served.strip().endswith(source),
                  f"{label}: nginx saw the request from another address: {served}")
            print(f"bind: {label}: connection and {len(asked)} DNS queries from {source}")
        p, _, _ = get("--interface", f"nosuch-{ID}")
        check(p.returncode == 2 and f"no such device 'nosuch-{ID}'" in p.stderr,
              f"a missing device: exit {p.returncode}: {p.stderr}")
        print("bind: a device that is not there is refused at once, naming it")
        # Bound to a2, the first link going away mid-download is not the transfer's network:
        # the watcher follows a2's routes only, and nothing is cut.
        code, events, body, _, _ = download(
            tmp, cert, lambda: ip("-n", CLI, "link", "set", f"a1-{ID}", "down"), SWITCH_AFTER,
            ("--interface", f"a2-{ID}"))
        check(code == 0 and body == big, f"bound download: exit {code}: {events[-3:]}")
        errors = [e for e in events if e["event"] == "error"]
        check(not errors, f"the other link going down touched the bound download: {errors}")
        done = [e for e in events if e["event"] == "done"]
        check(done and done[-1]["attempts"] == 1, f"bound download: {done}")
        print("bind: the other link going down mid-download left the bound download alone")
        # The bound device going away is the transfer's network lost: it waits, and goes on
        # when the device and its route are back (the first link is down all along).

        def bounce():
            ip("-n", CLI, "link", "set", f"a2-{ID}", "down")
            time.sleep(1.0)
            ip("-n", CLI, "link", "set", f"a2-{ID}", "up")
            ip("-n", CLI, "route", "replace", "default", "via", "10.81.2.2", "metric", "200")
        code, events, body, _, _ = download(tmp, cert, bounce, SWITCH_AFTER,
                                            ("--interface", f"a2-{ID}"))
        check(code == 0 and body == big, f"bound device bounced: exit {code}: {events[-3:]}")
        waits = [e for e in events if e["event"] == "wait" and e.get("reason") == "offline"]
        check(waits, f"no wait for the bound device: {events[-5:]}")
        done = [e for e in events if e["event"] == "done"]
        check(done and done[-1]["attempts"] == 1, f"bound device bounced: {done}")
        print("bind: the bound device going down and up again: waited, then went on")
    finally:
        dns.kill()
        dns.wait()
        ip("-n", CLI, "route", "del", "default", "via", "10.81.2.2", "metric", "200",
           check_rc=False)


def bench(tmp, cert, big, n):
    for label, extra in (("watched (rtnetlink)", ()),
                         ("not watched (--network-type unmetered)",
                          ("--network-type", "unmetered"))):
        lost = []
        for _ in range(n):
            restore()
            code, _, body, t, _ = download(tmp, cert, switch_link, SWITCH_AFTER, extra)
            check(code == 0 and body == big, f"{label}: exit {code}")
            lost.append(t)
        print(f"{label}: time from the switch to the first response over the new link: "
              f"median {statistics.median(lost):.3f} s, worst {max(lost):.3f} s ({n} runs)")


def main():
    why = namespaces_unavailable(f"sbsw-probe-{ID}")
    if why is not None:
        print(f"switch_test: cannot run here: {why}")
        sys.exit(77)
    case = sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # nginx's worker reads the file as its own user.
        try:
            up()
            server, big, cert = start_server(tmp)
            try:
                if case == "switch":
                    case_switch(tmp, cert, big)
                elif case == "offline":
                    case_offline(tmp, cert, big)
                elif case == "bind":
                    case_bind(tmp, cert, big)
                elif case == "bench":
                    bench(tmp, cert, big, int(sys.argv[4]))
                else:
                    sys.exit(f"switch_test: unknown case {case}")
            finally:
                server.kill()
                server.wait()
        finally:
            down()


if __name__ == "__main__":
    main()
