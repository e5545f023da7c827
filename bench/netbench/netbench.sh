#!/usr/bin/env bash
# The latency test bench: two network namespaces joined by a veth pair, with a
# configured round-trip time, random loss and a rate limit between them. This kernel has no
# netem, so the bench is built from what it has:
#
#   sbnb-cli  sbnb-c 10.77.0.1/24 fd77::1/64  <--veth-->  sbnb-s 10.77.0.2/24 fd77::2/64  sbnb-srv
#
#   delay  each namespace holds every packet that enters it over the veth for RTT/2 (iptables
#          mangle PREROUTING -j NFQUEUE --queue-num 0, and bench/netbench/nfq_delay.c running
#          in that namespace accepts each packet RTT/2 after it arrived, in order). So the
#          delay is split evenly: client->server RTT/2, server->client RTT/2. Delaying on
#          ingress, not egress, keeps held packets off the sending socket's accounting (TCP
#          small queues), as on a real link.
#   loss   -m statistic --mode random --probability PCT/100 -j DROP in the same chain, before
#          the delay: each direction loses PCT% of its packets independently.
#   rate   tc tbf on the egress of both veth ends (each direction limited to KBIT kbit/s,
#          burst 10 ms of the rate but at least two full frames, queue up to 100 ms of data).
#   frames the veth ends get gso_max_segs 1, so TCP sends MTU-sized (1500) packets and loss,
#          delay and rate act per packet as on a real link, not per 64 KiB super-packet.
#   ARP/ND permanent neighbour entries on both sides; ICMPv6 neighbour discovery is never
#          delayed or dropped. IPv6 addresses are nodad (usable at once).
#
# The namespaces have no route anywhere else: traffic stays between them.
#
# Usage (as root):
#   netbench.sh up --rtt MS [--loss PCT] [--rate KBIT] [--lifetime S]
#       (re)creates the bench; MS may be 0 (no delay) and fractional; PCT in [0, 50];
#       the delay programs exit by themselves after S seconds (default 3600).
#   netbench.sh down                 removes namespaces, rules, delay programs, state
#   netbench.sh exec cli|srv CMD...  runs CMD in the client or server namespace
#   netbench.sh status               prints the configuration and the rule counters
#   netbench.sh check                prints whether the bench can run here; exit 0, or 77
#                                    (skip) when it cannot
# Callers: `netbench.sh up ...` then `trap 'netbench.sh down' EXIT`; `up` calls `down` first.
#
# Environment:
#   NFQ_DELAY       a built nfq_delay to use (else it is compiled with cc into NETBENCH_BUILD)
#   NETBENCH_BUILD  where nfq_delay is compiled (default /tmp/sbnb-build)
#   NETBENCH_STATE  state directory: configuration, delay program pids, logs (default /run/sbnb)
#   NETBENCH_ID     runs a separate bench: namespaces sbnb-cli-ID and sbnb-srv-ID, state
#                   /run/sbnb-ID (same addresses; default: no ID, sbnb-cli and sbnb-srv)
# Needs: root, iproute2 (ip, tc), iptables (nft or legacy backend, with the NFQUEUE target and
# the statistic match), cc and libnetfilter-queue-dev (to build nfq_delay); kernel with
# network namespaces, veth, nfnetlink_queue, xt_statistic and sch_tbf.
set -euo pipefail

# NETBENCH_ID (optional, letters and digits): a second bench beside the first, with its own
# namespaces and state; the addresses are the same (each pair of namespaces is its own world).
NETBENCH_ID="${NETBENCH_ID:-}"
[[ $NETBENCH_ID =~ ^[a-zA-Z0-9]{0,8}$ ]] || { echo "netbench: NETBENCH_ID: up to 8 letters or digits" >&2; exit 2; }
readonly SUFFIX="${NETBENCH_ID:+-$NETBENCH_ID}"
readonly NS_CLI="sbnb-cli$SUFFIX" NS_SRV="sbnb-srv$SUFFIX"
readonly IF_CLI=sbnb-c IF_SRV=sbnb-s
readonly V4_CLI=10.77.0.1 V4_SRV=10.77.0.2 V6_CLI=fd77::1 V6_SRV=fd77::2
readonly QUEUE=0
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
readonly STATE="${NETBENCH_STATE:-/run/sbnb$SUFFIX}"
readonly BUILD="${NETBENCH_BUILD:-/tmp/sbnb-build}"

