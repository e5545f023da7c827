#!/usr/bin/env bash
# The size a stepback-using shared library adds to an APK, per ABI: a Linux shared library
# for aarch64 and armhf (as an Android .so is built: -shared, -Os, function/data sections,
# --gc-sections, hidden visibility, --exclude-libs,ALL, stripped) exporting one function that
# makes one HTTPS GET with the Client and TcpTlsConnector (bench/apk_lib.cpp), linked with
# the static stepback, nanopb, mbedTLS and c-ares archives; and the same link with mbedTLS left out
# (its symbols unresolved), to show stepback's own share. glibc stands in for bionic: the
# C library is dynamic in both, so its size is not counted either way. The library is built
# as an app's is (no tests, no tools: STEPBACK_TLS_SERVER leaves out mbedTLS's server side).
# Printed: the stripped file (GNU ld's 64 KiB segment alignment on aarch64, and 16 KiB and
# 4 KiB as the NDK's lld links), its text + data (the measure of code), and per ABI where the
# bytes go, per component and per object file, from the link's map. Run by hand:
#
#   bench/apk_footprint.sh            (needs the cross compilers of scripts/setup.sh)
#   ABIS=aarch64 bench/apk_footprint.sh   (one ABI; default "aarch64 armhf")
#   TLS_SERVER=ON bench/apk_footprint.sh  (with mbedTLS's server side, as the tests' builds)
#   APK_TMP=/tmp/apk bench/apk_footprint.sh  (builds kept there; a second run is incremental)
#
# Two more make the same GET as Android apps (compiled with __ANDROID__ against the stub
# <android/multinetwork.h> of tests/https/dns/android_stub, the android_* functions from a stub
# libandroid.so, dynamic as the real one): for API 29+ with AndroidResolver (c-ares parses the
# answers), and for API 24-28 with SystemResolver (the system's getaddrinfo on worker threads,
# no c-ares at all).
#
# Another library makes the same GET through the C API (bench/apk_lib_c.c, compiled as C:
# stepback_stack, stepback_request), as a Kotlin app's JNI library or a C app calls stepback;
# its breakdown shows the C layer's own bytes (stepback capi) and what its stack sets up.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"
if [ -n "${APK_TMP:-}" ]; then
  tmp=$APK_TMP # kept, and built again incrementally by the next run with the same APK_TMP
  mkdir -p "$tmp"
else
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/stepback-apk.XXXXXX")
  trap '[ "${KEEP_TMP:-0}" = 1 ] && echo "apk_footprint: keeping $tmp" >&2 || rm -rf "$tmp"' EXIT
fi

declare -A prefix=([aarch64]=aarch64-linux-gnu [armhf]=arm-linux-gnueabihf)
declare -A processor=([aarch64]=aarch64 [armhf]=arm)
declare -A arch_flags=([aarch64]="" [armhf]="-mthumb")
flags="-Os -ffunction-sections -fdata-sections -fvisibility=hidden -fPIC"
cxx_only="-fno-exceptions -fno-rtti -fvisibility-inlines-hidden"

