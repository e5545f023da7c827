#!/usr/bin/env bash
# Compile-checks the Windows platform shims with the MinGW-w64 cross compiler, with the
# project's warnings as errors. Needs x86_64-w64-mingw32-g++ (apt: g++-mingw-w64-x86-64).
# Usage: scripts/check_mingw.sh   (from anywhere; exits nonzero on the first failure)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cxx="${MINGW_CXX:-x86_64-w64-mingw32-g++}"
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "check_mingw: $cxx not found (apt-get install g++-mingw-w64-x86-64)" >&2
  exit 2
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

flags=(-std=c++17 -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror
       -fno-exceptions -fno-rtti
       -I"$root/core/include" -I"$root/platform/include")
sources=(platform/src/clock_win.cpp platform/src/random_win.cpp platform/src/random_common.cpp)

echo "check_mingw: $("$cxx" --version | sed -n 1p)"
objects=()
for src in "${sources[@]}"; do
  obj="$out/$(basename "$src" .cpp).o"
  echo "check_mingw: compiling $src"
  "$cxx" "${flags[@]}" -c "$root/$src" -o "$obj"
  objects+=("$obj")
done

# Linking a tiny program proves the imports resolve (bcrypt, kernel32) for the shims.
cat > "$out/main.cpp" <<'CPP'
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
int main() {
  stepback::platform::Status s = stepback::platform::Status::kEntropyUnavailable;
  stepback::Xoshiro128 g = stepback::platform::make_os_random(&s);
  return static_cast<int>(g.next_u32() & 1U) +
         static_cast<int>(stepback::platform::monotonic_now().count() & 1U) +
         static_cast<int>(stepback::platform::wall_now().count() & 1U);
}
CPP
echo "check_mingw: linking a test program against the shims, core and bcrypt"
"$cxx" "${flags[@]}" -static "$out/main.cpp" "${objects[@]}" "$root/core/src/random.cpp" \
  -lbcrypt -o "$out/check.exe"
echo "check_mingw: OK (${sources[*]})"
