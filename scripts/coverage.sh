#!/usr/bin/env bash
# The coverage figure of core/ and https/: builds the desktop configuration with clang's
# source-based coverage (-fprofile-instr-generate -fcoverage-mapping) in build/coverage, runs
# the unit and integration tests that exercise those layers (ctest -R '^(core|https|integration)\.'),
# and prints llvm-cov's region, function, line and branch summary per file of core/ and of
# https/ (its src/, include/ and the AES-GCM of gcm/; tests and third_party/ are not counted),
# each with its total, then the branches of core/ not taken both ways (also left in
# build/coverage/core_branches.txt, beside coverage.profdata, ctest.log, and core.txt /
# https.txt: llvm-cov show, the counts of every line and branch). Run by hand: on 2 cores
# about 13 minutes from scratch, 5 once built.
#
# Needs clang, its profile runtime and llvm (llvm-profdata, llvm-cov); on Debian
#   apt-get install clang libclang-rt-14-dev llvm
# CI does not run coverage, so scripts/setup.sh does not install llvm.
#
#   scripts/coverage.sh [ctest -R regex]
set -euo pipefail
cd "$(dirname "$0")/.."
regex=${1:-'^(core|https|integration)\.'}
build=build/coverage

for tool in clang++ llvm-profdata llvm-cov python3; do
  command -v $tool >/dev/null || { echo "coverage: $tool not found (apt-get install clang libclang-rt-14-dev llvm python3)" >&2; exit 1; }
done

flags="-fprofile-instr-generate -fcoverage-mapping"
cmake --preset desktop -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DSTEPBACK_NETBENCH_TESTS=OFF \
  -DSTEPBACK_SOURCE_TREE_CONSUMER_TEST=OFF -DSTEPBACK_BUILD_FUZZERS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"

# %m: one raw profile per executable, merged as each test process exits. A file per process
# (%p) would be one per test, each the size of all the executable's counters (mbedTLS's too).
rm -rf "$build/profiles" && mkdir -p "$build/profiles"
LLVM_PROFILE_FILE="$PWD/$build/profiles/%m.profraw" \
  ctest --test-dir "$build" -R "$regex" -j "$(nproc)" --timeout 300 >"$build/ctest.log" ||
  { tail -20 "$build/ctest.log"; echo "coverage: some tests failed (see $build/ctest.log)" >&2; }
llvm-profdata merge -sparse "$build"/profiles/*.profraw -o "$build/coverage.profdata"

# The executables of the build that the selected tests ran (GoogleTest binaries under
# build/coverage/tests/<component>/, the fuzz corpus replays of tests/fuzz/, ...), from ctest's
# own list of their commands; interpreters (bash, python3) are not build outputs.
mapfile -t exes < <(ctest --test-dir "$build" -R "$regex" --show-only=json-v1 | python3 -c '
import json, os, sys
build = os.path.realpath(sys.argv[1]) + os.sep
exes = {os.path.realpath(t["command"][0]) for t in json.load(sys.stdin)["tests"] if t.get("command")}
print("\n".join(sorted(e for e in exes if e.startswith(build) and os.access(e, os.X_OK))))
' "$build")
[ ${#exes[@]} -gt 0 ] || { echo "coverage: no test executables of $build match $regex" >&2; exit 1; }
objects=("${exes[0]}")
for exe in "${exes[@]:1}"; do objects+=(-object "$exe"); done
cov=("${objects[@]}" -instr-profile="$build/coverage.profdata")

# llvm-cov, without its warning that some hundreds of "functions have mismatched data": those
# are the empty records (hash 0) a binary carries for inline functions it includes but never
# calls, and the binaries that do call them give their counts (llvm-cov --dump lists them).
llvm_cov() {
  local err status=0
  err=$(mktemp)
  llvm-cov "$@" 2>"$err" || status=$?
  grep -v 'functions have mismatched data$' "$err" >&2 || true
  rm -f "$err"
  return $status
}

for part in core https; do
  echo "== coverage of $part/ (ctest -R '$regex', ${#exes[@]} executables)"
  llvm_cov report "${cov[@]}" --show-region-summary --show-branch-summary "$PWD/$part"
  llvm_cov show "${cov[@]}" -show-branches=count "$PWD/$part" >"$build/$part.txt"
done

# Branches of core/ with a side never taken, from llvm-cov show's "Branch (line:col): [True: n,
# False: m]" lines (a template's branches once per instantiation).
echo "== branches of core/ not taken both ways"
awk -v root="$PWD/" '
  /^\/.*:$/ { file = substr($0, 1, length($0) - 1); sub(root, "", file) }
  /Branch \([0-9]+:[0-9]+\): \[True: / {
    match($0, /Branch \([0-9]+:[0-9]+\)/)
    where = substr($0, RSTART + 8, RLENGTH - 9)
    split(where, lc, ":")
    never = ""
    if ($0 ~ /True: 0,/) never = "true"
    if ($0 ~ /False: 0\]/) never = never == "" ? "false" : "either"
    if (never != "") printf "%s:%s:%s: never %s\n", file, lc[1], lc[2], never
  }' "$build/core.txt" | sort -t: -k1,1 -k2,2n -k3,3n -u >"$build/core_branches.txt"
if [ -s "$build/core_branches.txt" ]; then cat "$build/core_branches.txt"; else echo "none"; fi

# A function no test ran has no branch counted above; these are listed apart.
echo "== functions of core/ no test ran"
llvm_cov report --show-functions "${cov[@]}" "$PWD/core" | awk -v root="$PWD/" '
  /^File / { file = substr($2, 2, length($2) - 3); sub(root, "", file) }
  $1 != "TOTAL" && $2 ~ /^[0-9]+$/ && $2 > 0 && $2 == $3 { print file ": " $1; n++ }
  END { if (!n) print "none" }' | c++filt