# apk_breakdown ABI MAP CODE: where the linked library's bytes come from, per component and per
# object file: the input sections the link kept after --gc-sections, from its map (.bss
# excluded), against CODE, the stripped library's text + data. The linker's own tables
# (dynamic symbols and strings, hash, relocations, GOT, PLT, .eh_frame_hdr) are a row of their
# own; what is left over is strings the linker merged and alignment.
apk_breakdown() {
  local sections
  sections=$(map_sections "$2" | awk '
    $3 ~ /^\.(dynsym|dynstr|gnu\.hash|hash|gnu\.version.*|rela?\.(dyn|plt)|plt|got|got\.plt|dynamic|eh_frame_hdr|note\..*|interp)$/ {
      $2 = "(linker)" }
    { print }')
  echo "$1, by component (input sections kept by the link, from its map; .bss excluded):"
  echo
  md_head component bytes "of which unwind tables" "share of text + data"
  awk -v code="$3" '
    function component(f) {
      if (f == "(linker)") return "linker-made: dynamic symbols, relocations, GOT, PLT, .eh_frame_hdr"
      if (f ~ /libstepback_core\.a/) return "stepback core"
      if (f ~ /libstepback_platform\.a/) return "stepback platform"
      if (f ~ /libstepback_profiles\.a/) return "stepback profiles"
      if (f ~ /libstepback_nanopb[^\/]*\.a/) return "nanopb"
      if (f ~ /libstepback_https\.a/) return "stepback https"
      if (f ~ /apk_lib(_android|_api24)?\.o/) return "apk_lib.cpp (the caller)"
      if (f ~ /(system|android)_resolver(_api24)?\.o/) return "stepback https: the resolver, compiled as for Android"
      if (f ~ /apk_lib_c\.o/) return "apk_lib_c.c (the caller, in C)"
      if (f ~ /libstepback_capi(_core)?\.a/) return "stepback capi (the C layer)"
      if (f ~ /libstepback_app\.a/) return "stepback app"
      if (f ~ /libstepback_transfer\.a/) return "stepback transfer"
      if (f ~ /libmbedcrypto\.a\((gcm_|certificate_clock)/) return "mbedcrypto: stepback GCM + clock"
      if (f ~ /libmbedcrypto\.a/) return "mbedcrypto"
      if (f ~ /libmbedx509\.a|libstepback_mbedtls_time\.a/) return "mbedx509"
      if (f ~ /libmbedtls\.a/) return "mbedtls (TLS)"
      if (f ~ /libcares[^\/]*\.a/) return "c-ares"
      if (f ~ /libstdc\+\+|libsupc\+\+/) return "libstdc++ (static)"
      if (f ~ /libgcc|crt[^\/]*\.o/) return "libgcc, crt objects"
      return "other: " f
    }
    {
      c = component($2); bytes[c] += $1; total += $1
      if ($3 ~ /^\.(eh_frame|ARM\.ex(idx|tab))$/) unwind[c] += $1
    }
    END {
      for (k in bytes) if (bytes[k] > 0) printf "%d\t| %s | %d | %d | %.1f%% |\n", bytes[k], k, bytes[k], unwind[k], 100 * bytes[k] / code | "sort -k1,1nr | cut -f2"
      close("sort -k1,1nr | cut -f2")
      printf "| rows summed | %d | | %.1f%% |\n", total, 100 * total / code
      printf "| **text + data** (GNU size of the stripped .so) | **%d** | | |\n", code
    }' <<<"$sections"
  echo
  echo "$1, the 15 largest object files:"
  echo
  md_head "object file" bytes
  # The first 15 taken by awk, which reads to the end: `head` would close the pipe early and
  # sort, killed by SIGPIPE, would end the script under pipefail (exit 141, nothing printed).
  awk '$2 != "(linker)" { n = split($2, p, "/"); bytes[p[n]] += $1 }
    END { for (k in bytes) printf "%d %s\n", bytes[k], k }' <<<"$sections" |
    sort -k1,1nr | awk 'NR <= 15 { printf "| %s | %d |\n", $2, $1 }'
}

server=${TLS_SERVER:-OFF}
rows=()
breakdown=()
android_rows=()
breakdown_android=()
api24_rows=()
breakdown_api24=()
c_rows=()
breakdown_c=()
for abi in ${ABIS:-aarch64 armhf}; do
  p=${prefix[$abi]}
  b="$tmp/$abi"
  cmake -G Ninja -S "$repo" -B "$b" -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="${processor[$abi]}" \
    -DCMAKE_C_COMPILER="$p-gcc" -DCMAKE_CXX_COMPILER="$p-g++" -DCMAKE_BUILD_TYPE=MinSizeRel \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DSTEPBACK_PROFILE=mobile \
    -DSTEPBACK_BUILD_TESTS=OFF -DSTEPBACK_BUILD_TOOLS=OFF -DSTEPBACK_BUILD_EXAMPLES=OFF \
    -DSTEPBACK_INSTALL=OFF -DSTEPBACK_TLS_SERVER="$server" \
    -DCMAKE_C_FLAGS="${arch_flags[$abi]} $flags" \
    -DCMAKE_CXX_FLAGS="${arch_flags[$abi]} $flags $cxx_only" >"$b.log" 2>&1
  cmake --build "$b" --target stepback_https stepback_platform stepback_profiles stepback_capi >>"$b.log" 2>&1
  mapfile -t ours < <(find "$b/core" "$b/platform" "$b/profiles" "$b/https" -name '*.a' | sort)
  mapfile -t mbed < <(find "$b/third_party" \( -name 'libmbed*.a' -o -name 'libcares*.a' \) | sort)
  inc=(-I"$repo/core/include" -I"$repo/platform/include" -I"$repo/profiles/include"
       -I"$repo/https/include" -I"$repo/https/mbedtls/gcm/include" -I"$repo/third_party/mbedtls/include"
       -DMBEDTLS_CONFIG_FILE="\"$repo/https/mbedtls/stepback_mbedtls_config.h\"" -DSTEPBACK_PROFILE_MOBILE
       -DSTEPBACK_TLS_SERVER="$([ "$server" = ON ] && echo 1 || echo 0)")
  # shellcheck disable=SC2086  # flag strings are split on purpose.
  "$p-g++" -std=c++17 ${arch_flags[$abi]} $flags $cxx_only "${inc[@]}" -c "$repo/bench/apk_lib.cpp" -o "$b/apk_lib.o"
  link=(-shared -Wl,--gc-sections -Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,--as-needed)
  "$p-g++" ${arch_flags[$abi]} "${link[@]}" -Wl,-Map="$b/libwith.map" -o "$b/libwith.so" "$b/apk_lib.o" \
    -Wl,--start-group "${ours[@]}" "${mbed[@]}" -Wl,--end-group
  # The same link with 16 KiB and 4 KiB segment alignment (-z max-page-size): GNU ld pads
  # aarch64 segments to 64 KiB, the NDK's lld to 16 KiB (r28, for 16 KiB-page devices) or 4 KiB.
  for page in 16384 4096; do
    # shellcheck disable=SC2086  # flag strings are split on purpose.
    "$p-g++" ${arch_flags[$abi]} "${link[@]}" -Wl,-z,max-page-size=$page -o "$b/libwith$page.so" \
      "$b/apk_lib.o" -Wl,--start-group "${ours[@]}" "${mbed[@]}" -Wl,--end-group
    "$p-strip" --strip-all "$b/libwith$page.so"
  done
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
  with16=$(stat -c %s "$b/libwith16384.so")
  with4=$(stat -c %s "$b/libwith4096.so")
  rows+=("| $abi | $with B ($((with / 1024)) KiB) | $with16 B | $with4 B | $code B ($((code / 1024)) KiB) | $without B ($((without / 1024)) KiB) | $needed|")
  # The same app for Android API 29+ with AndroidResolver (android_res_nquery): c-ares is kept
  # for its DNS answer parser only, and --gc-sections drops its channel, sockets and config.
  # apk_lib.cpp and android_resolver.cpp are compiled as for Android against the NDK-documented
  # stub of <android/multinetwork.h> (tests/https/dns/android_stub) and AOSP's jni.h (ares.h
  # includes it on Android); the three android_res_* functions come from a stub libandroid.so,
  # dynamic as the real one is, so they add nothing. glibc still stands in for bionic.
  android=(-D__ANDROID__=1 -D__ANDROID_API__=29 -DAPK_ANDROID_RESOLVER
           -I"$repo/tests/https/dns/android_stub" -I/usr/include/android/nativehelper
           -I"$repo/https/src" -I"$repo/third_party/c-ares/include" -I"$b/third_party/c-ares")
  if [[ -f /usr/include/android/nativehelper/jni.h ]]; then
    # shellcheck disable=SC2086  # flag strings are split on purpose.
    "$p-g++" -std=c++17 ${arch_flags[$abi]} $flags $cxx_only "${inc[@]}" "${android[@]}" \
      -c "$repo/bench/apk_lib.cpp" -o "$b/apk_lib_android.o"
    # shellcheck disable=SC2086
    "$p-g++" -std=c++17 ${arch_flags[$abi]} $flags $cxx_only "${inc[@]}" "${android[@]}" \
      -DSTEPBACK_HAVE_CARES=1 -c "$repo/https/src/dns/android_resolver.cpp" -o "$b/android_resolver.o"
    printf 'int android_res_nquery(){return -1;}\nint android_res_nresult(){return -1;}\nvoid android_res_cancel(){}\nint android_getaddrinfofornetwork(){return -1;}\n' \
      >"$b/libandroid_stub.c"
    # shellcheck disable=SC2086
    "$p-gcc" ${arch_flags[$abi]} -shared -fPIC -o "$b/libandroid.so" "$b/libandroid_stub.c"
    # shellcheck disable=SC2086
    "$p-g++" ${arch_flags[$abi]} "${link[@]}" -Wl,-Map="$b/libandroid29.map" -o "$b/libandroid29.so" \
      "$b/apk_lib_android.o" "$b/android_resolver.o" -Wl,--start-group "${ours[@]}" "${mbed[@]}" \
      -Wl,--end-group -L"$b" -landroid
    "$p-strip" --strip-all "$b/libandroid29.so"
    a29=$(stat -c %s "$b/libandroid29.so")
    a29code=$("$p-size" "$b/libandroid29.so" | awk 'NR == 2 { print $1 + $2 }')
    android_rows+=("| $abi | $a29 B ($((a29 / 1024)) KiB) | $a29code B ($((a29code / 1024)) KiB) |")
    breakdown_android+=("$(apk_breakdown "$abi (AndroidResolver, API 29+)" "$b/libandroid29.map" "$a29code")")
    # The app for Android API 24-28 without c-ares: SystemResolver (the system's getaddrinfo
    # through android_getaddrinfofornetwork on worker threads), compiled as for API 24 against
    # the same stub header; the function comes from the stub libandroid.so.
    api24=(-D__ANDROID__=1 -D__ANDROID_API__=24 -DAPK_SYSTEM_RESOLVER
           -I"$repo/tests/https/dns/android_stub" -I"$repo/https/src")
    # shellcheck disable=SC2086  # flag strings are split on purpose.
    "$p-g++" -std=c++17 ${arch_flags[$abi]} $flags $cxx_only "${inc[@]}" "${api24[@]}" \
      -c "$repo/bench/apk_lib.cpp" -o "$b/apk_lib_api24.o"
    # shellcheck disable=SC2086
    "$p-g++" -std=c++17 ${arch_flags[$abi]} $flags $cxx_only "${inc[@]}" "${api24[@]}" \
      -c "$repo/https/src/dns/system_resolver.cpp" -o "$b/system_resolver_api24.o"
    # shellcheck disable=SC2086
    "$p-g++" ${arch_flags[$abi]} "${link[@]}" -Wl,-Map="$b/libandroid24.map" -o "$b/libandroid24.so" \
      "$b/apk_lib_api24.o" "$b/system_resolver_api24.o" -Wl,--start-group "${ours[@]}" "${mbed[@]}" \
      -Wl,--end-group -L"$b" -landroid
    for page in 16384 4096; do
      # shellcheck disable=SC2086
      "$p-g++" ${arch_flags[$abi]} "${link[@]}" -Wl,-z,max-page-size=$page -o "$b/libandroid24_$page.so" \
        "$b/apk_lib_api24.o" "$b/system_resolver_api24.o" -Wl,--start-group "${ours[@]}" "${mbed[@]}" \
        -Wl,--end-group -L"$b" -landroid
      "$p-strip" --strip-all "$b/libandroid24_$page.so"
    done
    "$p-strip" --strip-all "$b/libandroid24.so"
    a24=$(stat -c %s "$b/libandroid24.so")
    a24code=$("$p-size" "$b/libandroid24.so" | awk 'NR == 2 { print $1 + $2 }')
    a24cares=$(map_sections "$b/libandroid24.map" | awk '$2 ~ /libcares/ { s += $1 } END { print s + 0 }')
    api24_rows+=("| $abi | $a24 B ($((a24 / 1024)) KiB) | $(stat -c %s "$b/libandroid24_16384.so") B | $(stat -c %s "$b/libandroid24_4096.so") B | $a24code B ($((a24code / 1024)) KiB) | $a24cares B |")
    breakdown_api24+=("$(apk_breakdown "$abi (SystemResolver, API 24-28, no c-ares)" "$b/libandroid24.map" "$a24code")")
  else
    android_rows+=("| $abi | skipped: /usr/include/android/nativehelper/jni.h is missing | |")
    api24_rows+=("| $abi | skipped: /usr/include/android/nativehelper/jni.h is missing | | | | |")
  fi
  breakdown+=("$(apk_breakdown "$abi" "$b/libwith.map" "$code")")
  # The same GET through the C API (libcapi.so: not libc.so, which -L"$b" would find for the C
  # library in a later run): the C layer and the rooms it stands on (app, transfer,
  # nanopb's encoder) join the link; --gc-sections keeps what the request path reaches.
  mapfile -t ours_c < <(find "$b/core" "$b/platform" "$b/profiles" "$b/https" "$b/transfer" "$b/app" \
    "$b/capi" -name '*.a' | sort)
  # shellcheck disable=SC2086  # flag strings are split on purpose.
  "$p-gcc" -std=c99 ${arch_flags[$abi]} $flags -I"$repo/capi/include" -c "$repo/bench/apk_lib_c.c" \
    -o "$b/apk_lib_c.o"
  # shellcheck disable=SC2086
  "$p-g++" ${arch_flags[$abi]} "${link[@]}" -Wl,-Map="$b/libcapi.map" -o "$b/libcapi.so" "$b/apk_lib_c.o" \
    -Wl,--start-group "${ours_c[@]}" "${mbed[@]}" -Wl,--end-group
  "$p-strip" --strip-all "$b/libcapi.so"
  cfile=$(stat -c %s "$b/libcapi.so")
  ccode=$("$p-size" "$b/libcapi.so" | awk 'NR == 2 { print $1 + $2 }')
  c_rows+=("| $abi | $cfile B ($((cfile / 1024)) KiB) | $ccode B ($((ccode / 1024)) KiB) | $((ccode - code)) B |")
  breakdown_c+=("$(apk_breakdown "$abi (the same GET through the C API)" "$b/libcapi.map" "$ccode")")
done
echo "| ABI | stripped .so, everything (stepback + nanopb + mbedTLS + c-ares) | same, 16 KiB pages | same, 4 KiB pages | its text + data | without mbedTLS and c-ares | dynamic dependencies |"
echo "|---|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
echo
echo "The same app for Android API 29+, resolving with AndroidResolver (c-ares only parses answers):"
echo
echo "| ABI | stripped .so (64 KiB pages on aarch64) | its text + data |"
echo "|---|---:|---:|"
printf '%s\n' "${android_rows[@]}"
echo
echo "The same app for Android API 24-28 without c-ares, resolving with SystemResolver (the system's getaddrinfo on worker threads):"
echo
echo "| ABI | stripped .so (64 KiB pages on aarch64) | 16 KiB pages | 4 KiB pages | its text + data | c-ares in it |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${api24_rows[@]}"
echo
echo "The same GET through the C API (bench/apk_lib_c.c; stepback_stack sets up the resolver, trust store and TLS):"
echo
echo "| ABI | stripped .so (64 KiB pages on aarch64) | its text + data | text + data over the C++ library's |"
echo "|---|---:|---:|---:|"
printf '%s\n' "${c_rows[@]}"
printf '\n%s\n' "${breakdown[@]}"
printf '\n%s\n' "${breakdown_android[@]}"
printf '\n%s\n' "${breakdown_api24[@]}"
printf '\n%s\n' "${breakdown_c[@]}"
