#!/usr/bin/env bash
# Seeds for fuzz_rpath_lint: shared objects linked with RPATHs and RUNPATHs
# that exercise every finding ($ORIGIN, absolute, relative, empty entries,
# both tags), written into $1.
set -euo pipefail
out=$1
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo 'int f(void) { return 1; }' > "$tmp/f.c"
i=0
for rp in '$ORIGIN/../lib:/opt/x::rel' '$ORIGIN/$LIB/$PLATFORM:${ORIGIN}/..' '/usr/lib:' 'a:b:c'; do
    for tags in --disable-new-dtags --enable-new-dtags; do
        cc -shared -fPIC -o "$out/rpath-$i.so" "$tmp/f.c" -Wl,$tags -Wl,-rpath,"$rp" 2>/dev/null || true
        i=$((i + 1))
    done
done
