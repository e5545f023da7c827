#!/usr/bin/env bash
# The coverage figure of core/ and https/: builds the desktop configuration with clang's
# source-based coverage (-fprofile-instr-generate -fcoverage-mapping) in build/coverage, runs
# the unit and integration tests that exercise those layers (ctest -R '^(core|https|integration)\.'),
# and prints llvm-cov's line, region and branch summary per file of core/ and https/, and
# their totals. Run by hand (about 10 minutes on 2 cores); needs clang and llvm (llvm-cov,
# llvm-profdata: apt-get install llvm).
#
#   scripts/coverage.sh [ctest -R regex]
set -euo pipefail
cd "$(dirname "$0")/.."
regex=${1:-'^(core|https|integration)\.'}
build=build/coverage

for tool in clang++ llvm-profdata llvm-cov; do
  command -v $tool >/dev/null || { echo "coverage: $tool not found (apt-get install clang llvm)" >&2; exit 1; }
done

flags="-fprofile-instr-generate -fcoverage-mapping"
cmake --preset desktop -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DSTEPBACK_NETBENCH_TESTS=OFF \
  -DSTEPBACK_SOURCE_TREE_CONSUMER_TEST=OFF -DSTEPBACK_BUILD_FUZZERS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"

rm -rf "$build/profiles" && mkdir -p "$build/profiles"
LLVM_PROFILE_FILE="$PWD/$build/profiles/%p.profraw" \
  ctest --test-dir "$build" -R "$regex" -j "$(nproc)" --timeout 300 >"$build/ctest.log" ||
  { tail -20 "$build/ctest.log"; echo "coverage: some tests failed (see $build/ctest.log)" >&2; }
llvm-profdata merge -sparse "$build"/profiles/*.profraw -o "$build/coverage.profdata"

# Every executable that ran, as llvm-cov objects.
objects=()
while IFS= read -r exe; do
  objects+=(-object "$exe")
done < <(find "$build/tests" -type f -perm -u+x -name '*_test' | sort)
[ ${#objects[@]} -gt 0 ] || { echo "coverage: no test executables in $build/tests" >&2; exit 1; }

echo "== coverage of core/ and https/ ($regex)"
llvm-cov report "${objects[@]:1}" -instr-profile="$build/coverage.profdata" \
  --show-branch-summary --show-region-summary=false \
  "$PWD/core" "$PWD/https/src" "$PWD/https/include"
