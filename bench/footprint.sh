#!/usr/bin/env bash
# Prints the footprint of the core as markdown tables:
#   (a) sizeof/alignof of RetryMachine, RetryBudget, Policy and Xoshiro128 per target,
#       read from the assembly of a probe TU (so no target code is ever run);
#   (b) text/data/bss (GNU size, berkeley format) of core/src/*.cpp compiled at
#       -Os -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections, per target, with a
#       per-object and per-function breakdown for Cortex-M4.
# Targets: the host (g++), aarch64 (aarch64-linux-gnu-g++), armhf Thumb-2
# (arm-linux-gnueabihf-g++ -mthumb) and Cortex-M4 (arm-none-eabi-g++ -ffreestanding
# -mcpu=cortex-m4 -mthumb). A missing cross compiler is reported and skipped, except
# arm-none-eabi-g++: the Cortex-M4 build is the freestanding check, so its absence or any
# compile failure (warnings are errors) fails the script.
#
# Then, with third_party/ fetched (scripts/fetch_deps.sh), per Linux target a CMake build
# (MinSizeRel, static, --gc-sections) of the whole tree plus a get-only executable:
#   (c) text/data/bss of every component library (core, profiles, platform, our https
#       objects, nanopb, mbedTLS's three libraries), Cortex-M4 for core and profiles;
#   (d) sizeof of the contexts (RetryMachine, RetryBudget, https::Client, TlsClientConfig,
#       TlsTransport, TlsSession, TcpTransport, ResponseParser);
#   (e) the peak TLS arena of `stepback demo --trace` (cross targets under qemu-user);
#   (f) the stripped size of the static `stepback` and get-only `stepback-get`, and for
#       aarch64 what fills the latter, per archive and per C/C++ runtime member.
#
# Usage: bench/footprint.sh [--strict] [--core-only]
#   --strict     also exit 1 when the Cortex-M4 .text target is not met.
#   --core-only  only (a) and (b): no CMake builds (a few seconds instead of minutes).
# Environment: CXX (host compiler, default g++), KEEP_TMP=1 keeps the temp dir.
set -euo pipefail

readonly TARGET_TEXT=1024  # Bytes of core .text on Cortex-M4 at -Os.
readonly TYPES=(RetryMachine RetryBudget Policy Xoshiro128)

strict=0
core_only=0
for arg in "$@"; do
  case "$arg" in
    --strict) strict=1 ;;
    --core-only) core_only=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "footprint.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/stepback-footprint.XXXXXX")"
if [[ "${KEEP_TMP:-0}" == 1 ]]; then
  echo "footprint.sh: keeping $tmp" >&2
else
  trap 'rm -rf "$tmp"' EXIT
fi

host_cxx="${CXX:-g++}"
host_arch="$(uname -m)"
targets=(host aarch64 armhf cortex-m4)
declare -A label=(
  [host]="$host_arch (host)" [aarch64]="aarch64" [armhf]="armhf Thumb-2" [cortex-m4]="Cortex-M4")
declare -A compiler=(
  [host]="$host_cxx" [aarch64]=aarch64-linux-gnu-g++ [armhf]=arm-linux-gnueabihf-g++
  [cortex-m4]=arm-none-eabi-g++)
declare -A target_flags=(
  [host]="" [aarch64]="" [armhf]="-mthumb" [cortex-m4]="-ffreestanding -mcpu=cortex-m4 -mthumb")
# The host already is one of the cross targets' architectures on some machines; it is
# measured anyway, under its own label.
readonly common_flags=(-Os -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections
                       -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror)

# The binutils tool `tool` (size, nm) that matches compiler $1: a-b-c-g++ -> a-b-c-tool.
binutil() {
  local cc="$1" tool="$2"
  if [[ "$cc" == *-g++ ]] && command -v "${cc%g++}$tool" >/dev/null; then
    echo "${cc%g++}$tool"
  else
    echo "$tool"
  fi
}

# The probe: one 4-byte constant per figure, which the assembly shows as a plain number.
probe="$tmp/probe.cpp"
{
  echo '#include "stepback/core/budget.hpp"'
  echo '#include "stepback/core/policy.hpp"'
  echo '#include "stepback/core/random.hpp"'
  echo '#include "stepback/core/retry_machine.hpp"'
  echo 'extern "C" {'
  for t in "${TYPES[@]}"; do
    echo "extern const unsigned sb_size_$t = sizeof(stepback::$t);"
    echo "extern const unsigned sb_align_$t = alignof(stepback::$t);"
  done
  echo '}'
} >"$probe"