die() { echo "netbench: $*" >&2; exit 1; }
log() { echo "netbench: $*" >&2; }

is_number() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }
# in_range VALUE LO HI: true when LO <= VALUE <= HI (decimals allowed).
in_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

ns_exists() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }

# nfq_delay_bin: prints the path of a usable nfq_delay, compiling it when needed.
nfq_delay_bin() {
  if [ -n "${NFQ_DELAY:-}" ]; then
    if [ -x "$NFQ_DELAY" ]; then
      echo "$NFQ_DELAY"
      return
    fi
    log "NFQ_DELAY=$NFQ_DELAY is not an executable (not built?); compiling nfq_delay instead"
  fi
  local src="$HERE/nfq_delay.c" bin="$BUILD/nfq_delay"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    command -v cc >/dev/null || die "no cc to build nfq_delay (apt-get install gcc)"
    mkdir -p "$BUILD"
    local libs=(-lnetfilter_queue -lnfnetlink) cflags=()
    if command -v pkg-config >/dev/null && pkg-config --exists libnetfilter_queue 2>/dev/null; then
      read -r -a cflags <<<"$(pkg-config --cflags libnetfilter_queue)"
      read -r -a libs <<<"$(pkg-config --libs libnetfilter_queue)"
    fi
    cc -O2 -Wall -Wextra "${cflags[@]}" -o "$bin.$$.tmp" "$src" "${libs[@]}" \
      || die "cannot build nfq_delay (apt-get install libnetfilter-queue-dev)"
    mv -f "$bin.$$.tmp" "$bin"
  fi
  echo "$bin"
}

# pick_iptables NS: prints "iptables ip6tables" (or the legacy pair) whose NFQUEUE works in NS.
pick_iptables() {
  local ns=$1 v4 v6
  for pair in "iptables ip6tables" "iptables-legacy ip6tables-legacy"; do
    read -r v4 v6 <<<"$pair"
    if ! command -v "$v4" >/dev/null || ! command -v "$v6" >/dev/null; then continue; fi
    if ip netns exec "$ns" "$v4" -w 5 -t mangle -A PREROUTING -i lo -p udp --dport 9 \
         -j NFQUEUE --queue-num "$QUEUE" 2>/dev/null; then
      ip netns exec "$ns" "$v4" -w 5 -t mangle -D PREROUTING -i lo -p udp --dport 9 \
        -j NFQUEUE --queue-num "$QUEUE" 2>/dev/null || true
      echo "$v4 $v6"
      return 0
    fi
  done
  return 1
}

# stop_pid PID NAME: SIGTERM to PID when it is still the NAME we started, then waits (2 s at
# most) and SIGKILLs it if need be.
stop_pid() {
  local pid=$1 name=$2 i
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$name" || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 40); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
}

cmd_down() {
  local ns pid i pids
  for f in "$STATE"/nfq_*.pid; do
    [ -e "$f" ] || continue
    stop_pid "$(cat "$f")" nfq_delay
  done
  # The delay programs' closing counters (packets, drops, how late releases were).
  for f in "$STATE"/nfq_*.log; do
    [ -e "$f" ] || continue
    sed -n "s/^nfq_delay: queue [0-9]* done: /netbench: $(basename "$f" .log | sed 's/^nfq_//'): /p" "$f" >&2
  done
  for ns in "$NS_CLI" "$NS_SRV"; do
    ns_exists "$ns" || continue
    # Whatever still runs in the bench's namespaces was started for the bench (servers,
    # clients): stop it by pid so the namespace really goes away.
    for i in 1 2 3; do
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -n "$pids" ] || break
      for pid in $pids; do
        if [ "$i" -lt 3 ]; then kill -TERM "$pid" 2>/dev/null || true
        else kill -KILL "$pid" 2>/dev/null || true; fi
      done
      sleep 0.3
    done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$STATE"
  # veth ends vanish with their namespaces; one left in the root namespace by a failed `up`:
  ip link del "$IF_CLI" 2>/dev/null || true
  ip link del "$IF_SRV" 2>/dev/null || true
}

