#!/usr/bin/env bash
# A plugin's own bridge source, first-class: the Torch-FL-shaped
# fixture tests/fixtures/plugin_torch_fl (nested package torch_fl.comm._nccl_ext,
# its own __init__.py that tolerates a missing module, nccl_backend.cpp with
# only make_nccl_backend in PYBIND11_MODULE(TORCH_EXTENSION_NAME, m), knowing
# nothing of cclforge) built four ways against PyPI's real torch:
#  - the CLI (`bridge build --source`, then `bridge wheel`);
#  - the plan's own commands (`bridge plan --json`: compile.guard_argv,
#    compile.argv, link.argv run as given from /, the compiles through
#    tests/support/objcache.py), packaged by setuptools;
#  - setup.py with cclforge.build (bridge_extension, build_ext) and `pip wheel`;
#  - CMake (cclforge_add_nccl_bridge with SOURCE);
# and a bridge of two sources (tests/fixtures/plugin_torch_fl_split: options.cpp,
# which alone is not a bridge, and nccl_backend.cpp) by the CLI (--source twice),
# setup.py (bridge_extension of both) and CMake (SOURCE a b);
# each proven by `wheel verify --install --smoke 2 --backend gloo` from the
# installed wheel (the ABI facts of cclforge's guard checked against the
# libtorch the import mapped). Then DTK, whose librccl.so.1 lives only in the
# toolkit (<DTK>/lib): --toolkit-lib by default, recorded, found by the host
# check as the loader would, named as a host requirement where it is not, and
# by doctor from the module's own ABI facts when the plugin's own wheel (no
# cclforge.json) is installed.
# Bad input: a source that is not a bridge, a guard that fails (two sizes and
# the header), a failed layout check; none writes into the plugin's tree.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
T=$T_TMP
export CCLFORGE_HOME=${CCLFORGE_TEST_HOME:-$HOME/.cache/cclforge/test-home}
FIX=$SRC/tests/fixtures
PKG=torch_fl.comm._nccl_ext
EXT=torch_fl/comm/_nccl_ext

t_torch_inputs
pybuild=$(bash "$SRC/scripts/pybuild-cache.sh" 2>"$T/pybuild.log" | tail -n 1)
[ -x "$pybuild" ] || { cat "$T/pybuild.log"; t_skip "no Python build environment (setuptools, wheel from PyPI, needed once)"; }
t_cuda_libs
# cclforge.build from the build tree, finding this binary
export CCLFORGE_BIN=$CCLFORGE PYTHONPATH=${CCLFORGE_BINARY_DIR:?}/python

plugin_tree() { rm -rf "$1"; cp -r "$FIX/plugin_torch_fl" "$1"; }
tree_state() { (cd "$1" && find . -print0 | sort -z | xargs -0 ls -ld --time-style=+%s.%N 2>/dev/null | awk '{print $1, $5, $6, $7}'); }
untouched() { # DIR LABEL: the tree is exactly as tree_state saved it in DIR.state
    tree_state "$1" > "$1.after"
    cmp -s "$1.state" "$1.after" && ok "$2: nothing written into the plugin's tree" \
        || { OUT=$(diff "$1.state" "$1.after"); RC=0; bad "$2: nothing written into the plugin's tree"; }
}
smoke_verify() { # WHEEL LABEL [verify args]: installed, imported, the 2-rank gloo run through the plugin's module
    local whl=$1 label=$2; shift 2
    run "$CCLFORGE" wheel verify "$whl" --install --smoke 2 --backend gloo --site "$site" "$@" --json
    expect_rc 0 "$label: wheel verify --install --smoke 2 --backend gloo"
    expect_json 'd["module"] == "'"$PKG"'._flagos_nccl" and "/venv/" in d["module_file"]' "$label: $PKG._flagos_nccl imported from the venv"
    expect_json 'any(c["name"] == "abi" and c["status"] == "ok" and "bytes in the bridge'"'"'s headers and in" in c["detail"] for c in d["checks"])' "$label: the guard's ABI facts agree with the libtorch the import mapped"
    expect_json 'any(c["name"] == "bridge" and c["status"] == "ok" and "'"${CALL:-no GPUs found}"'" in c["detail"] for c in d["checks"])' "$label: make_nccl_backend with one rank: ${CALL:-no GPUs found} (libtorch's own words)"
    expect_json 'sorted(d["smoke"]) == ["RANK_PASS rank=0 local_rank=0 value=3.0", "RANK_PASS rank=1 local_rank=1 value=3.0"]' "$label: RANK_PASS on both ranks"
    expect_json 'not any("older cclforge" in c["detail"] for c in d["checks"])' "$label: nothing says 'older cclforge'"
    expect_smoke_items 2 gloo "$label"
    printf '%s' "$OUT" | python3 -c 'import json,sys; [print("#   %-5s %-20s %s" % (c["status"], c["name"], c["detail"][:150])) for c in json.load(sys.stdin)["checks"]]' 2>/dev/null
}
no_abs_rpath() { # SO LABEL
    OUT=$(readelf -d "$1" 2>&1); RC=0
    expect_no_out 'R(UN)?PATH.*[[:space:]:]/' "$2: no absolute RPATH or RUNPATH"
    expect_out 'R(UN)?PATH.*\$ORIGIN/../../../torch/lib' "$2: \$ORIGIN-relative to torch/lib"
    OUT=$(nm -D --defined-only "$1" 2>&1)
    expect_out ' R cclforge_abi_info$' "$2: cclforge's ABI guard is linked in (cclforge_abi_info)"
}

