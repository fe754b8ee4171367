#!/usr/bin/env bash
# Builds the release: into dist/ (or --out DIR)
#   cclforge-V-py3-none-manylinux_2_17_ARCH.manylinux2014_ARCH.whl   (x86_64, aarch64)
#   cclforge-V-py3-none-manylinux_2_34_ARCH.whl                      (x86_64, aarch64)
#   cclforge-V-linux-ARCH.tar.gz                 (bin/, share/; the glibc 2.17 binary)
#   cclforge-V.tar.gz                                               (the sdist, with
#                                          the pinned third-party sources in third_party/)
#   SHA256SUMS
# The native binary is built with zig cc twice per architecture, for glibc
# 2.17 and for 2.34 (which needs no libpthread.so.0 or libdl.so.2 at each
# start; pip installs the newest wheel a host's glibc allows), every
# third-party library static (scripts/dist-deps.sh), and each artefact is
# checked before it is kept: `cclforge wheel verify` and `auditwheel show` on
# every wheel, the ELF rules (no symbol version above the wheel's glibc,
# NEEDED within its policy) named per file and symbol. Nothing
# half-made reaches the output directory: it is written aside and moved in
# whole. Reproducible: the same commit and SOURCE_DATE_EPOCH (default: the
# commit's time) give the same bytes. Release steps: docs/release.md.
#
#   bash scripts/dist.sh [--arch x86_64|aarch64]... [--out DIR] [--no-sdist]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
say() { echo "dist: $*" >&2; }
die() { say "$*"; exit 1; }

arches=() out=dist sdist=1
while [ $# -gt 0 ]; do
    case $1 in
        --arch) [ $# -ge 2 ] || die "--arch needs x86_64 or aarch64"; arches+=("$2"); shift 2 ;;
        --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
        --no-sdist) sdist=0; shift ;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "dist.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#arches[@]} -gt 0 ] || arches=(x86_64 aarch64)
for a in "${arches[@]}"; do
    case $a in x86_64|aarch64) ;; *) echo "dist.sh: no release for '$a' (x86_64 or aarch64)" >&2; exit 2 ;; esac
done
bash scripts/deps.sh # the build tools and the Debian keyring; a no-op when present
for tool in python3 cmake make tar perl sha256sum; do
    command -v "$tool" >/dev/null || die "$tool is missing (bash scripts/deps.sh installs the build tools)"
done

version=$(sed -n 's/^project(cclforge VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || die "no version in CMakeLists.txt's project()"
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 315532800)
fi
export SOURCE_DATE_EPOCH
say "cclforge $version, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH, for ${arches[*]}"

tools=$(bash scripts/dist-tools.sh | tail -n 1) || die "the release tools could not be installed (scripts/dist-tools.sh)"
zig=$("$tools/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
[ -x "$zig" ] || die "zig not found in $tools (scripts/dist-tools.sh)"

work=${CCLFORGE_DIST_BUILD:-$repo/build-dist}
staging=$out.tmp
rm -rf "$staging"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging" "$work"

# Each wheel's glibc release and platform tags (the one home of both): pip
# takes the newest a host allows, so glibc 2.34+ hosts get the binary that
# loads only libc.so.6. The tarball carries the 2.17 binary: it runs anywhere.
wheel_glibcs="2.17 2.34"
platform_tags() { # GLIBC ARCH
    case $1 in
        2.17) echo "manylinux_2_17_$2.manylinux2014_$2" ;;
        *) echo "manylinux_${1/./_}_$2" ;;
    esac
}

