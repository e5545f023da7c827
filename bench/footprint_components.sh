#!/usr/bin/env bash
# Prints the footprint of the whole tree as markdown tables (minutes; run by hand). Per Linux
# target (the host, aarch64, armhf Thumb-2) a CMake build of this tree (MinSizeRel,
# -ffunction-sections -fdata-sections, static links with --gc-sections and a linker map), then:
#   (c) text/data/bss of every component library (core, profiles, platform, our https
#       objects, nanopb, mbedTLS's three libraries), Cortex-M4 for core and profiles;
#   (d) sizeof of the contexts (RetryMachine, RetryBudget, https::Client, TcpConnector, TcpTlsConnector,
#       TlsClientConfig, TlsTransport, TlsSession, TcpTransport, ResponseParser);
#   (e) the peak TLS arena of `stepback demo --trace` (cross targets under qemu-user);
#   (f) the stripped size of the static `stepback` CLI (stepback_cli) and of `stepback-get`
#       (stepback_get, tools/CMakeLists.txt: the get command alone), and for aarch64 what
#       fills the latter, per archive and per C/C++ runtime member.
# A target whose compilers (g++ and gcc) are not installed is skipped; a failed build fails
# the script. Needs third_party/ (scripts/fetch_deps.sh), cmake and ninja; arm-none-eabi-g++
# for the Cortex-M4 column. The core's own figures, (a) and (b), are
# bench/footprint_core.sh's.
#
# Usage: bench/footprint_components.sh
# Environment: CXX and CC (host compilers, default g++ and gcc), KEEP_TMP=1 keeps the temp
# dir (builds and linker maps), CMAKE_BUILD_PARALLEL_LEVEL (build jobs).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

for arg in "$@"; do
  case "$arg" in
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "footprint_components.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

if [[ ! -f "$repo/third_party/mbedtls/CMakeLists.txt" || ! -f "$repo/third_party/nanopb/pb_decode.c" ]]; then
  echo "## Components"
  echo
  echo "Skipped: third_party/mbedtls and third_party/nanopb are missing (run scripts/fetch_deps.sh once; it needs the Debian mirror, this script does not)."
  exit 0
fi
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || { echo "footprint_components.sh: '$tool' not found (scripts/setup.sh)" >&2; exit 1; }
done

sb_tmpdir footprint_components.sh stepback-footprint
fp_targets
declare -A available
for t in "${targets[@]}"; do
  if command -v "${compiler[$t]}" >/dev/null; then available[$t]=1; else available[$t]=0; fi
done

# Linux targets built with CMake: MinSizeRel (-Os), function/data sections, static and
# --gc-sections links. Cortex-M4 has core and profiles only: compiled below, as
# bench/footprint_core.sh compiles the core.
cmake_targets=(host aarch64 armhf)
declare -A cc_c=([host]="${CC:-gcc}" [aarch64]=aarch64-linux-gnu-gcc [armhf]=arm-linux-gnueabihf-gcc)
declare -A cmake_args=(
  [host]=""
  [aarch64]="-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64"
  [armhf]="-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=arm")
declare -A emulator=([host]="" [aarch64]=qemu-aarch64 [armhf]=qemu-arm)
declare -A built
readonly section_flags="-ffunction-sections -fdata-sections"
for t in "${cmake_targets[@]}"; do
  built[$t]=0
  if [[ "${available[$t]}" != 1 ]] || ! command -v "${cc_c[$t]}" >/dev/null; then continue; fi
  b="$tmp/build-$t"
  # shellcheck disable=SC2086  # cmake_args are deliberately split on spaces.
  if cmake -G Ninja -S "$repo" -B "$b" ${cmake_args[$t]} \
       -DCMAKE_C_COMPILER="${cc_c[$t]}" -DCMAKE_CXX_COMPILER="${compiler[$t]}" \
       -DCMAKE_BUILD_TYPE=MinSizeRel -DSTEPBACK_BUILD_TESTS=OFF -DSTEPBACK_BUILD_EXAMPLES=OFF \
       -DSTEPBACK_BUILD_TOOLS=ON -DSTEPBACK_BUILD_BENCH=OFF -DSTEPBACK_INSTALL=OFF \
       -DCMAKE_C_FLAGS="${target_flags[$t]} $section_flags" \
       -DCMAKE_CXX_FLAGS="${target_flags[$t]} $section_flags" \
       -DCMAKE_EXE_LINKER_FLAGS="-static -Wl,--gc-sections -Wl,-Map=$b/last.map" \
       >"$b.log" 2>&1 &&
     cmake --build "$b" --target stepback_cli >>"$b.log" 2>&1 &&
     cp "$b/last.map" "$b/stepback.map" &&
     cmake --build "$b" --target stepback_get >>"$b.log" 2>&1 &&
     cp "$b/last.map" "$b/stepback-get.map"; then
    built[$t]=1
  else
    echo "footprint_components.sh: $t: the CMake build failed (log below)" >&2
    tail -n 30 "$b.log" >&2
    exit 1
  fi
