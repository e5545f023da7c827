#!/usr/bin/env bash
# Kills `stepback get -o FILE` with SIGKILL at N random points of a 6 MiB download from nginx
# capped at 1 MiB/s on loopback, runs it again each time, and prints the bytes fetched twice
# and the checkpoint writes per MiB (tests/tools/get_resume_test.py's bench mode).
#   bench/download_kill.sh [N] [BUILD_DIR]     (default 20, build/desktop)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-20}
build=$(cd "${2:-$root/build/desktop}" && pwd)
nginx=$(command -v nginx || echo /usr/sbin/nginx)
cd "$root/tests/tools"
exec python3 get_resume_test.py "$build/tools/stepback" "$nginx" bench "$n"