# The value of the 4-byte constant labelled $2 in assembly file $1.
asm_value() {
  awk -v sym="$2:" '
    $1 == sym { found = 1; next }
    found && $1 ~ /^\.(long|word|4byte|int)$/ { print $2; done = 1; exit }
    END { if (!done) exit 1 }' "$1"
}

declare -A available status
declare -A layout          # [target,type] -> "size / align"
declare -A tot_text tot_data tot_bss code_only
required_failed=0

for t in "${targets[@]}"; do
  cc="${compiler[$t]}"
  if ! command -v "$cc" >/dev/null; then
    available[$t]=0
    status[$t]="not installed ($cc)"
    [[ "$t" == cortex-m4 ]] && required_failed=1
    continue
  fi
  available[$t]=1
  dir="$tmp/$t"
  mkdir -p "$dir"
  # shellcheck disable=SC2206  # Flags are deliberately split on spaces.
  flags=(${target_flags[$t]} "${common_flags[@]}" -I"$repo/core/include")

  if ! "$cc" "${flags[@]}" -S "$probe" -o "$dir/probe.s" 2>"$dir/probe.err"; then
    echo "footprint.sh: $t: the layout probe does not compile:" >&2
    cat "$dir/probe.err" >&2
    exit 1
  fi
  for ty in "${TYPES[@]}"; do
    layout[$t,$ty]="$(asm_value "$dir/probe.s" "sb_size_$ty") / $(asm_value "$dir/probe.s" "sb_align_$ty")"
  done

  objects=()
  for src in "$repo"/core/src/*.cpp; do
    obj="$dir/$(basename "${src%.cpp}").o"
    if ! "$cc" "${flags[@]}" -c "$src" -o "$obj" 2>"$dir/compile.err"; then
      echo "footprint.sh: $t: $(basename "$src") does not compile with $cc${target_flags[$t]:+ ${target_flags[$t]}}:" >&2
      cat "$dir/compile.err" >&2
      exit 1
    fi
    objects+=("$obj")
  done
  size_tool="$(binutil "$cc" size)"
  "$size_tool" --format=berkeley "${objects[@]}" >"$dir/size.txt"
  read -r "tot_text[$t]" "tot_data[$t]" "tot_bss[$t]" < <(
    awk 'NR > 1 { t += $1; d += $2; b += $3 } END { print t, d, b }' "$dir/size.txt")
  # Code alone: the .text* sections, without the read-only data and unwind tables that
  # berkeley "text" also counts.
  for obj in "${objects[@]}"; do
    "$size_tool" -A "$obj" | awk '$1 ~ /^\.text($|\.)/ { s += $2 } END { print s + 0 }' >"$obj.code"
  done
  code_only[$t]="$(cat "$dir"/*.o.code | awk '{ s += $1 } END { print s }')"
  status[$t]="$("$cc" --version | sed -n 1p)"
done

if [[ "$required_failed" == 1 ]]; then
  echo "footprint.sh: arm-none-eabi-g++ is required (the Cortex-M4 freestanding check); install gcc-arm-none-eabi" >&2
  exit 1
fi

echo "## Core footprint"
echo
echo "### Compilers"
echo
for t in "${targets[@]}"; do
  echo "- ${label[$t]}: ${status[$t]}${target_flags[$t]:+, \`${target_flags[$t]}\`}"
done

echo
echo "### sizeof / alignof (bytes)"
echo
header="| type |"
rule="|---|"
for t in "${targets[@]}"; do
  [[ "${available[$t]}" == 1 ]] || continue
  header+=" ${label[$t]} |"
  rule+="---:|"
done
echo "$header"
echo "$rule"
for ty in "${TYPES[@]}"; do
  row="| \`$ty\` |"
  for t in "${targets[@]}"; do
    [[ "${available[$t]}" == 1 ]] && row+=" ${layout[$t,$ty]} |"
  done
  echo "$row"
done

echo
echo "### Core library, all of core/src/*.cpp (\`size\`, berkeley)"
echo
echo "\`-Os -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections\`, unlinked objects. Berkeley"
echo "\"text\" counts code plus read-only data (string and pointer tables, vtables) and unwind"
echo "tables; \"code only\" is the .text* sections. Linking with \`--gc-sections\` drops the"
echo "functions an application does not call (e.g. names.cpp without to_string())."
echo
echo "| target | text | data | bss | code only (.text*) |"
echo "|---|---:|---:|---:|---:|"
for t in "${targets[@]}"; do
  if [[ "${available[$t]}" == 1 ]]; then
    echo "| ${label[$t]} | ${tot_text[$t]} | ${tot_data[$t]} | ${tot_bss[$t]} | ${code_only[$t]} |"
  else
    echo "| ${label[$t]} | ${status[$t]} | | | |"
  fi
done

m4="$tmp/cortex-m4"
verdict() { if (( $1 <= TARGET_TEXT )); then echo "met"; else echo "NOT met"; fi; }
echo
echo "**Target: core .text <= $TARGET_TEXT bytes on Cortex-M4 at -Os.** Berkeley text"
echo "${tot_text[cortex-m4]} bytes: $(verdict "${tot_text[cortex-m4]}"); code only ${code_only[cortex-m4]} bytes: $(verdict "${code_only[cortex-m4]}")."

echo
echo "### Cortex-M4 by object"
echo
echo "| object | text | data | bss | code only (.text*) |"
echo "|---|---:|---:|---:|---:|"
awk 'NR > 1 { print }' "$m4/size.txt" | while read -r text data bss _ _ file; do
  echo "| $(basename "$file") | $text | $data | $bss | $(cat "$file.code") |"
done

echo
echo "### Cortex-M4 by symbol (code and read-only data, largest first)"
echo
echo "| symbol | section | bytes |"
echo "|---|---|---:|"
m4_nm="$(binutil "${compiler[cortex-m4]}" nm)"
m4_size="$(binutil "${compiler[cortex-m4]}" size)"
for obj in "$m4"/*.o; do
  # Function sections carry the mangled name of their one function; .rodata.str* sections
  # hold the merged string literals of one object.
  "$m4_size" -A "$obj" | awk -v o="$(basename "$obj")" \
    '$1 ~ /^\.(text|rodata)\./ && $2 > 0 { sec = $1; sub(/^\.(text|rodata)\./, "", sec);
       kind = ($1 ~ /^\.text/) ? ".text" : ".rodata";
       if (sec ~ /^str/) sec = "(string literals, " o ")"; print $2, kind, sec }'
  # Objects placed in plain .rodata/.data (tables, vtables) are named by nm.
  "$m4_nm" -S "$obj" | while read -r _ hex type sym; do
    case "$type" in
      r|R) echo "$((16#$hex)) .rodata $sym" ;;
      d|D) echo "$((16#$hex)) .data $sym" ;;
    esac
  done
done | sort -k1,1nr -k3 | "$(binutil "${compiler[cortex-m4]}" c++filt)" |
  while read -r bytes kind sym; do
    echo "| \`$sym\` | $kind | $bytes |"
  done
echo
undefined="$("$m4_nm" -u "$m4"/*.o | awk 'NF == 2 { print $2 }' | sort -u |
  grep -v '^_ZN8stepback' || true)"
echo "Runtime symbols the core needs: ${undefined:-none}."

echo
echo "### Cortex-M4 image (what firmware links)"
echo
# bench/m4_image.cpp uses the machine, budget, generator and network_available();
# --gc-sections keeps only what it reaches. Summed: every stepback function in the image.
"${compiler[cortex-m4]}" ${target_flags[cortex-m4]} "${common_flags[@]}" -fdata-sections \
  -I"$repo/core/include" "$repo/bench/m4_image.cpp" "$repo"/core/src/*.cpp \
  -Wl,--gc-sections --specs=nano.specs --specs=nosys.specs -o "$m4/image.elf" 2>"$m4/link.log" ||
  { cat "$m4/link.log" >&2; exit 1; }
image_text=$("$m4_nm" -S "$m4/image.elf" | awk '$3 ~ /^[Tt]$/ && $4 ~ /^_ZN8stepback/ { print $1, $2 }' |
  sort -u | while read -r _ hex; do echo "$((16#$hex))"; done | awk "{ s += \$1 } END { print s + 0 }")
echo "stepback code in a linked Cortex-M4 image (bench/m4_image.cpp, -Os, --gc-sections): **$image_text bytes** ($(verdict "$image_text") against $TARGET_TEXT)."

# ---------------------------------------------------------------------------------------
# Components: every library of a real build, per target, and the static `stepback get`.

if [[ "$core_only" == 1 ]]; then
  echo
  echo "(--core-only: the component, context, TLS arena and static \`stepback get\` figures are skipped.)"
elif [[ ! -f "$repo/third_party/mbedtls/CMakeLists.txt" || ! -f "$repo/third_party/nanopb/pb_decode.c" ]]; then
  echo
  echo "## Components"
  echo
  echo "Skipped: third_party/mbedtls and third_party/nanopb are missing (run scripts/fetch_deps.sh once; it needs the Debian mirror, this script does not)."
else
  # A wrapper project around the source tree, adding `stepback_get_min`: the `get`
  # subcommand alone (tools/get.cpp + a main), without demo, demo_server, sim and schedule's
  # main. Built here only; see the report for making it a real target.
  wrap="$tmp/wrapper"
  mkdir -p "$wrap"
  cat >"$wrap/get_main.cpp" <<'CPP'
// `stepback-get`: `stepback get` without the other subcommands.
#include "get.hpp"
int main(int argc, char** argv) {
  char name[] = "get";
  argv[0] = name;
  return stepback::tools::run_get(argc, argv);
}
CPP
  cat >"$wrap/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(stepback_footprint LANGUAGES C CXX)
add_subdirectory(${STEPBACK_SOURCE} stepback)
add_executable(stepback_get_min get_main.cpp ${STEPBACK_SOURCE}/tools/get.cpp
               ${STEPBACK_SOURCE}/tools/get_operation.cpp)
target_compile_definitions(stepback_get_min PRIVATE STEPBACK_VERSION="${stepback_VERSION}")
target_link_libraries(stepback_get_min PRIVATE stepback_tools stepback::https stepback::transfer)
CMAKE

  # Linux targets built with CMake: MinSizeRel (-Os), function/data sections, static and
  # --gc-sections links. Cortex-M4 has core (and profiles) only: compiled above.
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
    if cmake -G Ninja -S "$wrap" -B "$b" -DSTEPBACK_SOURCE="$repo" ${cmake_args[$t]} \
         -DCMAKE_C_COMPILER="${cc_c[$t]}" -DCMAKE_CXX_COMPILER="${compiler[$t]}" \
         -DCMAKE_BUILD_TYPE=MinSizeRel -DSTEPBACK_BUILD_TESTS=OFF -DSTEPBACK_BUILD_EXAMPLES=OFF \
         -DSTEPBACK_BUILD_TOOLS=ON \
         -DCMAKE_C_FLAGS="${target_flags[$t]} $section_flags" \
         -DCMAKE_CXX_FLAGS="${target_flags[$t]} $section_flags" \
         -DCMAKE_EXE_LINKER_FLAGS="-static -Wl,--gc-sections -Wl,-Map=$b/last.map" \
         >"$b.log" 2>&1 &&
       cmake --build "$b" --target stepback_cli >>"$b.log" 2>&1 &&
       cp "$b/last.map" "$b/stepback.map" &&
       cmake --build "$b" --target stepback_get_min >>"$b.log" 2>&1 &&
       cp "$b/last.map" "$b/stepback_get_min.map"; then
      built[$t]=1
    else
      echo "footprint.sh: $t: the CMake build failed (log below)" >&2
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
    [core]=stepback/core/libstepback_core.a [profiles]=stepback/profiles/libstepback_profiles.a
    [platform]=stepback/platform/libstepback_platform.a
    [https]="stepback/https/libstepback_https.a stepback/https/libstepback_mbedtls_time.a"
    [nanopb]=stepback/https/libstepback_nanopb.a
    [mbedtls]=stepback/third_party/mbedtls/library/libmbedtls.a
    [mbedx509]=stepback/third_party/mbedtls/library/libmbedx509.a
    [mbedcrypto]=stepback/third_party/mbedtls/library/libmbedcrypto.a)
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
  # Cortex-M4: the core objects from above, and profiles compiled the same way.
  if [[ "${available[cortex-m4]}" == 1 ]]; then
    # shellcheck disable=SC2086  # Flags are deliberately split on spaces.
    "${compiler[cortex-m4]}" ${target_flags[cortex-m4]} "${common_flags[@]}" -fdata-sections \
      -I"$repo/core/include" -I"$repo/profiles/include" -DSTEPBACK_PROFILE_MOBILE \
      -c "$repo/profiles/src/link_check.cpp" -o "$m4/link_check.o.profiles"
    comp[cortex-m4,core]=$(for o in "$m4"/*.o; do berkeley cortex-m4 "$o"; done | sum3)
    comp[cortex-m4,profiles]=$(berkeley cortex-m4 "$m4/link_check.o.profiles")
  fi

  echo
  echo "## Components"
  echo
  echo "Every library of a CMake build per target: \`MinSizeRel\` (-Os), \`-ffunction-sections"
  echo "-fdata-sections\`, profile: the default for the target (desktop on Linux). Figures are"
  echo "\`text / data / bss\` (GNU size, berkeley) of the unlinked archives; a link with"
  echo "\`--gc-sections\` keeps only what the program reaches (see the static \`stepback get\`"
  echo "below). Cortex-M4 has the core and the profiles only (bare metal, \`-DSTEPBACK_CORE_ONLY=ON\`)."
  echo
  header="| component |"
  rule="|---|"
  shown=()
  for t in "${targets[@]}"; do
    if [[ "$t" == cortex-m4 && "${available[$t]}" == 1 ]] || [[ "${built[$t]:-0}" == 1 ]]; then
      shown+=("$t")
      header+=" ${label[$t]} |"
      rule+="---:|"
    fi
  done
  echo "$header"
  echo "$rule"
  for c in "${components[@]}"; do
    row="| ${comp_label[$c]} |"
    for t in "${shown[@]}"; do
      if [[ -n "${comp[$t,$c]:-}" ]]; then row+=" $(echo "${comp[$t,$c]}" | fmt3) |"; else row+=" n/a |"; fi
    done
    echo "$row"
  done
  for total in "https with nanopb and mbedTLS:https nanopb mbedtls mbedx509 mbedcrypto" \
               "everything:core profiles platform https nanopb mbedtls mbedx509 mbedcrypto"; do
    row="| **${total%%:*}** |"
    for t in "${shown[@]}"; do
      if [[ "$t" == cortex-m4 ]]; then row+=" n/a |"; continue; fi
      row+=" **$(for c in ${total#*:}; do echo "${comp[$t,$c]}"; done | sum3 | fmt3)** |"
    done
    echo "$row"
  done

  # sizeof of the contexts an application holds, read from assembly as above.
  ctx_types=(RetryMachine RetryBudget https::Client https::TcpTlsConnector https::TlsClientConfig
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
      -I"$repo/https/include" -I"$repo/https/gcm/include" \
      -isystem "$repo/third_party/mbedtls/include" \
      -DMBEDTLS_CONFIG_FILE="\"$repo/https/config/stepback_mbedtls_config.h\"" \
      -DSTEPBACK_PROFILE_DESKTOP
    for ty in "${ctx_types[@]}"; do
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
  header="| type |"
  rule="|---|"
  for t in "${cmake_targets[@]}"; do
    [[ "${built[$t]}" == 1 ]] || continue
    header+=" ${label[$t]} |"
    rule+="---:|"
  done
  echo "$header"
  echo "$rule"
  for ty in "${ctx_types[@]}"; do
    row="| \`$ty\` |"
    for t in "${cmake_targets[@]}"; do
      [[ "${built[$t]}" == 1 ]] && row+=" ${ctx_size[$t,$ty]} |"
    done
    echo "$row"
  done

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
    done_line=$(timeout 120 "${run[@]}" "$tmp/build-$t/stepback/tools/stepback" demo --trace 2>&1 |
                grep '"event":"done"' || true)
    peak=$(sed -n 's/.*"arena_peak":\([0-9]*\).*/\1/p' <<<"$done_line")
    foot=$(sed -n 's/.*"arena_peak_footprint":\([0-9]*\).*/\1/p' <<<"$done_line")
    echo "| ${label[$t]} | ${peak:-(demo failed)} | ${foot:-} | \`${run[*]:+${run[*]} }stepback demo --trace\` (client and server together) |"
  done
  echo "| any | | | \`stepback get --trace https://HOST/\`: the client alone, \`arena_peak\` in the done event (needs a server; 30.6 KB measured on x86-64 for one TLS 1.3 GET with one trust anchor, 536 KB when the system CA bundle is loaded: tools/get.cpp) |"

  # The static binaries, stripped, and what fills them.
  echo
  echo "### Static \`stepback get\`, stripped"
  echo
  echo "\`-static -Wl,--gc-sections\`, glibc and libstdc++ of the cross toolchain, then \`strip\`."
  echo "\`stepback\` is the whole CLI (get, demo with its HTTPS server, schedule, sim);"
  echo "\`stepback-get\` is tools/get.cpp alone with a main (built by this script only)."
  echo
  readonly target_get_bytes=$((600 * 1024))
  echo "| target | \`stepback\` | \`stepback-get\` | target (aarch64): <= $target_get_bytes B |"
  echo "|---|---:|---:|---|"
  for t in "${cmake_targets[@]}"; do
    [[ "${built[$t]}" == 1 ]] || continue
    strip_tool="$(binutil "${compiler[$t]}" strip)"
    "$strip_tool" -o "$tmp/stepback-$t" "$tmp/build-$t/stepback/tools/stepback"
    "$strip_tool" -o "$tmp/stepback-get-$t" "$tmp/build-$t/stepback_get_min"
    full=$(stat -c %s "$tmp/stepback-$t")
    min=$(stat -c %s "$tmp/stepback-get-$t")
    verdict_get=""
    if [[ "$t" == aarch64 ]]; then
      if (( min <= target_get_bytes )); then verdict_get="met"; else verdict_get="**NOT met** ($((min / 1024)) KiB)"; fi
    fi
    echo "| ${label[$t]} | $full | $min | $verdict_get |"
  done

  # Where the bytes of the static stepback-get come from: the link map's input sections
  # (code, read-only data, data, unwind tables; not .bss), summed per archive.
  map_by_archive() {
    awk '
      function hex(h,  i, v) { h = tolower(h); sub(/^0x/, "", h); v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
      /^Linker script and memory map/ { on = 1; next }
      !on { next }
      /^ \.[^ ]+$/ { sec = $1; next }
      /^ (\.[^ ]+)?[ ]+0x[0-9a-f]+[ ]+0x[0-9a-f]+[ ]+[^ ]+/ {
        # " .sec 0xADDR 0xSIZE FILE" or, after a long section name, " 0xADDR 0xSIZE FILE".
        f = ($1 ~ /^\./) ? 2 : 1; s = (f == 2) ? $1 : sec; sec = ""
        if (s == "" || s ~ /^\.(debug|comment|note|gnu\.attributes|ARM\.attributes)/ || s ~ /bss/) next
        src = $(f + 2); sub(/\(.*\)$/, "", src); n = split(src, p, "/"); src = p[n]
        size = hex($(f + 1)); bytes[src] += size; total += size
      }
      END { for (k in bytes) printf "%d %s\n", bytes[k], k; printf "%d (total)\n", total }' "$1" |
      sort -k1,1nr
  }
  t=aarch64
  if [[ "${built[$t]:-0}" == 1 ]]; then
    map_by_archive "$tmp/build-$t/stepback_get_min.map" >"$tmp/get-by-archive.txt"
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
        if ($2 ~ /^lib(stepback|mbed)/ || $2 ~ /^get(_main)?\.cpp\.o$/) o += $1; else r += $1 }
        END { printf "%d %d\n", o, r }' "$tmp/get-by-archive.txt")
    echo
    echo "stepback (with get.cpp), nanopb and mbedTLS: **$ours bytes**; the C and C++ runtimes"
    echo "(glibc, libstdc++, libgcc, start files): **$runtime bytes**."
    echo
    echo "Largest members of the C and C++ runtimes in it:"
    echo
    echo "| member | bytes |"
    echo "|---|---:|"
    awk '
      function hex(h,  i, v) { h = tolower(h); sub(/^0x/, "", h); v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
      /^Linker script and memory map/ { on = 1; next }
      !on { next }
      /^ \.[^ ]+$/ { sec = $1; next }
      /^ (\.[^ ]+)?[ ]+0x[0-9a-f]+[ ]+0x[0-9a-f]+[ ]+[^ ]+/ {
        f = ($1 ~ /^\./) ? 2 : 1; s = (f == 2) ? $1 : sec; sec = ""
        if (s == "" || s ~ /^\.(debug|comment|note)/ || s ~ /bss/) next
        src = $(f + 2); if (src !~ /lib(c|stdc\+\+)\.a\(/) next
        n = split(src, p, "/"); bytes[p[n]] += hex($(f + 1))
      }
      END { for (k in bytes) printf "%d %s\n", bytes[k], k }' "$tmp/build-$t/stepback_get_min.map" |
      sort -k1,1nr | awk 'NR <= 12 { printf "| %s | %d |\n", $2, $1 }'
  fi
fi

if [[ "$strict" == 1 ]] && (( tot_text[cortex-m4] > TARGET_TEXT )); then
  echo "footprint.sh: Cortex-M4 core text ${tot_text[cortex-m4]} > $TARGET_TEXT bytes" >&2
  exit 1
fi
