#!/usr/bin/env bash
# The bridge for real on NVIDIA: PyPI's torch 2.15.0 wheel (the CUDA build) and
# the NCCL wheel it pins (nvidia-nccl-cu13==2.30.7), fetched once into a cache by
# scripts/torch-cache.sh, against the machine's CUDA toolkit (whose own
# include/ may hold an older nccl.h). The plan must prove nccl.h 2.30.7 (the
# preprocessor), libtorch's sizes must equal the headers' (abi_info and wheel
# verify), an older nccl.h put first must fail the plan with the three versions;
# then the wheel installed in a fresh venv imports, abi_info agrees, the gloo
# harness passes with 2 and 4 ranks, --smoke 2 on NCCL says it needs GPUs;
# --max-glibc and --docker. No GPU runs here.
. "$(dirname "$0")/lib.sh"
T=$T_TMP
# objects are cached by content (compiler, command, every header): repeat runs link only
export CCLFORGE_HOME=${CCLFORGE_TEST_HOME:-$HOME/.cache/cclforge/test-home}

t_torch_inputs
t_cuda_libs

# ---- plan: the headers proven ------------------------------------------------
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --json
expect_rc 0 "plan against the real torch wheel"
expect_json 'd["schema"] == "cclforge.bridge-plan/2" and d["plan"]["vendor"]["value"] == "nvidia"' "vendor nvidia from libtorch_cuda.so"
expect_json 'd["plan"]["proof"]["headers"]["nccl.h"]["path"].endswith("/nvidia/nccl/include/nccl.h") and d["plan"]["proof"]["headers"]["nccl.h"]["version"] == "2.30.7"' "the preprocessor resolves nccl.h 2.30.7 from the pinned NCCL wheel"
expect_json 'd["plan"]["nccl_versions"]["library"]["value"] == "2.30.7" and d["plan"]["nccl_versions"]["libtorch"]["value"] == "2.30.7" and "ncclConfig_t initializer" in d["plan"]["nccl_versions"]["libtorch"]["from"]' "library banner and libtorch's ProcessGroupNCCL: 2.30.7"
expect_json 'd["plan"]["libtorch_abi"]["options_size"] == 280 and d["plan"]["libtorch_abi"]["process_group_size"] == 1184' "libtorch's Options 280 and ProcessGroupNCCL 1184 bytes (its deleting destructors)"
expect_json 'd["plan"]["proof"]["headers"]["cuda.h"]["version"] == "'"$T_CUDA_VERSION"'"' "cuda.h from the toolkit ($T_CUDA_VERSION)"
expect_json '[i["value"] for i in d["plan"]["includes"]].index("'"$site"'/nvidia/nccl/include") < [i["value"] for i in d["plan"]["includes"]].index("'"$cuda"'/include") if "'"$cuda"'/include" in [i["value"] for i in d["plan"]["includes"]] else True' "comm headers before the toolkit's include"
expect_json 'd["plan"]["define_set"]["name"] == "CUDA set" and "USE_ROCM=1" not in [x["value"] for x in d["plan"]["defines"]]' "CUDA-named headers: no HIP defines"
expect_json '[r["value"] for r in d["plan"]["rpath"]] == ["$ORIGIN/../torch/lib", "$ORIGIN/../nvidia/nccl/lib"]' "RPATH is \$ORIGIN-relative only"
abi_sizes=$(printf '%s' "$OUT" | python3 -c 'import json,sys; a=json.load(sys.stdin)["plan"]["libtorch_abi"]; print(a["options_size"], a["process_group_size"])')
echo "$abi_sizes" > "$T/abi-sizes"

# a deliberate mismatch: the toolkit's older nccl.h first
old_inc=$T/old-nccl
if grep -q '#define NCCL_MINOR 30' "$cuda/include/nccl.h" 2>/dev/null || [ ! -f "$cuda/include/nccl.h" ]; then
    mkdir -p "$old_inc"; sed 's/#define NCCL_MINOR 30/#define NCCL_MINOR 28/; s/#define NCCL_VERSION_CODE 23007/#define NCCL_VERSION_CODE 22807/' "$site/nvidia/nccl/include/nccl.h" > "$old_inc/nccl.h"
else
    old_inc=$cuda/include
fi
old_v=$(sed -n 's/^#define NCCL_MAJOR \([0-9]*\)/\1/p;s/^#define NCCL_MINOR \([0-9]*\)/\1/p;s/^#define NCCL_PATCH \([0-9]*\)/\1/p' "$old_inc/nccl.h" | paste -sd.)
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --include "$old_inc"
expect_rc 1 "an older nccl.h first fails the plan"
expect_out "three NCCL versions disagree: nccl.h resolves to .* = NCCL $old_v, the library linked is 2.30.7 .* compiled with 2.30.7" "it names the three versions"
expect_out "Fix: put NCCL 2.30.7's headers first" "and the remedy"

