#!/usr/bin/env bash
# doctor finds a plugin's own bridge module beside torch that carries no
# cclforge marker or facts (Torch-FL's _flagos_nccl as its setuptools build
# makes it): an extension module whose read-only data holds make_nccl_backend,
# linked here by the compiler and the linker, NEEDED on a toolkit library
# made here too. Its NEEDED are resolved as a process that imported torch
# maps them: missing, the finding names the module, the library and where the
# loader looked; present (LD_LIBRARY_PATH, its own $ORIGIN RUNPATH, or a
# soname torch's import already mapped), none. A module without the factory's
# name is no plugin. Then the same against the real torch 2.15 site.
. "$(dirname "$0")/lib.sh"
T=$T_TMP
command -v gcc >/dev/null || t_skip "no gcc to link the stand-in modules"
export CCLFORGE_HOME=$T/home
unset DTK_HOME ROCM_PATH ROCM_HOME HIP_PATH LD_LIBRARY_PATH
SFX=.cpython-311-x86_64-linux-gnu.so
cat >"$T/bridge.c" <<'EOF'
/* what pybind11 leaves of m.def("make_nccl_backend", ...): the name in .rodata */
static const char factory[] = "make_nccl_backend";
extern int cftest_rccl(void);
__attribute__((visibility("default"))) const char *PyInit__flagos_nccl(void) { return cftest_rccl() ? factory : 0; }
EOF
printf 'int cftest_rccl(void) { return 1; }\n' >"$T/rccl.c"
printf 'int plain(void) { return 1; }\n' >"$T/plain.c"
mkdir -p "$T/tk/lib"
gcc -shared -fPIC -Wl,-soname,libcftest_rccl.so.1 -o "$T/tk/lib/libcftest_rccl.so.1" "$T/rccl.c" || t_skip "gcc cannot link a shared object"
# plugin SITE PKGDIR [ld args]: the plugin's package and its bridge module in SITE
plugin() {
    local site=$1 pkg=$2; shift 2
    mkdir -p "$site/$pkg"
    local d=$site
    for part in ${pkg//\// }; do d=$d/$part; : >"$d/__init__.py"; done
    gcc -shared -fPIC -fvisibility=hidden -o "$site/$pkg/_flagos_nccl$SFX" -Wl,--no-as-needed "$T/bridge.c" "$@" -L"$T/tk/lib" -l:libcftest_rccl.so.1
}
site=$T/site
mkdir -p "$site/torch/lib"
: >"$site/torch/__init__.py"
gcc -shared -fPIC -Wl,-soname,libtorch_cpu.so -o "$site/torch/lib/libtorch_cpu.so" "$T/plain.c"
plugin "$site" torch_fl/comm/_nccl_ext
# a module that does not define the factory is no plugin bridge
gcc -shared -fPIC -o "$site/torch_fl/comm/_other$SFX" "$T/plain.c"
sleep 3 # the probe cache stores nothing changed in the last two seconds

MOD=torch_fl.comm._nccl_ext._flagos_nccl
doctor() { run env "$@" "$CCLFORGE" doctor --libtorch "$site/torch" --no-nvidia --json; }
missing='any(f["id"] == "bridge-plugin-lib-missing" and f["severity"] == "warning" and f["subject"] == "'$MOD'" and "needs libcftest_rccl.so.1, which this host'"'"'s loader does not find (it looked in: " in f["why"] and "/lib/x86_64-linux-gnu/" in f["why"] and "LD_LIBRARY_PATH" in f["remedy"] for f in d["findings"])'
doctor
expect_json "$missing" "missing: the module, the library, where the loader looked and the fix"
expect_json 'any(l.startswith("'$MOD' ('"$site"'/torch_fl/comm/_nccl_ext/_flagos_nccl'$SFX')") for l in d["libtorch"][0]["bridge_plugins"])' "the plugin bridge is listed with its file"
expect_json 'len(d["libtorch"][0]["bridge_plugins"]) == 1 and not any("_other" in f["why"] for f in d["findings"])' "a module without make_nccl_backend is no plugin bridge"
expect_json 'sum(f["id"] == "bridge-plugin-lib-missing" for f in d["findings"]) == 1' "libc, which the host has, is no finding"
run env "$CCLFORGE" doctor --libtorch "$site/torch" --no-nvidia
expect_out "bridge-plugin-lib-missing" "the text report lists it"
doctor
expect_json "$missing" "warm run (the remembered walk): the same finding"
doctor LD_LIBRARY_PATH="$T/tk/lib"
expect_json 'not any(f["id"] == "bridge-plugin-lib-missing" for f in d["findings"]) and len(d["libtorch"][0]["bridge_plugins"]) == 1' "present through LD_LIBRARY_PATH: listed, no finding"
doctor ROCM_PATH="$T/tk"
expect_json 'any(f["id"] == "bridge-plugin-lib-missing" and "the toolkit ROCM_PATH names has it ('"$T"'/tk/lib/libcftest_rccl.so.1), off the loader'"'"'s path" in f["why"] for f in d["findings"])' "in the toolkit ROCM_PATH names, off the loader's path: said so"

# its own RUNPATH reaches the library: found
site2=$T/site2
mkdir -p "$site2/torch/lib" && : >"$site2/torch/__init__.py" && cp "$site/torch/lib/libtorch_cpu.so" "$site2/torch/lib/"
plugin "$site2" torch_fl/comm/_nccl_ext -Wl,-rpath,'$ORIGIN/../../../tk_libs'
mkdir -p "$site2/tk_libs" && cp "$T/tk/lib/libcftest_rccl.so.1" "$site2/tk_libs/"
run env "$CCLFORGE" doctor --libtorch "$site2/torch" --no-nvidia --json
expect_json 'not any(f["id"] == "bridge-plugin-lib-missing" for f in d["findings"]) and len(d["libtorch"][0]["bridge_plugins"]) == 1' "found through its own \$ORIGIN RUNPATH: no finding"
rm "$site2/tk_libs/libcftest_rccl.so.1"
run env "$CCLFORGE" doctor --libtorch "$site2/torch" --no-nvidia --json
expect_json 'any(f["id"] == "bridge-plugin-lib-missing" and "'"$site2"'/torch_fl/comm/_nccl_ext/../../../tk_libs/libcftest_rccl.so.1" in f["why"] for f in d["findings"])' "its RUNPATH directory emptied: missing, and the RUNPATH directory is among those looked in"

# ---- the real torch 2.15 site: what `import torch` maps is reused ----
rsite=$(bash "${CCLFORGE_SOURCE_DIR:?}/scripts/torch-cache.sh" 2>/dev/null | tail -n 1)
if [ -z "$rsite" ] || ! ls "$rsite"/torch/_C.*.so >/dev/null 2>&1; then
    t_skip_part "the real torch site (scripts/torch-cache.sh) is not available"
else
    site3=$T/site3
    mkdir -p "$site3" && ln -s "$rsite/torch" "$site3/torch"
    # NEEDED libc10.so without any RUNPATH, as a plain setup.py build links it: torch's import maps it first
    plugin "$site3" torch_fl/comm/_nccl_ext -L"$rsite/torch/lib" -lc10
    readelf -d "$site3/torch_fl/comm/_nccl_ext/_flagos_nccl$SFX" | grep -q 'NEEDED.*\[libc10\.so\]' \
        && ok "the stand-in module NEEDs libc10.so" || bad "the stand-in module NEEDs libc10.so"
    sleep 3
    run env "$CCLFORGE" doctor --libtorch "$site3/torch" --no-nvidia --json
    expect_json 'any(f["id"] == "bridge-plugin-lib-missing" and f["subject"] == "'$MOD'" and "needs libcftest_rccl.so.1" in f["why"] for f in d["findings"])' "real torch: the library the host lacks is a finding"
    expect_json 'not any(f["id"] == "bridge-plugin-lib-missing" and "libc10.so" in f["why"] for f in d["findings"])' "real torch: libc10.so, which \`import torch\` already mapped, is no finding"
    run env LD_LIBRARY_PATH="$T/tk/lib" "$CCLFORGE" doctor --libtorch "$site3/torch" --no-nvidia --json
    expect_json 'not any(f["id"] == "bridge-plugin-lib-missing" for f in d["findings"]) and len(d["libtorch"][0]["bridge_plugins"]) == 1' "real torch, library on LD_LIBRARY_PATH: no finding"
fi
t_end
