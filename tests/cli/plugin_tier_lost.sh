#!/usr/bin/env bash
# A plugin's bridge wheel that installs cleanly and still loses its native
# tier must fail `wheel verify` statically, on any CPU host, before release.
# The Torch-FL-shaped project tests/fixtures/plugin_plain (package
# torch_fl.comm._nccl_ext, an __init__.py that tolerates a missing module,
# PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) defining make_nccl_backend in
# module.cpp, the ProcessGroupNCCL in nccl_backend.cpp), against PyPI's real
# torch, built three ways without cclforge in the build, each from what
# `cclforge bridge plan --json` says:
#  - setup.py: plain setuptools (no torch BuildExtension, no cclforge.build);
#  - argv: the plan's own compile and link argv run as given, then packaged;
#  - cmake: plain CMake (add_library MODULE, cmake --install), then packaged;
# each correct and in every broken form, every one a named finding:
#  init-symbol  TORCH_EXTENSION_NAME left undefined: PyInit_TORCH_EXTENSION_NAME
#  build-rpath  RUNPATH into the build machine's torch and NCCL
#  bridge-path  the module one package up from where __init__.py imports it
#  no-factory   the factory defined under another name
#  vendor-lib   libnccl.so.2 needed, reached by no RUNPATH, declared nowhere
# setup.py and argv build every form (argv: an edited define, link or
# placement, as a user edits the plan's commands); CMake builds the correct
# form and its own two pitfalls (the macro, and INSTALL_RPATH_USE_LINK_PATH's
# absolute RUNPATH): the other three are the same placement and link facts
# as argv's, and each CMake form costs a compile. The correct wheels
# pass with nothing but --site: their Requires-Dist on torch declares
# torch/lib, and nvidia/nccl/lib through torch's own requirement. The
# correct setup.py wheel then installs and runs a 2-rank gloo smoke.
# nccl_backend.cpp is the slow compile (torch's headers): objects are reused
# by tests/support/objcache.py, a compile cache keyed on the compiler, the
# flags that can change its object (a -D of a macro no file read names cannot;
# torch's headers name neither TORCH_EXTENSION_NAME nor TORCH_FL_*), the
# source's bytes and every header's, so each build way compiles it once per
# torch and compiler; module.cpp compiles per form that changes it.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
T=$T_TMP
export CCLFORGE_HOME=${CCLFORGE_TEST_HOME:-$HOME/.cache/cclforge/test-home}
FIX=$SRC/tests/fixtures/plugin_plain
PKG=torch_fl.comm._nccl_ext
EXT=torch_fl/comm/_nccl_ext
FORMS="init-symbol build-rpath bridge-path no-factory vendor-lib"

t_torch_inputs
pybuild=$(bash "$SRC/scripts/pybuild-cache.sh" 2>"$T/pybuild.log" | tail -n 1)
[ -x "$pybuild" ] || { cat "$T/pybuild.log"; t_skip "no Python build environment (setuptools, wheel from PyPI, needed once)"; }
t_cuda_libs
command -v g++ >/dev/null || t_skip "no g++"

# every compile through tests/support/objcache.py, its objects kept in the
# test home: the sanitizer suite's run and the next run find them
ln -sf "$SRC/tests/support/objcache.py" "$T/objcache"
export OBJCACHE_DIR=$CCLFORGE_HOME/fixtures/objects

