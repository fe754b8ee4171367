#!/usr/bin/env bash
# The bridge inside a plugin's own package (tests/fixtures/host_project: a
# setuptools package with pkg/lib_vendor/ and pkg/comm/_ext/), built by
# `pip wheel`, installed in a fresh venv and imported from there as
# pkg.comm._ext._flagos_nccl, with no source checkout on the path:
#  - NVIDIA, for real against PyPI's torch: `bridge build --into` the source
#    tree, then pip wheel; and grafted into a wheel pip built without it;
#  - DTK and ROCm: vendor libraries compiled here from C++ sources that declare
#    torch's real signatures and export what hipified libc10_hip / libtorch_hip
#    / librccl export for the bridge (c10::hip::device_count, the
#    ProcessGroupNCCL and Options constructors, ncclGetVersion) and nothing
#    CUDA-named, under CUDA-named torch headers (the CPU torch's) with the
#    validated DCU define set; a bridge that asks for c10::cuda::device_count
#    fails the link check. The torch imported is the CUDA wheel standing in for
#    the plugin's CPU torch (PyPI has no CPU-only x86-64 torch). No DCU here.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
T=$T_TMP
export CCLFORGE_HOME=${CCLFORGE_TEST_HOME:-$HOME/.cache/cclforge/test-home}
FIX=$SRC/tests/fixtures

t_torch_inputs
pybuild=$(bash "$SRC/scripts/pybuild-cache.sh" 2>"$T/pybuild.log" | tail -n 1)
[ -x "$pybuild" ] || { cat "$T/pybuild.log"; t_skip "no Python build environment (setuptools, wheel from PyPI, needed once)"; }
t_cuda_libs

host_tree() { # DIR: a fresh copy of the host project
    rm -rf "$1"; cp -r "$FIX/host_project" "$1"
}
pip_wheel() { # PROJECT OUT: the project's own build, offline, no build isolation
    "$pybuild" -m pip wheel --quiet --no-deps --no-build-isolation --disable-pip-version-check -w "$2" "$1" >"$T/pip.log" 2>&1 \
        || { cat "$T/pip.log"; return 1; }
    ls "$2"/cf_host_plugin-*.whl
}
verify_import() { # WHEEL LABEL [extra args]: installed, imported from the venv
    local whl=$1 label=$2; shift 2
    run "$CCLFORGE" wheel verify "$whl" --install --site "$site" "$@" --json
    expect_rc 0 "$label: wheel verify --install $*"
    expect_json 'any(c["name"] == "import" and c["status"] == "ok" and "pkg.comm._ext._flagos_nccl" in c["detail"] and "/venv/lib/" in c["detail"] for c in d["checks"])' "$label: pkg.comm._ext._flagos_nccl imported from the installed wheel"
    expect_json 'any(c["name"] == "abi" and c["status"] == "ok" for c in d["checks"])' "$label: abi_info agrees with the libtorch the import mapped"
    expect_json 'any(c["name"] == "bridge" and c["status"] == "ok" and "no GPU" in c["detail"] for c in d["checks"])' "$label: make_nccl_backend raises without a GPU"
    echo "$OUT" | python3 -c 'import json,sys; [print("#   %-5s %-14s %s" % (c["status"], c["name"], c["detail"][:140])) for c in json.load(sys.stdin)["checks"]]' 2>/dev/null
}

# ---- NVIDIA: built into the source tree, then the plugin's own wheel ---------
host_tree "$T/nv"
run "$CCLFORGE" bridge build --libtorch "$site/torch" --package pkg.comm._ext --name _flagos_nccl --into "$T/nv" -o "$T/nv-build"
expect_rc 0 "nvidia: bridge build --into the source tree"
expect_out "placed at $T/nv/pkg/comm/_ext/_flagos_nccl" "placed at its package path"
so=$(ls "$T"/nv/pkg/comm/_ext/_flagos_nccl*.so 2>/dev/null)
OUT=$(readelf -d "$so" 2>&1); RC=0
expect_out 'RPATH.*\$ORIGIN/../../../torch/lib:\$ORIGIN/../../../nvidia/nccl/lib' "RPATH climbs the three package levels to site-packages"
whl=$(pip_wheel "$T/nv" "$T/nv-dist") && ok "nvidia: pip wheel of the host project" || bad "nvidia: pip wheel of the host project"
case $whl in *-cp311-*|*-cp3*-cp3*-linux_*|*manylinux*) ok "nvidia: a platform wheel ($(basename "$whl"))" ;; *) bad "nvidia: a platform wheel ($whl)" ;; esac
verify_import "$whl" "nvidia --into" --external torch/lib --external nvidia/nccl/lib

