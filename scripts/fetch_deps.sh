#!/usr/bin/env bash
# Fetches the third-party sources stepback builds from (mbedTLS 3.6 LTS, nanopb, c-ares 1.x)
# into the ignored folder third_party/, from Debian source packages of the trixie suite.
#
#   scripts/fetch_deps.sh [--force] [mbedtls|nanopb|c-ares ...]     (no name: all of them)
#
# Result: third_party/<name> is a symlink to the unpacked third_party/<name>-<version>/ and
# third_party/<name>.debian-version records the Debian version it came from. A package that
# is already there in an acceptable version is left alone (--force fetches it again).
#
# The mirror is taken from this machine's own apt configuration (the URI that serves its
# Debian release: deb822 /etc/apt/sources.list.d/*.sources, or /etc/apt/sources.list and
# /etc/apt/sources.list.d/*.list); STEPBACK_DEBIAN_MIRROR overrides it. Signatures are
# verified against /usr/share/keyrings/debian-archive-keyring.gpg (STEPBACK_DEBIAN_KEYRING
# overrides). A mirror that has dropped the files of the version its signed index names (a
# partial mirror or cache lagging a point release) falls back, for packages that have one, to
# a pinned upstream tarball from the same mirror's pool, checked against the SHA-256 recorded
# below (pinned_tarball); the origin file then says so. apt runs with a private configuration
# in a temporary directory: the system's sources, lists and caches are not touched, and root
# is not needed. Needs dpkg-dev.
set -euo pipefail

readonly suite=trixie
root=$(cd "$(dirname "$0")/.." && pwd)
readonly root
readonly third_party="$root/third_party"
readonly keyring="${STEPBACK_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}"

say() { echo "fetch_deps: $*"; }
die() { echo "fetch_deps: error: $*" >&2; exit 1; }

# The upstream version series each package must be in ("" accepts any).
wanted_series() {
  case "$1" in
    mbedtls) echo "3.6." ;;
    nanopb) echo "" ;;
    # 1.34: ares_process_fds() and the CMake options cmake/StepbackCares.cmake relies on; trixie
    # has 1.34.x.
    c-ares) echo "1.34." ;;
    *) die "unknown package '$1' (known: mbedtls nanopb c-ares)" ;;
  esac
}

# A known-good upstream tarball of <name> in its Debian pool, for when the signed index names
# files the mirror does not serve: "<pool path> <sha256>", or nothing. c-ares 1.34.5 is the
# version trixie released with; its orig tarball is byte-identical to upstream's
# c-ares-1.34.5.tar.gz release asset (same SHA-256). Later 1.34.x point releases carry
# security fixes, so the signed index's version is always tried first.
pinned_tarball() {
  case "$1" in
    c-ares) echo "pool/main/c/c-ares/c-ares_1.34.5.orig.tar.gz" \
      "7d935790e9af081c25c495fd13c2cfcda4792983418e96358ef6e7320ee06346" ;;
  esac
}

# The upstream version found in an unpacked tree, or nothing.
tree_version() {
  local name=$1 dir=$2
  case "$name" in
    mbedtls)
      sed -n 's/^#define MBEDTLS_VERSION_STRING *"\([^"]*\)".*/\1/p' \
        "$dir/include/mbedtls/build_info.h" 2>/dev/null | sed -n 1p ;;
    nanopb)
      sed -n 's/^#define NANOPB_VERSION *"\{0,1\}nanopb-\([^" ]*\)"\{0,1\}.*/\1/p' \
        "$dir/pb.h" 2>/dev/null | sed -n 1p ;;
    c-ares)
      sed -n 's/^#define ARES_VERSION_STR *"\([^"]*\)".*/\1/p' \
        "$dir/include/ares_version.h" 2>/dev/null | sed -n 1p ;;
  esac
}

# True when third_party/<name> already holds an acceptable version.
present() {
  local name=$1 version
  version=$(tree_version "$name" "$third_party/$name")
  [ -n "$version" ] && [[ "$version" == "$(wanted_series "$name")"* ]] || return 1
  say "$name $version already in third_party/$name ($(cat "$third_party/$name.debian-version" \
    2>/dev/null || echo 'origin unknown')); nothing to do"
}

# Debian-archive URIs from the machine's apt configuration that serve its own release,
# one per line, in the order apt lists them.
mirror_candidates() {
  local codename
  # shellcheck source=/dev/null
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "cannot tell this machine's Debian release from /etc/os-release;" \
    "set STEPBACK_DEBIAN_MIRROR to a Debian mirror URI"
  {
    # deb822: a stanza whose Suites name the release itself (not -security or -updates).
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      awk -v want="$codename" '
        function flush() {
          if (uris != "" && types ~ /(^| )deb(-src)?( |$)/ && (" " suites " ") ~ (" " want " ") &&
              enabled !~ /^[Nn]o/)
            { n = split(uris, u, " "); for (i = 1; i <= n; i++) print u[i] }
          uris = ""; suites = ""; types = ""; enabled = ""
        }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        { key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
          if (key == "uris") uris = $0; else if (key == "suites") suites = $0
          else if (key == "types") types = $0; else if (key == "enabled") enabled = $0 }
        END { flush() }' "$f"
    done
    # One-line format: deb [options] URI suite components...
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] || continue
      sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
        awk -v want="$codename" '($1 == "deb" || $1 == "deb-src") && $3 == want { print $2 }'
    done
  } | awk '!seen[$0]++'
}

tmp=""
cleanup() { [ -z "$tmp" ] || rm -rf "$tmp"; }
trap cleanup EXIT

