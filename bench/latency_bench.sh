#!/usr/bin/env bash
# Time to completion of one HTTPS GET over the latency test bench (bench/netbench/netbench.sh:
# two network namespaces, delay by NFQUEUE, loss by iptables statistic), `stepback get`
# (desktop and mobile profiles) side by side with curl, printed as a markdown table. Run by
# hand, not in CI.
#
# For each RTT (default 50, 150, 300 ms) and loss (default 0 and 2 %, each direction), the
# bench is brought up and nginx started in the server namespace (10.77.0.2:8443, or
# [fd77::2] with --ipv6; TLS 1.2 and 1.3, one TLS 1.3 suite for every client as in
# bench/https_bench.sh, a P-256 certificate for both addresses signed by a throwaway CA made
# with openssl in the temp dir). From the client namespace every client fetches each body
# (/small: 1 KiB, /5m: 5 MiB) RUNS times, interleaved (curl, stepback desktop, stepback
# mobile, curl, ...), each a fresh process and a fresh connection; a run counts when it
# exits 0 within the time limit and wrote the whole body. Reported: the median wall time of
# the counted runs (and failures), the ratio to curl's median, and for /small the ideal
# time, 3 RTT (TCP connect + TLS 1.3 handshake + request/response); a second table has each
# client's own time for the request, without process start-up. Bodies go to a file in the
# temp dir, never /dev/null: `stepback get -o FILE` writes FILE.part and renames it over FILE.
#
# --scenario retry measures instead a retry on a new connection, where TLS 1.3 early data
# saves a round trip: nginx (TLS 1.3 only, tickets, ssl_early_data on) answers /retry (1 KiB)
# with 503 on a full handshake and 200 on a resumed session, closing after each answer, so
# every client's first attempt fails and its retry goes on a new, resumed connection. Clients:
# curl (--retry 1; it keeps the TLS session within its process), `stepback get` per profile
# with the backoff cut to 1 ms, and the same with --no-early-data. Reported per client: the
# retry alone, from the start of its connection to the response (curl's -w timings of the
# last transfer; stepback's --trace, the retry's "attempt" to its "response"), against the
# ideal, TCP + request (2 RTT) with early data, + the TLS 1.3 handshake (3 RTT) without; and
# from nginx's log, per client, how the retries came (early, resumed).
#
# --scenario restart measures a new process's first request to a server an earlier process
# talked to, as a download restarted after a kill or a reboot makes: nginx as for retry serves
# /restart (1 KiB). Clients: curl (a full handshake: it keeps no session between processes),
# `stepback get --tls-session FILE` per profile (the session an untimed first run saved; each
# run saves the next), the same with --no-early-data, and without --tls-session (a full
# handshake, as before sessions were kept on disk). Reported per client: the process's wall
# time and the request alone (curl's time_total; the t_ms of stepback's "done"), against the
# ideal: TCP + request (2 RTT) with early data, 3 RTT without.
#
# Usage (as root): bench/latency_bench.sh [--stepback PATH] [--runs N] [--rtts 50,150,300]
#                  [--losses 0,2] [--profiles desktop,mobile] [--bodies small,5m]
#                  [--timeout S] [--ipv6] [--scenario get|retry|restart]
#   --stepback PATH  the CLI to measure (default: $STEPBACK, else build/desktop/tools/stepback)
#   --runs N         runs per client, body and bench setting (default 5, 1..100)
#   --timeout S      limit of one run, in seconds (default 120)
#   --scenario S     get (default): the GET above; retry: the retry on a resumed connection
#                    (--bodies does not apply, the body is 1 KiB); restart: a new
#                    process's first request with the session an earlier one kept
# Environment: STEPBACK (as --stepback), KEEP_TMP=1 keeps the temp dir (logs, nginx's
# access log with what each connection negotiated), NETBENCH_ID (default "lat": the bench's
# namespaces are sbnb-cli-lat and sbnb-srv-lat, apart from a test's bench running meanwhile).
# Exit: 0 done, 77 the bench cannot run here (not root, no NFQUEUE, ...), 1 an error.
# Needs: root; what bench/netbench/netbench.sh needs (iproute2, iptables, gcc,
# libnetfilter-queue-dev); nginx, curl, openssl, awk. Everything is torn down at exit.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
self="$repo/bench/latency_bench.sh"
netbench="$repo/bench/netbench/netbench.sh"
export NETBENCH_ID="${NETBENCH_ID-lat}"
readonly PORT=8443
readonly SMALL_BYTES=1024 BIG_BYTES=$((5 * 1024 * 1024))

