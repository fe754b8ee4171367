#!/usr/bin/env bash
# Builds the release: into dist/ (or --out DIR)
#   cclforge-V-py3-none-manylinux_2_17_ARCH.manylinux2014_ARCH.whl   (x86_64, aarch64)
#   cclforge-V-linux-ARCH.tar.gz                                     (bin/, share/)
#   cclforge-V.tar.gz                                               (the sdist, with
#                                          the pinned third-party sources in third_party/)
#   SHA256SUMS
# The native binary is built with zig cc for glibc 2.17, once per
# architecture, every third-party library static (scripts/dist-deps.sh); the
# wheel and the tarball carry the same binary. Each artefact is checked
# before it is kept: the binary's hardening (tests/support/check_hardening.sh),
# `cclforge wheel verify` and `auditwheel show` on every wheel, the ELF rules
# (no symbol version above GLIBC_2.17, NEEDED within the policy) named per
# file and symbol. Nothing
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
for tool in python3 cmake make tar perl sha256sum readelf; do
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

build_arch() { # ARCH: the release build of ARCH, installed into $work/ARCH/stage
    local arch=$1 deps dir=$work/$1
    deps=$(bash scripts/dist-deps.sh "$zig" "$arch" | tail -n 1) || die "$arch: third-party libraries failed (above)"
    rm -rf "$dir/stage"
    bash scripts/dist/toolchain.sh "$zig" "$arch" "$dir/tc"
    say "$arch: configuring and building in $dir/build"
    export CCLFORGE_DIST_SRC=$repo
    PKG_CONFIG_LIBDIR=$deps/lib/pkgconfig PKG_CONFIG_PATH= cmake -S . -B "$dir/build" \
        -DCMAKE_TOOLCHAIN_FILE="$dir/tc/toolchain.cmake" -DCCLFORGE_DIST_PREFIX="$deps" \
        -DCMAKE_BUILD_TYPE=Release -DCCLFORGE_RELEASE=ON -DCCLFORGE_WERROR=ON >"$dir/configure.log" 2>&1 ||
        die "$arch: configure failed (see $dir/configure.log)"
    cmake --build "$dir/build" -j"$(nproc)" >"$dir/build.log" 2>&1 || die "$arch: build failed (see $dir/build.log)"
    cmake --install "$dir/build" --prefix "$dir/stage" >>"$dir/build.log" 2>&1 || die "$arch: install failed"
    # a binary that reads hostile wheels and ELF files ships hardened or not at all
    bash tests/support/check_hardening.sh "$dir/stage/bin/cclforge" >&2 ||
        die "$arch: bin/cclforge lacks the hardening named above (CMakeLists.txt's flags)"
}

for arch in "${arches[@]}"; do
    build_arch "$arch"
    python3 scripts/dist/pack.py wheel "$work/$arch/stage" "$work/$arch/build/python/cclforge" \
        "$version" "$staging/cclforge-$version-py3-none-manylinux_2_17_$arch.manylinux2014_$arch.whl"
    python3 scripts/dist/pack.py tarball "$work/$arch/stage" "$version" "$arch" \
        "$staging/cclforge-$version-linux-$arch.tar.gz"
done

# The checker: the release binary of this machine's architecture when built
# now (our product checks itself; it runs on any build host), else a source
# build.
host=$(uname -m)
checker=$work/$host/stage/bin/cclforge
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
# could be hashed by its own list ("SHA256SUMS: FAILED" in its own check).
(cd "$staging" && sha256sum -- * | LC_ALL=C sort -k2 >"$work/SHA256SUMS")
mv "$work/SHA256SUMS" "$staging/SHA256SUMS"
rm -rf "$out.old"
[ ! -e "$out" ] || mv "$out" "$out.old"
mv "$staging" "$out"
rm -rf "$out.old"
trap - EXIT
say "done:"
sed 's/^/  /' "$out/SHA256SUMS" >&2