# ---- bad input first: each named before (or without) writing anything -----------
plugin_tree "$T/bad"
tree_state "$T/bad" > "$T/bad.state"
printf '#include <nccl.h>\nint plugin_helper() { return 0; }\n' > "$T/helper.cpp"
run "$CCLFORGE" bridge build --libtorch "$site/torch" --source "$T/helper.cpp" --package "$PKG" --name _flagos_nccl --into "$T/bad" -o "$T/bad-build"
expect_rc 1 "a source without make_nccl_backend is refused"
expect_out "helper.cpp is not a bridge source: it defines no make_nccl_backend" "it is named as not a bridge"
expect_err 'nothing was built' "before compiling"
printf 'void make_nccl_backend();\n' > "$T/nonccl.cpp"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/nonccl.cpp"
expect_rc 1 "a source including no NCCL/RCCL header is refused"
expect_out "nonccl.cpp includes no nccl.h or rccl.h .*not the bridge source" "and named so"
run env PYTHONPATH="$PYTHONPATH" "$pybuild" -c 'import sys
from cclforge.build import bridge_extension, BridgePlanError
try:
    bridge_extension("torch_fl.comm._nccl_ext._flagos_nccl", [sys.argv[1]], libtorch=sys.argv[2])
except BridgePlanError as e:
    print(e); sys.exit(3)' "$T/helper.cpp" "$site/torch"
expect_rc 3 "cclforge.build: bridge_extension of a non-bridge source raises BridgePlanError"
expect_out "is not a bridge source" "with the plan's words"
# the guard: libtorch's Options size said to be 8 bytes off
opt=$("$CCLFORGE" bridge plan --libtorch "$site/torch" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["plan"]["libtorch_abi"]["options_size"])')
run "$CCLFORGE" bridge build --libtorch "$site/torch" --source "$T/bad/$EXT/nccl_backend.cpp" --package "$PKG" --name _flagos_nccl \
    --define "CCLFORGE_LIBTORCH_OPTIONS_SIZE=$((opt - 8))" --into "$T/bad" -o "$T/bad-build"
expect_rc 1 "a failing ABI guard fails the build"
expect_err "the ABI guard failed: sizeof\(c10d::ProcessGroupNCCL::Options\) is $opt bytes with the header .*/nvidia/nccl/include/nccl.h \(NCCL 2.30.7, the nccl.h the preprocessor resolved\) but $((opt - 8)) in .*libtorch_cuda.so" "it names the two sizes and the header"
untouched "$T/bad" "bad source, failed guard"

# ---- 1. the CLI --------------------------------------------------------------
plugin_tree "$T/cli"
tree_state "$T/cli" > "$T/cli.state"
t0=$(date +%s)
run "$CCLFORGE" bridge build --libtorch "$site/torch" --source "$T/cli/$EXT/nccl_backend.cpp" --package "$PKG" --name _flagos_nccl -o "$T/cli-build"
expect_rc 0 "cli: bridge build of the plugin's own source"
echo "# cli build: $(( $(date +%s) - t0 ))s"
expect_out 'ok: every symbol the extension and the libraries it brings need is defined at import' "cli: checked in the installed layout"
untouched "$T/cli" "cli"
so=$(ls "$T/cli-build/$EXT"/_flagos_nccl*.so 2>/dev/null)
no_abs_rpath "$so" "cli"
grep -q '^\$ .*cclforge_abi_guard.cpp' "$T/cli-build/build.log" 2>/dev/null || grep -q 'compiling the ABI guard: object cache hit' "$T/cli-build/build.log" \
    && ok "cli: build.log records the guard's compile" || bad "cli: build.log records the guard's compile"
grep -q '^\$ .* -shared -o ' "$T/cli-build/build.log" && grep -q '^# linking the bridge: done' "$T/cli-build/build.log" \
    && ok "cli: build.log records the link and its outcome (not empty on success)" || { OUT=$(cat "$T/cli-build/build.log"); RC=0; bad "cli: build.log records the link"; }
