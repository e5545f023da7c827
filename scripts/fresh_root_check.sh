#!/usr/bin/env bash
# The honest check of scripts/setup.sh: makes a fresh Debian 12 root with mmdebstrap, copies
# the committed tree (git archive HEAD) into it, and runs the README's commands inside it with
# nothing installed by hand. Run by hand, as root (too slow for every CI run):
#
#   scripts/fresh_root_check.sh [--setup-only] [DIR]
#
# --setup-only runs scripts/setup.sh (which ends with the toolchain probe) and the main job;
# without it, scripts/setup.sh && scripts/test.sh as well. DIR (default a temporary folder) is
# removed at the end unless KEEP_ROOT=1. The mirror comes from this machine's apt sources
# (/etc/apt/sources.list.d/*.sources or /etc/apt/sources.list); needs mmdebstrap.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mode=all
if [ "${1:-}" = --setup-only ]; then mode=setup; shift; fi
root=${1:-$(mktemp -d /var/tmp/stepback-fresh.XXXXXX)}

[ "$(id -u)" -eq 0 ] || { echo "fresh_root_check: run as root (mmdebstrap, chroot, mounts)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "fresh_root_check: apt-get install mmdebstrap" >&2; exit 1; }

sources=()
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
  [ -s "$f" ] && grep -q '^[^#]*\(debian\|bookworm\)' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || { echo "fresh_root_check: no Debian apt sources on this machine" >&2; exit 1; }

cleanup() {
  for m in dev/pts dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
  [ "${KEEP_ROOT:-0}" = 1 ] || rm -rf "$root"
}
trap cleanup EXIT

echo "fresh_root_check: making a Debian 12 root in $root from ${sources[*]}"
rm -rf "$root"
# The apt variant plus what a fresh Debian 12 server or CI image has: git, sudo, certificates.
mmdebstrap --variant=apt --include=ca-certificates,git,sudo,procps,bash bookworm "$root" "${sources[@]}"
mkdir -p "$root/src"
git -C "$repo" archive HEAD | tar -x -C "$root/src"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$root/$m"; done

run() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb bash -c "cd /src && $1"; }
start=$(date +%s)
run "scripts/setup.sh"
run "cmake --preset desktop && cmake --build --preset desktop && build/desktop/tools/stepback demo"
if [ "$mode" = all ]; then
  run "scripts/test.sh"
fi
echo "fresh_root_check: passed ($mode) in $(( $(date +%s) - start )) s on a fresh Debian 12 root"
