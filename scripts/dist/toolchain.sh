#!/usr/bin/env bash
# Writes the release cross toolchain for ARCH into DIR: cc, ar, ranlib
# wrappers around `zig cc -target ARCH-linux-gnu.2.17` (glibc's symbol
# versions are then at most GLIBC_2.17, as manylinux2014 requires, and what
# that release lacks is not declared), and toolchain.cmake for CMake projects.
#   bash scripts/dist/toolchain.sh ZIG ARCH DIR
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: toolchain.sh ZIG ARCH DIR" >&2; exit 2; }
zig=$1 arch=$2 dir=$3
case $arch in
    x86_64) cpu=x86_64 ;;      # the baseline x86-64, as manylinux2014 requires
    aarch64) cpu=generic ;;    # armv8-a
    *) echo "toolchain.sh: no release target for '$arch' (x86_64 or aarch64)" >&2; exit 2 ;;
esac
[ -x "$zig" ] || { echo "toolchain.sh: zig not found at $zig (scripts/dist-tools.sh installs it)" >&2; exit 1; }
mkdir -p "$dir"
target="$arch-linux-gnu.2.17"
# -ffile-prefix-map keeps the build machine's paths out of the binary
# (__FILE__ in assertions): the same commit builds the same bytes anywhere.
# ZIG_GLOBAL_CACHE_DIR beside the wrappers: no state outside the build tree.
write() { # NAME BODY
    printf '#!/bin/sh\nexport ZIG_GLOBAL_CACHE_DIR="%s/zig-cache" ZIG_LOCAL_CACHE_DIR="%s/zig-cache"\n%s\n' "$dir" "$dir" "$2" >"$dir/$1"
    chmod +x "$dir/$1"
}
write cc "exec \"$zig\" cc -target $target -mcpu=$cpu -ffile-prefix-map=\"\${CCLFORGE_DIST_SRC:-/nonexistent}\"=. \"\$@\""
write ar "exec \"$zig\" ar \"\$@\""
write ranlib "exec \"$zig\" ranlib \"\$@\""
cat >"$dir/toolchain.cmake" <<CMAKE
# Written by scripts/dist/toolchain.sh: $target through zig cc.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR $arch)
set(CMAKE_C_COMPILER "$dir/cc")
set(CMAKE_AR "$dir/ar")
set(CMAKE_RANLIB "$dir/ranlib")
set(CMAKE_FIND_ROOT_PATH "\${CCLFORGE_DIST_PREFIX}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
CMAKE
