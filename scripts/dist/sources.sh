#!/usr/bin/env bash
# The upstream tarballs pinned in scripts/dist/deps.lock, every entry, fetched
# once into the cclforge cache from Debian's archive (a private source list of
# bookworm's and trixie's sources: the host's apt configuration is not
# touched; each tarball's address and sha256 come from Debian's signed index)
# and checked against the lock's sha256. Prints the directory that holds them
# as its last line; with --copy-to DIR, also copies each into DIR. Used by
# scripts/dist-deps.sh (the release's static libraries) and scripts/dist.sh
# (the sdist carries them in third_party/).
#   bash scripts/dist/sources.sh [--copy-to DIR]
#   CCLFORGE_DIST_CACHE  cache root (default ~/.cache/cclforge/dist)
#   DEBIAN_MIRROR        default http://deb.debian.org/debian
set -euo pipefail
copy_to=
if [ $# -eq 2 ] && [ "$1" = --copy-to ]; then copy_to=$2; elif [ $# -ne 0 ]; then
    echo "usage: sources.sh [--copy-to DIR]" >&2; exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/deps.lock
root=${CCLFORGE_DIST_CACHE:-$HOME/.cache/cclforge/dist}
say() { echo "dist-sources: $*" >&2; }
die() { say "$*"; exit 1; }

src=$root/src
entries() { grep -vE '^[[:space:]]*(#|$)' "$lock"; }
pinned() { echo "$2  $src/tarballs/$1" | sha256sum -c --status 2>/dev/null; }
need=()
while read -r name version tarball sum; do
    pinned "$tarball" "$sum" || need+=("$name=$version")
done < <(entries)
if [ "${#need[@]}" -gt 0 ]; then
    . "$here/../cache-lock.sh"
    cache_lock "$root" # held until exit; a caller must not hold it (flock on a new open would wait for itself)
    need=()
    while read -r name version tarball sum; do
        pinned "$tarball" "$sum" || need+=("$name=$version")
    done < <(entries)
fi
if [ "${#need[@]}" -gt 0 ]; then
    mkdir -p "$src/apt/lists/partial" "$src/apt/archives/partial" "$src/tarballs"
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    [ -f "$keyring" ] || die "no Debian archive keyring at $keyring (install debian-archive-keyring)"
    command -v apt-get >/dev/null || die "apt-get is needed to fetch the pinned sources (a Debian/Ubuntu host)"
    helper=/usr/lib/apt/apt-helper
    [ -x "$helper" ] || die "apt's $helper is needed to fetch the pinned sources"
    mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
    # the releases whose signed source indexes the lock's versions come from
    for suite in bookworm trixie; do echo "deb-src [signed-by=$keyring] $mirror $suite main"; done >"$src/apt/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$src/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$src/apt/lists" -o "Dir::Cache=$src/apt" -o Dir::State::status=/dev/null
        -o Acquire::Retries=2 -o Debug::NoLocking=1)
    say "fetching ${need[*]}"
    apt-get "${apt_opts[@]}" update >"$src/apt.log" 2>&1 || die "cannot read Debian's source index from $mirror (see $src/apt.log)"
    # Only the upstream tarball of each pin, at the address and with the
    # sha256 the signed index gives for that version (which must be the
    # lock's); apt-helper checks the bytes against it as they arrive.
    while read -r name version tarball sum; do
        pinned "$tarball" "$sum" && continue
        uri=$(apt-get "${apt_opts[@]}" source --print-uris "$name=$version" 2>>"$src/apt.log" |
            awk -v f="$tarball" '$2 == f { print $1, $4 }' | tr -d "'")
        [ -n "$uri" ] || die "Debian's index has no $tarball for $name $version (a pin the archive no longer serves? see $src/apt.log and docs/release.md)"
        [ "${uri#* }" = "SHA256:$sum" ] || die "Debian's index gives $tarball as ${uri#* }, the lock pins SHA256:$sum"
        "$helper" -o Debug::NoLocking=1 download-file "${uri%% *}" "$src/tarballs/$tarball.part" "SHA256:$sum" >>"$src/apt.log" 2>&1 ||
            die "cannot fetch $tarball from $mirror (see $src/apt.log)"
        mv "$src/tarballs/$tarball.part" "$src/tarballs/$tarball"
    done < <(entries)
fi
while read -r name version tarball sum; do
    pinned "$tarball" "$sum" || die "$tarball does not have the sha256 pinned in $lock"
    [ -z "$copy_to" ] || cp "$src/tarballs/$tarball" "$copy_to/" || die "cannot copy $tarball into $copy_to"
done < <(entries)
echo "$src/tarballs"
