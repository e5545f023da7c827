#!/usr/bin/env bash
# The RAM one whole HTTPS download takes, and what a MiB of it costs in CPU, in the default
# build and in the small-RAM build (the small-ram preset's settings: STEPBACK_TLS_IN_CONTENT_LEN
# and _OUT_ 4096, STEPBACK_SMALL_RAM), against nginx on loopback (TLS 1.2 and 1.3, a
# self-signed ECDSA P-256 certificate, keep-alive), printed as markdown tables:
#   (a) RAM, measured by bench/download_ram.cpp in each build: the TLS arena's peak with its
#       block headers (tls_arena_usage()), the objects a download keeps (sizeof), the
#       ClientBuffers given to the Client, the stack the download's calls took below the frame
#       that makes them (a painted stack; glibc's thread block above that frame is printed
#       apart, not counted), and the static data (.data + .bss) of mbedTLS and stepback from
#       the link map; for a small object over TLS 1.3 (no max_fragment_length), a small and
#       a large object with max_fragment_length 4096 (TLS 1.2), the large one over TLS 1.3 in
#       --range-size pieces (no max_fragment_length), and the small build's refusal of full
#       records.
#   (b) CPU per MiB of a large object: PAIRS rounds, each running every configuration once
#       (order rotating) on the large and on the small object, CPU of the measured thread
#       (CLOCK_THREAD_CPUTIME_ID, user + system; the user and system parts from
#       getrusage(RUSAGE_THREAD)); per MiB = (median large - median small) / MiB, so the
#       handshake cancels.
#   (c) instructions per MiB (valgrind callgrind, user space), the same difference, on an
#       8 MiB object.
# With --armhf, (a) is measured in a third build too: the small-RAM settings for 32-bit ARM
# (Thumb-2, toolchains/arm-linux-gnueabihf.cmake), run under qemu-arm against the same
# nginx: a device's pointer and block-header sizes. With --records2k, a build with 2 KiB record
# buffers (STEPBACK_TLS_IN_CONTENT_LEN and _OUT_ 2048, max_fragment_length 2048) adds a row
# (for armhf too with --armhf). With --records1k, a build with 1 KiB record buffers adds a
# row: TLS 1.3 in 512 B pieces with the least buffers such a request needs (512 B each of
# request head, response head and io), the smallest whole TLS 1.3 download measured here.
# The load average is printed before and after: the CPU figures are only as quiet as the
# machine.
#
# Builds (Release, benchmarks on, tests off) go to --default-build and --small-build (default
# build/bench-ram and build/bench-ram-small), configured when they are not.
#
# Usage: bench/download_ram.sh [--default-build DIR] [--small-build DIR] [--no-build]
#                              [--mib N] [--pairs N] [--no-callgrind] [--armhf] [--records2k]
#                              [--records1k]
#   --mib N         the large object, in MiB (default 32)
#   --pairs N       rounds of (b) (default 7)
# Environment: KEEP_TMP=1 keeps the temp dir (nginx is still stopped).
# Needs: nginx, openssl, python3, cmake, ninja; valgrind for (c); arm-linux-gnueabihf-g++ and
# qemu-arm for --armhf (scripts/setup.sh installs them).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$repo/bench/lib.sh"

invocation="bench/download_ram.sh $*"
default_build="$repo/build/bench-ram"
small_build="$repo/build/bench-ram-small"
armhf_build="$repo/build/bench-ram-small-armhf"
armhf=0
records2k=0
records1k=0
no_build=0
mib=32
pairs=7
callgrind=1
readonly CG_MIB=8
readonly SMALL_BYTES=1024
# --range-size pieces that keep each response (a 206 head of about 300 bytes and the piece)
# within one record of the small builds' 4 KiB and 2 KiB input buffers.
readonly PIECE=3584 PIECE2K=1536
# Within one record of 1 KiB with its 206 head.
readonly PIECE1K=512
while (($#)); do
  case "$1" in
    --default-build) default_build="${2:?}"; shift ;;
    --small-build) small_build="${2:?}"; shift ;;
    --no-build) no_build=1 ;;
    --mib) mib="${2:?}"; shift ;;
    --pairs) pairs="${2:?}"; shift ;;
    --no-callgrind) callgrind=0 ;;
    --armhf) armhf=1 ;;
    --records2k) records2k=1 ;;
    --records1k) records1k=1 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "download_ram.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if ! [[ "$mib" =~ ^[0-9]+$ ]] || ((mib < 1 || mib > 1024)); then
  echo "download_ram.sh: --mib must be 1..1024" >&2
  exit 2
