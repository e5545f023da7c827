#!/usr/bin/env bash
# Builds and runs the cross targets: the freestanding core for Cortex-M4F (build only),
# then the linux-aarch64-mobile and linux-armhf-mobile workflows, whose tests (integration
# tests with real loopback servers included) run under qemu-user. Each ARM run must pass
# the same tests as the host mobile run, which this script also runs; it prints both
# counts and the wall time of each part, and fails when they differ.
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests that pass on the host but not on a target, as "preset ctest-name reason"; each is
# expected to be missing from that target's passed tests (it skips there and says why).
not_on_target=(
  "linux-armhf-mobile https.gcm_test.GcmEngine.CounterWrapsModulo2To32 32-bit ARM has no pipelined AES-GCM engine; the software path's counter is mbedTLS's own"
)

log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
summary=()

# run <part> <command...>: runs a command with its output in $log_dir/<part>.log and on
# stdout, and records its wall time.
run() {
  local part=$1 start=$SECONDS
  shift
  echo "== $part"
  "$@" 2>&1 | tee "$log_dir/$part.log"
  summary+=("$(printf '%-24s %4d s' "$part" $((SECONDS - start)))")
}

# Names of the passed tests in a ctest log, sorted; a skipped test does not count.
passed_tests() {
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^ .]) *\.* +Passed .*/\1/p' "$1" | sort
}

run cortex-m4-core cmake --workflow --preset cortex-m4-core
run mobile cmake --workflow --preset mobile
for preset in linux-aarch64-mobile linux-armhf-mobile; do
  run "$preset" cmake --workflow --preset "$preset"
done

passed_tests "$log_dir/mobile.log" > "$log_dir/host.passed"

echo "== pass counts"
echo "host mobile: $(wc -l < "$log_dir/host.passed") passed"
status=0
for preset in linux-aarch64-mobile linux-armhf-mobile; do
  : > "$log_dir/$preset.not_on"
  for entry in "${not_on_target[@]}"; do
    read -r target name reason <<< "$entry"
    [ "$target" = "$preset" ] || continue
    echo "$preset: not expected to pass $name ($reason)"
    echo "$name" >> "$log_dir/$preset.not_on"
  done
  sort -o "$log_dir/$preset.not_on" "$log_dir/$preset.not_on"
  comm -23 "$log_dir/host.passed" "$log_dir/$preset.not_on" > "$log_dir/$preset.expected"
  passed_tests "$log_dir/$preset.log" > "$log_dir/$preset.passed"
  echo "$preset: $(wc -l < "$log_dir/$preset.passed") passed"
  if ! diff -u --label host --label "$preset" "$log_dir/$preset.expected" "$log_dir/$preset.passed"; then
    echo "test_cross: $preset does not pass the same tests as the host (diff above)" >&2
    status=1
  fi
done

echo "== wall time"
printf '%s\n' "${summary[@]}"
exit $status