die() { echo "latency_bench: $*" >&2; exit 1; }

# body_bytes NAME: the size of a served body.
body_bytes() {
  case $1 in small | retry | restart) echo "$SMALL_BYTES" ;; 5m) echo "$BIG_BYTES" ;; *) return 1 ;; esac
}

# ------------------------------------------------------------------- inside the client namespace
# run_timed LABEL: runs the caller's "${cmd[@]}" within the time limit, its stdout to $so and
# stderr to $se (the caller's); sets ms (wall time), rc and bytes (the size of $out), and adds
# both outputs to clients.log under "== LABEL".
run_timed() {
  local t0 t1
  t0=$EPOCHREALTIME
  rc=0
  timeout "$LB_TIMEOUT" "${cmd[@]}" </dev/null >"$so" 2>"$se" || rc=$?
  t1=$EPOCHREALTIME
  ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
  bytes=$(stat -c %s "$out" 2>/dev/null || echo 0)
  { echo "== $1: ${cmd[*]} -> exit $rc, $ms ms"; cat "$so" "$se"; } >>"$LB_TMP/clients.log"
}

# __measure: run by the script itself in the client namespace (no `ip netns exec` cost in the
# timings). Settings come in the environment (LB_*). One line per run on stdout:
#   CLIENT BODY RUN WALL_MS EXIT_CODE BYTES_WRITTEN INNER_MS
# INNER_MS is the client's own measure of the request, without process start-up: curl's
# %{time_total}, the t_ms of stepback's --trace "done" event ("-" when missing).
measure() {
  local run body client ms rc out="$LB_TMP/out.bin" bytes inner
  local so="$LB_TMP/client.stdout" se="$LB_TMP/client.stderr"
  local clients=(curl)
  local p
  for p in ${LB_PROFILES//,/ }; do clients+=("stepback-$p"); done
  for ((run = 1; run <= LB_RUNS; run++)); do
    for body in ${LB_BODIES//,/ }; do
      for client in "${clients[@]}"; do
        rm -f "$out"
        local cmd
        if [ "$client" = curl ]; then
          cmd=(curl --cacert "$LB_CA" -sS -o "$out" -w '%{time_total}\n' "$LB_URL/$body")
        else
          cmd=("$LB_STEPBACK" get "$LB_URL/$body" --cacert "$LB_CA" --profile "${client#stepback-}"
               -o "$out" --trace)
        fi
        run_timed "$client $body run $run"
        if [ "$client" = curl ]; then
          inner=$(awk 'NR == 1 && $1 ~ /^[0-9.]+$/ { printf "%.1f", $1 * 1000 }' "$so")
        else
          inner=$(sed -n 's/.*"event":"done","t_ms":\([0-9]*\).*/\1/p' "$se")
        fi
        echo "$client $body $run $ms $rc $bytes ${inner:--}"
        sleep 0.2
      done
    done
  done
}

# __measure_retry: the retry scenario, as measure, one line per run:
#   CLIENT retry RUN WALL_MS EXIT_CODE BYTES_WRITTEN RETRY_MS EARLY
# RETRY_MS is the retry alone, from the start of its connection to the response: curl's
# %{time_total}, which covers the last transfer only (curl starts its timers again on each
# try); for stepback, the retry's "attempt" to its "response" in --trace. EARLY is what
# stepback's trace says of the retry's early data (accepted, rejected), "-" for none or curl.
# The client's name goes in the query, so that nginx's log tells the clients apart.
measure_retry() {
  local run client ms rc out="$LB_TMP/out.bin" bytes inner early
  local so="$LB_TMP/client.stdout" se="$LB_TMP/client.stderr"
  local clients=(curl) p cmd
  for p in ${LB_PROFILES//,/ }; do clients+=("stepback-$p" "stepback-$p-noearly"); done
  for ((run = 1; run <= LB_RUNS; run++)); do
    for client in "${clients[@]}"; do
      rm -f "$out"
      if [ "$client" = curl ]; then
        # curl 7.88 retries a 503 with --retry; --retry-delay 0 means its default first
        # wait (1 s), which is outside the retry's own time measured here.
        cmd=(curl --cacert "$LB_CA" -sS -o "$out" --retry 1 --retry-delay 0
             -w '%{time_total} %{time_connect} %{time_appconnect} %{http_code}\n'
             "$LB_URL/retry?c=$client")
      else
        p=${client#stepback-}
        cmd=("$LB_STEPBACK" get "$LB_URL/retry?c=$client" --cacert "$LB_CA"
             --profile "${p%-noearly}" --max-retries 1 --max-backoff 0.001 --jitter none
             -o "$out" --trace)
        [ "$p" = "${p%-noearly}" ] || cmd+=(--no-early-data)
      fi
      run_timed "$client retry run $run"
      early=-
      if [ "$client" = curl ]; then
        inner=$(awk '$1 ~ /^[0-9.]+$/ { t = $1 } END { if (t != "") printf "%.1f", t * 1000 }' "$so")
      else
        inner=$(awk -F'[:,}]' '
          /"event":"attempt"/ && /"n":2/ { for (i = 1; i < NF; i++) if ($i == "\"t_ms\"") a = $(i + 1) }
          /"event":"response"/ && /"n":2/ { for (i = 1; i < NF; i++) if ($i == "\"t_ms\"") r = $(i + 1) }
          END { if (a != "" && r != "") print r - a }' "$se")
        early=$(sed -n 's/.*"event":"response".*"n":2,.*"early_data":"\([a-z]*\)".*/\1/p' "$se")
      fi
      echo "$client retry $run $ms $rc $bytes ${inner:--} ${early:--}"
      sleep 0.2
    done
  done
}

# __measure_restart: the restart scenario, as measure, one line per run:
#   CLIENT restart RUN WALL_MS EXIT_CODE BYTES_WRITTEN INNER_MS EARLY
# INNER_MS as in measure; EARLY is what stepback's trace says of the request's early data.
measure_restart() {
  local run client ms rc out="$LB_TMP/out.bin" bytes inner early p session
  local so="$LB_TMP/client.stdout" se="$LB_TMP/client.stderr"
  local clients=(curl) cmd
  for p in ${LB_PROFILES//,/ }; do
    clients+=("stepback-$p" "stepback-$p-noearly" "stepback-$p-nosession")
  done
  for ((run = 0; run <= LB_RUNS; run++)); do # Run 0 saves the first sessions, untimed.
    for client in "${clients[@]}"; do
      rm -f "$out"
      if [ "$client" = curl ]; then
        ((run > 0)) || continue
        cmd=(curl --cacert "$LB_CA" -sS -o "$out" -w '%{time_total}\n' "$LB_URL/restart?c=$client")
      else
        p=${client#stepback-}
        p=${p%-noearly}
        p=${p%-nosession}
        session="$LB_TMP/$client.tls-session"
        cmd=("$LB_STEPBACK" get "$LB_URL/restart?c=$client" --cacert "$LB_CA" --profile "$p"
             -o "$out" --trace)
        case $client in
          *-nosession) ((run > 0)) || continue ;;
          *-noearly) cmd+=(--tls-session "$session" --no-early-data) ;;
          *) cmd+=(--tls-session "$session") ;;
        esac
      fi
      run_timed "$client restart run $run"
      early=-
      if [ "$client" = curl ]; then
        inner=$(awk 'NR == 1 && $1 ~ /^[0-9.]+$/ { printf "%.1f", $1 * 1000 }' "$so")
      else
        inner=$(sed -n 's/.*"event":"done","t_ms":\([0-9]*\).*/\1/p' "$se")
        early=$(sed -n 's/.*"event":"response".*"early_data":"\([a-z]*\)".*/\1/p' "$se" | head -1)
      fi
      ((run > 0)) && echo "$client restart $run $ms $rc $bytes ${inner:--} ${early:--}"
      sleep 0.2
    done
  done
}

if [ "${1:-}" = __measure ]; then
  case ${LB_SCENARIO:-get} in
    retry) measure_retry ;;
    restart) measure_restart ;;
    *) measure ;;
  esac
  exit 0
fi

# ------------------------------------------------------------------- options
stepback="${STEPBACK:-$repo/build/desktop/tools/stepback}"
runs=5 rtts=50,150,300 losses=0,2 profiles=desktop,mobile bodies=small,5m timeout_s=120 ipv6=0 scenario=get
while [ $# -gt 0 ]; do
  case $1 in
    --stepback) stepback=${2:?}; shift ;;
    --runs) runs=${2:?}; shift ;;
    --rtts) rtts=${2:?}; shift ;;
    --losses) losses=${2:?}; shift ;;
    --profiles) profiles=${2:?}; shift ;;
    --bodies) bodies=${2:?}; shift ;;
    --timeout) timeout_s=${2:?}; shift ;;
    --ipv6) ipv6=1 ;;
    --scenario) scenario=${2:?}; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) die "unknown argument '$1' (--help)" ;;
  esac
  shift