fi
if ! [[ "$pairs" =~ ^[0-9]+$ ]] || ((pairs < 1 || pairs > 100)); then
  echo "download_ram.sh: --pairs must be 1..100" >&2
  exit 2
fi
for tool in nginx openssl python3 cmake ninja; do
  command -v "$tool" >/dev/null || { echo "download_ram.sh: '$tool' not found (scripts/setup.sh)" >&2; exit 1; }
done
if ((callgrind)) && ! command -v valgrind >/dev/null; then
  echo "download_ram.sh: valgrind not found; skipping instruction counts" >&2
  callgrind=0
fi
nginx_bin="$(command -v nginx)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/stepback-download-ram.XXXXXX")"
nginx_pid=""
cleanup() {
  local status=$?
  sb_stop_nginx
  if [[ "${KEEP_TMP:-0}" == 1 ]]; then echo "download_ram.sh: keeping $tmp" >&2; else rm -rf "$tmp"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "download_ram.sh: $*" >&2; exit 1; }
run_logged() {
  local log="$1"; shift
  "$@" >"$log" 2>&1 || { cat "$log" >&2; die "failed: $*"; }
}

# ---------------------------------------------------------------------------- builds
configure() {  # DIR EXTRA-CACHE-ARGS...
  local dir="$1"; shift
  [[ -f "$dir/CMakeCache.txt" ]] && return 0
  run_logged "$tmp/configure.log" cmake -S "$repo" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSTEPBACK_BUILD_BENCH=ON -DSTEPBACK_BUILD_TESTS=OFF -DSTEPBACK_BUILD_EXAMPLES=OFF \
    -DSTEPBACK_BUILD_TOOLS=OFF "$@"
}
# The builds, by name: their directory and cache settings. "small" is the small-ram preset's.
small_settings=(-DSTEPBACK_TLS_IN_CONTENT_LEN=4096 -DSTEPBACK_TLS_OUT_CONTENT_LEN=4096 -DSTEPBACK_SMALL_RAM=ON)
small2k_settings=(-DSTEPBACK_TLS_IN_CONTENT_LEN=2048 -DSTEPBACK_TLS_OUT_CONTENT_LEN=2048 -DSTEPBACK_SMALL_RAM=ON)
small1k_settings=(-DSTEPBACK_TLS_IN_CONTENT_LEN=1024 -DSTEPBACK_TLS_OUT_CONTENT_LEN=1024 -DSTEPBACK_SMALL_RAM=ON)
armhf_settings=(-DCMAKE_TOOLCHAIN_FILE="$repo/toolchains/arm-linux-gnueabihf.cmake" -DSTEPBACK_PROFILE=mobile)
declare -A build_dir=([default]="$default_build" [small]="$small_build")
builds=(default small)
if ((records2k)); then build_dir[small2k]="$repo/build/bench-ram-small-2k"; builds+=(small2k); fi
if ((armhf)); then build_dir[armhf]="$armhf_build"; builds+=(armhf); fi
if ((armhf && records2k)); then build_dir[armhf2k]="$repo/build/bench-ram-small-2k-armhf"; builds+=(armhf2k); fi
if ((records1k)); then build_dir[small1k]="$repo/build/bench-ram-small-1k"; builds+=(small1k); fi
if ((armhf && records1k)); then build_dir[armhf1k]="$repo/build/bench-ram-small-1k-armhf"; builds+=(armhf1k); fi
if ((!no_build)); then
  configure "${build_dir[default]}"
  configure "${build_dir[small]}" "${small_settings[@]}"
  ((!records2k)) || configure "${build_dir[small2k]}" "${small2k_settings[@]}"
  ((!armhf)) || configure "${build_dir[armhf]}" "${armhf_settings[@]}" "${small_settings[@]}"
  ((!armhf || !records2k)) || configure "${build_dir[armhf2k]}" "${armhf_settings[@]}" "${small2k_settings[@]}"
  ((!records1k)) || configure "${build_dir[small1k]}" "${small1k_settings[@]}"
  ((!armhf || !records1k)) || configure "${build_dir[armhf1k]}" "${armhf_settings[@]}" "${small1k_settings[@]}"
  for b in "${builds[@]}"; do
    echo "download_ram.sh: building download_ram in ${build_dir[$b]}" >&2
    run_logged "$tmp/build.log" cmake --build "${build_dir[$b]}" --target download_ram
  done
