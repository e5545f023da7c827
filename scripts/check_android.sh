#!/usr/bin/env bash
# Checks what of the Android build can be checked without an Android NDK, and says exactly
# what that is. Prints one line per check and a markdown summary; exits 1 if a check fails.
#
#   1. toolchains/android.cmake: the no-NDK and not-an-NDK error messages, and, through a
#      fake NDK whose build/cmake/android.toolchain.cmake only records what it receives,
#      that the file delegates to the NDK's toolchain with the defaults ANDROID_ABI=arm64-v8a,
#      ANDROID_PLATFORM=android-24, ANDROID_STL=c++_static and leaves the user's values alone.
#   2. core/ and profiles/ compiled by clang --target=aarch64-linux-android24 and
#      armv7a-linux-androideabi24, freestanding, with -nostdinc -nostdinc++: the only
#      headers are ours, clang's own freestanding ones and a 10-line <cstdint> that
#      re-exports clang's <stdint.h> into std (core's only C++ library header; libc++'s
#      <cstdint> cannot be used because its <__config> includes libc's <features.h>).
#      The compiler's dependency output proves it: any other header fails the check.
#   3. examples/android/retry_jni.cpp (the JNI bridge) compiled the same way, with AOSP's
#      <jni.h> (Debian's android-libnativehelper-dev: the NDK's jni.h, which needs only
#      <stdarg.h> and <stdint.h>), and linked with ld.lld into a shared library with core
#      and profiles; the symbols left undefined are listed (they come from platform/ and
#      the NDK's runtime).
#   4. examples/android/looper_request.cpp (the ALooper + timerfd driver) and network_jni.cpp
#      (the NetworkCallback bridge) compiled for the
#      HOST (x86-64, glibc) against AOSP's <android/looper.h> (Debian's
#      android-platform-frameworks-native-headers): checks its use of stepback's API and of
#      the ALooper declarations, not bionic.
#   Not verified here, and said so: platform/ (clock_linux.cpp, random_arc4random.cpp,
#   random_common.cpp) and https/ for Android need bionic's headers (and mbedTLS built by
#   the NDK), which no Debian package ships. They are never compiled against glibc's
#   headers in their place.
#
# Needs clang++ (Debian clang-14), ld.lld, cmake, android-libnativehelper-dev,
# android-platform-frameworks-native-headers and third_party/mbedtls (scripts/fetch_deps.sh).
# Environment: CLANGXX (default clang++), KEEP_TMP=1 keeps the temp dir.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stepback-android.XXXXXX")
if [[ "${KEEP_TMP:-0}" == 1 ]]; then
  echo "check_android: keeping $tmp" >&2
else
  trap 'rm -rf "$tmp"' EXIT
fi

readonly targets=(aarch64-linux-android24 armv7a-linux-androideabi24)
readonly aosp_jni_dir=/usr/include/android/nativehelper   # jni.h
readonly aosp_ndk_dir=/usr/include/android                # android/looper.h
readonly warnings=(-Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror)
cxx=${CLANGXX:-clang++}

failures=0
summary=()  # Markdown rows: part | target | result | how.
pass() { echo "check_android: ok: $1 [$2]"; summary+=("| $1 | $2 | verified | $3 |"); }
fail() {
  echo "check_android: FAILED: $1 [$2]: $3" >&2
  summary+=("| $1 | $2 | **FAILED** | $3 |")
  failures=$((failures + 1))
}
not_verified() { echo "check_android: not verified here: $1 [$2]: $3"; summary+=("| $1 | $2 | not verified here | $3 |"); }

missing() { echo "check_android: missing $1" >&2; exit 1; }
command -v "$cxx" >/dev/null || missing "$cxx (apt-get install clang)"
command -v ld.lld >/dev/null || missing "ld.lld (apt-get install lld)"
command -v cmake >/dev/null || missing "cmake"
[[ -f $aosp_jni_dir/jni.h ]] || missing "$aosp_jni_dir/jni.h (apt-get install android-libnativehelper-dev)"
[[ -f $aosp_ndk_dir/android/looper.h ]] ||
  missing "$aosp_ndk_dir/android/looper.h (apt-get install android-platform-frameworks-native-headers)"
[[ -f $repo/third_party/mbedtls/include/mbedtls/ssl.h ]] ||
  missing "third_party/mbedtls (run scripts/fetch_deps.sh)"
