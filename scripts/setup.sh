#!/usr/bin/env bash
# Installs what building, testing and measuring stepback needs on Debian 12 (apt only), then
# fetches the third-party sources (scripts/fetch_deps.sh). Runs as root or through sudo;
# installs and fetches nothing that is already there.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3            # build
  ccache                                   # CMakeLists.txt: a second build of the same sources compiles only what changed
  libgtest-dev libbenchmark-dev valgrind   # tests and benches
  libssl-dev                               # tests/https/gcm_test: OpenSSL EVP as the AES-GCM reference (test only)
  libisal-dev                              # bench/crc32c_bench: ISA-L's CRC32C as the reference
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib  # freestanding Cortex-M core: compiler, <cstdint>, C++ headers
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user  # ARM footprint and runs
  g++-mingw-w64-x86-64                     # Windows shims compile check
  dpkg-dev                                 # apt-get source, for scripts/fetch_deps.sh
  openssl nginx                            # tests/integration: s_server, certificates, nginx
  squid tinyproxy                          # tests/tools/proxy_cli_test.py: real proxies on their own configs and ports (a system squid on 3128 is never used)
  iproute2 iptables libnetfilter-queue-dev pkg-config  # bench/netbench: namespaces, NFQUEUE delay
  nftables                                 # tests/integration/happy_eyeballs_test: a black-holed family in a namespace
  tmux                                     # tests/tools/get_demo_test.py get_meter_tmux: the meter in a real terminal
  curl file procps                         # bench/https_bench.sh: the reference client, file, pgrep
  protobuf-compiler python3-protobuf       # nanopb generator (freshness check of https/proto)
  clang libclang-rt-14-dev                 # asan-ubsan preset: the suite built with clang, sanitizers
  clang-format clang-tidy                  # scripts/lint.sh (format in the test command; --tidy by hand)
  doxygen                                  # docs/api: the API reference, and its test docs.api_reference
  lld android-libnativehelper-dev android-platform-frameworks-native-headers  # scripts/check_android.sh
  openjdk-17-jdk-headless kotlin           # bindings/jvm: jni.h, java and kotlinc for the test jvm.transfers
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Third-party sources (mbedTLS, nanopb) into third_party/; needs no root.
"$(dirname "$0")/fetch_deps.sh"

# Proves the result: one tiny program per toolchain, compiled, linked and run where possible.
"$(dirname "$0")/probe_toolchains.sh"
