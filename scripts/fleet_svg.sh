#!/bin/sh
# Draws docs/fleet.svg, the picture in README.md and docs/retry.md: `stepback sim` with the
# mobile profile, a 60 s outage, every strategy, the default 100,000 clients and seed 1.
# Builds nothing: pass the stepback binary (default build/desktop/tools/stepback).
#
# usage: scripts/fleet_svg.sh [STEPBACK_BINARY]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:-$root/build/desktop/tools/stepback}
if [ ! -x "$binary" ]; then
  echo "fleet_svg.sh: no stepback binary at $binary (build the stepback_cli target)" >&2
  exit 2
fi
"$binary" sim --profile mobile --outage 60 --strategy all --seed 1 --svg "$root/docs/fleet.svg"
