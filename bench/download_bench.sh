#!/usr/bin/env bash
# Bulk download CPU: `stepback get` against curl, one 100 MB file over TLS 1.3 from a loopback
# nginx to /dev/null, whole-process CPU (user + sys from wait4's rusage), PAIRS paired runs
# (order alternating within each pair), medians; for each of three server suite settings:
#   default  nginx offers TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256 and
#            TLS_AES_128_GCM_SHA256 and follows the client's preference, so each client gets
#            its own default choice;
#   aes128   only TLS_AES_128_GCM_SHA256;
#   chacha   only TLS_CHACHA20_POLY1305_SHA256.
# The suite each client negotiated comes from nginx's access log; the load average is printed
# before and after, since the CPU figures are only as quiet as the machine.
#
# nginx runs from bench/nginx_bench.conf (its Ciphersuites line replaced per setting) in a
# temp dir with a self-signed ECDSA P-256 certificate; stopped and removed on exit.
#
# Usage: bench/download_bench.sh --stepback PATH [--pairs N] [--mb N] [--modes "default aes128 chacha"]
#   --stepback PATH  the stepback CLI (a Release build: cmake --build build/bench --target stepback_cli)
# Needs: nginx, curl, openssl, python3.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

pairs=7
mb=100
modes="default aes128 chacha"
stepback=""
while (($#)); do
  case "$1" in
    --stepback) stepback="${2:?}"; shift ;;
    --pairs) pairs="${2:?}"; shift ;;
    --mb) mb="${2:?}"; shift ;;
    --modes) modes="${2:?}"; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "download_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[[ -x "$stepback" ]] || { echo "download_bench.sh: --stepback PATH to the stepback CLI is required" >&2; exit 2; }
tmp="$(mktemp -d "${TMPDIR:-/tmp}/stepback-download-bench.XXXXXX")"
nginx_pid=""
cleanup() { local s=$?; sb_stop_nginx; rm -rf "$tmp"; exit "$s"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$tmp/www" "$tmp/tmp"
chmod 755 "$tmp" "$tmp/www"
head -c $((mb * 1000 * 1000)) /dev/urandom >"$tmp/www/big"
chmod 644 "$tmp/www/big"
sb_self_signed_cert "$tmp"
cert="$tmp/cert.pem"

cat >"$tmp/measure.py" <<'PY'
"""Paired runs: for each of PAIRS pairs runs both commands (order alternating), after one
warm-up of each; prints "name cpu_ns user_ns sys_ns" per run from wait4's rusage."""
import os, subprocess, sys
pairs = int(sys.argv[1])
commands = [(name, cmd.split("\x1f")) for name, _, cmd in (a.partition("=") for a in sys.argv[2:])]
devnull = os.open(os.devnull, os.O_RDWR)
def run(name, cmd, record):
    proc = subprocess.Popen(cmd, stdin=devnull, stdout=devnull, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace"); proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{name} failed: {err.strip()}")
    if record:
        u, s = round(usage.ru_utime * 1e9), round(usage.ru_stime * 1e9)
        print(name, u + s, u, s, flush=True)
for name, cmd in commands:
    run(name, cmd, False)
for i in range(pairs):
    order = commands if i % 2 == 0 else list(reversed(commands))
    for name, cmd in order:
        run(name, cmd, True)
PY

summarize() {
  python3 - "$1" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
sb = [int(r[1]) for r in rows if r[0] == "stepback"]
cu = [int(r[1]) for r in rows if r[0] == "curl"]
sbu = [int(r[2]) for r in rows if r[0] == "stepback"]; sbs = [int(r[3]) for r in rows if r[0] == "stepback"]
cuu = [int(r[2]) for r in rows if r[0] == "curl"]; cus = [int(r[3]) for r in rows if r[0] == "curl"]
ratios = [a / b for a, b in zip(sb, cu)]
ms = lambda v: statistics.median(v) / 1e6
print(f"{ms(sb):.0f} ({ms(sbu):.0f} + {ms(sbs):.0f}) | {ms(cu):.0f} ({ms(cuu):.0f} + {ms(cus):.0f}) | "
      f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
PY
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| server suites | negotiated: stepback / curl | stepback CPU ms (user + sys) | curl CPU ms (user + sys) | stepback / curl, median of pairs (range) |"
echo "|---|---|---|---|---|"
for mode in $modes; do
  case "$mode" in
    default) suites="TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256" ;;
    aes128) suites="TLS_AES_128_GCM_SHA256" ;;
    chacha) suites="TLS_CHACHA20_POLY1305_SHA256" ;;
    *) echo "download_bench.sh: unknown mode $mode" >&2; exit 2 ;;
  esac
  port="$(sb_free_port)"
  : >"$tmp/access.log" 2>/dev/null || true
  sed -e "s|@DIR@|$tmp|g" -e "s|@PORT@|$port|g" \
      -e "s|ssl_conf_command Ciphersuites .*;|ssl_conf_command Ciphersuites $suites;|" \
      "$repo/bench/nginx_bench.conf" >"$tmp/nginx.conf"
  nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/error.log" </dev/null >"$tmp/nginx.out" 2>&1 &
  nginx_pid=$!
  url="https://127.0.0.1:$port/big"
  for _ in $(seq 50); do
    curl -s -o /dev/null --max-time 2 --cacert "$cert" -r 0-0 "$url" && break
    sleep 0.1
  done
  rm -f "$tmp/access.log"; kill -USR1 "$nginx_pid"; sleep 0.2
  # One checked download each: the whole file must arrive.
  "$stepback" get "$url" --cacert "$cert" -o "$tmp/got" 2>"$tmp/sb.err" || { cat "$tmp/sb.err" >&2; exit 1; }
  cmp -s "$tmp/got" "$tmp/www/big" || { echo "download_bench.sh: stepback did not deliver the file" >&2; exit 1; }
  rm -f "$tmp/got"
  curl -s -o /dev/null --cacert "$cert" -A curl "$url"
  sb_suite="$(grep -v '"curl' "$tmp/access.log" | tail -n 1 | cut -d' ' -f2)"
  curl_suite="$(grep '"curl' "$tmp/access.log" | tail -n 1 | cut -d' ' -f2)"
  python3 "$tmp/measure.py" "$pairs" \
    "stepback=$(sb_join_cmd "$stepback" get "$url" --cacert "$cert" -o /dev/null)" \
    "curl=$(sb_join_cmd curl -s --cacert "$cert" -A curl -o /dev/null "$url")" >"$tmp/$mode.runs"
  echo "| $mode ($suites) | $sb_suite / $curl_suite | $(summarize "$tmp/$mode.runs") |"
  sb_stop_nginx
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "clients: $("$stepback" --version 2>/dev/null | sed -n 1p); $(curl --version | sed -n 1p | cut -d' ' -f1-2,4-5)"
echo "command: bench/download_bench.sh --stepback $stepback --pairs $pairs --mb $mb --modes \"$modes\""