done

# "text data bss" of archive or object $2 (berkeley, summed) with target $1's size.
berkeley() {
  "$(binutil "${compiler[$1]}" size)" -t "$2" | tail -n 1 | awk '{ print $1, $2, $3 }'
}
# Sums "text data bss" lines read from stdin.
sum3() { awk '{ t += $1; d += $2; b += $3 } END { print t + 0, d + 0, b + 0 }'; }
fmt3() { awk '{ printf "%d / %d / %d", $1, $2, $3 }'; }

components=(core profiles platform https nanopb mbedtls mbedx509 mbedcrypto)
declare -A archive=(
  [core]=core/libstepback_core.a [profiles]=profiles/libstepback_profiles.a
  [platform]=platform/libstepback_platform.a
  [https]="https/libstepback_https.a https/libstepback_mbedtls_time.a"
  [nanopb]=https/libstepback_nanopb.a
  [mbedtls]=third_party/mbedtls/library/libmbedtls.a
  [mbedx509]=third_party/mbedtls/library/libmbedx509.a
  [mbedcrypto]=third_party/mbedtls/library/libmbedcrypto.a)
declare -A comp_label=(
  [core]="core (\`stepback::core\`)" [profiles]="profiles" [platform]="platform (clock, entropy)"
  [https]="https, our objects (incl. mbedtls_time)" [nanopb]="nanopb runtime (decoder)"
  [mbedtls]="mbedTLS: libmbedtls" [mbedx509]="mbedTLS: libmbedx509"
  [mbedcrypto]="mbedTLS: libmbedcrypto")
declare -A comp  # [target,component] -> "text data bss"

for t in "${cmake_targets[@]}"; do
  [[ "${built[$t]}" == 1 ]] || continue
  for c in "${components[@]}"; do
    comp[$t,$c]=$(for a in ${archive[$c]}; do berkeley "$t" "$tmp/build-$t/$a"; done | sum3)
  done