fi
declare -A build_bin
for b in "${builds[@]}"; do
  build_bin[$b]="${build_dir[$b]}/bench/download_ram"
  [[ -x "${build_bin[$b]}" ]] || die "no ${build_bin[$b]} (build it, or drop --no-build)"
done
default_bin="${build_bin[default]}"
grep -q '^STEPBACK_TLS_IN_CONTENT_LEN:STRING=4096' "$small_build/CMakeCache.txt" ||
  die "$small_build is not built with STEPBACK_TLS_IN_CONTENT_LEN=4096"

# ---------------------------------------------------------------------------- nginx
mkdir -p "$tmp/www" "$tmp/tmp"
chmod 755 "$tmp" "$tmp/www"
head -c "$SMALL_BYTES" /dev/urandom >"$tmp/www/small"
head -c $((mib * 1024 * 1024)) /dev/urandom >"$tmp/www/large"
head -c $((CG_MIB * 1024 * 1024)) /dev/urandom >"$tmp/www/cg"
chmod 644 "$tmp/www/"*
sb_self_signed_cert "$tmp" || die "openssl could not make the certificate"
cert="$tmp/cert.pem"
port=""
for attempt in 1 2 3; do
  candidate="$(sb_free_port)"
  # TLS 1.2 beside 1.3, and no pinned TLS 1.3 suite: each client gets its first choice
  # (AES-128-GCM where the pipelined AES-GCM runs) in either version.
  sed -e "s|@DIR@|$tmp|g" -e "s|@PORT@|$candidate|g" -e 's|ssl_protocols TLSv1.3;|ssl_protocols TLSv1.2 TLSv1.3;|' \
    -e '/ssl_conf_command Ciphersuites/d' "$repo/bench/nginx_bench.conf" >"$tmp/nginx.conf"
  "$nginx_bin" -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/error.log" </dev/null >"$tmp/nginx.out" 2>&1 &
  nginx_pid=$!
  for _ in $(seq 50); do
    if "$default_bin" "https://127.0.0.1:$candidate/small" "$cert" >/dev/null 2>&1; then
      port="$candidate"
      break
    fi
    kill -0 "$nginx_pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n "$port" ]] && break
  sb_stop_nginx
  echo "download_ram.sh: nginx did not start on port $candidate (attempt $attempt)" >&2
done
[[ -n "$port" ]] || { cat "$tmp/nginx.out" "$tmp/error.log" >&2 2>/dev/null; die "nginx did not start"; }
url="https://127.0.0.1:$port"
echo "download_ram.sh: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# The configurations: name -> build and the arguments after URL and CA. "lean" buffers are
# the least these requests need: request and response heads of 1 KiB, io 1 KiB, no error body.
lean="--request-head 1024 --response-head 1024 --io 1024 --error-body 0"
# "least": what a ranged GET of 512 B pieces needs (nginx's 206 head is under 512 B).
least="--request-head 512 --response-head 512 --io 512 --error-body 0"
declare -A config_build=([default]=default [default_tls12]=default [small_tls13]=small
  [small_mfl]=small [small_mfl_lean]=small [small2k_mfl_lean]=small2k [armhf_tls13]=armhf
  [armhf_mfl]=armhf [armhf_mfl_lean]=armhf [armhf2k_mfl_lean]=armhf2k
  [small_pieces_lean]=small [armhf_pieces_lean]=armhf [small2k_pieces_lean]=small2k
  [armhf2k_pieces_lean]=armhf2k [small1k_pieces_least]=small1k [armhf1k_pieces_least]=armhf1k)
