#!/usr/bin/env bash
# Checks that core/ stays freestanding: it compiles for a Cortex-M4 with
# -ffreestanding -fno-exceptions -fno-rtti, and includes nothing of ours from outside core/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cxx=${ARM_NONE_EABI_CXX:-arm-none-eabi-g++}
command -v "$cxx" >/dev/null || { echo "check_core: $cxx not found (run scripts/setup.sh)" >&2; exit 1; }

flags=(-std=c++17 -ffreestanding -fno-exceptions -fno-rtti -mcpu=cortex-m4 -mthumb -Os
       -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror
       -I"$root/core/include")
for src in "$root"/core/src/*.cpp; do
  "$cxx" "${flags[@]}" -c "$src" -o "$out/$(basename "$src" .cpp).o"
done
# Every public header on its own, so none leans on another's includes.
for hdr in "$root"/core/include/stepback/core/*.hpp; do
  echo "#include \"$hdr\"" > "$out/h.cpp"
  "$cxx" "${flags[@]}" -c "$out/h.cpp" -o "$out/h.o"
done

bad=$(grep -rnE '#include\s*[<"]stepback/(profiles|platform|https|tools)/' "$root/core" || true)
if [ -n "$bad" ]; then
  echo "check_core: core/ includes code from outside core/:" >&2
  echo "$bad" >&2
  exit 1
fi
bad=$(grep -rnE '#include\s*<(chrono|string|vector|thread|mutex|functional|memory|iostream|map|new)>' "$root/core" || true)
if [ -n "$bad" ]; then
  echo "check_core: core/ includes a hosted-only header:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "check_core: core/ compiles freestanding for Cortex-M4 ($("$cxx" -dumpversion)), $(ls "$root"/core/src/*.cpp | wc -l) sources, $(ls "$root"/core/include/stepback/core/*.hpp | wc -l) headers"