OUT=$(cat "$T/cli-build/$EXT/__init__.py"); RC=0
expect_out "from \._flagos_nccl import make_nccl_backend  # noqa" "cli: the generated __init__.py imports make_nccl_backend"
expect_no_out 'abi_info' "cli: and nothing the module does not export"
run "$CCLFORGE" bridge wheel -o "$T/cli-build" --wheel-dir "$T/cli-dist" --dist-name torch-fl
expect_rc 0 "cli: bridge wheel"
whl=$(ls "$T"/cli-dist/*.whl 2>/dev/null)
run "$CCLFORGE" wheel verify "$whl" --site "$site" --json
expect_json 'd["tags"]["platform"] == d["policy_needed"] and d["tags"]["platform"].startswith("manylinux_2_")' "cli: the wheel's tag is the policy the verifier holds it to"
smoke_verify "$whl" "cli"

# ---- 1b. two sources: options.cpp (no make_nccl_backend) and nccl_backend.cpp ----
split_tree() { plugin_tree "$1"; cp "$FIX/plugin_torch_fl_split/options.cpp" "$FIX/plugin_torch_fl_split/nccl_backend.cpp" "$1/$EXT/"; cp "$FIX/plugin_torch_fl_split/setup.py" "$1/"; }
split_tree "$T/two"
tree_state "$T/two" > "$T/two.state"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/two/$EXT/options.cpp" --package "$PKG" --name _flagos_nccl
expect_rc 1 "two sources: options.cpp alone is not a bridge"
expect_out "options.cpp is not a bridge source: it defines no make_nccl_backend" "two sources: options.cpp alone named so"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/two/$EXT/options.cpp" --source "$T/helper.cpp" --package "$PKG" --name _flagos_nccl
expect_rc 1 "two sources: a set none of which defines make_nccl_backend is refused"
expect_out "these 2 sources are not a bridge: none of .*options.cpp, .*helper.cpp defines make_nccl_backend" "two sources: named as a set"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/two/$EXT/options.cpp" --source "$T/two/$EXT/nccl_backend.cpp" --package "$PKG" --name _flagos_nccl -o "$T/two-build" --json
expect_rc 0 "two sources: plan (make_nccl_backend in the second)"
expect_json '(p := d["plan"])["source"]["value"].endswith("/nccl_backend.cpp") and [a[-3] for a in p["compile"]["argvs"]] == [p["source"]["value"], p["more_sources"][0]] and p["more_sources"][0].endswith("/options.cpp") and p["compile"]["argvs"][0] == p["compile"]["argv"]' "two sources: compile.argvs, one per source, the bridge's (argv) first"
expect_json 'len(objs := [a[-1] for a in d["plan"]["compile"]["argvs"]] + [d["plan"]["compile"]["guard_argv"][-1]]) == len(set(objs)) == 3 and set(objs) <= set(d["plan"]["link"]["argv"])' "two sources: link.argv links the three objects"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/two/$EXT/options.cpp" --source "$T/two/$EXT/nccl_backend.cpp" --package "$PKG" --name _flagos_nccl -o "$T/two-build"
expect_out '^  compile +/.*-c '"$T/two/$EXT/options.cpp"' -o '"$T/two-build"'/_flagos_nccl.1.options.o' "two sources: the text plan prints a compile per source"
t0=$(date +%s)
run "$CCLFORGE" bridge build --libtorch "$site/torch" --source "$T/two/$EXT/options.cpp" --source "$T/two/$EXT/nccl_backend.cpp" --package "$PKG" --name _flagos_nccl -o "$T/two-build"
expect_rc 0 "two sources: bridge build --source options.cpp --source nccl_backend.cpp"
echo "# two-source cli build: $(( $(date +%s) - t0 ))s"
grep -q "compiling the bridge's options.cpp" "$T/two-build/build.log" && ok "two sources: build.log records options.cpp's compile" || bad "two sources: build.log records options.cpp's compile"
untouched "$T/two" "two sources"
so=$(ls "$T/two-build/$EXT"/_flagos_nccl*.so 2>/dev/null)
no_abs_rpath "$so" "two sources"
OUT=$(nm -C --defined-only "$so" 2>&1); RC=0
expect_out 'torch_fl_nccl_options' "two sources: options.cpp's function is linked in"
run "$CCLFORGE" bridge wheel -o "$T/two-build" --wheel-dir "$T/two-dist" --dist-name torch-fl
expect_rc 0 "two sources: bridge wheel"
smoke_verify "$(ls "$T"/two-dist/*.whl 2>/dev/null)" "two sources cli"
# setup.py: bridge_extension(name, [options.cpp, nccl_backend.cpp])
CCLFORGE_BRIDGE_ARGS="--libtorch $site/torch" "$pybuild" -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check \
    -w "$T/two-pydist" "$T/two" >"$T/pip-two.log" 2>&1 && ok "two sources: pip wheel with bridge_extension of two sources" \
    || { tail -n 40 "$T/pip-two.log"; bad "two sources: pip wheel with bridge_extension of two sources"; }
smoke_verify "$(ls "$T"/two-pydist/torch_fl-*.whl 2>/dev/null)" "two sources setup.py" --external torch/lib --external nvidia/nccl/lib
if command -v cmake >/dev/null; then
    printf 'cmake_minimum_required(VERSION 3.18)\nproject(two NONE)\ninclude("${CCLFORGE_CMAKE_DIR}/CCLForgeBridge.cmake")\ncclforge_add_nccl_bridge(flagos_nccl PACKAGE %s NAME _flagos_nccl\n  SOURCE "${CMAKE_CURRENT_SOURCE_DIR}/%s/options.cpp" "${CMAKE_CURRENT_SOURCE_DIR}/%s/nccl_backend.cpp"\n  ARGS ${CCLFORGE_BRIDGE_ARGS})\n' "$PKG" "$EXT" "$EXT" > "$T/two/CMakeLists.txt"
    run cmake -S "$T/two" -B "$T/two-cm" -DCCLFORGE_CMAKE_DIR="$CCLFORGE_BINARY_DIR/share/cclforge/cmake" -DCCLFORGE_EXECUTABLE="$CCLFORGE" "-DCCLFORGE_BRIDGE_ARGS=--libtorch;$site/torch"
    expect_rc 0 "two sources: cmake configure with SOURCE of two files"
    run cmake --build "$T/two-cm"
    expect_rc 0 "two sources: cmake --build"
    OUT=$(nm -C --defined-only "$(ls "$T/two-cm/flagos_nccl/$EXT"/_flagos_nccl*.so 2>/dev/null)" 2>&1); RC=0
    expect_out 'torch_fl_nccl_options' "two sources: cmake's extension links options.cpp"
    grep -q "compiling the bridge's options.cpp: object cache hit" "$T/two-cm/flagos_nccl/build.log" \
        && ok "two sources: cmake's options.cpp object is the CLI's, from the cache (same compiler, flags and headers)" \
        || bad "two sources: cmake's options.cpp object is the CLI's, from the cache (same compiler, flags and headers)"
fi

# ---- 2. the plan's commands, as given -----------------------------------------
plugin_tree "$T/argv"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/argv/$EXT/nccl_backend.cpp" --package "$PKG" --name _flagos_nccl -o "$T/argv-build" --json
expect_rc 0 "argv: bridge plan --json"
expect_json 'd["plan"]["output"] == "'"$T/argv-build/$EXT/"'" + d["plan"]["output_name"] and d["plan"]["compile"]["argv"][-1].startswith("'"$T/argv-build/"'") and d["plan"]["link"]["argv"][3] == d["plan"]["output"]' "argv: compile.argv, link.argv and output, absolute under -o"
expect_json 'd["plan"]["steps"][0] == d["plan"]["mkdir"]["argv"] == ["mkdir", "-p", "--", "'"$T/argv-build/$EXT"'"] and d["plan"]["steps"][1:] == d["plan"]["compile"]["argvs"] + [d["plan"]["compile"]["guard_argv"], d["plan"]["link"]["argv"]]' "argv: steps: mkdir of the output directories first, then the compiles, the guard and the link"
printf '%s' "$OUT" > "$T/plan.json"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/argv/$EXT/nccl_backend.cpp" --package "$PKG" --name _flagos_nccl -o "$T/argv-build"
expect_out '^  compile +/.*-c '"$T/argv/$EXT/nccl_backend.cpp"' -o '"$T/argv-build"'/_flagos_nccl.o' "argv: the text plan prints the compile command"
expect_out '^  link +/.* -shared -o '"$T/argv-build/$EXT"'/_flagos_nccl' "argv: and the link command"
expect_out '^  mkdir +mkdir -p -- '"$T/argv-build/$EXT"'$' "argv: the text plan prints the mkdir step first"
[ ! -e "$T/argv-build" ] && ok "argv: the plan wrote nothing" || bad "argv: the plan wrote nothing"
t0=$(date +%s)
# each compile through tests/support/objcache.py (run as given on a new key;
# its objects kept in the test home for the sanitizer suite and the next run)
cat > "$T/run_plan.py" <<'PY'
import json, subprocess, sys
p = json.load(open(sys.argv[1]))["plan"]
for argv in p["steps"]:
    subprocess.run(([sys.argv[2]] if "-c" in argv else []) + argv, check=True)  # argv, no shell
PY
mkdir "$T/empty-cwd"
(cd "$T/empty-cwd" && OBJCACHE_DIR=$CCLFORGE_HOME/fixtures/objects python3 "$T/run_plan.py" "$T/plan.json" "$SRC/tests/support/objcache.py") && ok "argv: the plan's steps run as given from an empty directory, -o not created beforehand" || bad "argv: the plan's steps run as given from an empty directory"
[ -z "$(ls -A "$T/empty-cwd")" ] && ok "argv: nothing written into the working directory" || bad "argv: nothing written into the working directory"
echo "# plan argv compile+link: $(( $(date +%s) - t0 ))s"
so=$(ls "$T/argv-build/$EXT"/_flagos_nccl*.so 2>/dev/null)
no_abs_rpath "$so" "argv"
cp "$so" "$T/argv/$EXT/"
cat > "$T/argv/setup.py" <<'PY'
# packages the extension the plan's commands built (no compile here)
from setuptools import setup
from setuptools.dist import Distribution
class Platform(Distribution):
    def has_ext_modules(self):
        return True
setup(name="torch-fl", version="0.3.0", packages=["torch_fl", "torch_fl.comm", "torch_fl.comm._nccl_ext"],
      package_data={"torch_fl.comm._nccl_ext": ["*.so"]}, distclass=Platform, zip_safe=False)
PY
"$pybuild" -m pip wheel --quiet --no-deps --no-build-isolation --disable-pip-version-check -w "$T/argv-dist" "$T/argv" >"$T/pip-argv.log" 2>&1 \
    && ok "argv: pip wheel of the tree" || { cat "$T/pip-argv.log"; bad "argv: pip wheel of the tree"; }
smoke_verify "$(ls "$T"/argv-dist/torch_fl-*.whl 2>/dev/null)" "argv" --external torch/lib --external nvidia/nccl/lib

# ---- 3. setup.py with cclforge.build -------------------------------------------
plugin_tree "$T/py"
t0=$(date +%s)
CCLFORGE_BRIDGE_ARGS="--libtorch $site/torch" "$pybuild" -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check \
    -w "$T/py-dist" "$T/py" >"$T/pip-py.log" 2>&1 && ok "setup.py: pip wheel with bridge_extension + build_ext" \
    || { tail -n 40 "$T/pip-py.log"; bad "setup.py: pip wheel with bridge_extension + build_ext"; }
echo "# setup.py build: $(( $(date +%s) - t0 ))s"
pywhl=$(ls "$T"/py-dist/torch_fl-*.whl 2>/dev/null)
mkdir -p "$T/py-unzip" && python3 -c 'import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$pywhl" "$T/py-unzip" 2>/dev/null
no_abs_rpath "$(ls "$T/py-unzip/$EXT"/_flagos_nccl*.so 2>/dev/null)" "setup.py"
smoke_verify "$pywhl" "setup.py" --external torch/lib --external nvidia/nccl/lib
e=$(cd "$T/py" && CCLFORGE_BRIDGE_ARGS="--libtorch $site/torch" "$pybuild" -c 'from cclforge.build import bridge_extension as b
import sys
e = b("torch_fl.comm._nccl_ext._flagos_nccl", ["torch_fl/comm/_nccl_ext/nccl_backend.cpp"], libtorch=sys.argv[1])
print(all(d.startswith("$ORIGIN") for d in e.runtime_library_dirs), ("USE_C10D_NCCL", None) in e.define_macros, any(i.endswith("/torch/include") for i in e.include_dirs))' "$site/torch")
[ "$e" = "True True True" ] && ok "setup.py: bridge_extension's Extension carries the plan (\$ORIGIN runtime dirs, defines, includes)" || { OUT=$e; RC=0; bad "bridge_extension's Extension carries the plan"; }

# ---- 4. CMake -----------------------------------------------------------------
if command -v cmake >/dev/null; then
    plugin_tree "$T/cm"
    run cmake -S "$T/cm" -B "$T/cm-build" -DCCLFORGE_CMAKE_DIR="$CCLFORGE_BINARY_DIR/share/cclforge/cmake" \
        -DCCLFORGE_EXECUTABLE="$CCLFORGE" "-DCCLFORGE_BRIDGE_ARGS=--libtorch;$site/torch"
    expect_rc 0 "cmake: configure the plugin's CMakeLists.txt"
    run cmake --build "$T/cm-build"
    expect_rc 0 "cmake: cmake --build runs cclforge bridge build on the plugin's source"
    run "$CCLFORGE" bridge wheel -o "$T/cm-build/flagos_nccl" --wheel-dir "$T/cm-dist" --dist-name torch-fl
    expect_rc 0 "cmake: bridge wheel of the CMake build"
    smoke_verify "$(ls "$T"/cm-dist/*.whl 2>/dev/null)" "cmake"
else
    t_skip_part "CMake: no cmake on PATH"
fi

# ---- 5. DTK: librccl.so.1 only in the toolkit --------------------------------
read -r opt_size pg_size < <("$CCLFORGE" bridge plan --libtorch "$site/torch" --json | python3 -c 'import json,sys; a=json.load(sys.stdin)["plan"]["libtorch_abi"]; print(a["options_size"], a["process_group_size"])')
key=$({ echo "plugin-v1 $cuda"; sha256sum <"$site/nvidia/nccl/include/nccl.h"; } | sha256sum | cut -c1-16)
dtk=$CCLFORGE_HOME/fixtures/bridge_plugin-$key/dtk-24.04
if [ ! -f "$dtk/lib/librccl.so.1" ]; then
    tmp=$(mktemp -d "$CCLFORGE_HOME/fixtures/.bridge_plugin-XXXXXX" 2>/dev/null || { mkdir -p "$CCLFORGE_HOME/fixtures"; mktemp -d "$CCLFORGE_HOME/fixtures/.bridge_plugin-XXXXXX"; })
    r=$tmp/dtk-24.04
    mkdir -p "$r/include/hip" "$r/include/rccl" "$r/lib" "$r/.info" "$r/cuda/cuda-12/include"
    sed 's/NCCL_H_/RCCL_H_/; s/#define NCCL_MINOR 30/#define NCCL_MINOR 24/; s/#define NCCL_PATCH 7/#define NCCL_PATCH 3/; s/#define NCCL_VERSION_CODE 23007/#define NCCL_VERSION_CODE 22403/' \
        "$site/nvidia/nccl/include/nccl.h" > "$r/include/rccl/rccl.h"
    printf '#pragma once\n#include "rccl.h"\n' > "$r/include/rccl/nccl.h"
    printf '#pragma once\n#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 2\n#define HIP_VERSION_PATCH 41133\n' > "$r/include/hip/hip_runtime.h"
    echo 24.04.1 > "$r/.info/version-dtk"
    for f in "$cuda"/include/*; do [ "${f##*/}" = nccl.h ] || ln -s "$f" "$r/cuda/cuda-12/include/${f##*/}"; done
    g++ -O2 -shared -fPIC -Wl,-soname,librccl.so.1 -DNCCL_CODE=22403 '-DRCCL_VERSION_TEXT="2.24.3"' -o "$r/lib/librccl.so.1" "$FIX/vendor_hip/rccl.cpp"
    mkdir -p "$(dirname "$dtk")"; mv -T "$r" "$dtk" 2>/dev/null; rm -rf "$tmp"
fi
lib_dcu() { # DIR: the vendor libraries Torch-FL bundles, without librccl
    mkdir -p "$1"
    g++ -O2 -shared -fPIC -Wl,-soname,libc10_hip.so -o "$1/libc10_hip.so" "$FIX/vendor_hip/c10_hip.cpp"
    g++ -O2 -shared -fPIC -Wl,-soname,libtorch_hip.so -DOPTIONS_SIZE="$opt_size" -DPG_SIZE="$pg_size" -DNCCL_CODE=22403 \
        -o "$1/libtorch_hip.so" "$FIX/vendor_hip/torch_hip.cpp" -L"$1" -L"$dtk/lib" -Wl,--no-as-needed -lc10_hip -l:librccl.so.1 -Wl,-rpath,'$ORIGIN'
}
plugin_tree "$T/dtk"
lib_dcu "$T/dtk/torch_fl/lib_dcu"
export DTK_HOME=$dtk
tree_state "$T/dtk" > "$T/dtk.state"
dtk_args=(--vendor dtk --torch-headers "$site/torch" --package "$PKG" --name _flagos_nccl --rpath '$ORIGIN/../../lib_dcu')
run "$CCLFORGE" bridge plan "${dtk_args[@]}" --source "$T/dtk/$EXT/nccl_backend.cpp" --into "$T/dtk" --json
expect_rc 0 "dtk: plan with librccl.so.1 only in <DTK>/lib"
expect_json 'd["plan"]["vendor_libs"]["value"] == "'"$T/dtk/torch_fl/lib_dcu"'" and d["plan"]["vendor_libs"]["from"].startswith("--into")' "dtk: without --vendor-libs, the vendor directory is the one --rpath reaches in --into (not the Python's torch/lib)"
expect_json '[t["value"] for t in d["plan"]["toolkit_libs"]] == ["librccl.so.1"] and "default: the vendor" in d["plan"]["toolkit_libs"][0]["from"] and d["plan"]["toolkit_version"] == "24.04.1"' "dtk: librccl.so.1 a toolkit library by default, the toolkit's version seen"
expect_json 'all(r["value"].startswith("$ORIGIN") for r in d["plan"]["rpath"])' "dtk: nothing absolute on the planned RPATH"
# a failed layout check leaves --into as it was: the libraries where --vendor-libs says, an --into tree without them
plugin_tree "$T/dtk-empty"; mkdir -p "$T/dtk-empty/torch_fl/lib_dcu"
tree_state "$T/dtk-empty" > "$T/dtk-empty.state"
run "$CCLFORGE" bridge build "${dtk_args[@]}" --source "$T/dtk/$EXT/nccl_backend.cpp" --vendor-libs "$T/dtk/torch_fl/lib_dcu" \
    --into "$T/dtk-empty" -o "$T/dtk-empty-build"
expect_rc 1 "dtk: an --into tree without its vendor libraries fails the layout check"
expect_err 'NEEDED libtorch_hip.so is not in the installed layout' "dtk: names the library not in the layout"
expect_err 'fails its check in the installed layout \(the --into tree was left as it was\)' "dtk: and says the --into tree was left alone"
untouched "$T/dtk-empty" "dtk failed layout check"
t0=$(date +%s)
run "$CCLFORGE" bridge build "${dtk_args[@]}" --source "$T/dtk/$EXT/nccl_backend.cpp" --into "$T/dtk" -o "$T/dtk-build"
expect_rc 0 "dtk: bridge build --into, librccl.so.1 from the host's toolkit"
echo "# dtk build: $(( $(date +%s) - t0 ))s"
expect_out 'ok: NEEDED librccl.so.1 -> .*/lib/librccl.so.1 \(the host.s toolkit provides it' "dtk: librccl.so.1 found through the toolkit, as the host's loader will"
expect_out 'ok: NEEDED libtorch_hip.so -> site-packages/torch_fl/lib_dcu/libtorch_hip.so' "dtk: libtorch_hip.so through \$ORIGIN/../../lib_dcu"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["toolkit_libs"] == ["librccl.so.1"] and d["toolkit"]["version"] == "24.04.1" else 1)' "$T/dtk-build/cclforge-build.json" \
    && ok "dtk: cclforge-build.json records librccl.so.1 and DTK 24.04.1" || bad "dtk: cclforge-build.json records the toolkit libraries"