done
if ! [[ $runs =~ ^[0-9]+$ ]] || ((runs < 1 || runs > 100)); then die "--runs must be 1..100"; fi
if ! [[ $timeout_s =~ ^[0-9]+$ ]] || ((timeout_s < 1 || timeout_s > 600)); then
  die "--timeout must be 1..600"
fi
[[ $rtts =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--rtts: comma-separated integers (ms)"
[[ $losses =~ ^[0-9.]+(,[0-9.]+)*$ ]] || die "--losses: comma-separated percentages"
[[ $profiles =~ ^(desktop|mobile)(,(desktop|mobile))*$ ]] || die "--profiles: desktop and/or mobile"
[[ $bodies =~ ^(small|5m)(,(small|5m))*$ ]] || die "--bodies: small and/or 5m"
case $scenario in
  get) ;;
  retry) bodies=retry ;;
  restart) bodies=restart ;;
  *) die "--scenario: get, retry or restart" ;;
esac
case $stepback in /*) ;; *) stepback="$PWD/$stepback" ;; esac

if [ "$(id -u)" -ne 0 ]; then
  echo "latency_bench: SKIP: needs root (network namespaces, iptables)"
  exit 77
fi
check_rc=0
"$netbench" check >/dev/null 2>&1 || check_rc=$?
if [ "$check_rc" -ne 0 ]; then
  "$netbench" check || true
  echo "latency_bench: SKIP: the latency bench cannot run here"
  exit 77
fi
for tool in nginx curl openssl awk timeout; do
  command -v "$tool" >/dev/null || die "'$tool' not found (apt-get install nginx curl openssl)"
done
[ -x "$stepback" ] || die "no stepback CLI at $stepback (build it, or --stepback PATH / STEPBACK=)"

# ------------------------------------------------------------------- temp dir, clean-up
tmp="$(mktemp -d "${TMPDIR:-/tmp}/sbnb-latency.XXXXXX")"
nginx_pid=""
cleanup() {
  local status=$?
  sb_stop_nginx
  "$netbench" down 2>/dev/null || true
  if [ "${KEEP_TMP:-0}" = 1 ]; then echo "latency_bench: keeping $tmp" >&2; else rm -rf "$tmp"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# nginx started as root serves files as nobody: the tree must be readable to others.
chmod 755 "$tmp"

# ------------------------------------------------------------------- certificates, bodies, nginx
cat >"$tmp/ext.cnf" <<'EOF'
[ca_ext]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:10.77.0.2, IP:fd77::2
authorityKeyIdentifier = keyid
EOF
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout "$tmp/ca.key" -out "$tmp/ca.pem" -days 2 \
  -subj "/CN=stepback latency bench CA" -config "$tmp/ext.cnf" -extensions ca_ext 2>/dev/null
openssl req -new "${ec[@]}" -keyout "$tmp/key.pem" -out "$tmp/server.csr" -subj "/CN=10.77.0.2" 2>/dev/null
openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" \
  -set_serial "0x$(openssl rand -hex 8)" -days 2 -extfile "$tmp/ext.cnf" -extensions leaf \
  -out "$tmp/cert.pem" 2>/dev/null
[ -s "$tmp/cert.pem" ] || die "could not make the server certificate"
chmod 644 "$tmp"/*.pem

mkdir -p "$tmp/www" "$tmp/tmp"
head -c "$SMALL_BYTES" /dev/zero | tr '\0' 's' >"$tmp/www/small"
cp "$tmp/www/small" "$tmp/www/retry"
cp "$tmp/www/small" "$tmp/www/restart"
head -c "$BIG_BYTES" /dev/zero >"$tmp/www/5m"
chmod -R a+rX "$tmp/www"

if [ "$ipv6" = 1 ]; then listen="[fd77::2]:$PORT"; url="https://[fd77::2]:$PORT"
else listen="10.77.0.2:$PORT"; url="https://10.77.0.2:$PORT"; fi
# The retry scenario: TLS 1.3 only, tickets that allow early data, and /retry, which fails a
# request on a full handshake (503) and serves it on a resumed session ($ssl_session_reused
# "r"), closing after each answer so that the retry needs a new connection. Its own log says
# per request whether it came early ($ssl_early_data "1") and on a resumed session.
protocols="TLSv1.2 TLSv1.3" retry_conf=""
if [ "$scenario" = restart ]; then
  protocols="TLSv1.3"
  retry_conf="
    ssl_session_tickets on;
    ssl_early_data on;
    location = /restart {
      access_log $tmp/retry.log retry;
    }"
fi
if [ "$scenario" = retry ]; then
  protocols="TLSv1.3"
  retry_conf="
    ssl_session_tickets on;
    ssl_early_data on;
    location = /retry {
      access_log $tmp/retry.log retry;
      keepalive_timeout 0;
      if (\$ssl_session_reused = \".\") { return 503; }
    }"
fi
cat >"$tmp/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/error.log warn;
events { worker_connections 64; }
http {
  log_format bench '\$ssl_protocol \$ssl_cipher \$ssl_curve \$ssl_session_reused '
                   '\$status \$body_bytes_sent \$request_time "\$http_user_agent"';
  access_log $tmp/access.log bench;
  log_format retry '\$arg_c early=\$ssl_early_data reused=\$ssl_session_reused '
                   '\$ssl_protocol status=\$status';
  client_body_temp_path $tmp/tmp/body;
  proxy_temp_path $tmp/tmp/proxy;
  fastcgi_temp_path $tmp/tmp/fastcgi;
  uwsgi_temp_path $tmp/tmp/uwsgi;
  scgi_temp_path $tmp/tmp/scgi;
  default_type application/octet-stream;
  sendfile on;
  keepalive_timeout 30s;
  server {
    listen $listen ssl;
    ssl_certificate $tmp/cert.pem;
    ssl_certificate_key $tmp/key.pem;
    ssl_protocols $protocols;
    # One TLS 1.3 suite for every client (curl prefers AES-256-GCM, mbedTLS ChaCha20).
    ssl_conf_command Ciphersuites TLS_AES_256_GCM_SHA384;
    root $tmp/www;$retry_conf
  }
}
EOF

# start_nginx: nginx in the server namespace, up when a curl from the client gets /small.
start_nginx() {
  "$netbench" exec srv nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/error.log" \
    </dev/null >>"$tmp/nginx.out" 2>&1 &
  nginx_pid=$!
  for _ in $(seq 1 20); do
    kill -0 "$nginx_pid" 2>/dev/null || break
    if "$netbench" exec cli curl --cacert "$tmp/ca.pem" -sS -o /dev/null --max-time 10 \
         "$url/small" 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  cat "$tmp/nginx.out" "$tmp/error.log" >&2 2>/dev/null || true
  die "nginx did not answer over the bench"
}

# ------------------------------------------------------------------- the runs
results="$tmp/results.txt"
: >"$results"
n_settings=0
for _ in ${rtts//,/ }; do for _ in ${losses//,/ }; do n_settings=$((n_settings + 1)); done; done
echo "latency_bench: $n_settings bench settings x $runs runs x (curl + ${profiles}) x (${bodies})" >&2
echo "latency_bench: stepback = $stepback" >&2

# The delay programs outlive one setting's worst case (every run timing out), then stop.
n_clients=$((1 + $(tr ',' '\n' <<<"$profiles" | wc -l)))
[ "$scenario" != retry ] || n_clients=$((2 * n_clients - 1))
[ "$scenario" != restart ] || n_clients=$((3 * n_clients - 2))
n_bodies=$(tr ',' '\n' <<<"$bodies" | wc -l)
lifetime=$(((runs + 1) * n_clients * n_bodies * (timeout_s + 1) + 120))
((lifetime <= 86400)) || lifetime=86400
for rtt in ${rtts//,/ }; do
  for loss in ${losses//,/ }; do
    "$netbench" up --rtt "$rtt" --loss "$loss" --lifetime "$lifetime" 2>/dev/null
    start_nginx
    echo "latency_bench: RTT $rtt ms, loss $loss %: measuring" >&2
    # In the background and waited for, so that SIGINT/SIGTERM reach the trap at once; the
    # clean-up's `netbench.sh down` then ends what runs in the namespaces.
    "$netbench" exec cli env LB_TMP="$tmp" LB_CA="$tmp/ca.pem" LB_URL="$url" \
      LB_STEPBACK="$stepback" LB_PROFILES="$profiles" LB_BODIES="$bodies" LB_RUNS="$runs" \
      LB_TIMEOUT="$timeout_s" LB_SCENARIO="$scenario" bash "$self" __measure >"$tmp/setting.txt" &
    wait $! || die "the measurements at RTT $rtt ms, loss $loss % stopped early"
    sed "s/^/$rtt $loss /" "$tmp/setting.txt" >>"$results"
    sb_stop_nginx
  done
done

# ------------------------------------------------------------------- the tables
# results: RTT LOSS CLIENT BODY RUN WALL_MS RC BYTES INNER_MS
# median RTT LOSS CLIENT BODY FIELD: "MEDIAN_MS FAILS" over the runs that count (exit 0, the
# whole body), FIELD 6 (wall) or 9 (inner); "- FAILS" when none counts.
median() {
  awk -v r="$1" -v l="$2" -v c="$3" -v b="$4" -v fld="$5" -v small="$SMALL_BYTES" -v big="$BIG_BYTES" '
    $1 == r && $2 == l && $3 == c && $4 == b {
      want = ($4 == "5m") ? big : small
      if ($7 != 0 || $8 != want) f++; else if ($fld != "-") x[n++] = $fld + 0
    }
    END {
      if (n == 0) { print "-", f + 0; exit }
      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
      m = (n % 2) ? x[(n - 1) / 2] : (x[n / 2 - 1] + x[n / 2]) / 2
      printf "%.0f %d\n", m, f
    }' "$results"
}
cell() { # MEDIAN FAILS BYTES -> "1234 ms (12.3 Mbit/s)[, 2 failed]"
  local m=$1 f=$2 bytes=$3 s
  if [ "$m" = - ]; then s="all failed"
  else
    s="$m ms"
    [ "$bytes" -le "$SMALL_BYTES" ] || s="$s ($(awk -v b="$bytes" -v m="$m" 'BEGIN { printf "%.1f", b * 8 / m / 1000 }') Mbit/s)"
    [ "$f" -eq 0 ] || s="$s, $f failed"
  fi
  echo "$s"
}
ratio() { # A B -> A/B as "1.02x"
  if [ "$1" = - ] || [ "$2" = - ]; then echo "-"
  else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; fi
}
# table FIELD: one markdown table of medians of FIELD.
table() {
  local fld=$1 rtt loss body bytes cm cf sm sf ideal line p
  local header="| RTT | loss | body | ideal (3 RTT) | curl" sep="| --- | --- | --- | --- | ---"
  for p in ${profiles//,/ }; do header="$header | stepback $p | vs curl"; sep="$sep | --- | ---"; done
  echo "$header |"
  echo "$sep |"
  for rtt in ${rtts//,/ }; do
    for loss in ${losses//,/ }; do
      for body in ${bodies//,/ }; do
        bytes=$(body_bytes "$body")
        read -r cm cf <<<"$(median "$rtt" "$loss" curl "$body" "$fld")"
        ideal="-"
        [ "$body" != small ] || ideal="$((3 * rtt)) ms"
        line="| $rtt ms | $loss % | $body | $ideal | $(cell "$cm" "$cf" "$bytes")"
        for p in ${profiles//,/ }; do
          read -r sm sf <<<"$(median "$rtt" "$loss" "stepback-$p" "$body" "$fld")"
          line="$line | $(cell "$sm" "$sf" "$bytes") | $(ratio "$sm" "$cm")"
        done
        echo "$line |"
      done
    done
  done
}

# early_table BODY WHAT: the retry or restart scenario's table, one row per client and bench
# setting (the request's median, WHAT names it in the header), and how nginx logged each
# client's requests for /BODY. Early data: 2 RTT for stepback-P (TCP + request), 3 without.
early_table() {
  local body=$1 what=$2 rtt loss c cm cf wm wf n_rtt name accepted p session=""
  local clients=(curl)
  [ "$body" != restart ] || session=" --tls-session"
  for p in ${profiles//,/ }; do
    clients+=("stepback-$p" "stepback-$p-noearly")
    [ "$body" != restart ] || clients+=("stepback-$p-nosession")
  done
  echo "| RTT | loss | client | $what | ideal | vs ideal | whole run (wall) | early data (trace) |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  for rtt in ${rtts//,/ }; do
    for loss in ${losses//,/ }; do
      for c in "${clients[@]}"; do
        read -r cm cf <<<"$(median "$rtt" "$loss" "$c" "$body" 9)"
        read -r wm wf <<<"$(median "$rtt" "$loss" "$c" "$body" 6)"
        n_rtt=3
        p=${c#stepback-}
        case $c in
          curl) name=curl ;;
          *-noearly) name="stepback ${p%-noearly}$session --no-early-data" ;;
          *-nosession) name="stepback ${p%-nosession} (no --tls-session)" ;;
          *) name="stepback $p$session" n_rtt=2 ;;
        esac
        accepted=$(awk -v r="$rtt" -v l="$loss" -v c="$c" \
          '$1 == r && $2 == l && $3 == c { n++; if ($10 == "accepted") a++ }
           END { printf "%d/%d accepted", a, n }' "$results")
        [ "$c" != curl ] || accepted="-"
        echo "| $rtt ms | $loss % | $name | $(cell "$cm" "$cf" 0) | $((n_rtt * rtt)) ms |" \
          "$(ratio "$cm" "$((n_rtt * rtt))") | $(cell "$wm" "$wf" 0) | $accepted |"
      done
    done
  done
  echo
  echo "nginx's log of /$body (client, \$ssl_early_data, \$ssl_session_reused, protocol, status; count):"
  [ ! -s "$tmp/retry.log" ] || sort "$tmp/retry.log" | uniq -c | sed 's/^ */  /'
}

