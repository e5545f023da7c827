#!/usr/bin/env bash
# Builds and runs every test: the format check (scripts/lint.sh), the freestanding core
# check, the arrows between the rooms and the portability rules (scripts/check_layers.sh),
# the size gate (scripts/check_sizes.sh), the Windows and Android compile checks, the desktop (g++) and asan-ubsan (clang)
# workflows, the check that the library archives need no C++ runtime, clang-tidy
# (scripts/lint.sh --tidy), then scripts/test_cross.sh (Cortex-M4 core build, aarch64 and
# armhf under qemu, the desktop run's passed tests required of both). Ends with one line of totals
# over all ctest runs, and fails on a skipped test that is not on allowed_skips below.
# About 45 minutes on 2 cores from a cold build. Run it as root: the tests in root_only make
# network namespaces; run by another user they skip, and are allowed to, each listed as such.
set -euo pipefail
cd "$(dirname "$0")/.."

root_only=('netbench.*' 'tools.reachability.*' 'tools.get_system_resolver.*' 'integration.HappyEyeballsTest.*' 'integration.LoopbackOnlyTest.*')
if [[ $(id -u) -ne 0 ]]; then
  echo "test.sh: not root: ${root_only[*]} make network namespaces and will be skipped; run as root for every test"
fi

scripts/lint.sh
scripts/check_core.sh
scripts/check_layers.sh
scripts/check_sizes.sh
scripts/check_mingw.sh
scripts/check_android.sh

log=$(mktemp)
desktop_log=$(mktemp)
trap 'rm -f "$log" "$desktop_log"' EXIT
# The desktop run's output is also test_cross.sh's reference: the ARM runs must pass its tests.
echo "== workflow desktop" | tee -a "$log"
cmake --workflow --preset desktop 2>&1 | tee "$desktop_log" | tee -a "$log"
echo "== workflow asan-ubsan" | tee -a "$log"
cmake --workflow --preset asan-ubsan 2>&1 | tee -a "$log"
scripts/check_runtime_free.sh build/desktop
# clang-tidy over the library's and tools' sources, with the desktop build's compile commands.
scripts/lint.sh --tidy
scripts/test_cross.sh "$desktop_log" 2>&1 | tee -a "$log"

# ctest counts skipped tests among the passed ones; report them apart. A skip hides a missing
# set-up step or a broken target, so every skipped test fails the run unless it is listed here
# as "preset-pattern ctest-name-pattern reason" (shell patterns; scripts/test_cross.sh lists the
# target ones as not passing there).
heap_trap="the heap trap replaces malloc, which AddressSanitizer owns"
allowed_skips=(
  "linux-armhf-mobile https.mbedtls.gcm_test.GcmEngine.CounterWrapsModulo2To32 32-bit ARM has no pipelined AES-GCM engine; the software path's counter is mbedTLS's own"
  "asan-ubsan support.heap_trap_test.HeapTrap.TheTrapSeesHeapCalls $heap_trap"
  "asan-ubsan core.core_alloc_free_test.AllocFree.* $heap_trap"
  "asan-ubsan https.tls.trust_store_test.TrustStoreTest.LookupsUseNoHeap $heap_trap"
  "asan-ubsan https.integrity.integrity_test.IntegrityCheck.MakesNoHeapCalls $heap_trap"
  "asan-ubsan https.http.redirect_test.ResolveLocation.MakesNoHeapCalls $heap_trap"
  "asan-ubsan integration.HeapFreeTest.* $heap_trap"
  "asan-ubsan integration.TrustStoreGetTest.VerifiedRequestThroughTheStoreMakesNoHeapCalls $heap_trap"
  "asan-ubsan integration.ResolverHeapTest.* $heap_trap"
  "asan-ubsan integration.UploadHeapTest.* $heap_trap"
  "asan-ubsan transfer.transfer_download_test.Download.StepsAndCheckpointsMakeNoHeapCalls $heap_trap"
  "asan-ubsan transfer.transfer_download_test.Download.PauseAndResumeMakeNoHeapCalls $heap_trap"
  "asan-ubsan transfer.transfer_download_test.Download.PiecesMakeNoHeapCalls $heap_trap"
  "asan-ubsan transfer.transfer_download_test.KeptBytes.CheckingMakesNoHeapCalls $heap_trap"
  "asan-ubsan https.dns.hosts_file_test.HostsFileTest.ALargeFileIsReadInPiecesWithoutTheHeap $heap_trap"
  "asan-ubsan https.dns.system_resolver_test.SystemResolverTest.StartStepAndCancelMakeNoHeapCallOnTheLoopsThread $heap_trap"
  "asan-ubsan integration.memorystore.MemorystoreHeap.* $heap_trap"
  "asan-ubsan integration.CapiHeapFreeTest.* $heap_trap"
  "asan-ubsan app.app_defaults_test.AppDefaults.BuildingTheOptionsCallsNoHeapFunction $heap_trap"
)
if [[ $(id -u) -ne 0 ]]; then
  for name in "${root_only[@]}"; do
    allowed_skips+=("* $name not root: it makes network namespaces (run as root for it)")
  done
fi
read -r total failed < <(awk '/tests passed, .* tests failed out of/ { t += $NF; f += $4 } END { print t + 0, f + 0 }' "$log")
# "preset name" of every skipped test, the preset taken from the run's "== ..." header.
# (ctest indents that list with a tab.)
skips=$(awk '/^== / { preset = $NF } /^[ \t]+[0-9]+ - .* \(Skipped\)$/ {
               name = $0; sub(/^[ \t]+[0-9]+ - /, "", name); sub(/ \(Skipped\)$/, "", name)
               print preset, name }' "$log" | sort -u)
skipped=$(grep -cE '^\s+[0-9]+ - .* \(Skipped\)$' "$log" || true)
echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
unexpected=0
while read -r preset name; do
  [[ -n "$name" ]] || continue
  reason=""
  for entry in "${allowed_skips[@]}"; do
    read -r p n r <<< "$entry"
    # shellcheck disable=SC2053  # $p and $n are patterns.
    [[ "$preset" == $p && "$name" == $n ]] && reason=$r
  done
  if [[ -n "$reason" ]]; then
    echo "skipped as expected: [$preset] $name ($reason)"
  else
    echo "test.sh: FAILED: [$preset] $name was skipped (a missing set-up step? scripts/setup.sh)" >&2
    unexpected=$((unexpected + 1))
  fi
done <<< "$skips"
[[ $unexpected -eq 0 ]] || { echo "test.sh: $unexpected unexpected skip(s)" >&2; exit 1; }
