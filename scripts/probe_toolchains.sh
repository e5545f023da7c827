#!/usr/bin/env bash
# Verifies what scripts/setup.sh installed: one tiny program per toolchain the README's
# commands use is compiled (and, where this machine can, linked and run). Stops at the end
# with one line per missing piece naming the Debian package that provides it.
#
#   scripts/probe_toolchains.sh        (called by scripts/setup.sh; needs no root)
set -euo pipefail

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stepback-probe.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
missing=()
ok=()

# probe NAME PACKAGE COMMAND...: runs COMMAND; records NAME as ok or PACKAGE as missing.
probe() {
  local name=$1 package=$2
  shift 2
  if "$@" >"$tmp/out" 2>&1; then
    ok+=("$name")
  else
    missing+=("$name: install $package ($(head -c 200 "$tmp/out" | tr '\n' ' '))")
  fi
}

cat >"$tmp/hosted.cpp" <<'CPP'
#include <cstdint>
#include <cstdio>
#include <vector>
int main() { std::vector<std::uint32_t> v{40, 2}; std::printf("%u\n", v[0] + v[1]); return v[0] + v[1] == 42 ? 0 : 1; }
CPP
cat >"$tmp/freestanding.cpp" <<'CPP'
#include <cstdint>
#include <cstddef>
#include <limits>
std::uint32_t twice(std::uint32_t x) { return x * 2u < std::numeric_limits<std::uint32_t>::max() ? x * 2u : 0u; }
CPP
cat >"$tmp/win.cpp" <<'CPP'
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <bcrypt.h>
#include <cstdint>
std::uint64_t now() { return GetTickCount64(); }
CPP

runs() { "$@" | grep -qx 42; }

probe "g++ (host)" g++ g++ -std=c++17 "$tmp/hosted.cpp" -o "$tmp/gxx"
probe "g++ runs" g++ runs "$tmp/gxx"
probe "clang++ (host)" "clang lld" clang++ -std=c++17 "$tmp/hosted.cpp" -o "$tmp/clangxx"
probe "clang++ runs" clang runs "$tmp/clangxx"
probe "clang++ with ASan + UBSan (asan-ubsan preset)" libclang-rt-14-dev \
  clang++ -std=c++17 -fsanitize=address,undefined "$tmp/hosted.cpp" -o "$tmp/clang-asan"
probe "clang++ ASan + UBSan runs" libclang-rt-14-dev runs "$tmp/clang-asan"
probe "arm-none-eabi-g++ with <cstdint>" "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib" \
  arm-none-eabi-g++ -std=c++17 -ffreestanding -fno-exceptions -fno-rtti -mcpu=cortex-m4 -mthumb -c "$tmp/freestanding.cpp" -o "$tmp/m4.o"
probe "aarch64-linux-gnu-g++" g++-aarch64-linux-gnu aarch64-linux-gnu-g++ -std=c++17 "$tmp/hosted.cpp" -o "$tmp/a64"
probe "aarch64 under qemu" qemu-user runs qemu-aarch64 -L /usr/aarch64-linux-gnu "$tmp/a64"
probe "arm-linux-gnueabihf-g++" g++-arm-linux-gnueabihf arm-linux-gnueabihf-g++ -std=c++17 "$tmp/hosted.cpp" -o "$tmp/a32"
probe "armhf under qemu" qemu-user runs qemu-arm -L /usr/arm-linux-gnueabihf "$tmp/a32"
probe "x86_64-w64-mingw32-g++ (Windows shims)" g++-mingw-w64-x86-64 \
  x86_64-w64-mingw32-g++ -std=c++17 -c "$tmp/win.cpp" -o "$tmp/win.o"
for target in aarch64-linux-android24 armv7a-linux-androideabi24; do
  probe "clang++ --target=$target (freestanding)" clang \
    clang++ --target="$target" -std=c++17 -ffreestanding -nostdinc++ -fno-exceptions -fno-rtti \
      -c -x c++ - -o "$tmp/android.o" < <(printf '#include <stdint.h>\nuint32_t f(uint32_t x) { return x + 1u; }\n')
done
probe "ld.lld" lld ld.lld --version
probe "nginx" nginx test -x /usr/sbin/nginx
probe "openssl" openssl openssl version
probe "python3 protobuf (nanopb generator)" python3-protobuf /usr/bin/python3 -c 'import google.protobuf'
probe "protoc" protobuf-compiler protoc --version

if [ ${#missing[@]} -gt 0 ]; then
  echo "probe_toolchains: ${#ok[@]} ok, ${#missing[@]} missing:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "probe_toolchains: all ${#ok[@]} probes passed (host g++ and clang++ run; Cortex-M4, aarch64 and armhf under qemu, mingw-w64, clang for Android targets; servers and generators)"
