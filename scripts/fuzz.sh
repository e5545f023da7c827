#!/usr/bin/env bash
# Runs the libFuzzer targets by hand (ctest only replays their checked-in corpora).
#
#   scripts/fuzz.sh [-t NAME]... [-b BUILD_DIR] [-j JOBS] [-n] [-l] [SECONDS]
#
# Builds the fuzzers with clang in their own build folder (default build/fuzz: the
# asan-ubsan configure preset with -B; only the fuzz targets are built), then runs each
# target for SECONDS (default 1800) from its checked-in corpus, one after the other. New
# inputs go to BUILD_DIR/scratch/NAME, never into the checked-in corpus; a crash, leak or
# timeout input goes to BUILD_DIR/artifacts/NAME, and the whole output of a run to
# BUILD_DIR/logs/NAME.log. Prints per target the executions (libFuzzer's
# stat::number_of_executed_units), the CPU seconds the run got, the coverage and feature
# counts at the end, and whether it found anything; exits 1 if any target did. Several
# scripts/fuzz.sh -n -t ... may run at once (one per core): each target has its own files.
#
#   -t NAME  run only this target (repeatable); -l lists the names
#   -b DIR   build folder (default build/fuzz)
#   -j JOBS  build parallelism (default: all cores)
#   -n       do not configure or build (run what BUILD_DIR holds)
#
# Targets (sources in tests/fuzz/ unless said otherwise, corpora in tests/fuzz/corpus/):
#   http1_response_parser  ResponseParser, whole against sliced feeds
#   transfer_state         the transfer state record's decoder (tests/fuzz/transfer_state_fuzz.cpp)
#   operation_json         the Operation JSON reader
#   retry_after            parse_http_date() and parse_retry_after()
#   url                    parse_url()
#   redirect               resolve_location() against RFC 3986's text, and decide_redirect()
#   retry_info             the RetryInfo readers (protobuf and JSON) and parse_duration_string()
#   content_range          a 206's Content-Range and a 308's Range
#   x_goog_hash            x-goog-hash and Content-MD5, and the upload's metadata JSON scan
#
# To keep what a long run found, merge it into a copy of the checked-in corpus so that only
# inputs reaching new edges go in (keep a corpus to ~100 files and ~200 KB: the cross
# builds replay it under qemu), e.g. for url:
#   cp -r tests/fuzz/corpus/url /tmp/url && build/fuzz/tests/fuzz/url_fuzz -merge=1 \
#     -use_counters=0 /tmp/url build/fuzz/scratch/url
# then replace tests/fuzz/corpus/url with /tmp/url (the hand-written seeds keep their names).
set -euo pipefail
cd "$(dirname "$0")/.."

# name, executable under the build folder, corpus
targets=(
  "http1_response_parser tests/fuzz/http1_response_parser_fuzz tests/fuzz/corpus/response"
  "transfer_state tests/fuzz/transfer_state_fuzz tests/fuzz/corpus/transfer_state"
  "operation_json tests/fuzz/operation_json_fuzz tests/fuzz/corpus/operation"
  "retry_after tests/fuzz/retry_after_fuzz tests/fuzz/corpus/retry_after"
  "url tests/fuzz/url_fuzz tests/fuzz/corpus/url"
  "redirect tests/fuzz/redirect_fuzz tests/fuzz/corpus/redirect"
  "retry_info tests/fuzz/retry_info_fuzz tests/fuzz/corpus/retry_info"
  "content_range tests/fuzz/content_range_fuzz tests/fuzz/corpus/content_range"
  "x_goog_hash tests/fuzz/x_goog_hash_fuzz tests/fuzz/corpus/x_goog_hash"
)

usage() {
  echo "usage: scripts/fuzz.sh [-t NAME]... [-b BUILD_DIR] [-j JOBS] [-n] [-l] [SECONDS]" >&2
  exit 2
}

build=build/fuzz
jobs=$(nproc)
chosen=()
no_build=""
while getopts "t:b:j:nlh" opt; do
  case $opt in
    t) chosen+=("$OPTARG") ;;
    b) build=$OPTARG ;;
    j) jobs=$OPTARG ;;
    n) no_build=1 ;;
    l) for t in "${targets[@]}"; do echo "${t%% *}"; done; exit 0 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
seconds=${1:-1800}
[ $# -le 1 ] || usage
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SECONDS must be a positive integer" >&2; exit 2; }

selected=()
if [ ${#chosen[@]} -eq 0 ]; then
  selected=("${targets[@]}")
else
  for name in "${chosen[@]}"; do
    found=""
    for t in "${targets[@]}"; do
      [ "${t%% *}" = "$name" ] && found=$t
    done
    [ -n "$found" ] || { echo "fuzz: no target '$name' (scripts/fuzz.sh -l lists them)" >&2; exit 2; }
    selected+=("$found")
  done
fi

if [ -z "$no_build" ]; then
  echo "== build ($build)"
  mkdir -p "$build"
  cmake --preset asan-ubsan -B "$build" -DSTEPBACK_BUILD_FUZZERS=ON > "$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; exit 1; }
  build_targets=()
  for t in "${selected[@]}"; do
    read -r name exe corpus <<< "$t"
    build_targets+=("$(basename "$exe")")
  done
  cmake --build "$build" --parallel "$jobs" --target "${build_targets[@]}"
fi

failed=0
rows=()
for t in "${selected[@]}"; do
  read -r name exe corpus <<< "$t"
  scratch=$build/scratch/$name
  artifacts=$build/artifacts/$name
  log=$build/logs/$name.log
  mkdir -p "$scratch" "$artifacts" "$(dirname "$log")"
  echo "== $name: ${seconds} s"
  if [ ! -x "$build/$exe" ]; then
    rows+=("$(printf '%-22s not built: %s' "$name" "$build/$exe")")
    echo "${rows[-1]}"
    failed=1
    continue
  fi
  status=0
  # CPU seconds of the run (user + system), shown beside the executions: with other work on
  # the machine a run of SECONDS gets less than SECONDS of CPU, and the figure says how much.
  cpu_file=$build/logs/$name.cpu
  TIMEFORMAT='%U %S'
  # -timeout is wall-clock time: at 10 s, runs starved by builds beside them reported inputs
  # as timeouts that rerun alone in about a second; 60 s still catches a real hang.
  { time "$build/$exe" -max_total_time="$seconds" -print_final_stats=1 -max_len=4096 -timeout=60 \
    -artifact_prefix="$artifacts/" "$scratch" "$corpus" > "$log" 2>&1; } 2> "$cpu_file" || status=$?
  cpu=$(awk '{ printf "%d", $1 + $2 }' "$cpu_file" 2> /dev/null || true)
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
  if [ $status -ne 0 ] || grep -qE '^==[0-9]+== ?ERROR|^SUMMARY: ' "$log"; then
    verdict="FOUND (exit $status): $(grep -m1 -oE 'Test unit written to .*' "$log" || echo "see $log")"
    failed=1
  else
    verdict="nothing"
  fi
  rows+=("$(printf '%-22s %12s execs %6s s cpu  %-22s %s' "$name" "${execs:-?}" "${cpu:-?}" \
    "${cov:-cov: ?}" "$verdict")")
  echo "${rows[-1]}"
done

echo "== summary ($seconds s per target; logs in $build/logs)"
printf '%s\n' "${rows[@]}"
exit $failed