dso=$(ls "$T/dtk/$EXT"/_flagos_nccl*.so 2>/dev/null)
OUT=$(readelf -d "$dso" 2>&1); RC=0
expect_no_out 'R(UN)?PATH.*[[:space:]:]/' "dtk: no absolute RPATH"
run "$CCLFORGE" bridge wheel -o "$T/dtk-build" --wheel-dir "$T/dtk-bw" --dist-name torch-fl-bridge
expect_rc 0 "dtk: bridge wheel"
python3 -c 'import json,sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); m=json.loads(z.read([n for n in z.namelist() if n.endswith(".dist-info/cclforge.json")][0])); sys.exit(0 if m["toolkit_libs"] == ["librccl.so.1"] and m["toolkit"] == {"vendor": "dtk", "version": "24.04.1"} else 1)' "$(ls "$T"/dtk-bw/*.whl)" \
    && ok "dtk: .dist-info/cclforge.json records librccl.so.1 with DTK 24.04.1" || bad "dtk: .dist-info/cclforge.json records the toolkit libraries"
# the plugin's own wheel through setup.py; the toolkit libraries come from the ABI facts in the ELF
CCLFORGE_BRIDGE_ARGS="--vendor dtk --torch-headers $site/torch --rpath \$ORIGIN/../../lib_dcu --vendor-libs $T/dtk/torch_fl/lib_dcu" \
    "$pybuild" -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check -w "$T/dtk-dist" "$T/dtk" >"$T/pip-dtk.log" 2>&1 \
    && ok "dtk: pip wheel of the plugin (setup.py, cclforge.build)" || { tail -n 40 "$T/pip-dtk.log"; bad "dtk: pip wheel of the plugin"; }
