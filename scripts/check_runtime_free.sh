#!/usr/bin/env bash
# Checks that the library archives of a build reference no C++ runtime: no exception
# machinery (__cxa_*, __gxx_personality*, _Unwind_*), no RTTI (typeinfo, _ZTI/_ZTS), no
# std::terminate, no libstdc++ function and no global operator new/delete. The library throws
# nothing, so an embedded or NDK app that builds without exceptions must not have to link a
# C++ runtime for it. The CLI and tests may use one.
#
# Usage: scripts/check_runtime_free.sh BUILD_DIR   (after the build; default build/desktop)
# Environment: NM (default nm).
set -euo pipefail
build=${1:-build/desktop}
nm_tool=${NM:-nm}

archives=()
while IFS= read -r a; do archives+=("$a"); done < <(
  find "$build"/core "$build"/profiles "$build"/platform "$build"/https "$build"/transfer "$build"/app "$build"/capi "$build"/third_party \
    -name '*.a' 2>/dev/null | sort)
[ ${#archives[@]} -ge 5 ] || { echo "check_runtime_free: expected the library archives under $build, found ${#archives[@]}" >&2; exit 1; }

pattern='(__cxa_|__gxx_personality|_Unwind_|_ZTI|_ZTS|_ZSt9terminate|__dynamic_cast)'
# Anything of libstdc++ itself: std:: functions defined there (std::__throw_out_of_range_fmt,
# which std::string_view::substr calls), and the global operator new and delete.
std_pattern=' U (_ZSt|_ZNSt|_ZNKSt|_Znw|_Zna|_Zdl|_Zda)'
failed=0
for a in "${archives[@]}"; do
  # Undefined references and defined typeinfo alike: either ties the archive to the runtime.
  hits=$("$nm_tool" -A "$a" 2>/dev/null | grep -E " [UVWRrDdTt] $pattern|$std_pattern" || true)
  if [ -n "$hits" ]; then
    echo "check_runtime_free: $a references the C++ runtime:" >&2
    echo "$hits" | head -n 20 >&2
    failed=1
  fi
done
[ $failed -eq 0 ] || exit 1
echo "check_runtime_free: ${#archives[@]} archives, no C++ runtime symbol (${archives[*]##*/})"
