#!/usr/bin/env bash
# Builds and runs every test: the freestanding core check, the Windows compile check, and
# the desktop, mobile and asan-ubsan workflows (configure, build, ctest).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/check_core.sh
platform/check_mingw.sh
for preset in desktop mobile asan-ubsan; do
  echo "== workflow $preset"
  cmake --workflow --preset "$preset"
done
