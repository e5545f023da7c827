#!/usr/bin/env bash
# Checks the arrows between the library's rooms and between https/'s sub-rooms (docs/
# architecture.md, "Layout"), and two portability rules the Android build taught us.
#
#   https/: base (types, failure, transport, network: they include only each other) <- tcp/ <- dns/;
#           base <- integrity/ <- tls/ (base64 for pins and PEM); base <- http/ <- proxy/
#           (proxy settings and the CONNECT tunnel's request and answer); detail/ under http/,
#           integrity/, tls/ and client/; client/ (the Client's parts) over http/, integrity/,
#           detail/, tcp/address.hpp and the Connector interface, never client.hpp; the
#           connectors, the Client and poll_wait (top level) on top.
#           A sub-room includes only what its arrow allows, from public headers or from src/.
#   transfer/: includes core, https and itself, never profiles, platform or tools.
#   app/: includes core, platform, profiles, https, transfer and itself, never tools; nothing
#           below it (core, platform, profiles, https, transfer) includes stepback/app/.
#   capi/: the C API includes every library room and itself (stepback/stepback.h), never
#           tools; its freestanding part (src/core.cpp, names.cpp, policy.*, storage.hpp:
#           stepback::capi_core) includes core only; no library room includes stepback.h.
#   socklen: every socklen_t / ares_socklen_t / ai_addrlen in https/ and platform/ goes through
#           https/src/tcp/socket_length.hpp (socklen_t is a signed int on 32-bit bionic).
#   Android API levels: a file that guards code with __ANDROID_API__ >= N defines its
#           constants and helpers inside that guard (AndroidResolver is also compiled at API 24
#           with the unused-code warnings by tests/https/CMakeLists.txt).
# Prints one line per rule; exits 1 with the offending lines when one is broken.
#   scripts/check_layers.sh --self-test   runs the rules on fixture trees, each of which must
#                                         pass or fail as expected (the normal run does first)
set -euo pipefail
cd "$(dirname "$0")/.."