# start_delay NS HALF_MS LIFETIME: starts nfq_delay in NS, waits until its queue is bound.
start_delay() {
  local ns=$1 half=$2 lifetime=$3 bin ready i
  bin=$(nfq_delay_bin)
  ready="$STATE/nfq_$ns.ready"
  rm -f "$ready"
  # setsid: the delay program outlives `up` and its caller's terminal signals; it stops at
  # `down`, on SIGTERM, or after LIFETIME seconds. Real-time priority (SCHED_FIFO 20, else
  # nice -10): its wake-ups are the bench's timing, on a machine whose cores are shared.
  local prio=(nice -n -10)
  if command -v chrt >/dev/null && chrt -f 20 true 2>/dev/null; then prio=(chrt -f 20); fi
  setsid -f ip netns exec "$ns" "${prio[@]}" "$bin" --queue "$QUEUE" --delay-ms "$half" \
    --lifetime "$lifetime" --ready-file "$ready" </dev/null >>"$STATE/nfq_$ns.log" 2>&1
  for i in $(seq 1 100); do
    [ -s "$ready" ] && break
    sleep 0.05
  done
  [ -s "$ready" ] || die "nfq_delay did not start in $ns: $(tail -n 3 "$STATE/nfq_$ns.log")"
  cp "$ready" "$STATE/nfq_$ns.pid"
}

# setup_side NS IF PEER_V4 PEER_V6 PEER_MAC: addresses, neighbours, rules and qdisc of one end.
setup_side() {
  local ns=$1 dev=$2 v4=$3 v6=$4 peer_v4=$5 peer_v6=$6 peer_mac=$7
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$v4/24" dev "$dev"
  ip -n "$ns" addr add "$v6/64" dev "$dev" nodad
  ip -n "$ns" link set "$dev" gso_max_segs 1
  ip -n "$ns" link set "$dev" up
  ip -n "$ns" neigh replace "$peer_v4" lladdr "$peer_mac" dev "$dev" nud permanent
  ip -n "$ns" neigh replace "$peer_v6" lladdr "$peer_mac" dev "$dev" nud permanent
}

# rules NS DEV: loss and delay on what enters NS over DEV, IPv4 and IPv6.
rules() {
  local ns=$1 dev=$2 ipt
  for ipt in "$IPT4" "$IPT6"; do
    local base=(ip netns exec "$ns" "$ipt" -w 5 -t mangle -A PREROUTING -i "$dev")
    if [ "$ipt" = "$IPT6" ]; then
      local t
      for t in neighbour-solicitation neighbour-advertisement router-solicitation \
               router-advertisement; do
        "${base[@]}" -p ipv6-icmp --icmpv6-type "$t" -j ACCEPT
      done
    fi
    if [ "$LOSS_P" != 0 ]; then
      "${base[@]}" -m statistic --mode random --probability "$LOSS_P" -j DROP
    fi
    if [ "$HALF_MS" != 0 ]; then
      "${base[@]}" -j NFQUEUE --queue-num "$QUEUE"
    fi
  done
}