build_arch() { # ARCH GLIBC: the release build of ARCH for GLIBC, installed into $work/ARCH-glibcGLIBC/stage
    local arch=$1 glibc=$2 deps dir=$work/$1-glibc$2
    deps=$(bash scripts/dist-deps.sh "$zig" "$arch" | tail -n 1) || die "$arch: third-party libraries failed (above)"
    rm -rf "$dir/stage"
    bash scripts/dist/toolchain.sh "$zig" "$arch" "$dir/tc" "$glibc"
    say "$arch, glibc $glibc: configuring and building in $dir/build"
    export CCLFORGE_DIST_SRC=$repo
    PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig PKG_CONFIG_PATH= cmake -S . -B "$dir/build" \
        -DCMAKE_TOOLCHAIN_FILE="$dir/tc/toolchain.cmake" -DCCLFORGE_DIST_PREFIX="$deps" \
        -DCMAKE_BUILD_TYPE=Release -DCCLFORGE_RELEASE=ON -DCCLFORGE_WERROR=ON >"$dir/configure.log" 2>&1 ||
        die "$arch, glibc $glibc: configure failed (see $dir/configure.log)"
    cmake --build "$dir/build" -j"$(nproc)" >"$dir/build.log" 2>&1 || die "$arch, glibc $glibc: build failed (see $dir/build.log)"
    cmake --install "$dir/build" --prefix "$dir/stage" >>"$dir/build.log" 2>&1 || die "$arch, glibc $glibc: install failed"
    # e_type at offset 16, little-endian on both arches: 3 is ET_DYN (PIE), 2 ET_EXEC
    [ "$(od -An -tu2 -j16 -N2 "$dir/stage/bin/cclforge" | tr -d ' ')" = 3 ] ||
        die "$arch, glibc $glibc: bin/cclforge is not position-independent (ELF type ET_EXEC): no ASLR; the link needs -pie"
}

for arch in "${arches[@]}"; do
    for glibc in $wheel_glibcs; do
        build_arch "$arch" "$glibc"
        python3 scripts/dist/pack.py wheel "$work/$arch-glibc$glibc/stage" "$work/$arch-glibc$glibc/build/python/cclforge" \
            "$version" "$staging/cclforge-$version-py3-none-$(platform_tags "$glibc" "$arch").whl"
    done
    python3 scripts/dist/pack.py tarball "$work/$arch-glibc2.17/stage" "$version" "$arch" \
        "$staging/cclforge-$version-linux-$arch.tar.gz"
done

# The checker: the release binary of this machine's architecture when built
# now (our product checks itself; the 2.17 one runs on any build host), else
# a source build.
host=$(uname -m)
checker=$work/$host-glibc2.17/stage/bin/cclforge
if [ ! -x "$checker" ]; then
    BUILD_DIR=build bash scripts/build.sh >&2
    checker=$repo/build/cclforge
fi
for wheel in "$staging"/*.whl; do
    name=${wheel##*/}
    say "checking $name"
    bash scripts/dist/check-wheel.sh "$checker" "$tools" "$wheel" || die "$name breaks the release rules (above); nothing was written to $out"
done

if [ "$sdist" = 1 ]; then
    say "sdist"
    # It carries every pinned tarball of the lock in third_party/ (made here
    # and removed after; ignored by git, included by pyproject.toml), from
    # which its CMake builds what the user's system lacks (cmake/bundled_deps.cmake).
    trap 'rm -rf "$staging" "$repo/third_party"' EXIT
    rm -rf third_party
    mkdir third_party
    bash scripts/dist/sources.sh --copy-to third_party >/dev/null || die "the sdist's pinned sources are not at hand (above)"
    "$tools/python" -m build --sdist --no-isolation --outdir "$staging" . >"$work/sdist.log" 2>&1 ||
        die "the sdist failed (see $work/sdist.log)"
    rm -rf third_party
fi

# Written outside $staging and moved in: in a pipeline the glob and sort's
# redirection run in separate children, so a SHA256SUMS created in $staging
# could be hashed by its own list (CI saw "SHA256SUMS: FAILED").
(cd "$staging" && sha256sum -- * | LC_ALL=C sort -k2 >"$work/SHA256SUMS")
mv "$work/SHA256SUMS" "$staging/SHA256SUMS"
rm -rf "$out.old"
[ ! -e "$out" ] || mv "$out" "$out.old"
mv "$staging" "$out"
rm -rf "$out.old"
trap - EXIT
say "done:"
sed 's/^/  /' "$out/SHA256SUMS" >&2