retry_report() {
  echo
  echo "A retry on a new, resumed connection (nginx at $url answers 503 on a full handshake, 200"
  echo "on a resumed session, and closes after each answer); median of $runs runs, each a fresh process."
  echo "stepback: \`$(basename "$stepback") get URL --cacert CA --profile P --max-retries 1 --max-backoff 0.001"
  echo "--jitter none -o FILE --trace [--no-early-data]\`; curl: \`curl --cacert CA -sS -o FILE --retry 1"
  echo "--retry-delay 0 -w '%{time_total}' URL\` ($(curl --version | awk 'NR == 1 { print $1, $2 }'); its first wait is 1 s)."
  echo "Retry alone: from the start of the retry's connection to the response (curl: time_total of"
  echo "its last transfer; stepback: the retry's \"attempt\" to its \"response\" trace events). Ideal:"
  echo "TCP + request (2 RTT) with early data, + the TLS 1.3 handshake (3 RTT) without."
  echo
  early_table retry "retry alone"
}

restart_report() {
  echo
  echo "A new process's first request to a server an earlier process talked to, as a download"
  echo "restarted after a kill makes (nginx at $url, TLS 1.3 with tickets and early data, /restart:"
  echo "1 KiB); median of $runs runs. stepback: \`$(basename "$stepback") get URL --cacert CA --profile P"
  echo "-o FILE --trace [--tls-session FILE [--no-early-data]]\` (the session from the run before; an"
  echo "untimed run saves the first); curl: \`curl --cacert CA -sS -o FILE -w '%{time_total}' URL\`"
  echo "($(curl --version | awk 'NR == 1 { print $1, $2 }'): no session between processes). Request alone:"
  echo "curl's time_total, stepback's \"done\" t_ms. Ideal: TCP + request (2 RTT) with early data, 3 RTT without."
  echo
  early_table restart "request alone"
}

