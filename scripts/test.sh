#!/usr/bin/env bash
# Builds and runs every test: the freestanding core check, the Windows compile check, and
# the desktop, mobile and asan-ubsan workflows (configure, build, ctest). Ends with one
# line of totals over the three ctest runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/check_core.sh
platform/check_mingw.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for preset in desktop mobile asan-ubsan; do
  echo "== workflow $preset"
  cmake --workflow --preset "$preset" 2>&1 | tee -a "$log"
done

# ctest counts skipped tests among the passed ones; report them apart.
read -r total failed < <(awk '/tests passed, .* tests failed out of/ { t += $NF; f += $4 } END { print t + 0, f + 0 }' "$log")
skipped=$(grep -cE '^\s+[0-9]+ - .* \(Skipped\)$' "$log" || true)
echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