dwhl=$(ls "$T"/dtk-dist/torch_fl-*.whl 2>/dev/null)
# the host without the toolkit on the loader's path: a host requirement, named
run env -u DTK_HOME "$CCLFORGE" wheel verify "$dwhl" --site "$site" --external torch/lib --json
expect_json 'any(c["name"] == "host" and c["status"] == "skip" and "host requirement" in c["detail"] and "librccl.so.1 is not on this host" in c["detail"] and "dtk toolkit 24.04.1" in c["detail"] for c in d["checks"])' "dtk: verify names librccl.so.1 as a host requirement (DTK 24.04.1 at build)"
expect_json 'any(c["name"] == "needed" and c["status"] == "ok" for c in d["checks"])' "dtk: and the needed check leaves it to the host"
run "$CCLFORGE" wheel verify "$dwhl" --site "$site" --external torch/lib --json
expect_json 'any(c["name"] == "host" and "is in the toolkit DTK_HOME names" in c["detail"] and "LD_LIBRARY_PATH" in c["detail"] for c in d["checks"])' "dtk: in the toolkit DTK_HOME names but not on the loader's path: said so"
# the stand-in libtorch_hip's ProcessGroupNCCL constructor builds no real
# object, so make_intrusive's own check raises (a real one raises "no GPUs
# found"): without a GPU any exception is the expected answer
CALL="raised RuntimeError" LD_LIBRARY_PATH="$dtk/lib:$LD_LIBRARY_PATH" smoke_verify "$dwhl" "dtk" --external torch/lib
LD_LIBRARY_PATH="$dtk/lib:$LD_LIBRARY_PATH" run "$CCLFORGE" wheel verify "$dwhl" --site "$site" --external torch/lib --json
expect_json 'any(c["name"] == "host" and c["status"] == "ok" and "librccl.so.1 -> '"$dtk"'/lib/librccl.so.1 (LD_LIBRARY_PATH)" in c["detail"] for c in d["checks"])' "dtk: the host check finds librccl.so.1 as the loader does"
# doctor, on the host: the installed bridge wheel's toolkit libraries (its cclforge.json)
# (the plugin's wheel installed by verify into a kept venv, then the bridge wheel, which has the marker, over it)
LD_LIBRARY_PATH="$dtk/lib:$LD_LIBRARY_PATH" run "$CCLFORGE" wheel verify "$dwhl" --install --site "$site" --external torch/lib --work-dir "$T/dtk-venv"
vpy=$T/dtk-venv/venv/bin/python
# the plugin's own pip-built wheel has no cclforge.json: doctor reads the module's own ABI facts
if [ -x "$vpy" ] && ! ls -d "$T"/dtk-venv/venv/lib/python*/site-packages/*.dist-info/cclforge.json >/dev/null 2>&1; then
    run env -u DTK_HOME "$CCLFORGE" doctor --python "$vpy" --no-nvidia --json
    expect_json 'any(f["id"] == "bridge-toolkit-lib-missing" and f["subject"] == "librccl.so.1" and "librccl.so.1 for '"$PKG"'._flagos_nccl (dtk toolkit 24.04.1 at build): not on this host" in f["why"] for f in d["findings"])' "doctor, plugin wheel without a marker: the module's own facts name librccl.so.1 and DTK 24.04.1 on a host without it"
    run env -u DTK_HOME "$CCLFORGE" doctor --python "$vpy" --no-nvidia --json
    expect_json 'sum(f["id"] == "bridge-toolkit-lib-missing" for f in d["findings"]) == 1' "doctor, plugin wheel: the same one finding on the warm run (the module walk remembered)"
    run "$CCLFORGE" doctor --python "$vpy" --no-nvidia --json
    expect_json 'any(f["id"] == "bridge-toolkit-lib-missing" and "in the toolkit DTK_HOME names" in f["why"] for f in d["findings"])' "doctor, plugin wheel: in the toolkit DTK_HOME names, not on the loader's path: said so"
    LD_LIBRARY_PATH="$dtk/lib:$LD_LIBRARY_PATH" run env -u DTK_HOME "$CCLFORGE" doctor --python "$vpy" --no-nvidia --json
    expect_json 'not any(f["id"] == "bridge-toolkit-lib-missing" for f in d["findings"]) and any("librccl.so.1 -> '"$dtk"'/lib/librccl.so.1 (LD_LIBRARY_PATH) for '"$PKG"'._flagos_nccl" in l for t in d["libtorch"][:1] for l in t["bridge_toolkit_found"])' "doctor, plugin wheel: librccl.so.1 (a real ELF) found through LD_LIBRARY_PATH, no finding"
    # a truncated copy of the bridge beside it: reported, no crash
    vext=$(ls -d "$T"/dtk-venv/venv/lib/python*/site-packages/$EXT)
    head -c 3000 "$(ls "$vext"/_flagos_nccl*.so)" > "$vext/_cut.so"
    run env -u DTK_HOME "$CCLFORGE" doctor --python "$vpy" --no-nvidia --json
    expect_json 'any(f["id"] == "bridge-facts-unreadable" and f["subject"] == "'"$PKG"'._cut" for f in d["findings"]) and any(f["id"] == "bridge-toolkit-lib-missing" for f in d["findings"])' "doctor: a truncated module beside it is reported (bridge-facts-unreadable), the bridge still checked"
    rm -f "$vext/_cut.so"
