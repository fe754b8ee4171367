#!/usr/bin/env bash
# The release binary's third-party libraries, built static for ARCH with the
# release toolchain (scripts/dist/toolchain.sh) from the sources pinned in
# scripts/dist/deps.lock, into a prefix in the cclforge cache that the release
# build's pkg-config reads. Made once per (lock, this script, toolchain, zig,
# ARCH); prints the prefix as its last line. No root: the sources come from
# scripts/dist/sources.sh (a private apt source list, then the lock's sha256).
#   bash scripts/dist-deps.sh ZIG ARCH
#   CCLFORGE_DIST_CACHE  cache root (default ~/.cache/cclforge/dist)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: dist-deps.sh ZIG ARCH" >&2; exit 2; }
zig=$1 arch=$2
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/dist/deps.lock
root=${CCLFORGE_DIST_CACHE:-$HOME/.cache/cclforge/dist}
jobs=$(nproc)
say() { echo "dist-deps: $*" >&2; }
die() { say "$*"; exit 1; }

key=$(cat "$lock" "$0" "$here/dist/toolchain.sh" "$here"/dist/patches/*.patch | { cat; "$zig" version; echo "$arch"; } |
    sha256sum | cut -c1-16)
prefix=$root/deps-$arch-$key
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi
tarballs=$(bash "$here/dist/sources.sh" | tail -n 1) || die "the pinned sources are not at hand (above)"
. "$here/cache-lock.sh"
cache_lock "$root"
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi

# --- builds: each into the prefix, static, position-independent (the binary is PIE) ---
work=$root/work-$arch-$key
rm -rf "$work" "$prefix.tmp"
trap 'rm -rf "$prefix.tmp"' EXIT # a failed build leaves no prefix behind (its logs stay in $work)
mkdir -p "$work" "$prefix.tmp"
bash "$here/dist/toolchain.sh" "$zig" "$arch" "$work/tc"
tc=$work/tc
export CCLFORGE_DIST_SRC=$work CCLFORGE_DIST_PREFIX=$prefix.tmp
# The libraries parse the untrusted input (zlib, libzip and ISA-L inflate a
# wheel's members), so they get the compile-time hardening cclforge gets
# (CMakeLists.txt); the link's (PIE, RELRO, BIND_NOW) is the binary's.
case $arch in x86_64) cf=-fcf-protection ;; aarch64) cf=-mbranch-protection=standard ;; esac
harden="-D_FORTIFY_SOURCE=3 -fstack-protector-strong -fstack-clash-protection $cf"
export CFLAGS="-O2 -fPIC $harden" PKG_CONFIG_LIBDIR=$prefix.tmp/lib/pkgconfig PKG_CONFIG_PATH=
tarball_of() { awk -v n="$1" '$1 == n { print $3 }' "$lock"; }
unpack() { # NAME -> the source directory, with the upstream fixes of scripts/dist/patches/NAME-*.patch
    local d=$work/$1 p
    mkdir -p "$d"
    tar -xf "$tarballs/$(tarball_of "$1")" -C "$d" --strip-components=1
    for p in "$here/dist/patches/$1"-*.patch; do
        [ -f "$p" ] || continue
        patch -d "$d" -p1 --batch --forward <"$p" >>"$d.log" 2>&1 || die "$1: ${p##*/} does not apply (see $d.log)"
    done
    echo "$d"
}
cmake_dep() { # SOURCE-DIR CMAKE-ARGS...
    local s=$1; shift
    cmake -S "$s" -B "$s/build" -DCMAKE_TOOLCHAIN_FILE="$tc/toolchain.cmake" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
        -DCCLFORGE_DIST_PREFIX="$prefix.tmp" -DCMAKE_PREFIX_PATH="$prefix.tmp" \
        -DCMAKE_INSTALL_PREFIX="$prefix.tmp" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF "$@" >"$s.log" 2>&1 &&
        cmake --build "$s/build" -j"$jobs" >>"$s.log" 2>&1 && cmake --install "$s/build" >>"$s.log" 2>&1
}
step() { say "$arch: $1"; }

step zlib
s=$(unpack zlib)
(cd "$s" && CC="$tc/cc" AR="$tc/ar" RANLIB="$tc/ranlib" ./configure --static --prefix="$prefix.tmp" >"$s.log" 2>&1 &&
    make -j"$jobs" libz.a >>"$s.log" 2>&1 && make install >>"$s.log" 2>&1) || die "zlib failed (see $s.log)"

