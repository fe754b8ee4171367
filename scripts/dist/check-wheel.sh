#!/usr/bin/env bash
# A release wheel against the release rules, by three checkers: our own
# `cclforge wheel verify` (structure, RECORD, tags, and the manylinux policy:
# each ELF's glibc symbol versions and NEEDED entries, named per file and
# symbol), the incumbent's `auditwheel show`, which must place it in the
# policy its file name's first platform tag names (manylinux_2_17_x86_64 for
# ...-manylinux_2_17_x86_64.manylinux2014_x86_64.whl), and the hardening of
# the binary it installs as the command (tests/support/check_hardening.sh).
#   bash scripts/dist/check-wheel.sh CCLFORGE TOOLS-BIN WHEEL
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: check-wheel.sh CCLFORGE TOOLS-BIN WHEEL" >&2; exit 2; }
cclforge=$1 tools=$2 wheel=$3
here=$(cd "$(dirname "$0")" && pwd)
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! python3 - "$wheel" "$tmp/cclforge" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
exe = [n for n in z.namelist() if n.endswith(".data/scripts/cclforge")]
if len(exe) != 1:
    sys.exit("check-wheel: %s holds %d .data/scripts/cclforge (one expected)" % (sys.argv[1], len(exe)))
open(sys.argv[2], "wb").write(z.read(exe[0]))
PY
then
    rc=1
elif ! hard=$(bash "$here/../../tests/support/check_hardening.sh" "$tmp/cclforge" 2>&1); then
    printf '%s\n' "$hard" | sed "s|^$tmp/cclforge|$name: scripts/cclforge|" >&2
    echo "check-wheel: the binary in $name lacks the hardening named above" >&2
    rc=1
fi
exit $rc