else
    bad "doctor: a venv with the plugin's own wheel (no cclforge.json) installed"
fi
if [ -x "$vpy" ] && "$vpy" -m pip install --quiet --no-deps --no-index --disable-pip-version-check "$(ls "$T"/dtk-bw/*.whl)" >"$T/pip-bw.log" 2>&1; then
    run env -u DTK_HOME "$CCLFORGE" doctor --python "$vpy" --no-nvidia --json
    expect_json 'any(f["id"] == "bridge-toolkit-lib-missing" and f["subject"] == "librccl.so.1" and "'"$PKG"'._flagos_nccl" in f["why"] and "dtk toolkit 24.04.1 at build" in f["why"] for f in d["findings"])' "doctor: names librccl.so.1, the bridge needing it and DTK 24.04.1, on a host without it"
    LD_LIBRARY_PATH="$dtk/lib:$LD_LIBRARY_PATH" run "$CCLFORGE" doctor --python "$vpy" --no-nvidia --json
    expect_json 'not any(f["id"] == "bridge-toolkit-lib-missing" for f in d["findings"]) and any("librccl.so.1 -> '"$dtk"'/lib/librccl.so.1" in l for t in d["libtorch"][:1] for l in t["bridge_toolkit_found"])' "doctor: found through LD_LIBRARY_PATH, no finding"
else
    cat "$T/pip-bw.log" 2>/dev/null; bad "doctor: a venv with the bridge wheel installed"
fi
unset DTK_HOME
t_end