declare -A args=([default]="--io 16384" [default_tls12]="--io 16384 --tls12" [small_tls13]=""
  [small_mfl]="--max-fragment 4096" [small_mfl_lean]="--max-fragment 4096 $lean"
  [small2k_mfl_lean]="--max-fragment 2048 $lean" [armhf_tls13]="" [armhf_mfl]="--max-fragment 4096"
  [armhf_mfl_lean]="--max-fragment 4096 $lean" [armhf2k_mfl_lean]="--max-fragment 2048 $lean"
  [small_pieces_lean]="--range-size $PIECE $lean" [armhf_pieces_lean]="--range-size $PIECE $lean"
  [small2k_pieces_lean]="--range-size $PIECE2K $lean"
  [armhf2k_pieces_lean]="--range-size $PIECE2K $lean"
  [small1k_pieces_least]="--range-size $PIECE1K $least" [armhf1k_pieces_least]="--range-size $PIECE1K $least")
# The armhf builds run under qemu-user, with the cross toolchain's C library.
declare -A emulator=([armhf]="qemu-arm -L /usr/arm-linux-gnueabihf"
                     [armhf2k]="qemu-arm -L /usr/arm-linux-gnueabihf"
                     [armhf1k]="qemu-arm -L /usr/arm-linux-gnueabihf")
# Runs configuration $1 on object $2 (extra arguments after); its output on stdout.
run_config() {
  local name="$1" object="$2"; shift 2
  local b="${config_build[$name]}"
  # shellcheck disable=SC2086  # emulator and args hold separate words.
  ${emulator[$b]:-} "${build_bin[$b]}" "$url/$object" "$cert" ${args[$name]} "$@"
}

# ---------------------------------------------------------------------------- (a) RAM
# .data + .bss (and thread-local) bytes of mbedTLS and stepback in the link map $1.
static_data() {
  python3 - "$1" <<'PY'
import re, sys
total, on, sec = 0, False, None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("Linker script and memory map"):
        on = True
        continue
    if not on:
        continue
    m = re.match(r"^ (\.\S+)$", line)
    if m:
        sec = m.group(1)
        continue
    m = re.match(r"^ (\.\S+)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)", line)
    if not m:
        continue
    s, sec = m.group(1) or sec, None
    if not s or s.startswith(".data.rel.ro") or not re.match(r"^\.(t?bss|t?data)(\.|$)", s):
        continue
    if re.search(r"/lib(mbed|stepback)[^/]*\.a\(", m.group(3)):
        total += int(m.group(2), 16)
print(total)
PY
}
declare -A static_bytes
for b in "${builds[@]}"; do static_bytes[$b]="$(static_data "${build_bin[$b]}.map")"; done

field() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
kib() { awk -v b="$1" 'BEGIN { printf "%.1f KiB", b / 1024 }'; }
# One RAM row: label, configuration, object.
ram_row() {
  local row="$1" name="$2" object="$3" out="$tmp/ram.$2.$3"
  local static="${static_bytes[${config_build[$name]}]}"
  run_config "$name" "$object" >"$out" 2>"$out.err" || { cat "$out.err" >&2; die "$row failed"; }
  local objects=0 buffers=0 k v
  while read -r k v; do
    case "$k" in
      sizeof_*) objects=$((objects + v)) ;;
      buffer_*) buffers=$((buffers + v)) ;;
    esac
  done <"$out"
  local total=$(($(field "$out" total_ram) + static))
  thread_overhead="$(field "$out" thread_stack_overhead)"
  md_row "$row" "$(field "$out" arena_peak_footprint) B ($(field "$out" arena_peak_bytes) B + $(field "$out" arena_peak_blocks) block headers)" \
    "$objects B" "$buffers B" "$(field "$out" stack_high_water) B" "$static B" "**$total B = $(kib "$total")**"
}
# The stack column counts the download's calls below the frame of the function that runs it
# (a device's main loop); what glibc keeps on the measured thread's stack is not the download's.
thread_overhead=""
stack_note() {
  echo "Stack: the download's calls, below the frame of the function that makes them; not counted:"
  echo "$thread_overhead B of glibc's own above that frame (the thread's descriptor and static TLS,"
  echo "at the top of the stack the measured thread was given), which a device's loop does not pay."
}
# The rows of one target's table: prefix of its configuration names ("small", "armhf").
ram_table() {
  local t="$1"
  md_head "build, request" "TLS arena peak" "objects" "ClientBuffers" "stack" "static data" "total"
  [[ "$t" != small ]] ||
    ram_row "default (16 KiB records, io 16 KiB), TLS 1.3, $SMALL_BYTES B object" default small
  ram_row "small-RAM, TLS 1.3 (no max_fragment_length), $SMALL_BYTES B object" "${t}_tls13" small
  ram_row "small-RAM, max_fragment_length 4096 (TLS 1.2), $SMALL_BYTES B object" "${t}_mfl" small
  ram_row "small-RAM, max_fragment_length 4096 (TLS 1.2), $mib MiB object" "${t}_mfl" large
  ram_row "small-RAM, max_fragment_length 4096 (TLS 1.2), lean buffers, $mib MiB object" "${t}_mfl_lean" large
  ram_row "small-RAM, TLS 1.3 (no max_fragment_length) in $PIECE B pieces, lean buffers, $mib MiB object" "${t}_pieces_lean" large
  if ((records2k)); then
    local t2k="${t/small/small2k}"
    [[ "$t" != armhf ]] || t2k=armhf2k
    ram_row "2 KiB records (IN/OUT_CONTENT_LEN 2048), max_fragment_length 2048, lean buffers, $mib MiB object" "${t2k}_mfl_lean" large
    ram_row "2 KiB records, TLS 1.3 (no max_fragment_length) in $PIECE2K B pieces, lean buffers, $mib MiB object" "${t2k}_pieces_lean" large
  fi
  if ((records1k)); then
    local t1k="${t}1k"
    ram_row "1 KiB records (IN/OUT_CONTENT_LEN 1024), TLS 1.3 in $PIECE1K B pieces, least buffers, $mib MiB object" "${t1k}_pieces_least" large
  fi
}

echo "download_ram.sh: measuring RAM" >&2
{
  echo "### (a) RAM of one download ($(uname -m): 64-bit pointers, 64-byte arena block headers)"
  echo
  ram_table small
  echo
  echo "Objects: TlsClientConfig, TcpTlsConnector, FixedResolver, Client, the retry context,"
  echo "options and request (\`download_ram URL CA\` prints each sizeof). ClientBuffers: request"
  echo "head 2048, response head 4096, error body 512, io 4096 (default build: 16384); lean:"
  echo "1024, 1024, 0, 1024."
  echo
  stack_note
  echo
  if run_config small_tls13 large >"$tmp/refused" 2>"$tmp/refused.err"; then
    die "the small build took full records of the large object"
  fi
  echo "Without max_fragment_length the small build refuses nginx's 16 KiB records: \`$(grep -o 'the server sent.*' "$tmp/refused.err" | head -1)\`"
  echo
  if ((armhf)); then
    echo "### (a) the same on armhf (32-bit ARM, Thumb-2, under qemu-arm): 4-byte pointers"
    echo
    ram_table armhf
    echo
    stack_note
    echo
  fi
} >"$tmp/ram.md"

# ---------------------------------------------------------------------------- (b) CPU
echo "download_ram.sh: $pairs rounds of CPU timing" >&2
names=(default default_tls12 small_mfl)
declare -A label=([default]="default build, TLS 1.3, 16 KiB records, io 16 KiB"
                  [default_tls12]="default build, TLS 1.2, 16 KiB records, io 16 KiB"
                  [small_mfl]="small-RAM build, max_fragment_length 4096 (TLS 1.2), io 4 KiB"
                  [small1k_pieces_least]="1 KiB records, TLS 1.3 in $PIECE1K B pieces, io 512 B")
