#!/usr/bin/env bash
# One HTTPS GET on loopback, `stepback get` side by side with curl against the same nginx,
# printed as markdown tables with the commands that produced them:
#   (a) CPU (user + sys of the client process, from wait4's rusage) and wall time per GET,
#       medians of RUNS runs of each client, interleaved; the TLS parameters each client
#       negotiated, from nginx's access log;
#   (b) instructions per GET of each client process (valgrind callgrind, user space, the
#       whole process: loader, start-up, CA load, handshake, request), with where
#       stepback's go; `perf stat -e instructions` is used instead when the CPU exposes it;
#   (c) the peak TLS arena of one GET (`stepback get --trace`, done event);
#   (d) full versus resumed versus keep-alive GETs in one process (bench/https_bench.cpp:
#       TlsTransport over TcpTransport with the arena installed), CPU and wall per phase
#       and callgrind instructions;
# and the HTTPS targets, met or not. The static size of the CLI is bench/footprint_components.sh's.
#
# nginx runs from a config rendered from bench/nginx_bench.conf into a temp dir: 127.0.0.1,
# a free port, TLS 1.3 only, a self-signed ECDSA P-256 certificate for 127.0.0.1/localhost
# made by openssl at start, keep-alive, session tickets, a 1 KiB static file. It is stopped
# and the temp dir removed on exit.
#
# Builds: stepback_cli and https_bench (Release) in --build-dir when given, else in
# build/bench when it is configured, else in a Release build dir under the temp dir.
#
# Usage: bench/https_bench.sh [--build-dir DIR [--no-build]] [--runs N] [--no-callgrind]
#                             [--strict]
#   --build-dir DIR  a configured build dir with STEPBACK_BUILD_BENCH and tools on (Release)
#   --no-build       use DIR's stepback and https_bench as they are (the bench_https target)
#   --runs N         GETs per client for (a) (default 100, at most 1000)
#   --no-callgrind   skip the instruction counts
#   --strict         also exit 1 when a target is not met (default: report only)
# Environment: KEEP_TMP=1 keeps the temp dir (nginx is still stopped).
# Needs: nginx, curl, openssl, python3, cmake, ninja; valgrind for instructions.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

readonly TARGET_CPU_RATIO=0.6       # stepback CPU / curl CPU per full-handshake GET.
readonly TARGET_WALL_RATIO=1.2      # stepback wall / stepback CPU per GET.
readonly TARGET_ARENA=$((40 * 1024))  # Peak TLS arena bytes for one GET.
readonly TARGET_RESUME_RATIO=0.25   # Resumed-session retry CPU / full handshake CPU.
readonly FILE_BYTES=1024
readonly DRIVER_ROUNDS=200          # Rounds of bench/https_bench.cpp (3 GETs each).
readonly CALLGRIND_RUNS=3           # Callgrind runs per client (median).
readonly CG_K1=2                    # Driver rounds of the two callgrind runs; the
readonly CG_K2=6                    # difference cancels set-up and first-use costs.

runs=100
build_dir=""
no_build=0
callgrind=1
strict=0
while (($#)); do
  case "$1" in
    --build-dir) build_dir="${2:?--build-dir needs a directory}"; shift ;;
    --runs) runs="${2:?--runs needs a number}"; shift ;;
    --no-build) no_build=1 ;;
    --no-callgrind) callgrind=0 ;;
    --strict) strict=1 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "https_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if ! [[ "$runs" =~ ^[0-9]+$ ]] || ((runs < 5 || runs > 1000)); then
  echo "https_bench.sh: --runs must be 5..1000" >&2
  exit 2
fi

for tool in nginx curl openssl python3 cmake ninja; do
  command -v "$tool" >/dev/null || { echo "https_bench.sh: '$tool' not found (scripts/setup.sh)" >&2; exit 1; }
done
if ((callgrind)) && ! command -v valgrind >/dev/null; then
  echo "https_bench.sh: valgrind not found; skipping instruction counts" >&2
  callgrind=0
