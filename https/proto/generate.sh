#!/usr/bin/env bash
# Regenerates the nanopb code of the RetryInfo decoder in this folder; see scripts/nanopb_generate.sh.
#   https/proto/generate.sh [--nanopb DIR] [--out DIR | --check]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/nanopb_generate.sh" "$here" "$@"