# ---- NVIDIA: grafted into the wheel pip built without it ----------------------
host_tree "$T/pure"
pure=$(pip_wheel "$T/pure" "$T/pure-dist") && ok "a pure wheel of the host project" || bad "a pure wheel of the host project"
case $pure in *-py3-none-any.whl) ok "it is py3-none-any" ;; *) bad "it is py3-none-any ($pure)" ;; esac
run "$CCLFORGE" wheel graft "$pure" "$so" --at pkg/comm/_ext -o "$T/grafted" --json
expect_rc 0 "wheel graft the built extension at pkg/comm/_ext"
expect_json 'd["module"] == "pkg.comm._ext._flagos_nccl" and d["tag"].startswith("cp3") and "manylinux" in d["tag"] and d["added"] == ["pkg/comm/_ext/'"$(basename "$so")"'"]' "graft: cp tags, manylinux platform, the module named"
graft=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["wheel"])')
run "$CCLFORGE" wheel graft "$pure" "$so" --at pkg/comm/_ext -o "$T/grafted2"
cmp -s "$graft" "$T/grafted2/$(basename "$graft")" && ok "graft is reproducible (byte-identical)" || bad "graft is reproducible"
python3 - "$graft" <<'PY' && ok "graft: RECORD lists every member with its sha256, WHEEL says Root-Is-Purelib false" || bad "graft: RECORD and WHEEL"
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = [i.filename for i in z.infolist()]
record = [n for n in names if n.endswith(".dist-info/RECORD")][0]
assert names[-1] == record, names
rows = {r[0]: r for r in csv.reader(io.StringIO(z.read(record).decode()))}
for n in names:
    if n == record:
        continue
    h = base64.urlsafe_b64encode(hashlib.sha256(z.read(n)).digest()).rstrip(b"=").decode()
    assert rows[n][1] == "sha256=" + h and int(rows[n][2]) == len(z.read(n)), n
wheel = z.read([n for n in names if n.endswith(".dist-info/WHEEL")][0]).decode()
assert "Root-Is-Purelib: false" in wheel, wheel
PY
verify_import "$graft" "nvidia graft"
run "$CCLFORGE" wheel graft "$pure" "$so" --at ../escape
expect_rc 2 "graft --at outside the wheel is a usage error"
run "$CCLFORGE" wheel graft "$T/nowhere-0.1-py3-none-any.whl" "$so" --at pkg
expect_rc 1 "graft of a wheel that is not there"
expect_err "nowhere-0.1-py3-none-any.whl" "names it"