resource_dir=$("$cxx" -print-resource-dir)
nm_tool=$(command -v llvm-nm || command -v llvm-nm-14 || echo nm)
echo "check_android: $("$cxx" --version | sed -n 1p); clang headers from $resource_dir/include"

# ---------------------------------------------------------------------------------------
# 1. toolchains/android.cmake

tc_project="$tmp/tc-project"
mkdir -p "$tc_project"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(toolchain_probe NONE)\n' >"$tc_project/CMakeLists.txt"

# A fake NDK: its toolchain file records what it received and sets nothing up.
make_fake_ndk() {
  mkdir -p "$1/build/cmake"
  cat >"$1/build/cmake/android.toolchain.cmake" <<'EOF'
file(APPEND "${CMAKE_CURRENT_LIST_DIR}/received.txt"
  "ANDROID_ABI=${ANDROID_ABI}\nANDROID_PLATFORM=${ANDROID_PLATFORM}\nANDROID_STL=${ANDROID_STL}\nANDROID_NDK=${ANDROID_NDK}\n")
EOF
}

# Configures the probe project with toolchains/android.cmake, with no NDK variable in the
# environment but those given as NAME=VALUE before `--`; the rest are cmake arguments.
configure_probe() {
  local env_args=(env -u ANDROID_NDK_HOME -u ANDROID_NDK -u ANDROID_NDK_ROOT)
  while [[ $# -gt 0 && "$1" != -- ]]; do env_args+=("$1"); shift; done
  shift
  rm -rf "$tmp/tc-build"
  local rc=0
  "${env_args[@]}" cmake -G Ninja -S "$tc_project" -B "$tmp/tc-build" \
    -DCMAKE_TOOLCHAIN_FILE="$repo/toolchains/android.cmake" "$@" >"$tmp/tc.raw" 2>&1 || rc=$?
  # CMake wraps messages; one line, single spaces, is what the checks grep.
  tr '\n' ' ' <"$tmp/tc.raw" | tr -s ' ' >"$tmp/tc.log"
  return $rc
}

# The FATAL_ERROR text of the last configure_probe.
probe_message() { sed -e 's/.*(message): //' -e 's/ Call Stack .*//' "$tmp/tc.log"; }

# The value recorded for $2 in fake NDK $1's received.txt (the last one).
received() { sed -n "s/^$2=//p" "$1/build/cmake/received.txt" 2>/dev/null | tail -n 1; }

tc="toolchains/android.cmake"
if configure_probe --; then
  fail "$tc: no NDK" "host cmake" "configure succeeded without any NDK"
elif grep -q 'no Android NDK found' "$tmp/tc.log" && grep -q 'ANDROID_NDK_HOME' "$tmp/tc.log" &&
     grep -q 'ANDROID_NDK_ROOT' "$tmp/tc.log" && grep -q 'developer.android.com/ndk' "$tmp/tc.log"; then
  pass "$tc: no NDK stops with a message naming the variables checked and the NDK download" \
    "host cmake" "configure with no NDK variable set"
  echo "    message: $(probe_message)"
else
  fail "$tc: no NDK" "host cmake" "unexpected message: $(probe_message)"
fi

if configure_probe ANDROID_NDK_HOME="$tmp/not-an-ndk" -- ; then
  fail "$tc: not an NDK" "host cmake" "configure succeeded with a directory that is no NDK"
elif grep -q "environment variable ANDROID_NDK_HOME = $tmp/not-an-ndk is not an Android NDK" "$tmp/tc.log"; then
  pass "$tc: a path without build/cmake/android.toolchain.cmake is refused, naming the variable" \
    "host cmake" "ANDROID_NDK_HOME=<empty dir>"
  echo "    message: $(probe_message)"
else
  fail "$tc: not an NDK" "host cmake" "unexpected message: $(probe_message)"
fi

fake="$tmp/fake-ndk"
make_fake_ndk "$fake"
if configure_probe ANDROID_NDK_HOME="$fake" -- &&
   [[ "$(received "$fake" ANDROID_ABI)" == arm64-v8a &&
      "$(received "$fake" ANDROID_PLATFORM)" == android-24 &&
      "$(received "$fake" ANDROID_STL)" == c++_static &&
      "$(received "$fake" ANDROID_NDK)" == "$fake" ]]; then
  pass "$tc: delegates to the NDK's toolchain file with ABI arm64-v8a, android-24, c++_static" \
    "host cmake" "fake NDK from env ANDROID_NDK_HOME; its toolchain file records what it got"
else
  fail "$tc: defaults" "host cmake" "received: $(tr '\n' ' ' <"$fake/build/cmake/received.txt" 2>/dev/null)"
fi

fake2="$tmp/fake-ndk-2"
make_fake_ndk "$fake2"
rm -f "$fake/build/cmake/received.txt"
# A -D variable wins over the environment; the user's ABI and platform are kept.
if configure_probe ANDROID_NDK_HOME="$fake" -- -DANDROID_NDK="$fake2" \
     -DANDROID_ABI=armeabi-v7a -DANDROID_PLATFORM=android-28 &&
   [[ ! -f "$fake/build/cmake/received.txt" &&
      "$(received "$fake2" ANDROID_ABI)" == armeabi-v7a &&
      "$(received "$fake2" ANDROID_PLATFORM)" == android-28 &&
      "$(received "$fake2" ANDROID_STL)" == c++_static ]]; then
  pass "$tc: -DANDROID_NDK wins over env; the user's ANDROID_ABI/ANDROID_PLATFORM are kept" \
    "host cmake" "two fake NDKs; -DANDROID_ABI=armeabi-v7a -DANDROID_PLATFORM=android-28"
else
  fail "$tc: user values" "host cmake" "received: $(tr '\n' ' ' <"$fake2/build/cmake/received.txt" 2>/dev/null)"
fi

# ---------------------------------------------------------------------------------------
# 2-3. Freestanding compiles for the Android targets

shim="$tmp/freestanding-cxx"
mkdir -p "$shim"
cat >"$shim/cstdint" <<'EOF'
// <cstdint> for -nostdinc++ builds: clang's own freestanding <stdint.h>, in std.
#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
}
EOF

# Headers a freestanding Android compile may read; $1 adds one more allowed file.
check_deps() {
  local depfile=$1 extra=${2:-} bad
  bad=$(sed -e 's/^[^:]*://' -e 's/\\$//' "$depfile" | tr ' ' '\n' | sed '/^$/d' |
        while read -r f; do
          f=$(realpath -m "$f")
          case "$f" in
            # $tmp holds only the generated probe sources and the <cstdint> shim.
            "$repo"/*|"$tmp"/*|"$resource_dir"/include/*) ;;
            *) [[ -n "$extra" && "$f" == "$extra" ]] || echo "$f" ;;
          esac
        done)
  # shellcheck disable=SC2086  # One header per word.
  [[ -z "$bad" ]] || { printf '    outside the allowed headers: %s\n' $bad >&2; return 1; }
}

# Compiles $2 for target $1 freestanding into $3; extra flags follow.
compile_freestanding() {
  local target=$1 src=$2 obj=$3
  shift 3
  (cd "$repo" && "$cxx" --target="$target" -std=c++17 -ffreestanding -nostdinc -nostdinc++ \
    -isystem "$shim" -isystem "$resource_dir/include" -fno-exceptions -fno-rtti -fPIC -Os \
    "${warnings[@]}" -Icore/include -Iprofiles/include -Iplatform/include "$@" \
    -c "$src" -o "$obj" -MD -MF "$obj.d") 2>"$obj.err" && check_deps "$obj.d" "${extra_allowed:-}" 2>>"$obj.err"
}

how_freestanding="clang -ffreestanding -nostdinc -nostdinc++, -MD shows only our, clang's and the <cstdint> shim's headers"
for target in "${targets[@]}"; do
  out="$tmp/$target"
  mkdir -p "$out"
  ok=1
  for src in "$repo"/core/src/*.cpp; do
    obj="$out/core_$(basename "${src%.cpp}").o"
    compile_freestanding "$target" "$src" "$obj" || { ok=0; cat "$obj.err" >&2; }
  done
  for hdr in "$repo"/core/include/stepback/core/*.hpp; do
    echo "#include \"$hdr\"" >"$out/h.cpp"
    compile_freestanding "$target" "$out/h.cpp" "$out/h.o" || { ok=0; cat "$out/h.o.err" >&2; }
  done
  if [[ $ok == 1 ]]; then
    sources=("$repo"/core/src/*.cpp)
    pass "core/: ${#sources[@]} sources, each public header alone" "$target" "$how_freestanding"
  else
    fail "core/" "$target" "see the errors above"
  fi

  ok=1
  for profile in MOBILE DESKTOP; do
    compile_freestanding "$target" "$repo/profiles/src/link_check.cpp" "$out/profiles_${profile,,}.o" \
      -DSTEPBACK_PROFILE_$profile || { ok=0; cat "$out/profiles_${profile,,}.o.err" >&2; }
  done
  for hdr in "$repo"/profiles/include/stepback/profiles/*.hpp; do
    echo "#include \"$hdr\"" >"$out/h.cpp"
    compile_freestanding "$target" "$out/h.cpp" "$out/h.o" -DSTEPBACK_PROFILE_MOBILE ||
      { ok=0; cat "$out/h.o.err" >&2; }
  done
  if [[ $ok == 1 ]]; then
    pass "profiles/: link_check.cpp (mobile, desktop), each public header alone" "$target" "$how_freestanding"
  else
    fail "profiles/" "$target" "see the errors above"
  fi

  jni_obj="$out/retry_jni.o"
  if extra_allowed="$aosp_jni_dir/jni.h" compile_freestanding "$target" \
       "$repo/examples/android/retry_jni.cpp" "$jni_obj" -isystem "$aosp_jni_dir" -DSTEPBACK_PROFILE_MOBILE; then
    # The bridge as the app's libstepback_example.so: links against core and profiles; what
    # stays undefined comes from stepback::platform and the NDK's libc/compiler runtime.
    if "$cxx" --target="$target" -fuse-ld=lld -shared -nostdlib -o "$out/libstepback_example.so" \
         "$jni_obj" "$out"/core_*.o "$out/profiles_mobile.o" 2>"$out/link.err"; then
      undefined=$("$nm_tool" -D --undefined-only "$out/libstepback_example.so" | awk '{ print $NF }' |
                  sort -u | tr '\n' ' ')
      pass "examples/android/retry_jni.cpp (JNI bridge) + core + profiles as a shared library" "$target" \
        "$how_freestanding + AOSP jni.h; ld.lld -shared; left undefined: ${undefined:-none}"
    else
      cat "$out/link.err" >&2
      fail "examples/android/retry_jni.cpp link" "$target" "ld.lld failed"
    fi
  else
    cat "$jni_obj.err" >&2
    fail "examples/android/retry_jni.cpp" "$target" "see the errors above"
  fi
done

# ---------------------------------------------------------------------------------------
# 4. The ALooper driver, on the host

for example in looper_request network_jni; do
  if (cd "$repo" && "$cxx" -std=c++17 "${warnings[@]}" -isystem "$aosp_ndk_dir" \
        -isystem "$aosp_jni_dir" -isystem third_party/mbedtls/include -Ihttps/mbedtls/gcm/include \
        -DMBEDTLS_CONFIG_FILE="\"$repo/https/mbedtls/stepback_mbedtls_config.h\"" \
        -Icore/include -Iprofiles/include -Iplatform/include -Ihttps/include -DSTEPBACK_PROFILE_MOBILE \
        -c "examples/android/$example.cpp" -o "$tmp/$example.o") 2>"$tmp/$example.err"; then
    pass "examples/android/$example.cpp, compile only" \
      "host $(uname -m), glibc" "AOSP android/looper.h and jni.h + stepback https headers; NOT a bionic check"
  else
    cat "$tmp/$example.err" >&2
    fail "examples/android/$example.cpp" "host" "see the errors above"
  fi
done

# ---------------------------------------------------------------------------------------
# What needs bionic

for target in "${targets[@]}"; do
  not_verified "platform/: clock_linux.cpp, random_arc4random.cpp, random_common.cpp" "$target" \
    "need bionic's <time.h> (clock_gettime, CLOCK_BOOTTIME), <stdlib.h> (arc4random_buf) and libc++'s <atomic>: NDK only"
  not_verified "https/ (TCP, TLS, HTTP/1.1, RetryInfo) and mbedTLS/nanopb" "$target" \
    "need bionic (sockets, getaddrinfo, poll, <cstring>) and mbedTLS built by the NDK: NDK only"
  not_verified "examples/android/looper_request.cpp, network_jni.cpp" "$target" \
    "need bionic's <sys/timerfd.h>, <unistd.h> and libandroid: the android kit (by hand) or an NDK (compiled on the host above)"
done

echo
echo "## Android checks without an NDK"
echo
echo "| part | target | result | how |"
echo "|---|---|---|---|"
printf '%s\n' "${summary[@]}"
echo
if [[ $failures -gt 0 ]]; then
  echo "check_android: $failures check(s) failed" >&2
  exit 1
fi
echo "check_android: all checks passed; the 'not verified here' rows need a real NDK (docs/android.md)"