# NCCL_HOME as users spell it: the pip wheel beside torch through "..", and
# through a symlink. The compiler prints the folded path: the proof must still
# find nccl.h under that root, and the extension reach the wheel by $ORIGIN.
ln -sfn "$site/nvidia/nccl" "$T/nccl-link"
for home in "$site/torch/../nvidia/nccl" "$T/nccl-link"; do
    NCCL_HOME=$home run "$CCLFORGE" bridge plan --libtorch "$site/torch" --json
    expect_rc 0 "plan with NCCL_HOME=$home"
    expect_json 'd["plan"]["proof"]["headers"]["nccl.h"]["version"] == "2.30.7"' "nccl.h 2.30.7 proven under NCCL_HOME=$home"
    expect_json '[r["value"] for r in d["plan"]["rpath"]] == ["$ORIGIN/../torch/lib", "$ORIGIN/../nvidia/nccl/lib"]' "NCCL_HOME=$home is the wheel beside torch: reached by \$ORIGIN"
done

# ---- build, wheel, install ---------------------------------------------------
t0=$(date +%s)
run "$CCLFORGE" bridge wheel --libtorch "$site/torch" -o "$T/nv-build" --wheel-dir "$T/dist1"
expect_rc 0 "bridge wheel (compile or cached object, link, check in the installed layout, package)"
echo "# nvidia build+wheel: $(( $(date +%s) - t0 ))s"
expect_out 'ok: every symbol the extension and the libraries it brings need is defined at import' "the symbol check ran in the installed layout"
expect_out 'ok: _ZN3c104cuda12device_countEv from libc10_cuda.so' "device count from libc10_cuda.so"
expect_out 'NEEDED libnccl.so.2 -> site-packages/nvidia/nccl/lib/libnccl.so.2' "libnccl.so.2 from the NCCL wheel at import"
so=$(ls "$T"/nv-build/cclforge_nccl_bridge/_cclforge_nccl*.so 2>/dev/null)
whl=$(ls "$T"/dist1/*.whl 2>/dev/null)
[ -n "$so" ] && [ -n "$whl" ] && ok "extension and wheel written" || bad "extension and wheel written"
OUT=$(readelf -d "$so" 2>&1); RC=0
expect_out 'NEEDED.*\[libtorch_cuda.so\]' "links libtorch_cuda.so"
expect_out 'NEEDED.*\[libnccl.so.2\]' "links libnccl.so.2"
expect_out '\(RPATH\).*\$ORIGIN/../torch/lib' "DT_RPATH, as torch's libraries have"
expect_no_out 'R(UN)?PATH.*\[/' "no absolute RPATH"
OUT=$(nm -D --defined-only "$so"); expect_out ' T PyInit__cclforge_nccl$' "PyInit__cclforge_nccl exported"
run "$CCLFORGE" bridge build --libtorch "$site/torch" -o "$T/nv-again" --json
expect_rc 0 "the same build again"
expect_json 'd["build"]["cache_hit"] is True and d["build"]["object_cache"].startswith("'"$CCLFORGE_HOME"'/bridge/objects-v2/")' "an object cache hit: same compiler, command and headers"
run "$CCLFORGE" bridge wheel -o "$T/nv-build" --wheel-dir "$T/dist2"
expect_rc 0 "second wheel from the same build"
cmp -s "$whl" "$T/dist2/$(basename "$whl")" && ok "the wheel is byte-identical (reproducible)" || bad "the wheel is byte-identical (reproducible)"
# links planted where cclforge writes (the object's and the log's fixed names,
# the wheel's path) are refused or replaced, never written through
echo precious > "$T/victim"
mkdir -p "$T/nv-planted" "$T/dist3"
ln -s "$T/victim" "$T/nv-planted/_cclforge_nccl.o"
ln -s "$T/victim" "$T/nv-planted/build.log"
run "$CCLFORGE" bridge build --libtorch "$site/torch" -o "$T/nv-planted"
expect_rc 0 "a build over planted object and log links"
ln -s "$T/victim" "$T/dist3/$(basename "$whl")"
run "$CCLFORGE" bridge wheel -o "$T/nv-build" --wheel-dir "$T/dist3"
expect_rc 1 "a planted link at the wheel's path is refused"
expect_err "is a symbolic link: cclforge never writes through one" "and said"
[ "$(cat "$T/victim")" = precious ] && ok "the links' target is untouched" || bad "wrote through a planted link"

# one install serves the import, abi and bridge checks and the 2-rank gloo run
run "$CCLFORGE" wheel verify "$whl" --install --smoke 2 --backend gloo --site "$site" --json
expect_rc 0 "verify --install --smoke 2 --backend gloo: fresh venv, pip install --no-index, import, 2 ranks"
expect_json 'd["module"] == "cclforge_nccl_bridge._cclforge_nccl" and "/venv/" in d["module_file"]' "imported from the venv, not the source tree"
expect_json 'any(c["name"] == "abi" and c["status"] == "ok" and "Options 280 and ProcessGroupNCCL 1184 bytes in the bridge'"'"'s headers and in" in c["detail"] and "NCCL 2.30.7" in c["detail"] for c in d["checks"])' "abi_info: equal sizes, checked against the libtorch the import mapped"
expect_json 'any(c["name"] == "bridge" and c["status"] == "ok" and "no GPU" in c["detail"] for c in d["checks"])' "make_nccl_backend raises a clear Python exception without a GPU"
# the torch.distributed harness on CPU, from the installed wheel
expect_json 'sorted(d["smoke"]) == ["RANK_PASS rank=0 local_rank=0 value=3.0", "RANK_PASS rank=1 local_rank=1 value=3.0"] and any(c["name"] == "smoke" and c["status"] == "ok" for c in d["checks"])' "2 RANK_PASS lines, value=3.0"
echo "$OUT" | python3 -c 'import json,sys; [print("#   %-5s %-20s %s" % (c["status"], c["name"], c["detail"][:150])) for c in json.load(sys.stdin)["checks"]]' 2>/dev/null
expect_smoke_items 2 gloo "the bridge, 2 ranks"
run "$CCLFORGE" wheel verify "$whl" --smoke 4 --backend gloo --site "$site"
expect_rc 0 "--smoke 4 --backend gloo from the installed wheel"
for item in $T_SMOKE_ITEMS; do
    expect_out "ok +smoke $item +4 ranks, gloo: " "the bridge, 4 ranks: smoke $item passed"
done
[ "$(printf '%s\n' "$OUT" | grep -c "RANK_PASS rank=[0-9]* local_rank=[0-9]* value=10.0")" -eq 4 ] \
    && ok "4 RANK_PASS lines, value=10.0" || bad "4 RANK_PASS lines, value=10.0"
expect_out 'RANK_PASS rank=3 local_rank=3 value=10.0' "the seed's line format"
run "$CCLFORGE" wheel verify "$whl" --smoke 2 --site "$site"
expect_rc 1 "--smoke 2 on NCCL on a host without GPUs fails"
expect_out 'needs 2 GPUs, this host has 0 visible: the 2-rank run was NOT performed' "and says why"
run "$CCLFORGE" wheel verify "$whl" --smoke 2 --backend mpi
expect_rc 2 "--backend is nccl or gloo"

# torch in a venv, as users have it (here through a .pth to the cache): a venv
# made from that venv's python does not see its packages; --system-site-packages
# means the interpreter's own, asked of it
tv=$T/torch-venv
python3 -m venv "$tv" && echo "$site" >"$("$tv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch-cache.pth"
run "$CCLFORGE" wheel verify "$whl" --smoke 2 --backend gloo --python "$tv/bin/python" --system-site-packages
expect_rc 0 "--system-site-packages with a venv's python that has torch: its packages are seen"
expect_out 'RANK_PASS rank=1 local_rank=1 value=3.0' "the gloo harness ran from the installed wheel"
run "$CCLFORGE" wheel verify "$whl" --install --python "$T/no-such-python" --system-site-packages
expect_rc 1 "--system-site-packages with an interpreter that does not run"
expect_out "FAIL python .*cannot ask $T/no-such-python for the directories it imports from" "names the interpreter and the way out"

# ---- --max-glibc, --docker ---------------------------------------------------
glibc_max=$(nm -D --undefined-only "$so" | sed -n 's/.*@GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
if [ "${glibc_max:-0}" -gt 17 ]; then
    run "$CCLFORGE" bridge build --libtorch "$site/torch" -o "$T/nv-glibc" --max-glibc manylinux2014_x86_64
    expect_rc 1 "--max-glibc 2.17 (manylinux2014): this host's build needs 2.$glibc_max"
    expect_err "needs glibc 2\.$glibc_max \(.*@GLIBC_2\.$glibc_max" "names the symbols and their versions"
    expect_err "--docker quay.io/pypa/manylinux2014_x86_64" "and the fix"
else
    t_skip_part "--max-glibc: this host's build needs nothing newer than glibc 2.17 to refuse"
fi
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --docker quay.io/pypa/manylinux_2_28_x86_64 --json
expect_rc 0 "plan with --docker"
expect_json 'd["plan"]["docker_compile"][:5] == ["docker","run","--rm","--network=none",d["plan"]["docker_compile"][4]] and "quay.io/pypa/manylinux_2_28_x86_64" in d["plan"]["docker_compile"] and "'"$site"'/nvidia/nccl/include:'"$site"'/nvidia/nccl/include:ro" in d["plan"]["docker_compile"]' "docker run argv: inputs mounted read-only at their own paths"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    t_skip_part "--docker build: a docker engine is here, but this test pulls no images"
else
    run "$CCLFORGE" bridge build --libtorch "$site/torch" -o "$T/nv-docker" --docker quay.io/pypa/manylinux_2_28_x86_64
    expect_rc 1 "--docker without a docker engine (or client) fails"
    expect_err 'the containerised build has not run' "and says it has not run"
fi

t_end
