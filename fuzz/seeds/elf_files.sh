#!/usr/bin/env bash
# Writes small real ELF files into DIR as fuzzing seeds: a versioned shared
# library with SONAME/RPATH/NODEFLIB, a RUNPATH library, an executable with
# versioned references, a -m32 library, stripped, big-endian and section-header-less
# variants when the tools allow. Compiled on the fly so no binary is committed.
set -euo pipefail
dir=$1
mkdir -p "$dir"
work=$(mktemp -d "${TMPDIR:-/tmp}/cclforge-seeds.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc=${SEED_CC:-cc}
cat >"$work/dep.c" <<'C'
int dep(void) { return 7; }
C
cat >"$work/demo.c" <<'C'
int dep(void);
int foo_v1(void) { return 1; }
int foo_v2(void) { return 2 + dep(); }
int bar(void) { return 3; }
__asm__(".symver foo_v1,foo@V1");
__asm__(".symver foo_v2,foo@@V2");
C
printf 'V1 { global: foo; bar; local: *; };\nV2 { global: foo; } V1;\n' >"$work/demo.map"
cat >"$work/main.c" <<'C'
#include <stdio.h>
int foo(void);
extern int bar(void) __attribute__((weak));
int main(void) { printf("%d\n", foo() + (bar ? bar() : 0)); return 0; }
C
# -Os -s keeps the seeds small; libFuzzer mutates small inputs faster.
"$cc" -Os -s -Wl,-z,noseparate-code -shared -fPIC -o "$work/libdep.so" "$work/dep.c"
"$cc" -Os -s -Wl,-z,noseparate-code -shared -fPIC -o "$work/libdemo.so" "$work/demo.c" -Wl,-soname,libdemo.so.1 \
  -Wl,--version-script="$work/demo.map" '-Wl,--disable-new-dtags,-rpath,/opt/a:$ORIGIN/../lib' \
  -Wl,-z,nodefaultlib -L"$work" -ldep
"$cc" -Os -s -Wl,-z,noseparate-code -shared -fPIC -o "$work/librun.so" "$work/dep.c" '-Wl,--enable-new-dtags,-rpath,$ORIGIN'
"$cc" -Os -s -Wl,-z,noseparate-code -o "$work/main" "$work/main.c" -L"$work" -ldemo -Wl,-rpath-link,"$work"
cp "$work/libdemo.so" "$work/librun.so" "$work/main" "$dir/"
"$cc" -Os -s -Wl,-z,noseparate-code -m32 -shared -fPIC -o "$dir/lib32.so" "$work/dep.c" 2>/dev/null || true
if command -v objcopy >/dev/null; then
  # The same objects with another byte order and without section headers' help.
  objcopy -O elf64-big "$work/libdemo.so" "$dir/libdemo-be.so" 2>/dev/null || rm -f "$dir/libdemo-be.so"
  objcopy --strip-all -R .gnu.version_d "$work/libdemo.so" "$dir/libdemo-noverdef.so" 2>/dev/null || true
fi
if command -v python3 >/dev/null; then
  python3 "$(dirname "$0")/handmade_elf.py" "$dir"
  # Without section headers (e_shoff, e_shnum, e_shstrndx zeroed): read
  # through the tables made from the dynamic tags, as sstrip leaves it.
  python3 - "$dir/libdemo.so" "$dir/libdemo-noshdr.so" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[0x28:0x30] = bytes(8)
d[0x3c:0x40] = bytes(4)
open(sys.argv[2], 'wb').write(d)
PY
fi
exit 0
