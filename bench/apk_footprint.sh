#!/usr/bin/env bash
# The size a stepback-using shared library adds to an APK, per ABI: a Linux shared library
# for aarch64 and armhf (as an Android .so is built: -shared, -Os, function/data sections,
# --gc-sections, hidden visibility, --exclude-libs,ALL, stripped) exporting one function that
# makes one HTTPS GET with the Client and TcpTlsConnector (bench/apk_lib.cpp), linked with
# the static stepback, nanopb, mbedTLS and c-ares archives; and the same link with mbedTLS left out
# (its symbols unresolved), to show stepback's own share. glibc stands in for bionic: the
# C library is dynamic in both, so its size is not counted either way. Run by hand:
#
#   bench/apk_footprint.sh            (needs the cross compilers of scripts/setup.sh)
#   ABIS=aarch64 bench/apk_footprint.sh   (one ABI; default "aarch64 armhf")
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stepback-apk.XXXXXX")
trap '[ "${KEEP_TMP:-0}" = 1 ] && echo "apk_footprint: keeping $tmp" >&2 || rm -rf "$tmp"' EXIT

declare -A prefix=([aarch64]=aarch64-linux-gnu [armhf]=arm-linux-gnueabihf)
declare -A processor=([aarch64]=aarch64 [armhf]=arm)
declare -A arch_flags=([aarch64]="" [armhf]="-mthumb")
flags="-Os -ffunction-sections -fdata-sections -fvisibility=hidden -fPIC"
cxx_only="-fno-exceptions -fno-rtti -fvisibility-inlines-hidden"

rows=()
for abi in ${ABIS:-aarch64 armhf}; do
  p=${prefix[$abi]}
  b="$tmp/$abi"
  cmake -G Ninja -S "$repo" -B "$b" -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="${processor[$abi]}" \
    -DCMAKE_C_COMPILER="$p-gcc" -DCMAKE_CXX_COMPILER="$p-g++" -DCMAKE_BUILD_TYPE=MinSizeRel \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DSTEPBACK_PROFILE=mobile \
    -DSTEPBACK_BUILD_TESTS=OFF -DSTEPBACK_BUILD_TOOLS=OFF -DSTEPBACK_BUILD_EXAMPLES=OFF \
    -DSTEPBACK_INSTALL=OFF \
    -DCMAKE_C_FLAGS="${arch_flags[$abi]} $flags" \
    -DCMAKE_CXX_FLAGS="${arch_flags[$abi]} $flags $cxx_only" >"$b.log" 2>&1
  cmake --build "$b" --target stepback_https stepback_platform stepback_profiles >>"$b.log" 2>&1
  mapfile -t ours < <(find "$b/core" "$b/platform" "$b/profiles" "$b/https" -name '*.a' | sort)
  mapfile -t mbed < <(find "$b/third_party" \( -name 'libmbed*.a' -o -name 'libcares*.a' \) | sort)
  inc=(-I"$repo/core/include" -I"$repo/platform/include" -I"$repo/profiles/include"
       -I"$repo/https/include" -I"$repo/https/mbedtls/gcm/include" -I"$repo/third_party/mbedtls/include"
       -DMBEDTLS_CONFIG_FILE="\"$repo/https/mbedtls/stepback_mbedtls_config.h\"" -DSTEPBACK_PROFILE_MOBILE)
  # shellcheck disable=SC2086  # flag strings are split on purpose.
  "$p-g++" -std=c++17 ${arch_flags[$abi]} $flags $cxx_only "${inc[@]}" -c "$repo/bench/apk_lib.cpp" -o "$b/apk_lib.o"
  link=(-shared -Wl,--gc-sections -Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,--as-needed)
  "$p-g++" ${arch_flags[$abi]} "${link[@]}" -o "$b/libwith.so" "$b/apk_lib.o" \
    -Wl,--start-group "${ours[@]}" "${mbed[@]}" -Wl,--end-group
  "$p-g++" ${arch_flags[$abi]} -shared -Wl,--gc-sections -Wl,--exclude-libs,ALL \
    -Wl,--unresolved-symbols=ignore-all -o "$b/libwithout.so" "$b/apk_lib.o" \
    -Wl,--start-group "${ours[@]}" -Wl,--end-group
  "$p-strip" --strip-all "$b/libwith.so" "$b/libwithout.so"
  with=$(stat -c %s "$b/libwith.so")
  without=$(stat -c %s "$b/libwithout.so")
  needed=$("$p-readelf" -d "$b/libwith.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  # The file size moves in steps of the segment alignment (64 KiB on aarch64); text + data
  # (GNU size) is the measure of code added.
  code=$("$p-size" "$b/libwith.so" | awk 'NR == 2 { print $1 + $2 }')
  rows+=("| $abi | $with B ($((with / 1024)) KiB) | $code B | $without B ($((without / 1024)) KiB) | $needed|")
done
echo "| ABI | stripped .so, everything (stepback + nanopb + mbedTLS + c-ares) | its text + data | without mbedTLS and c-ares | dynamic dependencies |"
echo "|---|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
