# shellcheck shell=bash
# Helpers shared by the bench scripts; sourced (`source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"`),
# never run. Defines functions only: nothing runs and no variable is set when it is sourced.

# ------------------------------------------------------------------------------ script set-up

# sb_usage SCRIPT: prints SCRIPT's header comment (from line 2 to the `set -euo` line) as its
# --help text.
sb_usage() { sed -n '2,/^set -euo/p' "$1" | sed '$d; s/^# \{0,1\}//'; }

# sb_tmpdir NAME PREFIX: sets the global `tmp` to a new temp dir "${TMPDIR:-/tmp}/PREFIX.XXXXXX",
# removed on exit unless KEEP_TMP=1 (then NAME says where it is). Installs the EXIT trap: for
# scripts without a clean-up of their own.
sb_tmpdir() {
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")"
  if [[ "${KEEP_TMP:-0}" == 1 ]]; then
    echo "$1: keeping $tmp" >&2
  else
    trap 'rm -rf "$tmp"' EXIT
  fi
}

# ------------------------------------------------------------------------------ markdown tables

# md_head FIRST COLUMN...: the header and rule lines of a table whose first column is text
# (left-aligned) and whose other columns are figures (right-aligned).
md_head() {
  local header="| $1 |" rule="|---|" c
  shift
  for c in "$@"; do
    header+=" $c |"
    rule+="---:|"
  done
  printf '%s\n%s\n' "$header" "$rule"
}

# md_row CELL...: one table row.
md_row() {
  local row="|" c
  for c in "$@"; do row+=" $c |"; done
  echo "$row"
}

# ------------------------------------------------------------------------------ footprint

# fp_targets: the compile targets of the footprint scripts as globals: `targets` (in table
# order), and per target `label`, `compiler` (C++), `target_flags`; `common_flags` are the
# core's flags (-Os, freestanding rules, the project's warnings as errors). CXX overrides
# the host compiler. The host is measured under its own label even where it is one of the
# cross targets' architectures.
# shellcheck disable=SC2034  # Set for the caller.
fp_targets() {
  local host_arch
  host_arch="$(uname -m)"
  targets=(host aarch64 armhf cortex-m4)
  declare -gA label=(
    [host]="$host_arch (host)" [aarch64]="aarch64" [armhf]="armhf Thumb-2" [cortex-m4]="Cortex-M4")
  declare -gA compiler=(
    [host]="${CXX:-g++}" [aarch64]=aarch64-linux-gnu-g++ [armhf]=arm-linux-gnueabihf-g++
    [cortex-m4]=arm-none-eabi-g++)
  declare -gA target_flags=(
    [host]="" [aarch64]="" [armhf]="-mthumb" [cortex-m4]="-ffreestanding -mcpu=cortex-m4 -mthumb")
  common_flags=(-Os -std=c++17 -fno-exceptions -fno-rtti -ffunction-sections
                -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror)
}

# fp_head FIRST TARGET...: md_head with the labels of fp_targets' TARGETs as the columns.
fp_head() {
  local first="$1" t cols=()
  shift
  for t in "$@"; do cols+=("${label[$t]}"); done
  md_head "$first" "${cols[@]}"
}

# fp_type_table TYPES VALUES TARGET...: a table with one row per type of the array named
# TYPES (as `code`) and one column per TARGET, the cells read from the associative array
# named VALUES at [TARGET,TYPE].
fp_type_table() {
  local -n types_ref="$1" values_ref="$2"
  shift 2
  local ty t cells
  fp_head type "$@"
  for ty in "${types_ref[@]}"; do
    cells=()
    for t in "$@"; do cells+=("${values_ref[$t,$ty]}"); done
    md_row "\`$ty\`" "${cells[@]}"
  done
}

# binutil CC TOOL: the binutils tool TOOL (size, nm, strip, c++filt) that matches compiler
# CC: a-b-c-g++ -> a-b-c-TOOL when installed, else plain TOOL.
binutil() {
  local cc="$1" tool="$2"
  if [[ "$cc" == *-g++ ]] && command -v "${cc%g++}$tool" >/dev/null; then
    echo "${cc%g++}$tool"
  else
    echo "$tool"
  fi
}

