#!/usr/bin/env bash
# Checks the arrows between the library's rooms and between https/'s sub-rooms (docs/
# architecture.md, "Layout"), and two portability rules the Android build taught us.
#
#   https/: base (types, failure, transport, poll_wait, detail/) <- tcp/ <- dns/;
#           base <- integrity/ <- tls/ (base64 for pins and PEM); base <- http/; the connectors
#           and the Client (top level) on top.
#           A sub-room includes only what its arrow allows, from public headers or from src/.
#   transfer/: includes core, https and itself, never profiles, platform or tools.
#   socklen: every socklen_t / ares_socklen_t / ai_addrlen in https/ and platform/ goes through
#           https/src/tcp/socket_length.hpp (socklen_t is a signed int on 32-bit bionic).
#   Android API levels: a file that guards code with __ANDROID_API__ >= N defines its
#           constants and helpers inside that guard (AndroidResolver is also compiled at API 24
#           with the unused-code warnings by tests/https/CMakeLists.txt).
# Prints one line per rule; exits 1 with the offending lines when one is broken.
set -euo pipefail
cd "$(dirname "$0")/.."

failures=0
report() {  # report <rule> <offending lines>
  if [[ -n "$2" ]]; then
    echo "check_layers: FAILED: $1" >&2
    echo "$2" | sed 's/^/    /' >&2
    failures=$((failures + 1))
  else
    echo "check_layers: ok: $1"
  fi
}

# The sub-rooms of https/ and what each may include besides the base and itself.
declare -A allowed=(
  [tcp]=""
  [dns]="tcp"
  [tls]="integrity detail"
  [http]="detail"
  [integrity]="detail"
  [detail]=""
)
base='stepback/https/(types|failure|transport|poll_wait)\.hpp'
for room in "${!allowed[@]}"; do
  ok="$base|stepback/https/$room/"
  for other in ${allowed[$room]}; do ok="$ok|stepback/https/$other/"; done
  files=$(find "https/include/stepback/https/$room" "https/src/$room" -type f 2>/dev/null || true)
  [[ -n "$files" ]] || continue
  # Our includes: "stepback/https/..." and src-relative "<room>/..." forms.
  bad=$(grep -nE '#include\s*"stepback/https/' $files | grep -vE "#include\s*\"($ok)" || true)
  rooms="$room${allowed[$room]:+ ${allowed[$room]}}"
  bad_src=$(grep -nE '#include\s*"(tcp|dns|tls|http|integrity|detail)/' $files |
            grep -vE "#include\s*\"(${rooms// /|})/" || true)
  report "https/$room includes only the base${allowed[$room]:+, ${allowed[$room]}} and itself" \
    "$(printf '%s\n%s' "$bad" "$bad_src" | sed '/^$/d')"
done
bad=$(grep -rnE '#include\s*[<"]stepback/(profiles|platform|tools|transfer)/' https || true)
report "https/ includes core and itself only" "$bad"
bad=$(grep -rnE '#include\s*[<"]stepback/(profiles|platform|tools)/' transfer || true)
report "transfer/ includes core, https and itself only" "$bad"

# socklen: lines naming a socket length type or field must hand it to socket_length.hpp.
bad=$(grep -rnE '\b(socklen_t|ares_socklen_t|ai_addrlen)\b' https/src https/include platform \
        --include='*.cpp' --include='*.hpp' |
      grep -v '^https/src/tcp/socket_length.hpp:' |
      grep -vE 'checked_socket_length|to_socket_length|copy_socket_address' || true)
report "socket lengths go through https/src/tcp/socket_length.hpp" "$bad"

# Android API guards: in a file with "#if __ANDROID_API__ >= N" (or defined(__ANDROID__) &&
# __ANDROID_API__ >= N), a namespace-scope constexpr/const outside any such guard that is used
# only inside one would be unused below N. Lists each constant used only under the guard.
bad=""
for f in $(grep -rlE '__ANDROID_API__\s*>=' https platform examples --include='*.cpp' || true); do
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

if [[ $failures -gt 0 ]]; then
  echo "check_layers: $failures rule(s) broken" >&2
  exit 1
fi
echo "check_layers: all rules hold"