tree() { rm -rf "$1"; cp -r "$FIX" "$1"; }
# packages a tree whose extension is already built (argv, cmake): no compile
package() { # TREE DIST
    cat > "$1/setup.py" <<'SETUP'
from setuptools import setup
from setuptools.dist import Distribution
class Platform(Distribution):
    def has_ext_modules(self):
        return True
setup(name="torch-fl", version="0.3.0", packages=["torch_fl", "torch_fl.comm", "torch_fl.comm._nccl_ext"],
      package_data={"torch_fl.comm": ["*.so"], "torch_fl.comm._nccl_ext": ["*.so"]}, distclass=Platform,
      install_requires=["torch==2.15.*"], zip_safe=False)
SETUP
    "$pybuild" -m pip wheel --quiet --no-deps --no-build-isolation --disable-pip-version-check -w "$2" "$1" >"$2.log" 2>&1
}
# verify_form WAY FORM WHEEL: statically, with the torch site; a correct wheel
# passes, a broken one fails with its finding by name
MOD=_flagos_nccl.cpython-311-x86_64-linux-gnu.so
verify_form() {
    local way=$1 form=$2 whl=$3 want
    [ -f "$whl" ] || { OUT=; ERR=; RC=-; bad "$way $form: a wheel was built"; return; }
    run "$CCLFORGE" wheel verify "$whl" --site "$site" --json
    case $form in
    good)
        expect_rc 0 "$way: the correct wheel passes statically"
        expect_json 'any(c["name"] == "rpath" and c["status"] == "ok" and "torch/lib (owned by torch 2.15.0, installed in " in c["detail"] and "nvidia/nccl/lib (owned by nvidia-nccl-cu13 2.30.7, which torch requires" in c["detail"] for c in d["checks"])' \
            "$way: torch/lib and nvidia/nccl/lib declared by Requires-Dist: torch (and torch's own requirement), no --external"
        expect_json 'any(c["name"] == "bridge-module" and c["status"] == "ok" and "make_nccl_backend in '"$PKG"'._flagos_nccl; 1 import(s)" in c["detail"] for c in d["checks"])' \
            "$way: the bridge module holds make_nccl_backend where __init__.py imports it"
        return ;;
    init-symbol) want='c["name"] == "extension" and "init-symbol: '"$EXT/$MOD"' exports PyInit_TORCH_EXTENSION_NAME, but `import '"$PKG"'._flagos_nccl` calls PyInit__flagos_nccl" in c["detail"] and "-DTORCH_EXTENSION_NAME=_flagos_nccl" in c["detail"]' ;;
    build-rpath) want='c["name"] == "rpath" and __import__("re").search("build-rpath: '"$EXT/$MOD"' has R(UN)?PATH entry '"'$site/torch/lib'"'", c["detail"]) and "Use '"'\$ORIGIN/../../../torch/lib'"'" in c["detail"]' ;;
    bridge-path) want='c["name"] == "bridge-module" and "bridge-path: '"$EXT"'/__init__.py (line 5) imports make_nccl_backend from '"$PKG"'._flagos_nccl, but the wheel has no module there; its bridge is torch_fl.comm._flagos_nccl (torch_fl/comm/'"$MOD"')" in c["detail"]' ;;
    no-factory) want='c["name"] == "bridge-module" and "no-factory: '"$EXT/$MOD"' holds no make_nccl_backend" in c["detail"] and "imports make_nccl_backend from it" in c["detail"]' ;;
    vendor-lib) want='c["name"] == "needed" and "vendor-lib: '"$EXT/$MOD"' needs libnccl.so.2 (the NCCL library)" in c["detail"] and "--toolkit-lib" in c["detail"]' ;;
    esac
    expect_rc 1 "$way $form: wheel verify fails it statically"
    expect_json 'any(c["status"] == "fail" and '"$want"' for c in d["checks"])' "$way $form: the $form finding names it and its fix"
    expect_json 'not any(c["name"] in ("install", "import") for c in d["checks"])' "$way $form: found without installing"
}

# ---- the plan, as the user asks for it --------------------------------------
tree "$T/src"
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --source "$T/src/$EXT/module.cpp" --source "$T/src/$EXT/nccl_backend.cpp" \
    --package "$PKG" --name _flagos_nccl -o "$T/argv-out" --json
expect_rc 0 "bridge plan --json of the plugin's two sources"
printf '%s' "$OUT" > "$T/plan.json"
[ "$RC" = 0 ] || { t_end; exit; }

# ---- 1. setup.py, plain setuptools -------------------------------------------
t0=$(date +%s)
for form in good $FORMS; do
    tree "$T/py-$form"
    b=; [ "$form" = good ] || b=$form
    FL_PLAN=$T/plan.json FL_BROKEN=$b CC="$T/objcache g++" CXX="$T/objcache g++" \
        "$pybuild" -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check -w "$T/py-dist-$form" "$T/py-$form" \
        >"$T/pip-$form.log" 2>&1 || tail -n 30 "$T/pip-$form.log"
    verify_form setup.py "$form" "$(ls "$T/py-dist-$form"/torch_fl-*.whl 2>/dev/null)"
done
echo "# setup.py, six wheels: $(( $(date +%s) - t0 ))s"
good_py=$(ls "$T/py-dist-good"/torch_fl-*.whl 2>/dev/null)
OUT=$(python3 -c 'import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).read("torch_fl-0.3.0.dist-info/METADATA").decode())' "$good_py" 2>&1); RC=0
expect_out '^Requires-Dist: torch==2\.15\.\*' "setup.py: the wheel requires torch"
run "$CCLFORGE" wheel verify "$good_py" --json
expect_rc 1 "setup.py: without --site, the RUNPATH into torch/lib is undeclared"
expect_json 'any(c["name"] == "rpath" and "or give --site where the distributions its Requires-Dist names (torch) are installed" in c["detail"] for c in d["checks"])' \
    "setup.py: and the fix names --site for the Requires-Dist"