done
# Cortex-M4: the core objects as bench/footprint_core.sh compiles them (without
# -fdata-sections), and profiles with -fdata-sections.
if [[ "${available[cortex-m4]}" == 1 ]]; then
  m4="$tmp/cortex-m4"
  mkdir -p "$m4"
  # shellcheck disable=SC2206  # Flags are deliberately split on spaces.
  m4_flags=(${target_flags[cortex-m4]} "${common_flags[@]}")
  for src in "$repo"/core/src/*.cpp; do
    "${compiler[cortex-m4]}" "${m4_flags[@]}" -I"$repo/core/include" \
      -c "$src" -o "$m4/$(basename "${src%.cpp}").o"
  done
  "${compiler[cortex-m4]}" "${m4_flags[@]}" -fdata-sections \
    -I"$repo/core/include" -I"$repo/profiles/include" -DSTEPBACK_PROFILE_MOBILE \
    -c "$repo/profiles/src/link_check.cpp" -o "$m4/link_check.o.profiles"
  comp[cortex-m4,core]=$(for o in "$m4"/*.o; do berkeley cortex-m4 "$o"; done | sum3)
  comp[cortex-m4,profiles]=$(berkeley cortex-m4 "$m4/link_check.o.profiles")
fi

echo "## Components"
echo
echo "Every library of a CMake build per target: \`MinSizeRel\` (-Os), \`-ffunction-sections"
echo "-fdata-sections\`, profile: the default for the target (desktop on Linux). Figures are"
echo "\`text / data / bss\` (GNU size, berkeley) of the unlinked archives; a link with"
echo "\`--gc-sections\` keeps only what the program reaches (see the static \`stepback get\`"
echo "below). Cortex-M4 has the core and the profiles only (bare metal, \`-DSTEPBACK_CORE_ONLY=ON\`)."
echo
shown=()
for t in "${targets[@]}"; do
  if [[ "$t" == cortex-m4 && "${available[$t]}" == 1 ]] || [[ "${built[$t]:-0}" == 1 ]]; then
    shown+=("$t")
  fi
done
fp_head component "${shown[@]}"
for c in "${components[@]}"; do
  cells=()
  for t in "${shown[@]}"; do
    if [[ -n "${comp[$t,$c]:-}" ]]; then cells+=("$(echo "${comp[$t,$c]}" | fmt3)"); else cells+=("n/a"); fi
  done
  md_row "${comp_label[$c]}" "${cells[@]}"
done
for total in "https with nanopb and mbedTLS:https nanopb mbedtls mbedx509 mbedcrypto" \
             "everything:core profiles platform https nanopb mbedtls mbedx509 mbedcrypto"; do
  cells=()
  for t in "${shown[@]}"; do
    if [[ "$t" == cortex-m4 ]]; then cells+=("n/a"); continue; fi
    # shellcheck disable=SC2086  # The component list is split on spaces.
    cells+=("**$(for c in ${total#*:}; do echo "${comp[$t,$c]}"; done | sum3 | fmt3)**")
  done
  md_row "**${total%%:*}**" "${cells[@]}"
done

# sizeof of the contexts an application holds, read from assembly as above.
ctx_types=(RetryMachine RetryBudget https::Client https::TcpConnector https::TcpTlsConnector https::TlsClientConfig
           https::TlsTransport https::TlsSession https::TcpTransport https::ResponseParser)
ctx_probe="$tmp/ctx_probe.cpp"
{
  echo '#include "stepback/core/budget.hpp"'
  echo '#include "stepback/core/retry_machine.hpp"'
  echo '#include "stepback/https/client.hpp"'
  echo '#include "stepback/https/tcp_tls_connector.hpp"'
  echo 'extern "C" {'
  for ty in "${ctx_types[@]}"; do
    echo "extern const unsigned sb_ctx_${ty//::/_} = sizeof(stepback::$ty);"
  done
  echo '}'
} >"$ctx_probe"
declare -A ctx_size
for t in "${cmake_targets[@]}"; do
  [[ "${built[$t]}" == 1 ]] || continue
  # shellcheck disable=SC2086
  "${compiler[$t]}" ${target_flags[$t]} -Os -std=c++17 -S "$ctx_probe" -o "$tmp/ctx-$t.s" \
    -I"$repo/core/include" -I"$repo/profiles/include" -I"$repo/platform/include" \
    -I"$repo/https/include" -I"$repo/https/mbedtls/gcm/include" \
    -isystem "$repo/third_party/mbedtls/include" \
    -DMBEDTLS_CONFIG_FILE="\"$repo/https/mbedtls/stepback_mbedtls_config.h\"" \
    -DSTEPBACK_PROFILE_DESKTOP
  for ty in "${ctx_types[@]}"; do
    # shellcheck disable=SC2034  # Read by fp_type_table.
    ctx_size[$t,$ty]=$(asm_value "$tmp/ctx-$t.s" "sb_ctx_${ty//::/_}")
  done
done
echo
echo "### sizeof of the contexts (bytes)"
echo
echo "What an application holds per client or connection. \`https::Client\` contains its"
echo "RetryMachine, ResponseParser, TcpTransport, TlsTransport and TlsSession; one"
echo "\`TlsClientConfig\` (CA chain, DRBG, entropy) is shared by the clients of a process."
echo "Buffers are the caller's and not included. Cortex-M4: see the core table above."
echo
linux=()  # The Linux targets built.
for t in "${cmake_targets[@]}"; do
  [[ "${built[$t]}" == 1 ]] && linux+=("$t")
done
fp_type_table ctx_types ctx_size "${linux[@]}"

# The TLS arena's peak over `stepback demo` (client and server in one process, one TLS
# 1.3 connection, three attempts), from the done event of --trace.
echo
echo "### Peak TLS arena"
echo
echo "| target | peak bytes | with block headers | command |"
echo "|---|---:|---:|---|"
for t in "${cmake_targets[@]}"; do
  [[ "${built[$t]}" == 1 ]] || continue
  run=()
  if [[ -n "${emulator[$t]}" ]]; then
    if ! command -v "${emulator[$t]}" >/dev/null; then
      echo "| ${label[$t]} | | | needs ${emulator[$t]} (qemu-user) |"
      continue
    fi
    run=("${emulator[$t]}")
  fi
  done_line=$(timeout 120 "${run[@]}" "$tmp/build-$t/tools/stepback" demo --trace 2>&1 |
              grep '"event":"done"' || true)
  peak=$(sed -n 's/.*"arena_peak":\([0-9]*\).*/\1/p' <<<"$done_line")
  foot=$(sed -n 's/.*"arena_peak_footprint":\([0-9]*\).*/\1/p' <<<"$done_line")
  echo "| ${label[$t]} | ${peak:-(demo failed)} | ${foot:-} | \`${run[*]:+${run[*]} }stepback demo --trace\` (client and server together) |"
