#!/usr/bin/env bash
# Builds and runs every test: the format check (scripts/lint.sh), the freestanding core
# check, the Windows and Android compile checks, the desktop (g++) and asan-ubsan (clang)
# workflows, the check that the library archives need no C++ runtime, clang-tidy
# (scripts/lint.sh --tidy), then scripts/test_cross.sh (Cortex-M4 core build, host mobile,
# aarch64 and armhf under qemu, same passed tests required). Ends with one line of totals
# over all ctest runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/lint.sh
scripts/check_core.sh
platform/check_mingw.sh
scripts/check_android.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for preset in desktop asan-ubsan; do
  echo "== workflow $preset"
  cmake --workflow --preset "$preset" 2>&1 | tee -a "$log"
done
scripts/check_runtime_free.sh build/desktop
# clang-tidy over the library's and tools' sources, with the desktop build's compile commands.
scripts/lint.sh --tidy
scripts/test_cross.sh 2>&1 | tee -a "$log"

# ctest counts skipped tests among the passed ones; report them apart.
read -r total failed < <(awk '/tests passed, .* tests failed out of/ { t += $NF; f += $4 } END { print t + 0, f + 0 }' "$log")
skipped=$(grep -cE '^\s+[0-9]+ - .* \(Skipped\)$' "$log" || true)
echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