# ---- DTK and ROCm: the vendor libraries of a hipified libtorch ---------------
read -r opt_size pg_size < <("$CCLFORGE" bridge plan --libtorch "$site/torch" --json | python3 -c 'import json,sys; a=json.load(sys.stdin)["plan"]["libtorch_abi"]; print(a["options_size"], a["process_group_size"])')
vendor_libs() { # DIR: libc10_hip, libtorch_hip, librccl (RCCL 2.24.3: torch 2.15 wants NCCL >= 2.23) and a vendor libc10.so
    mkdir -p "$1"
    g++ -O2 -shared -fPIC -Wl,-soname,libc10_hip.so -o "$1/libc10_hip.so" "$FIX/vendor_hip/c10_hip.cpp"
    g++ -O2 -shared -fPIC -Wl,-soname,libtorch_hip.so -DOPTIONS_SIZE="$opt_size" -DPG_SIZE="$pg_size" -DNCCL_CODE=22403 \
        -o "$1/libtorch_hip.so" "$FIX/vendor_hip/torch_hip.cpp" -L"$1" -Wl,--no-as-needed -lc10_hip -Wl,-rpath,'$ORIGIN'
    g++ -O2 -shared -fPIC -Wl,-soname,librccl.so.1 -DNCCL_CODE=22403 '-DRCCL_VERSION_TEXT="2.24.3"' \
        -o "$1/librccl.so.1" "$FIX/vendor_hip/rccl.cpp"
    # the vendor ships its own libc10 too (a stand-in: at import the CPU torch's wins)
    printf 'extern "C" int cclforge_vendor_c10() { return 0; }\n' > "$1/c10.cpp"
    g++ -O2 -shared -fPIC -Wl,-soname,libc10.so -o "$1/libc10.so" "$1/c10.cpp" && rm -f "$1/c10.cpp"
}
hip_root() { # ROOT: include/rccl/{rccl,nccl}.h (RCCL 2.24.3's version, the wheel's layout), include/hip, lib/
    mkdir -p "$1/include/hip" "$1/include/rccl"
    sed 's/NCCL_H_/RCCL_H_/; s/#define NCCL_MINOR 30/#define NCCL_MINOR 24/; s/#define NCCL_PATCH 7/#define NCCL_PATCH 3/; s/#define NCCL_VERSION_CODE 23007/#define NCCL_VERSION_CODE 22403/' \
        "$site/nvidia/nccl/include/nccl.h" > "$1/include/rccl/rccl.h"
    printf '#pragma once\n#include "rccl.h"\n' > "$1/include/rccl/nccl.h"
    printf '#pragma once\n#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 2\n#define HIP_VERSION_PATCH 41133\n' > "$1/include/hip/hip_runtime.h"
    mkdir -p "$1/lib"
}
cuda_compat() { # DIR [no-nccl]: CUDA-compatible headers: the toolkit's (DTK's copy keeps its nccl.h 2.28)
    mkdir -p "$1"
    for f in "$cuda"/include/*; do [ -n "${2:-}" ] && [ "${f##*/}" = nccl.h ] && continue; ln -s "$f" "$1/${f##*/}"; done
}
hip_case() { # VENDOR ROOT [SMOKE]: build into a host tree, pip wheel, verify (and the gloo smoke)
    local v=$1 root=$2 smoke=${3:-} tree=$T/$1-host
    host_tree "$tree"
    vendor_libs "$tree/pkg/lib_vendor"
    local extra=()
    [ "$v" = rocm ] && extra=(--include "$compat")
    local t0; t0=$(date +%s)
    run "$CCLFORGE" bridge build --vendor "$v" --toolkit "$root" --torch-headers "$site/torch" --package pkg.comm._ext \
        --name _flagos_nccl --rpath '$ORIGIN/../../lib_vendor' --into "$tree" -o "$T/$v-build" "${extra[@]}"
    expect_rc 0 "$v: bridge build --into with the vendor libraries of pkg/lib_vendor"
    echo "# $v build: $(( $(date +%s) - t0 ))s"
    expect_out 'ok: _ZN3c103hip12device_countEv from libc10_hip.so' "$v: the device count by c10::hip::, from libc10_hip.so"
    expect_out 'ok: NEEDED librccl.so.1 -> site-packages/pkg/lib_vendor/librccl.so.1' "$v: librccl.so.1 from the vendor directory"
    expect_out 'ok: _ZN4c10d16ProcessGroupNCCL7OptionsC1Eb from libtorch_hip.so' "$v: Options(bool) from libtorch_hip.so"
    expect_out 'NEEDED libtorch_hip.so -> site-packages/pkg/lib_vendor/libtorch_hip.so' "$v: libtorch_hip.so through \$ORIGIN/../../lib_vendor"
    expect_out 'libc10.so is in both .*lib_vendor/libc10.so and .*torch/lib/libc10.so; at import the loader uses site-packages/torch/lib/libc10.so' "$v: libc10.so in both: the importing torch's is used"
    local so; so=$(ls "$tree"/pkg/comm/_ext/_flagos_nccl*.so 2>/dev/null)
    local needed; needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v -E '^(libstdc\+\+\.so\.6|libgcc_s\.so\.1|libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2)$' | sort | tr '\n' ' ')
    [ "$needed" = "libc10.so libc10_hip.so librccl.so.1 libtorch.so libtorch_cpu.so libtorch_hip.so libtorch_python.so " ] \
        && ok "$v: NEEDED is exactly c10_hip torch_hip rccl + c10 torch torch_cpu torch_python" \
        || { OUT=$needed; RC=0; bad "$v: NEEDED is exactly the HIP set"; }
    OUT=$(nm -D --undefined-only "$so"); RC=0
    expect_out '_ZN3c103hip12device_countEv' "$v: asks for c10::hip::device_count"
    expect_no_out '_ZN3c104cuda' "$v: asks for nothing in c10::cuda::"
    local whl; whl=$(pip_wheel "$tree" "$T/$v-dist") && ok "$v: pip wheel" || bad "$v: pip wheel"
    if [ -z "$smoke" ]; then
        verify_import "$whl" "$v" --external torch/lib
        return
    fi
    # one install serves the import, abi and bridge checks and the 2-rank run
    verify_import "$whl" "$v" --external torch/lib --smoke 2 --backend gloo
    expect_json 'any(c["name"] == "smoke" and c["status"] == "ok" for c in d["checks"]) and "RANK_PASS rank=1 local_rank=1 value=3.0" in d["smoke"]' "$v: gloo smoke through pkg.comm._ext._flagos_nccl from the installed plugin wheel (RANK_PASS rank=1 local_rank=1 value=3.0)"
    expect_smoke_items 2 gloo "$v"
}