cmd_up() {
  local rtt="" loss=0 rate="" lifetime=3600
  while [ $# -gt 0 ]; do
    case $1 in
      --rtt) rtt=${2:?--rtt needs a value}; shift 2 ;;
      --loss) loss=${2:?--loss needs a value}; shift 2 ;;
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --lifetime) lifetime=${2:?--lifetime needs a value}; shift 2 ;;
      *) die "up: unknown argument $1" ;;
    esac
  done
  [ -n "$rtt" ] || die "up: --rtt MS is required"
  if ! is_number "$rtt" || ! in_range "$rtt" 0 20000; then die "up: --rtt must be 0..20000 ms"; fi
  if ! is_number "$loss" || ! in_range "$loss" 0 50; then die "up: --loss must be 0..50 (percent)"; fi
  [ -z "$rate" ] || { [[ $rate =~ ^[0-9]+$ ]] && in_range "$rate" 8 10000000; } \
    || die "up: --rate must be an integer 8..10000000 (kbit/s)"
  if ! [[ $lifetime =~ ^[0-9]+$ ]] || ! in_range "$lifetime" 1 86400; then
    die "up: --lifetime must be 1..86400 (seconds)"
  fi
  [ "$(id -u)" -eq 0 ] || die "up: must run as root"

  cmd_down
  mkdir -p "$STATE"
  # From here on a failure leaves nothing behind.
  trap 'log "up failed; cleaning up"; cmd_down' ERR
  set -E

  HALF_MS=$(awk -v r="$rtt" 'BEGIN { h = r / 2; if (h == 0) print 0; else printf "%.3f", h }')
  LOSS_P=$(awk -v l="$loss" 'BEGIN { p = l / 100; if (p == 0) print 0; else printf "%.6f", p }')

  ip netns add "$NS_CLI"
  ip netns add "$NS_SRV"
  ip link add "$IF_CLI" netns "$NS_CLI" type veth peer name "$IF_SRV" netns "$NS_SRV"
  local mac_cli mac_srv
  mac_cli=$(ip -n "$NS_CLI" -br link show "$IF_CLI" | awk '{print $3}')
  mac_srv=$(ip -n "$NS_SRV" -br link show "$IF_SRV" | awk '{print $3}')
  setup_side "$NS_CLI" "$IF_CLI" "$V4_CLI" "$V6_CLI" "$V4_SRV" "$V6_SRV" "$mac_srv"
  setup_side "$NS_SRV" "$IF_SRV" "$V4_SRV" "$V6_SRV" "$V4_CLI" "$V6_CLI" "$mac_cli"

  local pair
  pair=$(pick_iptables "$NS_CLI") || die "up: iptables cannot add an NFQUEUE rule here"
  read -r IPT4 IPT6 <<<"$pair"

  if [ "$HALF_MS" != 0 ]; then
    start_delay "$NS_CLI" "$HALF_MS" "$lifetime"
    start_delay "$NS_SRV" "$HALF_MS" "$lifetime"
  fi
  rules "$NS_CLI" "$IF_CLI"
  rules "$NS_SRV" "$IF_SRV"

  if [ -n "$rate" ]; then
    # burst: 10 ms of the rate, at least two full frames; limit: 100 ms of the rate queued.
    local burst limit
    burst=$(awk -v r="$rate" 'BEGIN { b = int(r * 1000 / 8 / 100); if (b < 3028) b = 3028; print b }')
    limit=$(awk -v r="$rate" -v b="$burst" 'BEGIN { l = int(r * 1000 / 8 / 10); if (l < 2 * b) l = 2 * b; print l }')
    tc -n "$NS_CLI" qdisc replace dev "$IF_CLI" root tbf rate "${rate}kbit" burst "$burst" limit "$limit"
    tc -n "$NS_SRV" qdisc replace dev "$IF_SRV" root tbf rate "${rate}kbit" burst "$burst" limit "$limit"
  fi

  cat >"$STATE/config" <<EOF
rtt_ms=$rtt
one_way_ms=$HALF_MS
loss_pct=$loss
loss_probability_per_direction=$LOSS_P
rate_kbit=${rate:-none}
iptables=$IPT4 $IPT6
lifetime_s=$lifetime
EOF
  trap - ERR
  log "up: rtt ${rtt} ms (${HALF_MS} ms each way), loss ${loss}% each way, rate ${rate:-unlimited}${rate:+ kbit/s}; $NS_CLI $V4_CLI [$V6_CLI] <-> $NS_SRV $V4_SRV [$V6_SRV]"
}

cmd_exec() {
  [ $# -ge 2 ] || die "usage: netbench.sh exec cli|srv CMD..."
  local ns
  case $1 in
    cli) ns=$NS_CLI ;;
    srv) ns=$NS_SRV ;;
    *) die "exec: cli or srv, not $1" ;;
  esac
  shift
  ns_exists "$ns" || die "exec: $ns does not exist (netbench.sh up first)"
  exec ip netns exec "$ns" "$@"
}

cmd_status() {
  if ! ns_exists "$NS_CLI"; then
    echo "netbench: down"
    return 0
  fi
  [ -r "$STATE/config" ] && cat "$STATE/config"
  local ns f pid ipt
  for ns in "$NS_CLI" "$NS_SRV"; do
    f="$STATE/nfq_$ns.pid"
    if [ -r "$f" ]; then
      pid=$(cat "$f")
      if kill -0 "$pid" 2>/dev/null; then echo "nfq_delay[$ns]: running, pid $pid"
      else echo "nfq_delay[$ns]: NOT RUNNING (packets to queue $QUEUE are dropped)"; fi
    fi
    echo "--- $ns mangle PREROUTING (IPv4, IPv6)"
    for ipt in $(sed -n 's/^iptables=//p' "$STATE/config" 2>/dev/null || echo iptables ip6tables); do
      ip netns exec "$ns" "$ipt" -w 5 -t mangle -L PREROUTING -v -n 2>/dev/null | tail -n +3 || true
    done
    tc -n "$ns" qdisc show dev "$([ "$ns" = "$NS_CLI" ] && echo "$IF_CLI" || echo "$IF_SRV")"
  done
}

