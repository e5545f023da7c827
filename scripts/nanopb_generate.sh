#!/usr/bin/env bash
# Regenerates the checked-in nanopb code of one proto folder (https/proto, transfer/proto)
# from its .proto and .options files, with the generator of the nanopb tree whose runtime
# the build compiles. Each folder's generate.sh calls this with its own path.
#
#   scripts/nanopb_generate.sh PROTO_DIR [--nanopb DIR] [--out DIR]   write *.pb.c/*.pb.h
#   scripts/nanopb_generate.sh PROTO_DIR [--nanopb DIR] --check       regenerate into a temporary
#                                                    folder and fail if the checked-in files differ
#
# DIR defaults to third_party/nanopb. Needs protoc and Python's protobuf module (Debian:
# protobuf-compiler, python3-protobuf); the Python used is $PYTHON, else the first of
# python3 and /usr/bin/python3 that can import google.protobuf.
# Exit status: 0 done or fresh, 1 stale or failed, 77 prerequisites missing (1 when CI is
# set, so that a CI run without them fails loudly instead of skipping).

set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] && [ -d "$1" ] || { echo "usage: $0 PROTO_DIR [--nanopb DIR] [--out DIR | --check]" >&2; exit 2; }
here=$(cd "$1" && pwd)
shift
name=${here#"$root"/}
nanopb="$root/third_party/nanopb"
out="$here"
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --nanopb) nanopb=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: $0 PROTO_DIR [--nanopb DIR] [--out DIR | --check]" >&2; exit 2 ;;
  esac
done

protos=()
for p in "$here"/*.proto; do protos+=("$(basename "$p")"); done
[ ${#protos[@]} -gt 0 ] || { echo "generate.sh: no .proto in $here" >&2; exit 2; }

missing() {
  echo "generate.sh: cannot run the nanopb generator: $*" >&2
  echo "generate.sh: install protobuf-compiler and python3-protobuf (scripts/setup.sh)" >&2
  if [ -n "${CI:-}" ]; then exit 1; fi
  exit 77
}

generator="$nanopb/generator/nanopb_generator.py"
[ -f "$generator" ] || missing "no $generator (run scripts/fetch_deps.sh or pass --nanopb)"
command -v protoc >/dev/null || missing "protoc not found"
python=""
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import google.protobuf' 2>/dev/null; then
    python=$candidate
    break
  fi
done
[ -n "$python" ] || missing "no Python with the google.protobuf module"

generate() {
  # From inside proto/ with bare file names, so that includes and guards name no paths.
  # The generator caches nanopb_pb2.py in its own tree when it can; with a read-only tree it
  # builds it in a temporary folder instead.
  (cd "$here" && "$python" "$generator" --quiet -D "$1" -I . "${protos[@]}")
}

if [ "$check" -eq 0 ]; then
  generate "$out"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
generate "$tmp"
stale=0
for proto in "${protos[@]}"; do
  for ext in pb.c pb.h; do
    file="${proto%.proto}.$ext"
    if ! diff -u "$here/$file" "$tmp/$file"; then
      stale=1
    fi
  done
done
if [ "$stale" -ne 0 ]; then
  echo "generate.sh: $name/*.pb.[ch] are stale; run $name/generate.sh and commit" >&2
  exit 1
fi
echo "generate.sh: $name/*.pb.[ch] are current ($("$python" "$generator" --version 2>/dev/null | head -n 1))"