# The DTK and ROCm roots (and the CUDA-compatible headers) at stable paths
# under the cclforge home, made once: the object cache keys a compile by its
# include paths, so the next run (the ASan suite's) reuses these compiles.
fixture_roots() {
    local key base tmp
    key=$({ echo "v1 $cuda"; sha256sum <"$site/nvidia/nccl/include/nccl.h"; } | sha256sum | cut -c1-16)
    base=$CCLFORGE_HOME/fixtures/bridge_host-$key
    if [ ! -d "$base" ]; then
        mkdir -p "$CCLFORGE_HOME/fixtures"
        tmp=$(mktemp -d "$CCLFORGE_HOME/fixtures/.bridge_host-XXXXXX")
        hip_root "$tmp/dtk-24.04"
        cuda_compat "$tmp/dtk-24.04/cuda/cuda-12/include"
        mkdir -p "$tmp/dtk-24.04/cuda/cuda-9/include" # older, must come after cuda-12
        : > "$tmp/dtk-24.04/cuda/cuda-9/include/cuda_runtime_api.h"
        hip_root "$tmp/rocm-6.2"
        cuda_compat "$tmp/cuda-compat" no-nccl
        mv -T "$tmp" "$base" 2>/dev/null || rm -rf "$tmp" # another run made it first
    fi
    dtk=$base/dtk-24.04 rocm=$base/rocm-6.2 compat=$base/cuda-compat
}

fixture_roots
vendor_libs "$T/dtk-vendor"
run env DTK_HOME="$dtk" "$CCLFORGE" bridge plan --torch-headers "$site/torch" --vendor-libs "$T/dtk-vendor" --json
expect_rc 0 "dtk: plan from DTK_HOME, CPU torch headers, the vendor directory"
expect_json 'd["plan"]["vendor"]["value"] == "dtk" and d["plan"]["toolkit_root"]["from"] == "DTK_HOME"' "dtk: vendor from libtorch_hip.so and DTK_HOME"
expect_json 'd["plan"]["define_set"]["name"] == "validated DCU set" and set(x["value"] for x in d["plan"]["defines"]) >= {"USE_C10D_NCCL", "C10_CUDA_NO_CMAKE_CONFIGURE_FILE"} and not any(x["value"].startswith(("USE_ROCM", "__HIP_PLATFORM")) for x in d["plan"]["defines"])' "dtk: the validated define set over CUDA-named headers"
expect_json '[x["value"] for x in d["plan"]["includes"]][:4] == ["'"$dtk"'/include/rccl", "'"$dtk"'/cuda/cuda-12/include", "'"$dtk"'/cuda/cuda-9/include", "'"$dtk"'/include"]' "dtk: include/rccl, cuda-12 before cuda-9, include, then torch's"
expect_json 'd["plan"]["proof"]["headers"]["nccl.h"]["path"] == "'"$dtk"'/include/rccl/nccl.h" and d["plan"]["proof"]["headers"]["nccl.h"]["version"] == "2.24.3" and d["plan"]["nccl_versions"]["library"]["value"] == "2.24.3" and d["plan"]["nccl_versions"]["libtorch"]["value"] == "2.24.3"' "dtk: nccl.h resolves to include/rccl (not cuda-12's 2.28 copy); RCCL 2.24.3 linked and in libtorch_hip"
hip_case dtk "$dtk" smoke
hip_case rocm "$rocm"

# ---- the link check: a bridge that asks for c10::cuda::device_count ---------
cat > "$T/asks_cuda.cpp" <<'CPP'
// The bridge's mistake, in small: the CUDA name for the device count (in
// make_nccl_backend, which makes it a bridge source).
#include <nccl.h>
#include <c10/cuda/CUDAFunctions.h>
#include <Python.h>
static long make_nccl_backend() { return c10::cuda::device_count() + ncclGetVersion(nullptr); }
extern "C" __attribute__((visibility("default"))) PyObject *PyInit__flagos_nccl()
{
    return PyLong_FromLong(make_nccl_backend());
}
CPP
host_tree "$T/neg"
vendor_libs "$T/neg/pkg/lib_vendor"
run "$CCLFORGE" bridge build --vendor dtk --toolkit "$dtk" --torch-headers "$site/torch" --package pkg.comm._ext \
    --name _flagos_nccl --rpath '$ORIGIN/../../lib_vendor' --into "$T/neg" -o "$T/neg-build" --source "$T/asks_cuda.cpp"
expect_rc 1 "a DTK bridge asking for c10::cuda::device_count fails its check"
expect_err '_ZN3c104cuda12device_countEv \(c10::cuda::\) is defined at import by site-packages/torch/lib/libc10_cuda.so, not by libc10_hip.so' "it names the symbol, where it would come from and the library expected to define it"

t_end
