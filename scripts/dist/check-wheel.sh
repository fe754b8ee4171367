#!/usr/bin/env bash
# A release wheel against the release rules, by two independent checkers:
# our own `cclforge wheel verify` (structure, RECORD, tags, and the manylinux
# policy: each ELF's glibc symbol versions and NEEDED entries, named per file
# and symbol) and the incumbent's `auditwheel show`, which must place it in
# the policy its file name's first platform tag names (manylinux_2_17_x86_64
# for ...-manylinux_2_17_x86_64.manylinux2014_x86_64.whl).
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
tag=${name#*-py3-none-}
tag=${tag%%.*}
tag=${tag%.whl}
aw=$("$tools/auditwheel" show "$wheel" 2>&1) || true
if ! printf '%s' "$aw" | grep -q "\"$tag\""; then
    echo "$aw" >&2
    echo "check-wheel: auditwheel show does not place $name in $tag" >&2
    rc=1
fi
exit $rc
