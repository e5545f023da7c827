#!/usr/bin/env bash
# Prints the footprint of the core as markdown tables (seconds; .ci/run runs it):
#   (a) sizeof/alignof of RetryMachine, RetryBudget, Policy and Xoshiro128 per target,
#       read from the assembly of a probe TU (so no target code is ever run);
#   (b) text/data/bss (GNU size, berkeley format) of core/src/*.cpp compiled at
#       -Os -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections, per target, with a
#       per-object and per-function breakdown for Cortex-M4 and the stepback code of a
#       linked Cortex-M4 image (bench/m4_image.cpp).
# Targets: the host (g++), aarch64 (aarch64-linux-gnu-g++), armhf Thumb-2
# (arm-linux-gnueabihf-g++ -mthumb) and Cortex-M4 (arm-none-eabi-g++ -ffreestanding
# -mcpu=cortex-m4 -mthumb). A missing cross compiler is reported and skipped, except
# arm-none-eabi-g++: the Cortex-M4 build is the freestanding check, so its absence or any
# compile failure (warnings are errors) fails the script.
#
# The components, contexts, TLS arena and static binaries (CMake builds, minutes) are
# bench/footprint_components.sh's.
#
# Usage: bench/footprint_core.sh [--strict]
#   --strict     also exit 1 when the stepback code in the linked Cortex-M4 image (the target in
#                docs/performance.md, TARGET_TEXT below) is over it.
# Environment: CXX (host compiler, default g++), KEEP_TMP=1 keeps the temp dir.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

readonly TARGET_TEXT=1024  # Bytes of stepback code in a linked Cortex-M4 image at -Os.
readonly TYPES=(RetryMachine RetryBudget Policy Xoshiro128)

strict=0
for arg in "$@"; do
  case "$arg" in
    --strict) strict=1 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "footprint_core.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

sb_tmpdir footprint_core.sh stepback-footprint
fp_targets

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
    echo "footprint_core.sh: $t: the layout probe does not compile:" >&2
    cat "$dir/probe.err" >&2
    exit 1
  fi
  for ty in "${TYPES[@]}"; do
    # shellcheck disable=SC2034  # Read by fp_type_table.
    layout[$t,$ty]="$(asm_value "$dir/probe.s" "sb_size_$ty") / $(asm_value "$dir/probe.s" "sb_align_$ty")"
  done

  objects=()
  for src in "$repo"/core/src/*.cpp; do
    obj="$dir/$(basename "${src%.cpp}").o"
    if ! "$cc" "${flags[@]}" -c "$src" -o "$obj" 2>"$dir/compile.err"; then
      echo "footprint_core.sh: $t: $(basename "$src") does not compile with $cc${target_flags[$t]:+ ${target_flags[$t]}}:" >&2
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
  echo "footprint_core.sh: arm-none-eabi-g++ is required (the Cortex-M4 freestanding check); install gcc-arm-none-eabi" >&2
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
measured=()  # The targets whose compiler is installed.
for t in "${targets[@]}"; do
  [[ "${available[$t]}" == 1 ]] && measured+=("$t")
done
fp_type_table TYPES layout "${measured[@]}"

echo
echo "### Core library, all of core/src/*.cpp (\`size\`, berkeley)"
echo
echo "\`-Os -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections\`, unlinked objects. Berkeley"
echo "\"text\" counts code plus read-only data (string and pointer tables, vtables) and unwind"
echo "tables; \"code only\" is the .text* sections. Linking with \`--gc-sections\` drops the"
echo "functions an application does not call (e.g. names.cpp without to_string())."
echo
md_head target text data bss "code only (.text*)"
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
echo "All of core/src on Cortex-M4 (RateLimiter, ProgressMeter and the to_string() tables"
echo "included, which a retry loop does not link): berkeley text ${tot_text[cortex-m4]} bytes, code"
echo "only ${code_only[cortex-m4]} bytes. The target (<= $TARGET_TEXT bytes) is judged on the linked image below."

echo
echo "### Cortex-M4 by object"
echo
md_head object text data bss "code only (.text*)"
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
  grep -vE '^_ZNK?8stepback' || true)"
echo "Runtime symbols the core needs: ${undefined:-none}."

echo
echo "### Cortex-M4 image (what firmware links)"
echo
# bench/m4_image.cpp uses the machine, budget, generator and network_available();
# --gc-sections keeps only what it reaches. Summed: every stepback function in the image.
# shellcheck disable=SC2086  # Flags are deliberately split on spaces.
"${compiler[cortex-m4]}" ${target_flags[cortex-m4]} "${common_flags[@]}" -fdata-sections \
  -I"$repo/core/include" "$repo/bench/m4_image.cpp" "$repo"/core/src/*.cpp \
  -Wl,--gc-sections --specs=nano.specs --specs=nosys.specs -o "$m4/image.elf" 2>"$m4/link.log" ||
  { cat "$m4/link.log" >&2; exit 1; }
# _ZNK: const member functions (deadline_ms) are stepback code too; W: inline ones kept
# out of line (weak symbols).
image_text=$("$m4_nm" -S "$m4/image.elf" | awk '$3 ~ /^[TtWw]$/ && $4 ~ /^_ZNK?8stepback/ { print $1, $2 }' |
  sort -u | while read -r _ hex; do echo "$((16#$hex))"; done | awk "{ s += \$1 } END { print s + 0 }")
echo "stepback code in a linked Cortex-M4 image (bench/m4_image.cpp, -Os, --gc-sections): **$image_text bytes** ($(verdict "$image_text") against $TARGET_TEXT)."

echo
echo "(Components, contexts, TLS arena and static binaries: bench/footprint_components.sh, by hand.)"

if [[ "$strict" == 1 ]] && (( image_text > TARGET_TEXT )); then
  echo "footprint_core.sh: stepback code in the Cortex-M4 image $image_text > $TARGET_TEXT bytes" >&2
  exit 1
fi