step zstd
s=$(unpack libzstd)
# Decompression is all cclforge uses (compressed offload bundles).
(make -C "$s/lib" -j"$jobs" CC="$tc/cc" AR="$tc/ar" RANLIB="$tc/ranlib" PREFIX="$prefix.tmp" \
    ZSTD_LIB_MINIFY=0 libzstd.a-nomt >"$s.log" 2>&1 &&
    make -C "$s/lib" CC="$tc/cc" PREFIX="$prefix.tmp" LIBDIR="$prefix.tmp/lib" install-static install-includes install-pc >>"$s.log" 2>&1) ||
    die "zstd failed (see $s.log)"

step openssl
s=$(unpack openssl)
case $arch in x86_64) ossl_target=linux-x86_64 ;; aarch64) ossl_target=linux-aarch64 ;; esac
# libcrypto only, with its assembly (SHA-256 with the CPU's extensions);
# what cclforge never calls is left out to shorten the build.
(cd "$s" && ./Configure "$ossl_target" no-shared no-tests no-dso no-engine no-async \
    no-comp no-legacy no-module no-ui-console no-ssl no-dtls no-tls1 no-tls1_1 \
    --prefix="$prefix.tmp" --libdir=lib --openssldir=/etc/ssl CC="$tc/cc" AR="$tc/ar" RANLIB="$tc/ranlib" \
    >"$s.log" 2>&1 && make -j"$jobs" build_libs >>"$s.log" 2>&1 && make install_dev >>"$s.log" 2>&1) ||
    die "openssl failed (see $s.log)"

step cjson
s=$(unpack cjson)
cmake_dep "$s" -DENABLE_CJSON_TEST=OFF -DENABLE_CJSON_UTILS=OFF -DENABLE_CUSTOM_COMPILER_FLAGS=OFF ||
    die "cJSON failed (see $s.log)"

step libzip
s=$(unpack libzip)
# Deflate through zlib is all a wheel needs; no crypto, no tools.
cmake_dep "$s" -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_COMMONCRYPTO=OFF \
    -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF -DENABLE_WINDOWS_CRYPTO=OFF \
    -DBUILD_TOOLS=OFF -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF ||
    die "libzip failed (see $s.log)"

step isal
s=$(unpack libisal)
# ISA-L's igzip (wheel verify's inflate) and the CRC-32 it needs: upstream's
# Makefile.unx, its units igzip and crc only; x86-64 code is nasm's, aarch64
# code GNU assembly that zig cc assembles. -fPIC and the hardening in CC: its
# make.inc sets CFLAGS itself (the C objects go into a PIE; the assembly is
# position-independent as upstream writes it).
case $arch in x86_64) isal_args=(AS=nasm) ;; aarch64) isal_args=(arch=aarch64) ;; esac
command -v nasm >/dev/null || [ "$arch" != x86_64 ] || die "ISA-L's x86-64 code needs nasm (bash scripts/deps.sh installs it)"
(make -C "$s" -f Makefile.unx -j"$jobs" units=igzip lib host_cpu="$arch" "${isal_args[@]}" CC="$tc/cc -fPIC $harden" \
    AR="$tc/ar" >>"$s.log" 2>&1 &&
    mkdir -p "$prefix.tmp/include/isa-l" "$prefix.tmp/lib/pkgconfig" &&
    cp "$s/bin/isa-l.a" "$prefix.tmp/lib/libisal.a" &&
    cp "$s/include/igzip_lib.h" "$s/include/crc.h" "$prefix.tmp/include/isa-l/" &&
    printf 'prefix=%s\nincludedir=${prefix}/include\nlibdir=${prefix}/lib\n\nName: libisal\nDescription: %s\nVersion: %s\nLibs: -L${libdir} -lisal\nCflags: -I${includedir}\n' \
        "$prefix.tmp" "ISA-L (igzip and crc, static)" "$(sed -n 's/^version ?= //p' "$s/make.inc")" \
        >"$prefix.tmp/lib/pkgconfig/libisal.pc") || die "ISA-L failed (see $s.log)"

rm -rf "$prefix"
mv "$prefix.tmp" "$prefix"
# the .pc files name the prefix they were built for
sed -i "s|$prefix.tmp|$prefix|g" "$prefix"/lib/pkgconfig/*.pc "$prefix"/lib/cmake/*/*.cmake 2>/dev/null || true
rm -rf "$work"
trap - EXIT
touch "$prefix/.complete"
echo "$prefix"