# asm_value FILE LABEL: the 4-byte constant labelled LABEL in assembly FILE (a probe TU's
# `extern const unsigned LABEL = sizeof(...)`, so no target code is ever run); fails when
# there is none.
asm_value() {
  awk -v sym="$2:" '
    $1 == sym { found = 1; next }
    found && $1 ~ /^\.(long|word|4byte|int)$/ { print $2; done = 1; exit }
    END { if (!done) exit 1 }' "$1"
}

# map_sections MAP: "BYTES INPUT OUTPUT" per input section a GNU ld map (-Wl,-Map) says the
# link kept: code, read-only data, data, unwind tables; not .bss, debug info, comments, notes
# or attributes. INPUT is the file as the map names it, e.g. /usr/lib/.../libc.a(printf.o);
# OUTPUT the output section it went to (.text, .eh_frame, .dynsym: the linker's own tables,
# which the map puts under the first input file).
map_sections() {
  awk '
    function hex(h,  i, v) {
      h = tolower(h); sub(/^0x/, "", h); v = 0
      for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
      return v
    }
    /^Linker script and memory map/ { on = 1; next }
    !on { next }
    /^\.[^ ]+/ { out = $1 }
    /^ \.[^ ]+$/ { sec = $1; next }
    /^ (\.[^ ]+)?[ ]+0x[0-9a-f]+[ ]+0x[0-9a-f]+[ ]+[^ ]+/ {
      # " .sec 0xADDR 0xSIZE FILE" or, after a long section name, " 0xADDR 0xSIZE FILE".
      f = ($1 ~ /^\./) ? 2 : 1; s = (f == 2) ? $1 : sec; sec = ""
      if (s == "" || s ~ /^\.(debug|comment|note|gnu\.attributes|ARM\.attributes)/ || s ~ /bss/) next
      printf "%d %s %s\n", hex($(f + 1)), $(f + 2), out
    }' "$1"
}

# map_by_archive MAP: map_sections summed per archive or object (its file name, without the
# member), largest first, with a "TOTAL (total)" line.
map_by_archive() {
  map_sections "$1" | awk '
    { src = $2; sub(/\(.*\)$/, "", src); n = split(src, p, "/"); bytes[p[n]] += $1; total += $1 }
    END { for (k in bytes) printf "%d %s\n", bytes[k], k; printf "%d (total)\n", total }' |
    sort -k1,1nr
}

# map_runtime_members MAP: map_sections summed per member of the static C and C++ runtimes
# (libc.a(x.o), libstdc++.a(y.o)), largest first.
map_runtime_members() {
  map_sections "$1" | awk '
    $2 ~ /lib(c|stdc\+\+)\.a\(/ { n = split($2, p, "/"); bytes[p[n]] += $1 }
    END { for (k in bytes) printf "%d %s\n", bytes[k], k }' |
    sort -k1,1nr
}

# ------------------------------------------------------------------------------ loopback nginx

# sb_self_signed_cert DIR: DIR/key.pem and DIR/cert.pem, a self-signed ECDSA P-256
# certificate for localhost and 127.0.0.1 valid for two days; openssl's output goes to
# DIR/openssl.log, shown when it fails.
sb_self_signed_cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$1/key.pem" -out "$1/cert.pem" -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" >"$1/openssl.log" 2>&1 ||
    { cat "$1/openssl.log" >&2; return 1; }
}

# sb_free_port: a free TCP port on 127.0.0.1 (the kernel's choice; another process may take
# it before the caller binds it).
sb_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# sb_join_cmd ARG...: the arguments joined by \x1f, one command for the measure.py helpers.
sb_join_cmd() { local IFS=$'\x1f'; echo "$*"; }

# sb_stop_nginx: stops the nginx of the global `nginx_pid` (TERM, then KILL after 5 s), reaps
# it and clears nginx_pid; nothing when it is empty.
sb_stop_nginx() {
  if [[ -n "$nginx_pid" ]] && kill -0 "$nginx_pid" 2>/dev/null; then
    kill -TERM "$nginx_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nginx_pid" 2>/dev/null || true
  fi
  [[ -z "$nginx_pid" ]] || wait "$nginx_pid" 2>/dev/null || true
  nginx_pid=""
}