# The 1 KiB build's pieces cost a request and a 206 head each: their CPU is part of the trade.
((!records1k)) || names+=(small1k_pieces_least)
: >"$tmp/cpu.txt"
for round in $(seq "$pairs"); do
  for i in "${!names[@]}"; do
    name="${names[$(((i + round) % ${#names[@]}))]}"
    for object in large small; do
      run_config "$name" "$object" >"$tmp/one" 2>"$tmp/one.err" || { cat "$tmp/one.err" >&2; die "$name failed"; }
      echo "$name $object $(field "$tmp/one" cpu_ns) $(field "$tmp/one" user_ns) $(field "$tmp/one" system_ns)" >>"$tmp/cpu.txt"
    done
  done
done
# Median of column $3 (3: total, 4: user, 5: system) of configuration $1's runs on object $2.
median() { awk -v n="$1" -v o="$2" -v c="$3" '$1 == n && $2 == o { print $c }' "$tmp/cpu.txt" | sort -n |
  awk '{ v[c++] = $1 } END { print (c % 2) ? v[(c - 1) / 2] : (v[c / 2 - 1] + v[c / 2]) / 2 }'; }
# ms per MiB of column $2 for configuration $1: (median large - median small) / MiB.
per_mib_of() {
  awk -v l="$(median "$1" large "$2")" -v s="$(median "$1" small "$2")" -v m="$mib" \
    'BEGIN { printf "%.3f", (l - s) / m / 1e6 }'
}
declare -A per_mib user_mib system_mib
for name in "${names[@]}"; do
  per_mib[$name]="$(per_mib_of "$name" 3)"
  user_mib[$name]="$(per_mib_of "$name" 4)"
  system_mib[$name]="$(per_mib_of "$name" 5)"
done

# ---------------------------------------------------------------------------- (c) instructions
declare -A ins_mib
if ((callgrind)); then
  echo "download_ram.sh: counting instructions (callgrind)" >&2
  for name in "${names[@]}"; do
    for object in cg small; do
      # shellcheck disable=SC2086
      valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$name.$object" "${build_bin[${config_build[$name]}]}" \
        "$url/$object" "$cert" ${args[$name]} >/dev/null 2>"$tmp/cg.$name.$object.log" ||
        { cat "$tmp/cg.$name.$object.log" >&2; die "callgrind of $name failed"; }
    done
    ins_mib[$name]="$(awk -v l="$(awk '/^totals:/ { print $2 }' "$tmp/cg.$name.cg")" \
      -v s="$(awk '/^totals:/ { print $2 }' "$tmp/cg.$name.small")" -v m="$CG_MIB" \
      'BEGIN { printf "%.2f M", (l - s) / m / 1e6 }')"
  done
fi
echo "download_ram.sh: load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

cat "$tmp/ram.md"
echo "### (b, c) CPU per MiB of a $mib MiB object (median of $pairs rounds; the handshake cancels)"
echo
md_head "configuration" "CPU per MiB" "vs default" "user / system" "instructions per MiB (callgrind, $CG_MIB MiB)"
for name in "${names[@]}"; do
  md_row "${label[$name]}" "${per_mib[$name]} ms" \
    "$(awk -v a="${per_mib[$name]}" -v b="${per_mib[default]}" 'BEGIN { printf "%.2fx", a / b }')" \
    "${user_mib[$name]} / ${system_mib[$name]} ms" "${ins_mib[$name]:-not measured}"
done
echo
echo "What each negotiated (nginx's log: protocol, cipher, group):"
awk '{ print "- " $1 ", " $2 ", " $3 }' "$tmp/access.log" | sort | uniq -c | sed 's/^ *\([0-9]*\) \(.*\)/\2 (\1 requests)/'
echo
echo "Command: \`$invocation\` (builds: ${builds[*]}, in build/bench-ram*)."