fi
nginx_bin="$(command -v nginx)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/stepback-https-bench.XXXXXX")"
nginx_pid=""
# Stops nginx (TERM, then KILL after 5 s) and removes the temp dir.
cleanup() {
  local status=$?
  sb_stop_nginx
  if [[ "${KEEP_TMP:-0}" == 1 ]]; then
    echo "https_bench.sh: keeping $tmp" >&2
  else
    rm -rf "$tmp"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "https_bench.sh: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------- builds
# Build logs go to the temp dir and are shown only when a build fails.
run_logged() {
  local log="$1"; shift
  "$@" >"$log" 2>&1 || { cat "$log" >&2; die "failed: $*"; }
}

if [[ -z "$build_dir" && -f "$repo/build/bench/CMakeCache.txt" ]] &&
   grep -q '^STEPBACK_BUILD_BENCH:BOOL=ON' "$repo/build/bench/CMakeCache.txt"; then
  build_dir="$repo/build/bench"
fi
if [[ -z "$build_dir" ]]; then
  build_dir="$tmp/build"
  run_logged "$tmp/configure.log" cmake -S "$repo" -B "$build_dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DSTEPBACK_BUILD_BENCH=ON -DSTEPBACK_BUILD_TESTS=OFF \
    -DSTEPBACK_BUILD_EXAMPLES=OFF -DSTEPBACK_BUILD_TOOLS=ON
fi
if ((!no_build)); then
  echo "https_bench.sh: building stepback and https_bench in $build_dir" >&2
  run_logged "$tmp/build.log" cmake --build "$build_dir" --target stepback_cli https_bench
fi
build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build_dir/CMakeCache.txt")"
stepback="$build_dir/tools/stepback"
driver="$build_dir/bench/https_bench"
[[ -x "$stepback" && -x "$driver" ]] || die "no $stepback or $driver after the build"

# ---------------------------------------------------------------------------- nginx
echo "https_bench.sh: starting nginx" >&2
mkdir -p "$tmp/www" "$tmp/tmp"
# nginx started as root serves files as nobody: the tree must be readable to others.
chmod 755 "$tmp" "$tmp/www"
head -c "$FILE_BYTES" /dev/urandom >"$tmp/www/file"
chmod 644 "$tmp/www/file"
sb_self_signed_cert "$tmp" || die "openssl could not make the certificate"
cert="$tmp/cert.pem"

# A free loopback port (the kernel's choice); nginx may lose it to a race, so start is retried.
port=""
for attempt in 1 2 3; do
  candidate="$(sb_free_port)"
  sed -e "s|@DIR@|$tmp|g" -e "s|@PORT@|$candidate|g" "$repo/bench/nginx_bench.conf" >"$tmp/nginx.conf"
  "$nginx_bin" -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/error.log" </dev/null >"$tmp/nginx.out" 2>&1 &
  nginx_pid=$!
  for _ in $(seq 50); do
    if curl -s -o /dev/null --max-time 2 --cacert "$cert" "https://127.0.0.1:$candidate/file"; then
      port="$candidate"
      break
    fi
    kill -0 "$nginx_pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n "$port" ]] && break
  kill -TERM "$nginx_pid" 2>/dev/null || true
  wait "$nginx_pid" 2>/dev/null || true
  nginx_pid=""
  echo "https_bench.sh: nginx did not start on port $candidate (attempt $attempt)" >&2
done
[[ -n "$port" ]] || { cat "$tmp/nginx.out" "$tmp/error.log" >&2 2>/dev/null; die "nginx did not start"; }
url="https://127.0.0.1:$port/file"
# The one worker, whose CPU time (/proc/PID/schedstat) is the server's side of each GET.
worker_pid="$(pgrep -P "$nginx_pid" | sed -n 1p)" || true
[[ -n "$worker_pid" && -r "/proc/$worker_pid/schedstat" ]] || die "cannot find nginx's worker process"

sb_cmd=("$stepback" get "$url" --cacert "$cert" -o /dev/null)
curl_cmd=(curl -s --cacert "$cert" -o /dev/null "$url")

# One traced GET: it must succeed, deliver the file, and report the arena.
"$stepback" get "$url" --cacert "$cert" -o "$tmp/got" --trace 2>"$tmp/trace.jsonl" ||
  { cat "$tmp/trace.jsonl" >&2; die "stepback get failed"; }
cmp -s "$tmp/got" "$tmp/www/file" || die "stepback get did not deliver the file"
done_event="$(grep '"event":"done"' "$tmp/trace.jsonl")" || die "no done event in the trace"
json_field() { python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1])[sys.argv[2]]))' "$done_event" "$1"; }
arena_peak="$(json_field arena_peak)"
arena_footprint="$(json_field arena_peak_footprint)"
trace_resumed="$(json_field resumed)"
trace_connections="$(json_field connections)"

