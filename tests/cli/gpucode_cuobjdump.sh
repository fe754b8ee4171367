# GPU code in and outside the fatbin sections, against NVIDIA's cuobjdump
# (PyPI's nvidia-cuda-cuobjdump, installed once into a cache venv): the archs
# of the fatbin sections equal cuobjdump's on the library, and the archs
# cclforge lists for containers elsewhere (CUPTI's, the checkpoint library's
# and cuSPARSE's .rodata) equal cuobjdump's on those containers written out
# by an independent extractor (tests/support/fatbin_extract.py). cuobjdump
# names family cubins without their 'f' (sm_100f -> sm_100) and lists no
# LTO-IR, so names are folded and LTO-IR is left out of the comparison.
. "$(dirname "$0")/lib.sh"
t_find_cuda || t_skip "no CUDA toolkit found (set CUDA_HOME)"
LIB=
for d in "$T_CUDA/lib64" "$T_CUDA/lib" "$T_CUDA/targets/$(uname -m)-linux/lib"; do
    ls "$d"/libcupti.so.[0-9]* >/dev/null 2>&1 && { LIB=$d; break; }
done
[ -n "$LIB" ] || t_skip "no libcupti in the toolkit at $T_CUDA"
# each library by its soname, whatever the toolkit's major version
soname() { ls "$LIB"/"$1".so.[0-9]* 2>/dev/null | sed -n "s#^$LIB/\\($1\\.so\\.[0-9]*\\)\$#\\1#p" | head -n 1; }
CUPTI=$(soname libcupti)
VENV=${CCLFORGE_CUOBJDUMP_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cclforge/cuobjdump-venv}
C=$(find "$VENV" -name cuobjdump -type f 2>/dev/null | head -1)
if [ -z "$C" ]; then
    python3 -m venv "$VENV" >/dev/null 2>&1 &&
        timeout 300 "$VENV/bin/pip" install -q nvidia-cuda-cuobjdump >/dev/null 2>&1 ||
        { rm -rf "$VENV"; t_skip "cannot pip-install nvidia-cuda-cuobjdump (no network?)"; }
    C=$(find "$VENV" -name cuobjdump -type f | head -1)
fi
[ -x "$C" ] || t_skip "nvidia-cuda-cuobjdump has no cuobjdump binary"
arches() { # cuobjdump listing -> sorted names, family 'f' folded, PTX as compute_
    grep -oE '\.sm_[0-9]+[af]?\.(cubin|ptx)' | sed -E 's/^\.//; s/f\././; s/^sm_([0-9a]+)\.ptx$/compute_\1/; s/\.cubin$//' | sort -u | tr '\n' ' '
}
for f in "$CUPTI" libcheckpoint.so "$(soname libcusparse)"; do
    [ -n "$f" ] && [ -f "$LIB/$f" ] || { t_skip_part "${f:-libcusparse} not in $LIB"; continue; }
    run "$CCLFORGE" inspect --json --no-banner "$LIB/$f"
    printf '%s' "$OUT" >"$T_TMP/$f.json"
    ours() { python3 - "$T_TMP/$f.json" "$1" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
g = d["targets"][0]["objects"][0]["gpu"]
want_embedded = sys.argv[2] == "embedded"
names = set()
for s in g["sections"]:
    if s["embedded"] == want_embedded:
        names |= {re.sub(r"f$", "", a) for a in s["sass"]} | {re.sub(r"f$", "", a) for a in s["ptx"]}
print(" ".join(sorted(names)), end=" " if names else "")
PY
    }
    in_sections=$( { "$C" --list-elf "$LIB/$f"; "$C" --list-ptx "$LIB/$f"; } 2>/dev/null | arches)
    [ "$(ours sections)" = "$in_sections" ] && ok "$f: fatbin sections as cuobjdump lists them [$in_sections]" ||
        { RC=0; OUT="cclforge [$(ours sections)] cuobjdump [$in_sections]"; bad "$f: fatbin sections as cuobjdump"; }
    rm -rf "$T_TMP/fb" && python3 "$CCLFORGE_SOURCE_DIR/tests/support/fatbin_extract.py" "$LIB/$f" "$T_TMP/fb" >/dev/null
    elsewhere=$(for x in "$T_TMP"/fb/*.fatbin; do [ -f "$x" ] && { "$C" --list-elf "$x"; "$C" --list-ptx "$x"; }; done 2>/dev/null | arches)
    [ -n "$elsewhere" ] && [ "$(ours embedded)" = "$elsewhere" ] && ok "$f: containers outside them as cuobjdump reads them [$elsewhere]" ||
        { RC=0; OUT="cclforge [$(ours embedded)] cuobjdump on extracted [$elsewhere]"; bad "$f: containers outside the fatbin sections"; }
    n_ours=$(python3 -c "import json; print(json.load(open('$T_TMP/$f.json'))['targets'][0]['objects'][0]['gpu']['embedded_containers'])")
    n_theirs=$(ls "$T_TMP"/fb/*.fatbin 2>/dev/null | wc -l)
    [ "$n_ours" = "$n_theirs" ] && ok "$f: $n_ours containers outside, as the extractor counts" || { RC=0; OUT="$n_ours vs $n_theirs"; bad "$f: container count"; }
    [ "$f" = "$CUPTI" ] && n_cupti=$n_theirs
done
run "$CCLFORGE" inspect --no-banner "$LIB/$CUPTI"
expect_out "SASS sm_[0-9].* \(fatbins also in \.rodata: ${n_cupti:-?}\)" "the text view names where the code was found"
t_end