if [ "$scenario" != get ]; then
  if [ "$scenario" = retry ]; then retry_report; else restart_report; fi
  failed_runs=$(awk '$7 != 0 || $8 != '"$SMALL_BYTES" "$results" | wc -l)
  [ "$failed_runs" -eq 0 ] || echo "$failed_runs run(s) failed; KEEP_TMP=1 keeps $tmp/clients.log."
  exit 0
fi

addr_shown=10.77.0.2
[ "$ipv6" = 1 ] && addr_shown="[fd77::2]"
echo
echo "Over bench/netbench/netbench.sh (client namespace to nginx at $addr_shown; loss applies to"
echo "each direction); median of $runs runs, each a fresh process and connection (TLS as negotiated, below)."
echo "stepback: \`$(basename "$stepback") get URL --cacert CA --profile P -o FILE --trace\`;"
echo "curl: \`curl --cacert CA -sS -o FILE -w '%{time_total}' URL\` ($(curl --version | awk 'NR == 1 { print $1, $2 }'))."
echo
echo "Time to completion (wall time of the client process, start-up included):"
echo
table 6
echo
echo "The request alone (curl's time_total; the t_ms of stepback's 'done' trace event):"
echo
table 9

# What each client negotiated, from nginx's access log (curl's start-up checks included).
echo
echo "Negotiated (nginx access log: protocol, suite, group, resumed; count):"
if [ -s "$tmp/access.log" ]; then
  awk '{ ua = $0; sub(/^[^"]*"/, "", ua); sub(/".*$/, "", ua); split(ua, u, "/");
         print "  " u[1] ": " $1, $2, $3, $4 }' "$tmp/access.log" | sort | uniq -c
fi
failed_runs=$(awk -v small="$SMALL_BYTES" -v big="$BIG_BYTES" \
  '$7 != 0 || $8 != (($4 == "5m") ? big : small)' "$results" | wc -l)
if [ "$failed_runs" -gt 0 ]; then
  echo
  echo "$failed_runs run(s) failed or timed out (limit ${timeout_s} s); KEEP_TMP=1 keeps $tmp/clients.log."
fi
