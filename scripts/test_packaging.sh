#!/usr/bin/env bash
# Runs only the packaging tests (ctest label `consumers`, tests/consumers/): cmake --install
# into a temporary prefix, find_package and pkg-config consumers built and run against it,
# examples/installed_app making one request to a loopback server, the add_subdirectory
# consumer, and the negative tests (mixed profiles fail to link, an unknown profile fails to
# configure). scripts/test.sh runs them too, with everything else.
#
# Usage: scripts/test_packaging.sh [PRESET]   (default: desktop; any host preset)
set -euo pipefail
cd "$(dirname "$0")/.."

preset=${1:-desktop}
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset" -L consumers