# check: each capability the bench needs, tried for real in a throwaway namespace.
cmd_check() {
  local ok=1 ns="sbnb-check$SUFFIX" bin="" pair="" v4 v6
  say() { printf '  %-44s %s\n' "$1" "$2"; }
  echo "netbench check:"
  if [ "$(id -u)" -ne 0 ]; then
    say "root" "no (run as root)"
    echo "netbench: cannot run here"
    return 77
  fi
  say "root" "yes"
  for c in ip tc setsid awk; do
    command -v "$c" >/dev/null || { say "$c" "missing (apt-get install iproute2 util-linux)"; ok=0; }
  done
  [ "$ok" = 1 ] || { echo "netbench: cannot run here"; return 77; }
  ip netns del "$ns" 2>/dev/null || true
  if ip netns add "$ns" 2>/dev/null; then say "ip netns" "yes"; else say "ip netns" "no"; ok=0; fi
  if [ "$ok" = 1 ]; then
    if ip -n "$ns" link add sbnb-k0 type veth peer name sbnb-k1 2>/dev/null; then
      say "veth" "yes"
    else say "veth" "no"; ok=0; fi
    if pair=$(pick_iptables "$ns"); then
      read -r v4 v6 <<<"$pair"
      say "iptables NFQUEUE target" "yes ($v4)"
      if ip netns exec "$ns" "$v6" -w 5 -t mangle -A PREROUTING -i lo -j NFQUEUE --queue-num 0 2>/dev/null
      then say "ip6tables NFQUEUE target" "yes ($v6)"; else say "ip6tables NFQUEUE target" "no"; ok=0; fi
      if ip netns exec "$ns" "$v4" -w 5 -t mangle -A PREROUTING -i lo -m statistic --mode random \
           --probability 0.5 -j DROP 2>/dev/null
      then say "iptables statistic match (loss)" "yes"; else say "iptables statistic match (loss)" "no"; ok=0; fi
    else
      say "iptables NFQUEUE target" "no (apt-get install iptables; kernel NETFILTER_XT_TARGET_NFQUEUE)"
      ok=0
    fi
    if ip -n "$ns" link show sbnb-k0 >/dev/null 2>&1 \
       && tc -n "$ns" qdisc replace dev sbnb-k0 root tbf rate 1mbit burst 3028 limit 20000 2>/dev/null
    then say "tc tbf (rate limit)" "yes"; else say "tc tbf (rate limit)" "no"; ok=0; fi
    if bin=$( (nfq_delay_bin) 2>/dev/null); then
      say "nfq_delay builds" "yes ($bin)"
      local ready="/tmp/sbnb-check.$$.ready"
      rm -f "$ready"
      if timeout 10 ip netns exec "$ns" "$bin" --queue 0 --delay-ms 1 --lifetime 1 --quiet \
           --ready-file "$ready" 2>/dev/null && [ -s "$ready" ]
      then say "nfnetlink_queue (bind a queue)" "yes"; else say "nfnetlink_queue (bind a queue)" "no"; ok=0; fi
      rm -f "$ready"
    else
      say "nfq_delay builds" "no (apt-get install gcc libnetfilter-queue-dev)"
      ok=0
    fi
    ip netns del "$ns" 2>/dev/null || true
  fi
  if [ "$ok" = 1 ]; then echo "netbench: can run here"; return 0; fi
  echo "netbench: cannot run here"
  return 77
}

main() {
  [ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d'; exit 2; }
  local cmd=$1
  shift
  case $cmd in
    up) cmd_up "$@" ;;
    down) [ "$(id -u)" -eq 0 ] || die "down: must run as root"; cmd_down ;;
    exec) cmd_exec "$@" ;;
    status) cmd_status ;;
    check) local rc=0; cmd_check || rc=$?; exit "$rc" ;;
    -h|--help|help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' ;;
    *) die "unknown command $cmd (up, down, exec, status, check)" ;;
  esac
}

main "$@"