done
echo "| any | | | \`stepback get --trace https://HOST/\`: the client alone, \`arena_peak\` in the done event (needs a server; 30.6 KB measured on x86-64 for one TLS 1.3 GET with one trust anchor, 536 KB when the system CA bundle is loaded: tools/get.cpp) |"

# The static binaries, stripped, and what fills them.
echo
echo "### Static \`stepback\` and \`stepback-get\`, stripped"
echo
echo "\`-static -Wl,--gc-sections\`, glibc and libstdc++ of the cross toolchain, then \`strip\`."
echo "\`stepback\` is the whole CLI (get, demo with its HTTPS server, schedule, sim: target"
echo "stepback_cli); \`stepback-get\` is the get command alone (target stepback_get,"
echo "tools/get_main.cpp; both in tools/CMakeLists.txt)."
echo
readonly target_get_bytes=$((600 * 1024))
echo "| target | \`stepback\` | \`stepback-get\` | target (aarch64): <= $target_get_bytes B |"
echo "|---|---:|---:|---|"
for t in "${cmake_targets[@]}"; do
  [[ "${built[$t]}" == 1 ]] || continue
  strip_tool="$(binutil "${compiler[$t]}" strip)"
  "$strip_tool" -o "$tmp/stepback-$t" "$tmp/build-$t/tools/stepback"
  "$strip_tool" -o "$tmp/stepback-get-$t" "$tmp/build-$t/tools/stepback-get"
  full=$(stat -c %s "$tmp/stepback-$t")
  min=$(stat -c %s "$tmp/stepback-get-$t")
  verdict_get=""
  if [[ "$t" == aarch64 ]]; then
    if (( min <= target_get_bytes )); then verdict_get="met"; else verdict_get="**NOT met** ($((min / 1024)) KiB)"; fi
  fi
  echo "| ${label[$t]} | $full | $min | $verdict_get |"
done
if command -v curl >/dev/null; then
  curl_total="$(ldd "$(command -v curl)" | awk '$3 ~ /^\// { print $3 }' | xargs -r stat -L -c %s |
    awk -v c="$(stat -L -c %s "$(command -v curl)")" '{ s += $1 } END { print s + c }')"
  echo
  echo "For scale: curl and the shared libraries it loads (ldd) are $curl_total bytes on this host."
fi

# Where the bytes of the static stepback-get come from: the link map's input sections
# (code, read-only data, data, unwind tables; not .bss), per archive and runtime member.
t=aarch64
if [[ "${built[$t]:-0}" == 1 ]]; then
  map_by_archive "$tmp/build-$t/stepback-get.map" >"$tmp/get-by-archive.txt"
  total=$(awk '$2 == "(total)" { print $1 }' "$tmp/get-by-archive.txt")
  echo
  echo "#### What fills the static \`stepback-get\` (${label[$t]})"
  echo
  echo "Bytes of the input sections the link kept (code, read-only data, data, unwind"
  echo "tables; .bss excluded), by archive, from the linker map:"
  echo
  echo "| from | bytes | share |"
  echo "|---|---:|---:|"
  awk -v total="$total" '$2 != "(total)" && $1 >= 1024 {
      printf "| %s | %d | %.1f%% |\n", $2, $1, 100 * $1 / total }' "$tmp/get-by-archive.txt"
  awk -v total="$total" '$2 != "(total)" && $1 < 1024 { s += $1 }
      END { printf "| (smaller ones) | %d | %.1f%% |\n", s, 100 * s / total }' "$tmp/get-by-archive.txt"
  echo "| **total** | **$total** | |"
  read -r ours runtime < <(awk '$2 != "(total)" {
      if ($2 ~ /^lib(stepback|mbed|cares)/ || $2 ~ /^get(_main|_operation)?\.cpp\.o$/) o += $1; else r += $1 }
      END { printf "%d %d\n", o, r }' "$tmp/get-by-archive.txt")
  echo
  echo "stepback (with tools/get*.cpp), nanopb, mbedTLS and c-ares: **$ours bytes**; the C and"
  echo "C++ runtimes (glibc, libstdc++, libgcc, start files): **$runtime bytes**."
  echo
  echo "Largest members of the C and C++ runtimes in it:"
  echo
  echo "| member | bytes |"
  echo "|---|---:|"
  map_runtime_members "$tmp/build-$t/stepback-get.map" |
    awk 'NR <= 12 { printf "| %s | %d |\n", $2, $1 }'
fi
