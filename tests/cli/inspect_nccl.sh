# cclforge inspect on the machine's real NCCL: banner and GPU archs, a library
# embedding an NCCL copy next to libnccl.so.2 (two-copies warning), the no-FILE
# mode (what a program here would load), and a sysroot with no NCCL at all.
. "$(dirname "$0")/lib.sh"

cd "$T_TMP" || exit 1
t_find_nccl || t_skip "no libnccl.so.2 with its nccl.h found (toolkit: ${T_CUDA:-none}; set CUDA_HOME)"
NCCL=$T_NCCL NCCL_DIR=$(dirname "$T_NCCL")
V=$T_NCCL_VERSION V_RE=${T_NCCL_VERSION//./\\.} CODE=$T_NCCL_CODE
echo "NCCL $V (code $CODE, from $T_NCCL_H): $NCCL"

# --- the real libnccl.so.2: version banner and every arch, without any toolkit
run "$CCLFORGE" inspect "$NCCL"
expect_rc 0 "libnccl.so.2 inspects cleanly"
expect_out "NCCL $V_RE\+cuda[0-9]+\.[0-9]+ \(code $CODE\)" "banner $V+cudaX.Y, version code $CODE (nccl.h's)"
expect_out "SASS (sm_[0-9]+[af]? )+(· PTX compute_[0-9]+)?" "a SASS arch list"
expect_out "libc\.so\.6 => .* \[ld\.so\.cache\]" "its closure"
expect_no_out "nccl-copies" "one copy is no warning"
text_sass=$(printf '%s' "$OUT" | sed -n 's/.*SASS \([^·]*\)·.*/\1/p;s/.*SASS \([^·]*\)$/\1/p' | head -n 1 | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
# cross-check the arch list with cuobjdump where there is one: on PATH, in
# the toolkit, or the one gpucode_cuobjdump.sh installs ($CUOBJDUMP may name one)
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || { [ -x "${T_CUDA:-/nonexistent}/bin/cuobjdump" ] && echo "$T_CUDA/bin/cuobjdump"; } ||
    find "${XDG_CACHE_HOME:-$HOME/.cache}/cclforge/cuobjdump-venv" -name cuobjdump -type f 2>/dev/null | head -n 1)}
if [ -n "$CUOBJDUMP" ] && [ -x "$CUOBJDUMP" ]; then
    want=$("$CUOBJDUMP" --list-elf "$NCCL" 2>/dev/null | sed -n 's/.*\.\(sm_[0-9]*[af]\{0,1\}\)\..*/\1/p' | sort -u | tr '\n' ' ')
    got=$(printf '%s' "$text_sass" | tr ' ' '\n' | sed 's/f$//' | grep . | sort -u | tr '\n' ' ') # cuobjdump: sm_100f is sm_100
    [ -n "$want" ] && [ "$want" = "$got" ] && ok "SASS list equals cuobjdump's ($got)" \
        || { OUT="cuobjdump: $want / ours: $got"; bad "SASS list equals cuobjdump's"; }
else
    t_skip_part "cuobjdump not installed: arch list not cross-checked"
fi
run "$CCLFORGE" inspect --no-gpu "$NCCL"
expect_no_out "SASS" "--no-gpu skips the arch scan"
expect_out "NCCL $V_RE" "--no-gpu still reads the banner"
run "$CCLFORGE" inspect --no-banner "$NCCL"
expect_no_out "NCCL $V_RE" "--no-banner skips the banner"
expect_out "SASS sm_" "--no-banner still lists archs"
run "$CCLFORGE" inspect --json "$NCCL"
expect_json "d['targets'][0]['objects'][0]['comm']['is_library'] == 'NCCL' and d['targets'][0]['objects'][0]['comm']['banner']['version_code'] == $CODE and d['targets'][0]['objects'][0]['comm']['banner']['version'] == '$V'" "JSON: is NCCL $V, code $CODE"
expect_json "d['targets'][0]['objects'][0]['comm']['embeds_copy'] is False" "JSON: the library is not an embedded copy"
expect_json "' '.join(sorted(set(d['targets'][0]['objects'][0]['gpu']['sass']))) + ' ' == '$text_sass'" "JSON: the arch list the text shows ($text_sass)"
expect_json "d['targets'][0]['objects'][0]['comm']['bytes_scanned'] < 0.01 * $(stat -c %s "$(readlink -f "$NCCL")")" "banner scan reads under 1% of the file"

# --- a real CUDA library keeping fatbins inside .rodata: skipped by the banner scan
CUSPARSE=$(ls "$NCCL_DIR"/libcusparse.so.[0-9]* "${T_CUDA:-/nonexistent}"/lib64/libcusparse.so.[0-9]* 2>/dev/null | grep -E 'libcusparse\.so\.[0-9]+$' | head -n 1)
if [ -n "$CUSPARSE" ]; then
    run "$CCLFORGE" inspect --json --no-gpu "$CUSPARSE" "$NCCL"
    expect_json "d['targets'][0]['objects'][0]['comm']['fatbins_skipped'] > 0 and d['targets'][0]['objects'][0]['comm']['bytes_skipped'] > d['targets'][0]['objects'][0]['comm']['bytes_scanned']" "libcusparse: most of .rodata is fatbins, skipped"
    expect_json "d['targets'][0]['objects'][0]['comm']['found'] is False and d['targets'][1]['objects'][0]['comm']['banner']['version_code'] == $CODE" "no banner in libcusparse, NCCL's still found in the same run"