# ---------------------------------------------------------------------------- (a) CPU, wall
echo "https_bench.sh: timing $runs GETs per client" >&2
cat >"$tmp/measure.py" <<'PY'
"""Runs named commands alternately, RUNS times each after 5 warm-up runs; prints one line
"name cpu_ns wall_ns user_ns sys_ns server_ns" per run: the child's rusage from wait4, the
wall time from fork to reap, and the CPU time the server process (pid SERVER) ran meanwhile,
from /proc/SERVER/schedstat. Exits 1 when a command fails."""
import os, subprocess, sys, time

runs, server, warmup = int(sys.argv[1]), int(sys.argv[2]), 5
commands = [(name, cmd.split("\x1f")) for name, _, cmd in (a.partition("=") for a in sys.argv[3:])]

def server_ns():
    with open(f"/proc/{server}/schedstat") as f:
        return int(f.read().split()[0])

devnull = os.open(os.devnull, os.O_RDWR)
for i in range(warmup + runs):
    for name, cmd in commands:
        server_before = server_ns()
        start = time.perf_counter_ns()
        proc = subprocess.Popen(cmd, stdin=devnull, stdout=devnull, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter_ns() - start
        server_cpu = server_ns() - server_before
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if code != 0:
            sys.exit(f"{name} exited {code}: {err.strip()}")
        if i >= warmup:
            user, system = round(usage.ru_utime * 1e9), round(usage.ru_stime * 1e9)
            print(name, user + system, wall, user, system, server_cpu)
PY
: >"$tmp/access.log"  # The negotiated parameters of the timed runs only.
python3 "$tmp/measure.py" "$runs" "$worker_pid" "stepback=$(sb_join_cmd "${sb_cmd[@]}")" \
  "curl=$(sb_join_cmd "${curl_cmd[@]}")" >"$tmp/process.txt" || die "timing runs failed"

# Median of column $2 for rows whose first field is $1, in file $3 (values in ns -> ms).
median_ms() {
  awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$3" | sort -n | awk '{ v[n++] = $1 }
    END { if (!n) exit 1; m = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
          printf "%.3f", m / 1e6 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
missed=0
# Prints a table row "| target | measured | verdict |", verdict from value $3 <= limit $4.
target_row() {
  local v="met"
  if ! le "$3" "$4"; then v="**NOT met**"; missed=1; fi
  echo "| $1 | $2 | $v |"
}

declare -A pcpu pwall puser psys pserver pidle
for c in stepback curl; do
  pcpu[$c]="$(median_ms "$c" 2 "$tmp/process.txt")"
  pwall[$c]="$(median_ms "$c" 3 "$tmp/process.txt")"
  puser[$c]="$(median_ms "$c" 4 "$tmp/process.txt")"
  psys[$c]="$(median_ms "$c" 5 "$tmp/process.txt")"
  pserver[$c]="$(median_ms "$c" 6 "$tmp/process.txt")"
  # Median of wall - CPU - server per run: when neither side ran.
  awk -v k="$c" '$1 == k { print k, $3 - $2 - $6 }' "$tmp/process.txt" >"$tmp/idle.$c"
  pidle[$c]="$(median_ms "$c" 2 "$tmp/idle.$c")"
done

# What each client negotiated, from nginx's log: "protocol cipher group reused" -> count.
negotiated() {
  grep -F "\"$1" "$tmp/access.log" | awk '{ print $1, $2, $3, ($4 == "r") ? "resumed" : "full" }' |
    sort | uniq -c | awk '{ printf "%s%s %s, %s, %s handshake (%d GETs)", sep, $2, $3, $4, $5, $1; sep = "; " }'
}
neg_stepback="$(negotiated stepback/)"
neg_curl="$(negotiated curl/)"

# ---------------------------------------------------------------------------- (b) instructions
perf_ok=0
if command -v perf >/dev/null && perf stat -x, -e instructions:u true 2>&1 >/dev/null | grep -q '^[0-9]'; then
  perf_ok=1
fi
declare -A instr
instr_method="not measured (--no-callgrind)"
# Total user-space instructions of one run of the command, by perf or callgrind.
count_instructions() {
  local out="$1"; shift
  if ((perf_ok)); then
    perf stat -x, -e instructions:u -o "$out" "$@" >/dev/null 2>&1 || return 1
    awk -F, '$3 ~ /instructions/ { print $1 }' "$out"
  else
    valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$out.log" || return 1
    awk '/^totals:/ { print $2 }' "$out"
  fi
}
median_of() { printf '%s\n' "$@" | sort -n | awk '{ v[n++] = $1 } END { print v[int((n - 1) / 2)] }'; }
# Inclusive Ir per function of a callgrind profile, as "Ir<TAB>name" (names without the file,
# the binary or the arguments).
inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    sed -n 's/^ *\([0-9,][0-9,]*\) ([^)]*) *\(.*\)$/\1\t\2/p' | tr -d , |
    sed 's/\t[^:]*:/\t/; s/ \[[^]]*\]$//; s/(.*$//'
}
# The Ir of function $2 in inclusive() listing $1 (0 when absent).
ir_of() { awk -F'\t' -v f="$2" '$2 == f { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"; }
if ((callgrind || perf_ok)); then
  echo "https_bench.sh: counting instructions" >&2
  if ((perf_ok)); then
    instr_method="perf stat -e instructions:u, median of $CALLGRIND_RUNS runs"
  else
    instr_method="valgrind --tool=callgrind (perf stat -e instructions: not supported on this CPU), median of $CALLGRIND_RUNS runs"
  fi
  for c in stepback curl; do
    counts=()
    for i in $(seq "$CALLGRIND_RUNS"); do
      if [[ "$c" == stepback ]]; then cmd=("${sb_cmd[@]}"); else cmd=("${curl_cmd[@]}"); fi
      n="$(count_instructions "$tmp/instr.$c.$i" "${cmd[@]}")" || die "instruction count of $c failed"
      counts+=("$n")
    done
    instr[$c]="$(median_of "${counts[@]}")"
  done
fi

# ---------------------------------------------------------------------------- (d) driver
echo "https_bench.sh: $DRIVER_ROUNDS rounds of full, keep-alive and resumed GETs in one process" >&2
driver_cmd=("$driver" 127.0.0.1 "$port" "$cert" /file)
"${driver_cmd[@]}" "$DRIVER_ROUNDS" "$worker_pid" >"$tmp/driver.txt" 2>"$tmp/driver.err" ||
  { cat "$tmp/driver.err" >&2; die "https_bench failed"; }
awk '$1 == "sample" { print $2, $3, $4, $5, $4 - $3 - $5 }' "$tmp/driver.txt" >"$tmp/driver.samples"
kinds=(full_handshake full_get keepalive_get resumed_handshake resumed_get)
declare -A dcpu dwall dserver didle dinstr
for k in "${kinds[@]}"; do
  dcpu[$k]="$(median_ms "$k" 2 "$tmp/driver.samples")"
  dwall[$k]="$(median_ms "$k" 3 "$tmp/driver.samples")"
  dserver[$k]="$(median_ms "$k" 4 "$tmp/driver.samples")"
  didle[$k]="$(median_ms "$k" 5 "$tmp/driver.samples")"
done
arena_max() { awk -v k="$1" -v c="$2" '$1 == "arena" && $2 == k && $c > m { m = $c } END { print m + 0 }' "$tmp/driver.txt"; }
darena_full="$(arena_max full 3)"; darena_full_fp="$(arena_max full 4)"
darena_res="$(arena_max resumed 3)"; darena_res_fp="$(arena_max resumed 4)"

declare -A cg_fn=([full_handshake]=sb_open_full [full_get]=sb_get_full
  [keepalive_get]=sb_get_keepalive [resumed_handshake]=sb_open_resumed [resumed_get]=sb_get_resumed)
if ((callgrind)); then
  for k in "$CG_K1" "$CG_K2"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/driver.cg.$k" "${driver_cmd[@]}" "$k" \
      >/dev/null 2>"$tmp/driver.cg.$k.log" || { cat "$tmp/driver.cg.$k.log" >&2; die "https_bench under callgrind failed"; }
    inclusive "$tmp/driver.cg.$k" >"$tmp/driver.incl.$k"
  done
  for k in "${kinds[@]}"; do
    dinstr[$k]="$(awk -v f="${cg_fn[$k]}" -v k1="$CG_K1" -v k2="$CG_K2" '
      BEGIN { FS = "\t" } $2 == f { v[FILENAME] = $1 }
      END { a = v[ARGV[1]]; b = v[ARGV[2]]; printf "%.0f", (b - a) / (k2 - k1) }' \
      "$tmp/driver.incl.$CG_K1" "$tmp/driver.incl.$CG_K2")"
  done
fi

# ---------------------------------------------------------------------------- report
mib() { awk -v b="$1" 'BEGIN { printf "%.1f KiB", b / 1024 }'; }
millions() { awk -v n="$1" 'BEGIN { printf "%.2f M", n / 1e6 }'; }
show_cmd() { local s; s="$(printf '%q ' "$@")"; s="${s% }"; echo "${s//$tmp/\$TMP}"; }

echo "## One HTTPS GET on loopback: stepback vs curl"
echo
echo "- Host: $(uname -m), $(nproc) CPUs, $(uname -sr); build: $build_type ($build_dir)."
echo "- Server: nginx $("$nginx_bin" -v 2>&1 | sed 's|.*/||'), one worker, 127.0.0.1:$port, TLS 1.3 only, self-signed ECDSA P-256 certificate, keep-alive, session tickets; \`GET /file\` ($FILE_BYTES bytes)."
echo "- Clients: $("$stepback" --version | sed -n 1p) (mbedTLS 3.6.6, linked statically); $(curl --version | sed -n 1p | cut -d' ' -f1-2,4-5)."
echo "- \$TMP is the run's temp dir; both clients trust only \$TMP/cert.pem and make one full handshake per process."
echo
echo "### Per GET (one process each), medians of $runs runs, interleaved"
echo
echo "CPU = user + sys of the client process from \`wait4()\`'s rusage (python3 \`os.wait4\`; the"
echo "kernel's exact per-task runtime), wall = fork to reap (\`time.perf_counter_ns\`), server ="
echo "CPU time of nginx's worker meanwhile (\`/proc/PID/schedstat\`), idle = median of"
echo "wall - CPU - server per run: time neither process ran (fork/exec in the parent, wake-ups)."
echo
echo "| client | command | CPU ms | user ms | sys ms | wall ms | wall / CPU | server ms | idle ms | instructions |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in stepback curl; do
  if [[ "$c" == stepback ]]; then cmd=("${sb_cmd[@]}"); else cmd=("${curl_cmd[@]}"); fi
  echo "| $c | \`$(show_cmd "${cmd[@]}")\` | ${pcpu[$c]} | ${puser[$c]} | ${psys[$c]} | ${pwall[$c]} | $(ratio "${pwall[$c]}" "${pcpu[$c]}") | ${pserver[$c]} | ${pidle[$c]} | ${instr[$c]:+$(millions "${instr[$c]}")} |"
done
cpu_ratio="$(ratio "${pcpu[stepback]}" "${pcpu[curl]}")"
echo "| **stepback / curl** | | **$cpu_ratio** | | | **$(ratio "${pwall[stepback]}" "${pwall[curl]}")** | | | | ${instr[stepback]:+**$(ratio "${instr[stepback]}" "${instr[curl]}")**} |"
echo
echo "Instructions: $instr_method; user space only, whole process (dynamic loader, start-up, CA load, handshake, request, exit)."
echo
echo "Negotiated (nginx access log of the timed runs):"
echo
echo "- stepback: ${neg_stepback:-none logged}"
echo "- curl: ${neg_curl:-none logged}"

if ((callgrind)) && ((!perf_ok)); then
  echo
  echo "### Where stepback's instructions go (one \`stepback get\`, callgrind, inclusive)"
  echo
  echo "| function | what | instructions | share |"
  echo "|---|---|---:|---:|"
  inclusive "$tmp/instr.stepback.1" >"$tmp/sb.incl"
  total_sb="$(awk '/^totals:/ { print $2 }' "$tmp/instr.stepback.1")"
  while IFS='|' read -r fn what; do
    v="$(ir_of "$tmp/sb.incl" "$fn")"
    ((v > 0)) && echo "| \`$fn\` | $what | $(millions "$v") | $(ratio "$((v * 100))" "$total_sb")% |"
  done <<'ROWS'
_dl_start|dynamic loader (libc, libstdc++, libm)
main|everything after the loader
stepback::https::TlsClientConfig::init|PSA init, DRBG seeding
stepback::https::TlsClientConfig::add_ca_file|parse --cacert
mbedtls_ssl_handshake|the whole TLS handshake
mbedtls_ecdsa_verify_restartable|server's CertificateVerify signature (ECDSA P-256)
psa_export_public_key|ECDHE key share, P-256 offered first (public key computed on export)
psa_raw_key_agreement|ECDHE shared secret
mbedtls_ssl_tls13_process_certificate|parse and check the server certificate
mbedtls_ssl_write|send the request
mbedtls_ssl_read|receive the response (and the session tickets)
ROWS
  echo "| total | | $(millions "$total_sb") | 100% |"
  echo
  echo "(A row is missing when callgrind saw no such function, e.g. after inlining.)"
fi
echo
echo "### Peak TLS arena, one GET"
echo
echo "\`$(show_cmd "$stepback" get "$url" --cacert "$cert" -o /dev/null --trace)\`, done event"
echo "(connections: $trace_connections, resumed: $trace_resumed):"
echo
echo "| figure | bytes |"
echo "|---|---:|"
echo "| \`arena_peak\` (bytes handed out) | $arena_peak ($(mib "$arena_peak")) |"
echo "| \`arena_peak_footprint\` (with block headers) | $arena_footprint ($(mib "$arena_footprint")) |"

echo
echo "### Full vs resumed vs keep-alive, in one process"
echo
echo "\`$(show_cmd "${driver_cmd[@]}" "$DRIVER_ROUNDS")\` (bench/https_bench.cpp): TlsTransport over"
echo "TcpTransport, arena installed, CA loaded once. Each round: a GET with a full handshake, a"
echo "second GET on that keep-alive connection, then a GET on a new connection that resumes the"
echo "session (TLS 1.3 ticket, psk_dhe_ke). \"handshake\" = TCP connect + TLS handshake; \"GET\" ="
echo "that + request + 1 KiB response. CPU = \`CLOCK_PROCESS_CPUTIME_ID\`, server and idle as above,"
echo "medians of $DRIVER_ROUNDS;"
echo "instructions = callgrind inclusive, (Ir($CG_K2 rounds) - Ir($CG_K1 rounds)) / $((CG_K2 - CG_K1))."
echo
echo "| phase | CPU ms | wall ms | wall / CPU | server ms | idle ms | instructions | CPU vs full handshake |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for k in "${kinds[@]}"; do
  echo "| $k | ${dcpu[$k]} | ${dwall[$k]} | $(ratio "${dwall[$k]}" "${dcpu[$k]}") | ${dserver[$k]} | ${didle[$k]} | ${dinstr[$k]:+$(millions "${dinstr[$k]}")} | $(ratio "${dcpu[$k]}" "${dcpu[full_handshake]}") |"
done
echo
echo "Arena peak per connection (max over rounds, config's CA and PSA state included): full $darena_full"
echo "bytes ($darena_full_fp with headers), resumed $darena_res bytes ($darena_res_fp with headers)."
if ((callgrind)); then
  echo
  echo "Where a round's instructions go (one full + one resumed handshake + three GETs, callgrind"
  echo "inclusive, per round):"
  echo
  echo "| function | what | instructions per round |"
  echo "|---|---|---:|"
  while IFS='|' read -r fn what; do
    a="$(ir_of "$tmp/driver.incl.$CG_K1" "$fn")"; b="$(ir_of "$tmp/driver.incl.$CG_K2" "$fn")"
    echo "| \`$fn\` | $what | $(millions "$(( (b - a) / (CG_K2 - CG_K1) ))") |"
  done <<'ROWS'
mbedtls_ssl_handshake|both handshakes
mbedtls_ecdsa_verify_restartable|CertificateVerify, full handshake only (ECDSA P-256)
psa_export_public_key|ECDHE key shares, both handshakes (2 per round)
psa_raw_key_agreement|ECDHE shared secrets, both handshakes (2 per round)
sb_exchange|the three request/response exchanges
ROWS
fi

echo
echo "### Targets"
echo
echo "| target | measured | verdict |"
echo "|---|---|---|"
target_row "CPU per full-handshake GET <= $TARGET_CPU_RATIO x curl's" \
  "${pcpu[stepback]} / ${pcpu[curl]} ms = $cpu_ratio x" "$cpu_ratio" "$TARGET_CPU_RATIO"
wall_ratio="$(ratio "${pwall[stepback]}" "${pcpu[stepback]}")"
target_row "wall <= $TARGET_WALL_RATIO x CPU (stepback get process)" \
  "${pwall[stepback]} / ${pcpu[stepback]} ms = $wall_ratio x" "$wall_ratio" "$TARGET_WALL_RATIO"
busy_stepback="$(awk -v a="${pcpu[stepback]}" -v b="${pserver[stepback]}" 'BEGIN { printf "%.3f", a + b }')"
echo "| (diagnosis: wall vs client + server CPU, stepback get process) | ${pwall[stepback]} / (${pcpu[stepback]} + ${pserver[stepback]}) ms = $(ratio "${pwall[stepback]}" "$busy_stepback") x; idle ${pidle[stepback]} ms | |"
dwall_ratio="$(ratio "${dwall[full_get]}" "${dcpu[full_get]}")"
target_row "wall <= $TARGET_WALL_RATIO x CPU (full GET inside one process)" \
  "${dwall[full_get]} / ${dcpu[full_get]} ms = $dwall_ratio x" "$dwall_ratio" "$TARGET_WALL_RATIO"
dbusy="$(awk -v a="${dcpu[full_get]}" -v b="${dserver[full_get]}" 'BEGIN { printf "%.3f", a + b }')"
echo "| (diagnosis: wall vs client + server CPU, full GET in one process) | ${dwall[full_get]} / (${dcpu[full_get]} + ${dserver[full_get]}) ms = $(ratio "${dwall[full_get]}" "$dbusy") x; idle ${didle[full_get]} ms | |"
target_row "peak arena <= $TARGET_ARENA bytes (40 KiB)" \
  "arena_peak_footprint $arena_footprint ($(mib "$arena_footprint"))" "$arena_footprint" "$TARGET_ARENA"
resume_ratio="$(ratio "${dcpu[resumed_get]}" "${dcpu[full_handshake]}")"
target_row "retry over a resumed session <= $TARGET_RESUME_RATIO x a full handshake's CPU" \
  "resumed GET ${dcpu[resumed_get]} / full handshake ${dcpu[full_handshake]} ms = $resume_ratio x" \
  "$resume_ratio" "$TARGET_RESUME_RATIO"
if [[ -n "${dinstr[resumed_get]:-}" ]]; then
  iratio="$(ratio "${dinstr[resumed_get]}" "${dinstr[full_handshake]}")"
  target_row "same, in instructions" \
    "$(millions "${dinstr[resumed_get]}") / $(millions "${dinstr[full_handshake]}") = $iratio x" \
    "$iratio" "$TARGET_RESUME_RATIO"
fi
kratio="$(ratio "${dcpu[keepalive_get]}" "${dcpu[full_handshake]}")"
echo "| (for reference: a retry over the kept-alive connection) | ${dcpu[keepalive_get]} / ${dcpu[full_handshake]} ms = $kratio x | |"
echo
echo "Diagnosis rows: on loopback the server's handshake work (nginx: ECDSA signature, ECDHE)"
echo "lies on the client's critical path, so wall = client CPU + server CPU + idle; idle near 0"
echo "means no stall (no Nagle/delayed-ACK wait, poll timeout or sleep)."

if ((strict && missed)); then
  echo "https_bench.sh: a target is not met" >&2
  exit 1
fi