# check: runs every rule on the tree in the current directory; returns 1 if one is broken.
check() {
failures=0
report() {  # report <rule> <offending lines>
  if [[ -n "$2" ]]; then
    echo "check_layers: FAILED: $1" >&2
    # shellcheck disable=SC2001  # every line indented
    echo "$2" | sed 's/^/    /' >&2
    failures=$((failures + 1))
  else
    echo "check_layers: ok: $1"
  fi
}

# The base includes only itself.
base='stepback/https/(types|failure|transport|network)\.hpp'
mapfile -t files < <(find https/include/stepback/https -maxdepth 1 -type f -regextype posix-extended \
                       -regex ".*/${base#stepback/https/}" 2>/dev/null | sort)
bad=""
[[ ${#files[@]} -eq 0 ]] ||
  bad=$(grep -HnE '#include\s*"stepback/https/' "${files[@]}" | grep -vE "#include\s*\"($base)" || true)
report "https/'s base (types, failure, transport, network) includes only itself" "$bad"

# The sub-rooms of https/ and what each may include besides the base and itself: a room
# (all of its headers) or one header of a room (room/name.hpp).
declare -A allowed=(
  [tcp]=""
  [dns]="tcp"
  [tls]="integrity detail"
  [http]="detail"
  [integrity]="detail"
  [detail]=""
  [client]="http integrity detail tcp/address.hpp connector.hpp"
  [proxy]="http"
)
subrooms=$(printf '%s|' "${!allowed[@]}")
subrooms=${subrooms%|}
for room in "${!allowed[@]}"; do
  ok="$base|stepback/https/$room/"
  ok_src="$room/"
  for other in ${allowed[$room]}; do
    [[ $other == */* || $other == *.hpp ]] || other="$other/"
    ok="$ok|stepback/https/${other//./\\.}"
    ok_src="$ok_src|${other//./\\.}"
  done
  mapfile -t files < <(find "https/include/stepback/https/$room" "https/src/$room" -type f 2>/dev/null | sort)
  if [[ ${#files[@]} -eq 0 ]]; then
    report "https/$room includes only the base${allowed[$room]:+, ${allowed[$room]}} and itself (no files yet)" ""
    continue
  fi
  # Our includes: "stepback/https/..." and src-relative "<room>/..." forms.
  bad=$(grep -HnE '#include\s*"stepback/https/' "${files[@]}" | grep -vE "#include\s*\"($ok)" || true)
  bad_src=$(grep -HnE "#include\s*\"($subrooms)/" "${files[@]}" | grep -vE "#include\s*\"($ok_src)" || true)
  report "https/$room includes only the base${allowed[$room]:+, ${allowed[$room]}} and itself" \
    "$(printf '%s\n%s' "$bad" "$bad_src" | sed '/^$/d')"
done
bad=$(grep -rnE '#include\s*[<"]stepback/(profiles|platform|tools|transfer)/' https 2>/dev/null || true)
report "https/ includes core and itself only" "$bad"
bad=$(grep -rnE '#include\s*[<"]stepback/(profiles|platform|tools)/' transfer 2>/dev/null || true)
report "transfer/ includes core, https and itself only" "$bad"
bad=$(grep -rnE '#include\s*[<"]' app 2>/dev/null |
      grep -E '#include\s*[<"](stepback/|[^>"]*tools/)' |
      grep -vE '#include\s*[<"]stepback/(core|platform|profiles|https|transfer|app)/' || true)
report "app/ includes core, platform, profiles, https, transfer and itself only" "$bad"
bad=$(grep -rnE '#include\s*[<"]stepback/app/' core platform profiles https transfer 2>/dev/null || true)
report "core, platform, profiles, https and transfer never include app/" "$bad"
bad=$(grep -rnE '#include\s*[<"]' capi 2>/dev/null |
      grep -E '#include\s*[<"](stepback/|[^>"]*tools/)' |
      grep -vE '#include\s*[<"]stepback/((core|platform|profiles|https|transfer|app)/|stepback\.h)' || true)
report "capi/ includes the library rooms and itself only (never tools)" "$bad"
mapfile -t files < <(find capi/src -maxdepth 1 -type f -regextype posix-extended \
                       -regex '.*/(core\.cpp|names\.cpp|policy\.cpp|policy\.hpp|storage\.hpp)' 2>/dev/null | sort)
bad=""
[[ ${#files[@]} -eq 0 ]] ||
  bad=$(grep -HnE '#include\s*"' "${files[@]}" |
        grep -vE '#include\s*"(stepback/core/|stepback/stepback\.h|policy\.hpp|storage\.hpp)' || true)
report "capi/'s freestanding part (capi_core) includes core only" "$bad"
bad=$(grep -rnE '#include\s*[<"]stepback/stepback\.h' core platform profiles https transfer app \
      2>/dev/null || true)
report "no library room includes the C API (stepback/stepback.h)" "$bad"

# socklen: lines naming a socket length type or field must hand it to socket_length.hpp.
bad=$(grep -rnE '\b(socklen_t|ares_socklen_t|ai_addrlen)\b' https/src https/include platform \
        --include='*.cpp' --include='*.hpp' 2>/dev/null |
      grep -v '^https/src/tcp/socket_length.hpp:' |
      grep -vE 'checked_socket_length|to_socket_length|copy_socket_address' || true)
report "socket lengths go through https/src/tcp/socket_length.hpp" "$bad"

# Android API guards: in a file with "#if __ANDROID_API__ >= N" (or defined(__ANDROID__) &&
# __ANDROID_API__ >= N), a namespace-scope constexpr/const outside any such guard that is used
# only inside one would be unused below N. Lists each constant used only under the guard.
bad=""
for f in $(grep -rlE '__ANDROID_API__\s*>=' https platform examples --include='*.cpp' 2>/dev/null || true); do
  bad+=$(awk '
    /^#\s*if/ { depth++; api[depth] = ($0 ~ /__ANDROID_API__[ \t]*>=/) }
    /^#\s*else/ { if (api[depth]) api[depth] = 0 }
    /^#\s*endif/ { depth--; }
    { guarded = 0; for (i = 1; i <= depth; i++) if (api[i]) guarded = 1 }
    /^constexpr |^const / && !guarded {
      name = $0; sub(/[ \t]*=.*/, "", name); n = split(name, w, /[ \t]+/); decl[w[n]] = FNR; next
    }
    { for (c in decl) if (index($0, c) > 0) { if (guarded) inside[c] = 1; else outside[c] = 1 } }
    END { for (c in decl) if (inside[c] && !outside[c]) printf "%s:%d: %s is used only under __ANDROID_API__ >= N\n", FILENAME, decl[c], c }
  ' "$f")
done
report "constants used only under __ANDROID_API__ >= N are defined under it" "$bad"

[[ $failures -eq 0 ]]
}

# self_test: each fixture is a tree of a few includes that the rules must pass or fail.
self_test() {
  local case expect got errors=0
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  write() {  # write <case> <path> <include>...
    local dir=$root/$1 path=$2
    shift 2
    mkdir -p "$dir/$(dirname "$path")"
    printf '#include "%s"\n' "$@" >> "$dir/$path"
  }
  write empty https/include/stepback/https/types.hpp "stepback/core/millis.hpp"
  write base_ok https/include/stepback/https/failure.hpp "stepback/https/types.hpp"
  write base_ok https/include/stepback/https/poll_wait.hpp "stepback/https/client.hpp"
  write base_bad https/include/stepback/https/transport.hpp "stepback/https/client.hpp"
  write client_ok https/src/client/stage.cpp "stepback/https/client/stage.hpp" \
    "stepback/https/types.hpp" "stepback/https/failure.hpp" "stepback/https/http/url.hpp" \
    "stepback/https/integrity/crc32c.hpp" "stepback/https/detail/text.hpp" \
    "stepback/https/tcp/address.hpp" "http/query.hpp" "client/stage.hpp"
  write client_ok https/include/stepback/https/client/stage.hpp "stepback/https/http/url.hpp"
  write client_includes_client_hpp https/src/client/stage.cpp "stepback/https/client.hpp"
  write client_includes_client_hpp_public https/include/stepback/https/client/stage.hpp \
    "stepback/https/client.hpp"
  write client_includes_tcp https/src/client/stage.cpp "stepback/https/tcp/tcp_transport.hpp"
  write client_includes_src_tcp https/src/client/stage.cpp "tcp/socket_length.hpp"
  write client_includes_tls https/src/client/stage.cpp "stepback/https/tls/tls.hpp"
  write http_includes_client https/src/http/url.cpp "client/stage.hpp"
  write http_includes_client_public https/src/http/url.cpp "stepback/https/client/stage.hpp"
  write tcp_includes_address https/src/tcp/x.cpp "stepback/https/tcp/address.hpp"
  write proxy_ok https/src/proxy/tunnel.cpp "stepback/https/proxy/tunnel.hpp" \
    "stepback/https/types.hpp" "stepback/https/http/response_parser.hpp" "http/http1_text.hpp" \
    "proxy/tunnel.hpp"
  write proxy_ok https/include/stepback/https/proxy/tunnel.hpp \
    "stepback/https/http/response_parser.hpp"
  write proxy_includes_connector https/src/proxy/tunnel.cpp "stepback/https/tcp_connector.hpp"
  write proxy_includes_tcp https/include/stepback/https/proxy/proxy.hpp \
    "stepback/https/tcp/tcp_transport.hpp"
  write proxy_includes_src_tcp https/src/proxy/tunnel.cpp "tcp/socket_length.hpp"
  write http_includes_proxy https/src/http/url.cpp "proxy/proxy.hpp"
  write app_ok app/src/files.cpp "stepback/app/files.hpp" "stepback/transfer/download.hpp" \
    "stepback/platform/clock.hpp" "stepback/profiles/active.hpp" "stepback/https/client.hpp" \
    "stepback/core/millis.hpp"
  write app_includes_tools app/src/files.cpp "stepback/tools/state_file.hpp"
  write app_includes_tools_source app/src/files.cpp "../../tools/state_file.hpp"
  write transfer_includes_app transfer/src/download.cpp "stepback/app/files.hpp"
  write core_includes_app core/src/policy.cpp "stepback/app/defaults.hpp"
  write capi_ok capi/src/download.cpp "stepback/stepback.h" "stepback/app/files.hpp" "full.hpp"
  write capi_includes_tools capi/src/download.cpp "stepback/tools/state_file.hpp"
  write capi_core_includes_https capi/src/core.cpp "stepback/https/types.hpp"
  write app_includes_capi app/src/files.cpp "stepback/stepback.h"
  for case in capi_ok capi_includes_tools capi_core_includes_https app_includes_capi \
              app_ok app_includes_tools app_includes_tools_source transfer_includes_app \
              core_includes_app empty base_ok base_bad client_ok client_includes_client_hpp \
              client_includes_client_hpp_public client_includes_tcp client_includes_src_tcp \
              client_includes_tls http_includes_client http_includes_client_public \
              tcp_includes_address proxy_ok proxy_includes_connector proxy_includes_tcp \
              proxy_includes_src_tcp http_includes_proxy; do
    expect=fail
    [[ $case == *_ok || $case == empty || $case == tcp_includes_address ]] && expect=pass
    got=pass
    (cd "$root/$case" && check) > "$root/$case.log" 2>&1 || got=fail
    if [[ $got != "$expect" ]]; then
      echo "check_layers: self-test FAILED: fixture $case should $expect, did $got:" >&2
      sed 's/^/    /' "$root/$case.log" >&2
      errors=$((errors + 1))
    fi
  done
  [[ $errors -eq 0 ]] || return 1
  echo "check_layers: self-test ok"
}

case "${1:-}" in
  "") ;;
  --self-test) self_test; exit ;;
  *) echo "usage: scripts/check_layers.sh [--self-test]" >&2; exit 2 ;;
esac
self_test
if ! check; then
  echo "check_layers: $failures rule(s) broken" >&2
  exit 1
fi
echo "check_layers: all rules hold"
