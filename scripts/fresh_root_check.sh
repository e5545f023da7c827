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
root=$(realpath -m -- "${1:-$(mktemp -d /var/tmp/stepback-fresh.XXXXXX)}")

[ "$(id -u)" -eq 0 ] || { echo "fresh_root_check: run as root (mmdebstrap, chroot, mounts)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "fresh_root_check: apt-get install mmdebstrap" >&2; exit 1; }

sources=()
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
  [ -s "$f" ] && grep -q '^[^#]*\(debian\|bookworm\)' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || { echo "fresh_root_check: no Debian apt sources on this machine" >&2; exit 1; }

# mounts_under DIR: the mount points at or below DIR (findmnt escapes blanks as \x20).
mounts_under() { findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1'; }
cleanup() {
  # Lazy unmounts detach each mount with everything mounted below it (run/netns, the
  # namespaces `ip netns add` left in run/netns/), the root's own bind mount last.
  for m in run dev/shm dev/pts dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
  umount -l "$root" 2>/dev/null || true
  if [ -n "$(mounts_under "$root")" ]; then
    echo "fresh_root_check: still mounted, $root not removed: $(mounts_under "$root" | tr '\n' ' ')" >&2
    return
  fi
  [ "${KEEP_ROOT:-0}" = 1 ] || rm -rf "$root"
}
# Never rm -rf through a live bind mount of the host's /dev, /proc or /sys (a run killed
# before its clean-up leaves them).
if [ -n "$(mounts_under "$root")" ]; then
  echo "fresh_root_check: mounts under $root, unmount them first: $(mounts_under "$root" | tr '\n' ' ')" >&2
  exit 1
fi
trap cleanup EXIT

echo "fresh_root_check: making a Debian 12 root in $root from ${sources[*]}"
rm -rf "$root"
# The apt variant plus what a fresh Debian 12 server or CI image has: git, sudo, certificates.
mmdebstrap --variant=apt --include=ca-certificates,git,sudo,procps,bash bookworm "$root" "${sources[@]}"
mkdir -p "$root/src"
git -C "$repo" archive HEAD | tar -x -C "$root/src"
# The root as a booted machine (or a container) has it, not a bare directory: / is a mount
# point of its own, and /run a tmpfs. `ip netns exec` and `ip -n` unshare the mount
# namespace and run `mount --make-rslave /`, which fails ("Invalid argument") where / is
# not a mount point, as in a plain chroot into a folder: there netbench.sh check found
# veth, NFQUEUE and tbf missing and netbench.* were skipped. /run holds ip netns's
# namespace files and the bench's state; a tmpfs goes away with the root. /dev/shm is a tmpfs
# of its own on a booted machine (the bind of /dev does not bring it): squid's shm_open
# failed with "Permission denied" on the bare directory, and tools.proxy.squid with it.
mount --bind "$root" "$root"
mount --make-private "$root"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$root/$m"; done
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$root/run"
mkdir -m 1777 "$root/run/lock"

run() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb bash -c "cd /src && $1"; }
start=$(date +%s)
run "scripts/setup.sh"
run "cmake --preset desktop && cmake --build --preset desktop --target stepback_cli && build/desktop/tools/stepback demo"
if [ "$mode" = all ]; then
  run "scripts/test.sh"
fi
echo "fresh_root_check: passed ($mode) in $(( $(date +%s) - start )) s on a fresh Debian 12 root"