# Sets up a private apt configuration for `deb-src <mirror> trixie main` and updates it,
# trying each candidate mirror until one serves a correctly signed trixie.
apt_opts=()
apt_mirror=""
prepare_apt() {
  [ ${#apt_opts[@]} -eq 0 ] || return 0
  command -v apt-get >/dev/null || die "apt-get not found (a Debian-based machine is needed)"
  command -v dpkg-source >/dev/null || die "dpkg-source not found: install dpkg-dev (scripts/setup.sh does)"
  [ -r "$keyring" ] || die "keyring $keyring not found: install debian-archive-keyring"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/stepback-deps.XXXXXX")
  mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/empty" "$tmp/src"
  local opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/empty"
              -o "Dir::Etc::Preferences=$tmp/empty/none" -o "Dir::Etc::PreferencesParts=$tmp/empty"
              -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
              -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
  local mirrors
  if [ -n "${STEPBACK_DEBIAN_MIRROR:-}" ]; then
    mirrors=$STEPBACK_DEBIAN_MIRROR
  else
    mirrors=$(mirror_candidates)
    [ -n "$mirrors" ] || die "no Debian mirror for this machine's release found in /etc/apt;" \
      "set STEPBACK_DEBIAN_MIRROR to a Debian mirror URI"
  fi
  local mirror
  for mirror in $mirrors; do
    echo "deb-src [signed-by=$keyring] $mirror $suite main" >"$tmp/sources.list"
    say "apt-get update (private configuration): deb-src $mirror $suite main, signed-by $keyring"
    if apt-get "${opts[@]}" -q --error-on=any update >"$tmp/update.log" 2>&1; then
      apt_opts=("${opts[@]}")
      apt_mirror=$mirror
      return 0
    fi
    sed 's/^/  /' "$tmp/update.log" >&2
    say "mirror $mirror did not serve a verified $suite; trying the next one"
  done
  die "no mirror served a signed $suite source index (see above). A 'NO_PUBKEY' or" \
    "'not signed' error means $keyring lacks the $suite keys: install debian-archive-keyring" \
    "from $suite or set STEPBACK_DEBIAN_KEYRING"
}

# Downloads, verifies and unpacks source package <name>, then points third_party/<name> at it.
fetch() {
  local name=$1 series
  series=$(wanted_series "$name")
  prepare_apt
  local work="$tmp/src/$name"
  mkdir -p "$work"
  local debian_version origin
  debian_version=$(apt-cache "${apt_opts[@]}" showsrc --only-source "$name" 2>/dev/null |
    sed -n 's/^Version: *//p' | sed -n 1p)
  [ -n "$debian_version" ] || die "$suite has no source package '$name'"
  say "apt-get source $name=$debian_version ($suite)"
  if (cd "$work" && apt-get "${apt_opts[@]}" -q source "$name=$debian_version") \
      >"$tmp/source.log" 2>&1; then
    origin="Debian $debian_version, ${name}_$debian_version.dsc"
  else
    # Some mirrors miss a package's .dsc or Debian diff. The upstream tarball alone is
    # still checked against the signed Sources index; only Debian's patches are missing.
    sed 's/^/  /' "$tmp/source.log" >&2
    say "full source package unavailable; retrying with the upstream tarball only (--tar-only)"
    rm -rf "$work" && mkdir -p "$work"
    local orig pinned
    if (cd "$work" && apt-get "${apt_opts[@]}" -q --tar-only source "$name=$debian_version") \
        >"$tmp/source.log" 2>&1; then
      orig=$(find "$work" -maxdepth 1 -name '*.orig.tar.*' | sed -n 1p)
      origin="Debian $debian_version, upstream tarball only"
    else
      sed 's/^/  /' "$tmp/source.log" >&2
      pinned=$(pinned_tarball "$name")
      [ -n "$pinned" ] || die "apt-get source $name=$debian_version failed, also with --tar-only"
      local path=${pinned%% *} sha=${pinned##* }
      say "the mirror does not serve $name $debian_version; fetching the pinned $(basename "$path")" \
        "(SHA-256 $sha)"
      rm -rf "$work" && mkdir -p "$work"
      orig="$work/$(basename "$path")"
      /usr/lib/apt/apt-helper download-file "${apt_mirror%/}/$path" "$orig" "SHA256:$sha" \
          >"$tmp/source.log" 2>&1 || {
        sed 's/^/  /' "$tmp/source.log" >&2
        die "$name: neither $debian_version nor the pinned $(basename "$path") could be fetched"
      }
      origin="pinned $(basename "$path") (SHA-256 $sha; the mirror lacked Debian $debian_version)"
    fi
    say "unpacking $(basename "$orig") (hash-verified; Debian patches not applied)"
    tar --no-same-owner -xf "$orig" -C "$work"
  fi
  local dir version
  dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d | sed -n 1p)
  [ -n "$dir" ] || die "apt-get source $name unpacked nothing"
  version=$(tree_version "$name" "$dir")
  [ -n "$version" ] || die "cannot read the version of the unpacked $name in $dir"
  [[ "$version" == "$series"* ]] ||
    die "$suite has $name $version (Debian $debian_version), not the required ${series}x"
  say "unpacked $name $version ($origin)"

  mkdir -p "$third_party"
  local dest="$third_party/$name-$version"
  rm -rf "$dest" "$dest.partial"
  mv "$dir" "$dest.partial"
  mv "$dest.partial" "$dest"
  ln -sfn "$name-$version" "$third_party/$name"
  echo "$origin" >"$third_party/$name.debian-version"
  say "third_party/$name -> $name-$version"
}

force=0
names=()
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$arg'" ;;
    *) wanted_series "$arg" >/dev/null; names+=("$arg") ;;
  esac
done
[ ${#names[@]} -gt 0 ] || names=(mbedtls nanopb c-ares)

for name in "${names[@]}"; do
  if [ "$force" -eq 0 ] && present "$name"; then continue; fi
  fetch "$name"
done
