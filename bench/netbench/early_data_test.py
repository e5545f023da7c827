#!/usr/bin/env python3
"""Round trips saved by TLS 1.3 early data, over the latency bench at 150 ms RTT.

Runs bench/latency_bench.sh twice, --scenario retry (a retry on a new, resumed connection) and
--scenario restart (a new process's first request with the session an earlier process kept,
`--tls-session`), and reads its tables. What is asserted is what the network makes
deterministic, as roundtrips_test.py does: each client's median request time in whole round
trips, round(ms / RTT), never a wall-clock tolerance (at 150 ms a count moves only when
something costs 75 ms more than the protocol needs):
  retry:   stepback with early data 2 (TCP + request), with --no-early-data 3, curl 3;
  restart: stepback --tls-session 2, with --no-early-data 3, without --tls-session 3, curl 3;
and that every early run's request was accepted early (stepback's --trace), and nginx logged
those requests as early ($ssl_early_data "1") on a resumed session.

usage: early_data_test.py STEPBACK_CLI   (root; exits 77 where the bench cannot run)
"""

import os
import re
import subprocess
import sys

RTT = 150
RUNS = 3
BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "latency_bench.sh")


def fail(message):
    sys.exit(f"FAIL: {message}")


def run_scenario(cli, scenario):
    p = subprocess.run(["bash", BENCH, "--stepback", cli, "--scenario", scenario, "--rtts",
                        str(RTT), "--losses", "0", "--runs", str(RUNS), "--profiles", "mobile",
                        "--timeout", "30"],
                       capture_output=True, text=True, timeout=600, env=dict(os.environ))
    if p.returncode == 77:
        print(p.stdout + p.stderr)
        sys.exit(77)
    if p.returncode != 0:
        fail(f"latency_bench.sh --scenario {scenario} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    print(p.stdout)
    rows = {}
    for line in p.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0] == f"{RTT} ms":
            rows[cells[2]] = cells
    return rows, p.stdout


def round_trips(rows, client, text):
    if client not in rows:
        fail(f"no row for '{client}':\n{text}")
    m = re.match(r"(\d+) ms$", rows[client][3])
    if not m:
        fail(f"'{client}': not every run counted ({rows[client][3]}):\n{text}")
    return round(int(m.group(1)) / RTT)


def check_scenario(cli, scenario, expected, early_clients, log_early):
    rows, text = run_scenario(cli, scenario)
    for client, want in expected.items():
        got = round_trips(rows, client, text)
        if got != want:
            fail(f"{scenario}: '{client}' took {got} round trips, want {want}:\n{text}")
    for client in early_clients:
        if rows[client][7] != f"{RUNS}/{RUNS} accepted":
            fail(f"{scenario}: '{client}' early data: {rows[client][7]}, want all accepted")
    want_log = f"{RUNS} {log_early} early=1 reused=r TLSv1.3 status=200"
    if not any(line.strip() == want_log for line in text.splitlines()):
        fail(f"{scenario}: nginx did not log '{want_log}':\n{text}")


def main():
    cli = sys.argv[1]
    check_scenario(cli, "retry",
                   {"curl": 3, "stepback mobile": 2, "stepback mobile --no-early-data": 3},
                   ["stepback mobile"], "stepback-mobile")
    check_scenario(cli, "restart",
                   {"curl": 3, "stepback mobile --tls-session": 2,
                    "stepback mobile --tls-session --no-early-data": 3,
                    "stepback mobile (no --tls-session)": 3},
                   ["stepback mobile --tls-session"], "stepback-mobile")
    print("early_data_test: ok")


if __name__ == "__main__":
    main()
