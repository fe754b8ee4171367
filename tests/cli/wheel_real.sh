#!/usr/bin/env bash
# `wheel verify` on real PyPI wheels (pinned, cached by scripts/wheel-cache.sh):
# every one passes, scipy failing only on the absolute RUNPATH its
# cython_special really carries; `auditwheel show` agrees on the policy the
# symbol versions need (its sym_tag); the policy table in the source is the
# one generated from that auditwheel; and glibc itself, loading scipy with
# LD_DEBUG, finds libquadmath through _fblas's RPATH as the emulation says.
# Run once per inflate engine (cli.wheel_real.zlib, .isal).
. "$(dirname "$0")/lib.sh"
t_inflate_engine
SRC=${CCLFORGE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

[ -x /usr/bin/time ] || t_skip "GNU time (/usr/bin/time) is not installed (scripts/deps.sh installs it)"
setup=$(bash "$SRC/scripts/wheel-cache.sh")
case $? in
0) ;;
77) t_skip "the real wheels are not cached and PyPI cannot be reached" ;;
*) echo "$setup"; bad "scripts/wheel-cache.sh ran"; t_end; exit 1 ;;
esac
# Under AddressSanitizer, freed memory waits in ASan's quarantine (256 MB by
# default): the bound is on cclforge's own memory, so it is emptied here.
if ldd "$CCLFORGE" | grep -q libasan; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
    echo "under ASan: quarantine_size_mb=0 for the memory bound"
fi
W=$(printf '%s\n' "$setup" | sed -n 's/^wheels=//p')
AW=$(printf '%s\n' "$setup" | sed -n 's/^auditwheel=//p')
n=0
for whl in "$W"/*.whl; do
    name=$(basename "$whl")
    n=$((n + 1))
    OUT=$(/usr/bin/time -f %M -o "$T_TMP/rss" "$CCLFORGE" wheel verify --json "$whl" 2>"$T_TMP/.stderr"); RC=$?
    ERR=$(cat "$T_TMP/.stderr")
    rss=$(tail -1 "$T_TMP/rss")
    case "$name" in
    scipy-*)
        expect_rc 1 "$name: exit 1, for its absolute RUNPATH"
        expect_json '[c["name"] for c in d["checks"] if c["status"] == "fail"] == ["rpath"]' "$name: rpath is the only check failing"
        expect_json 'any(c["name"] == "rpath" and c["detail"].count(";") == 1 and "cython_special" in c["detail"] and "an absolute path" in c["detail"] for c in d["checks"])' \
            "$name: and only for cython_special's absolute RUNPATH"
        expect_json 'any(c["name"] == "needed" and c["status"] == "ok" for c in d["checks"])' "$name: needed passes (libquadmath through _fblas's RPATH)"
        ;;
    nvidia_*)
        expect_rc 0 "$name passes"
        expect_json 'any(c["name"] == "extension" and c["status"] == "ok" and "library-only" in c["detail"] for c in d["checks"])' \
            "$name: a library-only wheel is legitimate"
        ;;
    *)
        expect_rc 0 "$name passes"
        expect_json 'd["extensions"]' "$name: its extension modules are found"
        ;;
    esac
    expect_engine "$name"
    [ "$rss" -lt 65536 ] && ok "$name: max RSS $rss KB, under 64 MB" || bad "$name: max RSS $rss KB, under 64 MB"
    ours=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["policy_needed"])')
    # auditwheel's answer for these bytes is kept beside the wheels (it takes
    # a minute over the nine, and is the same every run for the same version)
    answer="$W/auditwheel-show/$name.json"
    if [ ! -s "$answer" ]; then
        mkdir -p "$W/auditwheel-show"
        "$AW" show --json "$whl" >"$answer.tmp" 2>/dev/null && mv "$answer.tmp" "$answer"
    fi
    theirs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sym_tag"])' "$answer" 2>/dev/null)
    [ -n "$theirs" ] && [ "$ours" = "$theirs" ] && ok "$name: auditwheel agrees on the policy the symbols need ($ours)" ||
        bad "$name: auditwheel agrees on the policy the symbols need (ours $ours, auditwheel $theirs)"
done
[ "$n" -eq 9 ] && ok "all 9 pinned wheels verified" || bad "all 9 pinned wheels verified (found $n)"

# The policy table is auditwheel's: regenerated from the auditwheel installed here, it is the committed one.
policy=$("$(dirname "$AW")/python" -c 'import auditwheel, os; print(os.path.join(os.path.dirname(auditwheel.__file__), "policy"))')
python3 "$SRC/scripts/gen-manylinux-policy.py" "$policy" >"$T_TMP/policy.c"
cmp -s "$T_TMP/policy.c" "$SRC/src/pkg/manylinux_policy_data.c" && ok "src/pkg/manylinux_policy_data.c is generated from this auditwheel's policy" ||
    bad "src/pkg/manylinux_policy_data.c is generated from this auditwheel's policy (regenerate with scripts/gen-manylinux-policy.py)"

# glibc as the oracle: scipy installed and imported with LD_DEBUG=libs
if [ "$(python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')" = 311 ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-index --no-compile --target "$T_TMP/site" \
        "$W"/scipy-*.whl "$W"/numpy-*.whl >/dev/null 2>&1
    run env -C "$T_TMP/site" LD_DEBUG=libs python3 -c 'import scipy.linalg._fblas'
    expect_rc 0 "scipy.linalg._fblas imports from a pip install"
    found=$(printf '%s\n' "$ERR" | grep -A1 'find library=libquadmath-[0-9a-f]*\.so' | grep 'search path=' | head -1)
    case "$found" in
    *scipy.libs*"(RPATH from file "*"_fblas"*) ok "LD_DEBUG: glibc finds libgfortran's libquadmath through _fblas's RPATH" ;;
    *) bad "LD_DEBUG: glibc finds libgfortran's libquadmath through _fblas's RPATH (got: $found)" ;;
    esac
else
    t_skip_part "the LD_DEBUG oracle imports scipy's cp311 wheel; this python3 is not 3.11"
fi
t_end
