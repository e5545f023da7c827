#!/usr/bin/env bash
# Instructions per byte of the record AEADs (16 KiB records through mbedTLS's cipher layer,
# bench/aead_insns.cpp), pipelined AES-GCM (https/mbedtls/gcm/) against mbedTLS's own, counted as the
# difference between a run of K2 and a run of K1 records (start-up and key set-up cancel):
#   x86-64   valgrind --tool=callgrind (Ir) on the host binary;
#   aarch64  qemu-aarch64 -cpu max (AES + PMULL) -singlestep -d nochain,exec: one "Trace"
#            log line per executed guest instruction (qemu's insn plugin is not packaged in
#            Debian 12; this counts the same thing, slowly). Time under emulation means nothing.
#
# Usage: bench/aead_insns.sh {x86-64 BINARY | aarch64 BINARY SYSROOT}
#   x86-64: BINARY = build/bench/bench/aead_insns (cmake --build build/bench --target aead_insns)
#   aarch64: BINARY = an aarch64 aead_insns, SYSROOT = /usr/aarch64-linux-gnu; the bench
#            directory needs Google Benchmark, which cross builds lack, so it is compiled
#            against the linux-aarch64-mobile build's mbedcrypto (which holds https/mbedtls/gcm/):
#              cmake --build build/linux-aarch64-mobile --target mbedcrypto
#              aarch64-linux-gnu-g++ -O2 -std=c++17 \
#                -DMBEDTLS_CONFIG_FILE="\"$PWD/https/mbedtls/stepback_mbedtls_config.h\"" \
#                -Ihttps/mbedtls/gcm/include -Ithird_party/mbedtls/include bench/aead_insns.cpp \
#                build/linux-aarch64-mobile/third_party/mbedtls/library/libmbedcrypto.a \
#                -o build/linux-aarch64-mobile/aead_insns_a64
set -euo pipefail
arch="${1:?x86-64 or aarch64}"
bin="${2:?binary}"
sysroot="${3:-/usr/aarch64-linux-gnu}"
k1=1
k2=3
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

count() {  # count RECORDS CIPHER ENGINE DIRECTION
  local n=$1; shift
  if [[ "$arch" == x86-64 ]]; then
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" "$@" "$n" >/dev/null 2>&1
    sed -n 's/^summary: //p' "$tmp/cg.out"
  else
    qemu-aarch64 -cpu max -L "$sysroot" -singlestep -d nochain,exec -D /dev/stdout "$bin" "$@" "$n" |
      grep -c '^Trace'
  fi
}

echo "| cipher | engine | direction | instructions per byte ($arch) |"
echo "|---|---|---|---:|"
for cipher in aes-128-gcm aes-256-gcm chacha20-poly1305; do
  for engine in detected software; do
    [[ "$cipher" == chacha20-poly1305 && "$engine" == software ]] && continue
    for dir in encrypt decrypt; do
      name="$("$( [[ "$arch" == x86-64 ]] && echo env || echo qemu-aarch64)" \
        $( [[ "$arch" == x86-64 ]] || echo "-cpu max -L $sysroot") "$bin" "$cipher" "$engine" "$dir" 1 | cut -d' ' -f2)"
      a=$(count $k1 "$cipher" "$engine" "$dir")
      b=$(count $k2 "$cipher" "$engine" "$dir")
      echo "| $cipher | $name | $dir | $(python3 -c "print(f'{($b - $a) / (($k2 - $k1) * 16384):.2f}')") |"
    done
  done
done
echo
echo "command: bench/aead_insns.sh $*"