# ---- 2. the plan's argv, run as given -------------------------------------------
t0=$(date +%s)
mkdir -p "$T/argv-out/$EXT"
cat > "$T/run_plan.py" <<'PY'
# the plan's commands as given (argv, no shell), with the edits a user makes
# for one broken form; every compile through the object cache
import json, os, subprocess, sys
p = json.load(open(sys.argv[1]))["plan"]
form, cache = sys.argv[2], sys.argv[3]
site = sys.argv[4]
def edit(argv):
    if form == "init-symbol":
        argv = [a for a in argv if not a.startswith("-DTORCH_EXTENSION_NAME=")]
    if form == "no-factory" and "-c" in argv:
        argv = argv[:1] + ['-DTORCH_FL_FACTORY_NAME="nccl_backend"'] + argv[1:]
    if form == "build-rpath":
        argv = [a.replace("$ORIGIN/../../..", site) for a in argv]
    if form == "vendor-lib":
        argv = [a for a in argv if not (a.startswith("-Wl,-rpath,") and "nccl" in a)]
    return argv
for argv in [p["compile"]["guard_argv"]] + p["compile"]["argvs"] + [p["link"]["argv"]]:
    subprocess.run([cache] + edit(argv), check=True)
print(p["output"])
PY
for form in good $FORMS; do
    tree "$T/argv-$form"
    so=$(cd / && python3 "$T/run_plan.py" "$T/plan.json" "$form" "$T/objcache" "$site" 2>"$T/argv-$form.log" | tail -n 1)
    if [ -f "$so" ]; then
        dest=$T/argv-$form/$EXT; [ "$form" = bridge-path ] && dest=$T/argv-$form/torch_fl/comm
        mv "$so" "$dest/"
        package "$T/argv-$form" "$T/argv-dist-$form" || cat "$T/argv-dist-$form.log"
    else
        cat "$T/argv-$form.log"
    fi
    verify_form argv "$form" "$(ls "$T/argv-dist-$form"/torch_fl-*.whl 2>/dev/null)"
done
echo "# argv, six wheels: $(( $(date +%s) - t0 ))s"

# ---- 3. plain CMake -----------------------------------------------------------
if command -v cmake >/dev/null; then
    t0=$(date +%s)
    for form in good init-symbol build-rpath; do
        tree "$T/cm-$form"
        b=; [ "$form" = good ] || b=$form
        if cmake -S "$T/cm-$form" -B "$T/cm-build-$form" -DFL_PLAN="$T/plan.json" "-DFL_BROKEN=$b" \
               -DCMAKE_CXX_COMPILER_LAUNCHER="$T/objcache" -DCMAKE_INSTALL_PREFIX="$T/cm-$form" >"$T/cm-$form.log" 2>&1 &&
           cmake --build "$T/cm-build-$form" >>"$T/cm-$form.log" 2>&1 &&
           cmake --install "$T/cm-build-$form" >>"$T/cm-$form.log" 2>&1; then
            package "$T/cm-$form" "$T/cm-dist-$form" || cat "$T/cm-dist-$form.log"
        else
            tail -n 30 "$T/cm-$form.log"
        fi
        verify_form cmake "$form" "$(ls "$T/cm-dist-$form"/torch_fl-*.whl 2>/dev/null)"
    done
    echo "# cmake, three wheels: $(( $(date +%s) - t0 ))s"
else
    t_skip_part "CMake: no cmake on PATH"
fi

# ---- the correct setup.py wheel, installed and run ---------------------------
t0=$(date +%s)
run "$CCLFORGE" wheel verify "$good_py" --install --smoke 2 --backend gloo --site "$site" --json
expect_rc 0 "setup.py: wheel verify --install --smoke 2 --backend gloo, no --external"
expect_json 'd["module"] == "'"$PKG"'._flagos_nccl" and "/venv/" in d["module_file"]' "setup.py: $PKG._flagos_nccl imported from the venv"
expect_json 'sorted(d["smoke"])[:2] == ["RANK_PASS rank=0 local_rank=0 value=3.0", "RANK_PASS rank=1 local_rank=1 value=3.0"]' "setup.py: RANK_PASS on both ranks"
echo "# install and smoke: $(( $(date +%s) - t0 ))s"
t_end
