#!/usr/bin/env bash
# A release wheel against the release rules, by two independent checkers:
# our own `cclforge wheel verify` (structure, RECORD, tags, and the manylinux
# policy: each ELF's glibc symbol versions and NEEDED entries, named per file
# and symbol) and the incumbent's `auditwheel show`, which must place it in
# manylinux_2_17 (manylinux2014) as its tag says.
#   bash scripts/dist/check-wheel.sh CCLFORGE TOOLS-BIN WHEEL
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: check-wheel.sh CCLFORGE TOOLS-BIN WHEEL" >&2; exit 2; }
cclforge=$1 tools=$2 wheel=$3
name=${wheel##*/}
rc=0
if ! out=$("$cclforge" wheel verify "$wheel" 2>&1); then
    echo "$out" >&2
    echo "check-wheel: cclforge wheel verify refuses $name" >&2
    rc=1
fi
# auditwheel prints the tag it places the wheel in: "manylinux_2_17_<arch>".
arch=${name##*manylinux2014_}
arch=${arch%.whl}
aw=$("$tools/auditwheel" show "$wheel" 2>&1) || true
if ! printf '%s' "$aw" | grep -q "\"manylinux_2_17_$arch\""; then
    echo "$aw" >&2
    echo "check-wheel: auditwheel show does not place $name in manylinux_2_17_$arch" >&2
    rc=1
fi
exit $rc