else
    t_skip_part "no libcusparse.so beside NCCL or in the toolkit: fatbins in .rodata not checked on a real library"
fi

# --- a library that embeds its own NCCL and also needs libnccl.so.2: two copies
cat >emb.c <<'EOF'
/* Carries an NCCL banner as libtorch_cuda.so does with NCCL linked statically. */
__attribute__((used)) static const char nccl_banner[] = "NCCL version 2.21.5+cuda12.4";
const char *emb_version(void) { return nccl_banner; }
EOF
cc -shared -fPIC -o libemb.so emb.c -Wl,--no-as-needed -L"$NCCL_DIR" -l:libnccl.so.2 -Wl,--enable-new-dtags,-rpath,"$NCCL_DIR" \
    || { echo "cc failed"; exit 1; }
run "$CCLFORGE" inspect libemb.so
expect_rc 0 "two copies is a warning, not an error"
expect_out "NCCL 2\.21\.5\+cuda12\.4 \(code 22105\), embedded copy" "the embedded copy is found"
expect_out "libnccl\.so\.2 => $NCCL_DIR/libnccl\.so\.2 \[runpath of libemb\.so\]" "libnccl.so.2 through the RUNPATH"
expect_out "warning.* \[nccl-copies\] 2 NCCL/RCCL copies in one process: libemb\.so embeds NCCL 2\.21\.5.*libnccl\.so\.2 is NCCL $V_RE" "two-copies warning names both"
expect_out "warning.* \[lint\] libemb\.so: absolute: RUNPATH entry '$NCCL_DIR'" "the absolute RUNPATH is linted"
expect_out "0 errors, 2 warnings" "summary: two warnings"
run "$CCLFORGE" inspect --json libemb.so
expect_json "d['targets'][0]['summary']['nccl_copies'] == 2 and [p['kind'] for p in d['targets'][0]['problems']] == ['lint', 'nccl-copies']" "JSON: nccl_copies 2"
expect_json "d['targets'][0]['objects'][0]['comm']['embeds_copy'] is True" "JSON: embeds_copy"
run "$CCLFORGE" inspect --json --no-banner libemb.so
expect_json "d['targets'][0]['objects'][0]['comm'] is None and d['targets'][0]['summary']['nccl_copies'] == 0" "--no-banner: no comm facts, no copies check"

# --- no FILE: what a program on this machine would load
run env -u LD_LIBRARY_PATH "$CCLFORGE" inspect
expect_rc 0 "no-FILE mode exits 0"
expect_out "Comm libraries a program on this machine would load" "heading"
expect_out "librccl\.so\.1 => " "RCCL is looked for too"
if /sbin/ldconfig -p | grep -q "libnccl.so.2 .*=> "; then
    cache_path=$(/sbin/ldconfig -p | sed -n 's/^[[:space:]]*libnccl\.so\.2 (libc6[^)]*) => //p' | head -1)
    expect_out "libnccl\.so\.2 => $cache_path \[ld\.so\.cache\]" "libnccl.so.2 from ld.so.cache, as ldconfig -p says ($cache_path)"
    expect_out "NCCL [0-9]+\.[0-9]+\.[0-9]+" "and its version"
fi
run env -u LD_LIBRARY_PATH "$CCLFORGE" inspect --json
expect_json "d['mode'] == 'default' and [l['name'] for l in d['lookups']] == ['libnccl.so.2', 'librccl.so.1']" "JSON: lookups"
expect_json "all(t['located_as'] for t in d['targets'])" "JSON: targets say what they were located as"
# LD_LIBRARY_PATH takes precedence over the cache, as for any program
mkdir -p llp && cp "$(readlink -f "$NCCL")" llp/libnccl.so.2
run env LD_LIBRARY_PATH="$T_TMP/llp" "$CCLFORGE" inspect --no-gpu
expect_out "libnccl\.so\.2 => $T_TMP/llp/libnccl\.so\.2 \[LD_LIBRARY_PATH\]" "LD_LIBRARY_PATH wins over ld.so.cache"
rm -rf llp

# --- a sysroot without NCCL or RCCL: said plainly, exit 0
mkdir -p empty-root/etc
run "$CCLFORGE" inspect --root empty-root --ignore-ld-library-path --explain
expect_rc 0 "nothing found is information: exit 0"
expect_out "libnccl\.so\.2 => not found" "libnccl not found"
expect_out "No NCCL or RCCL library is visible to the loader here" "said plainly"
expect_out "empty-root/(usr/)?lib.*/libnccl\.so\.2  \[default dirs\]" "--explain lists the sysroot's default dirs"
t_end
