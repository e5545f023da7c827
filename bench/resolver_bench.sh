#!/usr/bin/env bash
# The resolver figures of docs/performance.md, in a network namespace made for the run (as root):
#   (a) the longest single Client::step() during a request whose DNS server never answers
#       (dns_server.py's "silent" names; the request runs to its 3 s retry deadline);
#   (b) the same during a request whose IPv6 address is black-holed (an nft rule drops the
#       SYNs to ::1), and its time to first byte over Happy Eyeballs (the goal: the 250 ms
#       connection-attempt delay plus one round trip, not the 10 s connect timeout).
# Loopback has no latency, so "one round trip" is about 0.1 ms here.
#
# Usage: bench/resolver_bench.sh [--build-dir DIR] [--runs N]
#   --build-dir DIR  a configured build with STEPBACK_BUILD_BENCH=ON (default build/bench;
#                    configured and built there with the bench preset when missing)
#   --runs N         requests per scenario (default 20)
# Needs: root, unshare, ip, nft, python3.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/bench"
runs=20
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "resolver_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "resolver_bench.sh: needs root (a network namespace, nft rules)" >&2; exit 1; }
for tool in unshare ip nft python3; do
  command -v "$tool" >/dev/null || { echo "resolver_bench.sh: needs $tool" >&2; exit 1; }
done
if [ ! -f "$build/CMakeCache.txt" ]; then
  (cd "$root" && cmake --preset bench >/dev/null)
fi
cmake --build "$build" --target resolver_bench -j2 >/dev/null
bench="$build/bench/resolver_bench"

if [ "${STEPBACK_IN_NETNS:-}" != 1 ]; then
  exec env STEPBACK_IN_NETNS=1 unshare -n "$0" --build-dir "$build" --runs "$runs"
fi

# Inside the new namespace from here on.
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
ip link set lo up
python3 "$root/tests/integration/dns_server.py" --port-file "$tmp/dns.port" --lifetime 600 &
pids+=($!)
python3 "$root/tests/integration/dual_stack_server.py" --port-file "$tmp/http.port" --lifetime 600 &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/dns.port" ] && [ -s "$tmp/http.port" ] && break; sleep 0.05; done
dns="127.0.0.1:$(cat "$tmp/dns.port")"
port=$(cat "$tmp/http.port")
nft add table inet bench
nft add chain inet bench out '{ type filter hook output priority 0; }'
nft add rule inet bench out ip6 daddr ::1 tcp dport "$port" drop

echo "# $(uname -srm), $(nproc) CPUs; resolver_bench from $build"
echo "## (a) the DNS server never answers; --deadline 3 s"
"$bench" --dns "$dns" --host silent-bench.test --port "$port" --runs "$((runs < 5 ? runs : 5))" \
  --deadline-ms 3000
echo "## (b) IPv6 black-holed, IPv4 answers; connect timeout 10 s"
"$bench" --dns "$dns" --host ok-bench.test --port "$port" --runs "$runs" --connect-ms 10000
