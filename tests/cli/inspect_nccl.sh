# cclforge inspect on the machine's real NCCL: banner and GPU archs, a library
# embedding an NCCL copy next to libnccl.so.2 (two-copies warning), the no-FILE
# mode (what a program here would load), and a sysroot with no NCCL at all.
. "$(dirname "$0")/lib.sh"

cd "$T_TMP" || exit 1
NCCL=${CCLFORGE_TEST_NCCL:-/usr/local/cuda-13.0/lib/libnccl.so.2}
if [ ! -f "$NCCL" ]; then
    t_skip "$NCCL not present: the real-NCCL checks need the CUDA 13.0 NCCL (set CCLFORGE_TEST_NCCL)"
fi
NCCL_DIR=$(dirname "$NCCL")

# --- the real libnccl.so.2: version banner and every arch, without any toolkit
run "$CCLFORGE" inspect "$NCCL"
expect_rc 0 "libnccl.so.2 inspects cleanly"
expect_out "NCCL 2\.28\.9\+cuda13\.0 \(code 22809\)" "banner 2.28.9+cuda13.0, version code 22809"
expect_out "SASS sm_75 sm_80 sm_90 sm_100 (sm_100f )?sm_110 sm_120 · PTX compute_120" "SASS sm_75..sm_120 and PTX compute_120"
expect_out "libc\.so\.6 => .* \[ld\.so\.cache\]" "its closure"
expect_no_out "nccl-copies" "one copy is no warning"
# cross-check the arch list with cuobjdump when the toolkit has it
# (the CUDA 13 toolkit here ships without cuobjdump; $CUOBJDUMP may name one)
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
if [ -x "$CUOBJDUMP" ]; then
    want=$("$CUOBJDUMP" --list-elf "$NCCL" 2>/dev/null | sed -n 's/.*\.\(sm_[0-9]*[af]\{0,1\}\)\..*/\1/p' | sort -u | tr '\n' ' ')
    got=$(printf '%s' "$OUT" | sed -n 's/.*SASS \([^·]*\)·.*/\1/p' | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
    [ -n "$want" ] && [ "$want" = "$got" ] && ok "SASS list equals cuobjdump's ($got)" \
        || { OUT="cuobjdump: $want / ours: $got"; bad "SASS list equals cuobjdump's"; }
else
    t_skip_part "cuobjdump not installed: arch list not cross-checked"
fi
run "$CCLFORGE" inspect --no-gpu "$NCCL"
expect_no_out "SASS" "--no-gpu skips the arch scan"
expect_out "NCCL 2\.28\.9" "--no-gpu still reads the banner"
run "$CCLFORGE" inspect --no-banner "$NCCL"
expect_no_out "NCCL 2\.28\.9" "--no-banner skips the banner"
expect_out "SASS sm_75" "--no-banner still lists archs"
run "$CCLFORGE" inspect --json "$NCCL"
expect_json "d['targets'][0]['objects'][0]['comm']['is_library'] == 'NCCL' and d['targets'][0]['objects'][0]['comm']['banner']['version_code'] == 22809" "JSON: is NCCL, code 22809"
expect_json "d['targets'][0]['objects'][0]['comm']['embeds_copy'] is False" "JSON: the library is not an embedded copy"
expect_json "set(['sm_75','sm_80','sm_90','sm_100','sm_110','sm_120']) <= set(d['targets'][0]['objects'][0]['gpu']['sass']) and d['targets'][0]['objects'][0]['gpu']['ptx'] == ['compute_120']" "JSON: arch lists"
expect_json "d['targets'][0]['objects'][0]['comm']['bytes_scanned'] < 0.01 * $(stat -c %s "$(readlink -f "$NCCL")")" "banner scan reads under 1% of the file"

# --- a real CUDA library keeping fatbins inside .rodata: skipped by the banner scan
CUSPARSE=${CCLFORGE_TEST_CUSPARSE:-/usr/local/cuda/lib64/libcusparse.so.12}
if [ -f "$CUSPARSE" ]; then
    run "$CCLFORGE" inspect --json --no-gpu "$CUSPARSE" "$NCCL"
    expect_json "d['targets'][0]['objects'][0]['comm']['fatbins_skipped'] > 0 and d['targets'][0]['objects'][0]['comm']['bytes_skipped'] > d['targets'][0]['objects'][0]['comm']['bytes_scanned']" "libcusparse: most of .rodata is fatbins, skipped"
    expect_json "d['targets'][0]['objects'][0]['comm']['found'] is False and d['targets'][1]['objects'][0]['comm']['banner']['version_code'] == 22809" "no banner in libcusparse, NCCL's still found in the same run"
else
    t_skip_part "$CUSPARSE not present: fatbins in .rodata not checked on a real library"
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
expect_out "warning.* \[nccl-copies\] 2 NCCL/RCCL copies in one process: libemb\.so embeds NCCL 2\.21\.5.*libnccl\.so\.2 is NCCL 2\.28\.9" "two-copies warning names both"
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
    cache_path=$(/sbin/ldconfig -p | sed -n 's/^[[:space:]]*libnccl\.so\.2 (libc6,x86-64) => //p' | head -1)
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
