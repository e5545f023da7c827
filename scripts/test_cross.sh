#!/usr/bin/env bash
# Builds and runs the cross targets: the freestanding core for Cortex-M4F (build only),
# then the linux-aarch64-mobile and linux-armhf-mobile workflows, whose tests (integration
# tests with real loopback servers included) run under qemu-user. Each ARM run must pass
# the same tests as the host's desktop run, save the host-only ones listed below: the
# desktop run's ctest output is the reference (its path as the first argument, as
# scripts/test.sh passes it; without one the desktop workflow runs here first). Prints the
# counts and the wall time of each part, and fails when the passed sets differ. (The ARM
# runs are the mobile profile; a host run of it would repeat their tests on x86.)
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests that pass on the host but not on a target, as "preset ctest-name reason"; each is
# expected to be missing from that target's passed tests (it skips there and says why).
not_on_target=(
  "linux-armhf-mobile https.mbedtls.gcm_test.GcmEngine.CounterWrapsModulo2To32 32-bit ARM has no pipelined AES-GCM engine; the software path's counter is mbedTLS's own"
)

# Tests the desktop build has and no ARM build can run, as "ctest-name-pattern reason".
host_only=(
  "netbench.* the latency bench drives the host's kernel (namespaces, NFQUEUE) as root"
  "tools.reachability.* network namespaces of the host's kernel, made as root"
  "tools.get_system_resolver.* the host's getaddrinfo in a network and mount namespace of the host's kernel (its /etc files bind-mounted), made as root"
  "consumers.add_subdirectory the source tree built once more inside a consumer project (2-3 minutes), on the desktop build only"
  "capi.python_ctypes libstepback.so (STEPBACK_SHARED_C_API) is built by the desktop preset only, and the host's Python loads it"
  "capi.shared_exports the same shared library's exports"
  "jvm.transfers the host's JVM loads the JNI library, which needs a JDK's jni.h (none for the cross targets)"
)

reference=${1:-}
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

if [ -z "$reference" ]; then
  run desktop cmake --workflow --preset desktop
  reference=$log_dir/desktop.log
fi
[ -s "$reference" ] || { echo "test_cross: no reference log '$reference'" >&2; exit 2; }
run cortex-m4-core cmake --workflow --preset cortex-m4-core
for preset in linux-aarch64-mobile linux-armhf-mobile; do
  run "$preset" cmake --workflow --preset "$preset"
done

: > "$log_dir/host.passed"
while read -r name; do
  for entry in "${host_only[@]}"; do
    read -r pattern _ <<< "$entry"
    # shellcheck disable=SC2053  # $pattern is a pattern.
    [[ "$name" == $pattern ]] && continue 2
  done
  echo "$name" >> "$log_dir/host.passed"
done < <(passed_tests "$reference")

echo "== pass counts"
echo "host (desktop): $(wc -l < "$log_dir/host.passed") passed, host-only tests left out:"
for entry in "${host_only[@]}"; do
  read -r pattern reason <<< "$entry"
  echo "  $pattern ($reason)"
done
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
