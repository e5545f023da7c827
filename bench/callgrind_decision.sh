#!/usr/bin/env bash
# Counts the instructions of one retry decision (report() of a 503, then step() to the
# next attempt) and of one bare jitter draw (backoff_wait()), per jitter strategy, with
# valgrind's callgrind on the host (the reference figures are x86-64, g++ -O2).
#
# bench/decision_driver.cpp is compiled together with core/src/*.cpp at -O2 into a temp
# dir; callgrind collects only inside the driver's sb_run_* loop, which runs K1 and then
# K2 times; (Ir(K2) - Ir(K1)) / (K2 - K1) cancels the set-up and is exact and repeatable
# (callgrind counts executed instructions, not time). "Per decision" includes the call
# sites and the loop (about 13 instructions); "inside report()+step()" is their inclusive
# cost only.
#
# Usage: bench/callgrind_decision.sh [--strict]
#   --strict  exit 1 when a strategy misses the target (default: report only).
# Environment: CXX (default g++), KEEP_TMP=1 keeps the temp dir.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

readonly TARGET=45
readonly K1=1000
readonly K2=101000
readonly STRATEGIES=(seed full equal decorrelated none)

strict=0
for arg in "$@"; do
  case "$arg" in
    --strict) strict=1 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "callgrind_decision.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

cxx="${CXX:-g++}"
for tool in "$cxx" valgrind callgrind_annotate; do
  command -v "$tool" >/dev/null || { echo "callgrind_decision.sh: '$tool' not found" >&2; exit 1; }
done

sb_tmpdir callgrind_decision.sh stepback-callgrind

# The same flags as the core library (freestanding rules), plus the project's warnings.
flags=(-O2 -std=c++17 -fno-exceptions -fno-rtti
       -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror)
"$cxx" "${flags[@]}" -I"$repo/core/include" "$repo/bench/decision_driver.cpp" \
  "$repo"/core/src/*.cpp -o "$tmp/decision_driver"

# Runs the driver under callgrind and leaves the profile in $tmp/<mode>.<strategy>.<k>.
profile() {
  local mode="$1" strategy="$2" k="$3" fn
  fn="sb_run_decisions"
  [[ "$mode" == jitter ]] && fn="sb_run_jitter"
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$fn" \
    --callgrind-out-file="$tmp/$mode.$strategy.$k" \
    "$tmp/decision_driver" "$mode" "$strategy" "$k" >"$tmp/$mode.$strategy.$k.log" 2>&1 || {
    echo "callgrind_decision.sh: driver failed ($mode $strategy $k):" >&2
    cat "$tmp/$mode.$strategy.$k.log" >&2
    exit 1
  }
}

# The total Ir of a profile.
total() { awk '/^totals:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$1"; }

# "function cost" lines from callgrind_annotate (self cost, or inclusive with --inclusive=yes),
# function names without parameters; `[` lines (below main) and the like are dropped.
costs() {
  callgrind_annotate --threshold=100 "$@" |
    sed -n 's/^ *\([0-9,][0-9,]*\) ([^)]*) *[^ :]*:\([A-Za-z_][A-Za-z0-9_:]*\).*/\2 \1/p' |
    tr -d ,
}

# The cost of `fn` in a costs() listing (0 when absent).
cost_of() { awk -v fn="$2" '$1 == fn { sum += $2 } END { print sum + 0 }' "$1"; }

# (b - a) / (K2 - K1) with two decimals.
per_op() { awk -v a="$1" -v b="$2" -v n="$((K2 - K1))" 'BEGIN { printf "%.2f", (b - a) / n }'; }

declare -A decision inside jitter
for s in "${STRATEGIES[@]}"; do
  for k in "$K1" "$K2"; do
    profile decision "$s" "$k"
    profile jitter "$s" "$k"
    costs --inclusive=yes "$tmp/decision.$s.$k" >"$tmp/incl.$s.$k"
    costs "$tmp/decision.$s.$k" >"$tmp/self.$s.$k"
  done
  decision[$s]="$(per_op "$(total "$tmp/decision.$s.$K1")" "$(total "$tmp/decision.$s.$K2")")"
  jitter[$s]="$(per_op "$(total "$tmp/jitter.$s.$K1")" "$(total "$tmp/jitter.$s.$K2")")"
  lib1=$(( $(cost_of "$tmp/incl.$s.$K1" stepback::RetryMachine::report) +
           $(cost_of "$tmp/incl.$s.$K1" stepback::RetryMachine::step) ))
  lib2=$(( $(cost_of "$tmp/incl.$s.$K2" stepback::RetryMachine::report) +
           $(cost_of "$tmp/incl.$s.$K2" stepback::RetryMachine::step) ))
  inside[$s]="$(per_op "$lib1" "$lib2")"
done

echo "## Instructions per retry decision"
echo
echo "Host $(uname -m), $("$cxx" --version | sed -n 1p), -O2, valgrind $(valgrind --version | sed 's/^valgrind-//');"
echo "(Ir(K=$K2) - Ir(K=$K1)) / $((K2 - K1)), default policy with the strategy, no budget, no deadline."
[[ "$(uname -m)" == x86_64 ]] || echo "Note: the target is stated for x86-64; this host is $(uname -m)."
echo
echo "| strategy | per decision (report + step) | inside report()+step() | bare jitter draw (backoff_wait) | target <= $TARGET |"
echo "|---|---:|---:|---:|---|"
missed=0
for s in "${STRATEGIES[@]}"; do
  verdict="met"
  if awk -v x="${decision[$s]}" -v t="$TARGET" 'BEGIN { exit !(x > t) }'; then
    verdict="NOT met"
    missed=1
  fi
  echo "| $s | ${decision[$s]} | ${inside[$s]} | ${jitter[$s]} | $verdict |"
done

# Where a decision's instructions go: self cost of each function, per decision.
functions=()
while read -r fn; do functions+=("$fn"); done < <(
  for s in "${STRATEGIES[@]}"; do awk '{ print $1 }' "$tmp/self.$s.$K2"; done | sort -u)
echo
echo "### Self instructions per decision, by function"
echo
md_head function "${STRATEGIES[@]}"
for fn in "${functions[@]}"; do
  cells=()
  nonzero=0
  for s in "${STRATEGIES[@]}"; do
    v="$(per_op "$(cost_of "$tmp/self.$s.$K1" "$fn")" "$(cost_of "$tmp/self.$s.$K2" "$fn")")"
    [[ "$v" == 0.00 ]] || nonzero=1
    cells+=("$v")
  done
  [[ "$nonzero" == 1 ]] && md_row "\`$fn\`" "${cells[@]}"
done
echo
echo "sb_run_decisions is the driver's loop and call sites; a function missing from the"
echo "table was inlined into its caller (e.g. Xoshiro128::next_u32 into uniform, by"
echo "speculative devirtualization)."

if [[ "$strict" == 1 && "$missed" == 1 ]]; then
  echo "callgrind_decision.sh: target of $TARGET instructions per decision not met" >&2
  exit 1
fi
