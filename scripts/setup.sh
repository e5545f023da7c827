#!/usr/bin/env bash
# Installs what building, testing and measuring stepback needs on Debian 12 (apt only).
# Runs as root or through sudo; installs nothing that is already there.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3            # build
  libgtest-dev libbenchmark-dev valgrind   # tests and benches
  gcc-arm-none-eabi                        # freestanding Cortex-M core build
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user  # ARM footprint and runs
  g++-mingw-w64-x86-64                     # Windows shims compile check
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
