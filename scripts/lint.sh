#!/usr/bin/env bash
# The house rules, checked:
#
#   scripts/lint.sh            clang-format: every C and C++ file of the repository is formatted
#                              as .clang-format says (a few seconds; the test command runs it)
#   scripts/lint.sh --tidy     clang-tidy with .clang-tidy over every source file of the library
#                              and tools in build/desktop's compile_commands.json (configure
#                              the desktop preset first); about 75 s on 2 cores, and the test
#                              command runs it after the desktop build
#   scripts/lint.sh --fix      reformats the files in place
#
# Files under third_party/ and build/, and nanopb's generated *.pb.[ch], are never checked. Exits non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=format
case "${1:-}" in
  "") ;;
  --tidy) mode=tidy ;;
  --fix) mode=fix ;;
  *) echo "usage: scripts/lint.sh [--tidy | --fix]" >&2; exit 2 ;;
esac

# Every C and C++ file git knows, third-party code and nanopb's generated files excluded
# (scripts/nanopb_generate.sh writes those). Outside a git work tree (a tree from git archive
# or a tarball, as scripts/fresh_root_check.sh makes), the same files found on disk.
sources() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.inc' ':!:third_party/**' ':!:build/**' ':!:*.pb.h' ':!:*.pb.c'
  else
    find . \( -path ./third_party -o -path ./build -o -path ./.git \) -prune -o -type f \
      \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.inc' \) \
      ! -name '*.pb.h' ! -name '*.pb.c' -print | sed 's|^\./||' | sort
  fi
}

case $mode in
  format | fix)
    command -v clang-format >/dev/null || { echo "lint: clang-format not found; scripts/setup.sh installs it" >&2; exit 1; }
    mapfile -t files < <(sources)
    # No file found means the list is wrong, not that everything is formatted.
    [ ${#files[@]} -gt 0 ] || { echo "lint: no C or C++ file found under $(pwd)" >&2; exit 1; }
    if [ $mode = fix ]; then
      clang-format -i "${files[@]}"
      echo "lint: reformatted ${#files[@]} files"
      exit 0
    fi
    bad=()
    for f in "${files[@]}"; do
      clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
    done
    if [ ${#bad[@]} -gt 0 ]; then
      printf 'lint: not formatted as .clang-format says: %s\n' "${bad[@]}" >&2
      echo "lint: scripts/lint.sh --fix reformats them ($(clang-format --version))" >&2
      exit 1
    fi
    echo "lint: ${#files[@]} files formatted as .clang-format says"
    ;;
  tidy)
    command -v clang-tidy >/dev/null || { echo "lint: clang-tidy not found; scripts/setup.sh installs it" >&2; exit 1; }
    db=build/desktop/compile_commands.json
    [ -f "$db" ] || { echo "lint: no $db; run cmake --preset desktop first" >&2; exit 1; }
    # The library's and tools' own translation units (tests and benches follow other rules:
    # gtest macros trip several checks).
    # Only files the desktop build compiles (not the Windows or Android shims).
    mapfile -t files < <(sources | grep -E '^(core|platform|profiles|https|transfer|app|capi|tools)/.*\.(c|cpp)$' |
      python3 -c 'import json, os, sys
built = {os.path.realpath(e["file"]) for e in json.load(open(sys.argv[1]))}
for line in sys.stdin:
    if os.path.realpath(line.strip()) in built: print(line.strip())' "$db")
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    printf '%s\n' "${files[@]}" |
      xargs -P "$(nproc)" -n 4 clang-tidy -p build/desktop --quiet 2>/dev/null >"$log" || true
    findings=$(grep -cE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" || true)
    if [ "$findings" -gt 0 ]; then
      grep -E -A3 '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" >&2
      echo "lint: clang-tidy: $findings findings in ${#files[@]} files" >&2
      exit 1
    fi
    echo "lint: clang-tidy: no findings in ${#files[@]} files"
    ;;
esac
