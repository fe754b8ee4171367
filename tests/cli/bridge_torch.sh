#!/usr/bin/env bash
# The bridge for real: the torch wheel from PyPI (CUDA build), fetched once into
# a cache by scripts/torch-cache.sh. NVIDIA: plan, compile, link, wheel, verify
# --install, import from the venv, make_nccl_backend raising without a GPU.
# DTK and ROCm: the same bridge source compiled against the same real torch
# headers with the HIP defines, linked against stub libc10_hip / libtorch_hip /
# librccl built here in the vendors' layouts. No GPU or DCU runs here.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
T=$T_TMP

site=$(bash "$SRC/scripts/torch-cache.sh" 2>"$T/torch-cache.log" | tail -n 1)
if [ -z "$site" ] || [ ! -d "$site/torch/include" ]; then
    cat "$T/torch-cache.log"
    echo "not ok - scripts/torch-cache.sh could not provide torch (PyPI needed once; see above)"
    exit 1
fi
cuda=${CUDA_HOME:-}
[ -n "$cuda" ] || cuda=$(dirname "$(dirname "$(command -v nvcc || echo /nonexistent/bin/nvcc)")")
if [ ! -f "$cuda/include/cuda_runtime_api.h" ]; then
    echo "not ok - no CUDA toolkit headers (set CUDA_HOME): the NVIDIA bridge cannot compile"
    exit 1
fi
export CUDA_HOME=$cuda
unset NCCL_HOME LIBTORCH ROCM_PATH

# ---- NVIDIA ------------------------------------------------------------------
run "$CCLFORGE" bridge plan --libtorch "$site/torch" --json
expect_rc 0 "plan against the real torch wheel"
expect_json 'd["plan"]["vendor"]["value"] == "nvidia" and "libtorch_cuda.so" in d["plan"]["vendor"]["from"]' "vendor detected from libtorch_cuda.so"
expect_json 'd["plan"]["torch"]["version"].startswith("2.") and d["plan"]["torch"]["cxx11_abi"] is True' "torch version and C++11 ABI read"
expect_json 'd["plan"]["comm_header"]["from"] == "pip'"'"'s nvidia/nccl beside torch" and d["plan"]["comm_header"]["version"]' "nccl.h from the NCCL wheel torch runs with"
expect_json '[r["value"] for r in d["plan"]["rpath"]] == ["$ORIGIN/../torch/lib", "$ORIGIN/../nvidia/nccl/lib"]' "RPATH is \$ORIGIN-relative only"
expect_json '[l["name"] for l in d["plan"]["libraries"]] == ["c10_cuda","torch_cuda","nccl","c10","torch","torch_cpu","torch_python"] and all(l["path"] for l in d["plan"]["libraries"])' "every library resolved to a file"

t0=$(date +%s)
run "$CCLFORGE" bridge wheel --libtorch "$site/torch" -o "$T/nv-build" --wheel-dir "$T/dist1"
expect_rc 0 "bridge wheel (compile + link + inspect + package) for NVIDIA"
echo "# nvidia compile+link+wheel: $(( $(date +%s) - t0 ))s"
so=$(ls "$T"/nv-build/cclforge_nccl_bridge/_cclforge_nccl*.so 2>/dev/null)
whl=$(ls "$T"/dist1/*.whl 2>/dev/null)
[ -n "$so" ] && [ -n "$whl" ] && ok "extension and wheel written" || bad "extension and wheel written"
OUT=$(readelf -d "$so" 2>&1); RC=0
expect_out 'PyInit|NEEDED.*libtorch_cuda.so' "links libtorch_cuda.so"
expect_out 'NEEDED.*\[libnccl.so.2\]' "links libnccl.so.2"
expect_no_out 'R(UN)?PATH.*\[/' "no absolute RPATH"
OUT=$(nm -D --defined-only "$so"); expect_out ' T PyInit__cclforge_nccl$' "PyInit__cclforge_nccl exported"

run "$CCLFORGE" bridge wheel -o "$T/nv-build" --wheel-dir "$T/dist2"
expect_rc 0 "second wheel from the same build"
cmp -s "$whl" "$T/dist2/$(basename "$whl")" && ok "the wheel is byte-identical (reproducible)" || bad "the wheel is byte-identical (reproducible)"
# a link planted where the wheel goes is refused, never written through
echo precious > "$T/victim"
mkdir -p "$T/dist3" && ln -s "$T/victim" "$T/dist3/$(basename "$whl")"
run "$CCLFORGE" bridge wheel -o "$T/nv-build" --wheel-dir "$T/dist3"
expect_rc 1 "a planted link at the wheel's path is refused"
expect_err "is a symbolic link: cclforge never writes through one" "and said"
[ "$(cat "$T/victim")" = precious ] && ok "the link's target is untouched" || bad "the wheel was written through the link"

export LD_LIBRARY_PATH="$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run "$CCLFORGE" wheel verify "$whl" --install --site "$site" --json
expect_rc 0 "verify --install: fresh venv, pip install --no-index, import"
expect_json 'd["module"] == "cclforge_nccl_bridge._cclforge_nccl" and "/venv/" in d["module_file"]' "imported from the venv, not the source tree"
expect_json 'any(c["name"] == "bridge" and c["status"] == "ok" and "raised RuntimeError" in c["detail"] and "no GPU" in c["detail"] for c in d["checks"])' "make_nccl_backend raises a clear Python exception without a GPU"
expect_json 'any(c["name"] == "abi" and c["status"] == "ok" and "ProcessGroupNCCL::Options is" in c["detail"] for c in d["checks"])' "the bridge measured libtorch's ProcessGroupNCCL::Options layout"
expect_json 'd["glibc_ceiling"] is not None and d["tags"]["platform"].startswith("manylinux_2_")' "manylinux tag from the glibc versions used"
echo "$OUT" | python3 -c 'import json,sys; [print("#   %-5s %-14s %s" % (c["status"], c["name"], c["detail"][:150])) for c in json.load(sys.stdin)["checks"]]' 2>/dev/null

run "$CCLFORGE" wheel verify "$whl" --smoke 2 --site "$site"
expect_rc 1 "--smoke 2 on a host without GPUs fails"
expect_out 'needs 2 GPUs, this host has 0 visible: the 2-rank run was NOT performed' "and says why"

# ---- DTK and ROCm: stub vendor libraries, the real torch headers -----------------
mk_stub() { # dir file soname [extra C]
    mkdir -p "$1"
    printf 'int cclforge_stub_%s(void) { return 0; }\n%s\n' "${2//[^a-z]/_}" "${4:-}" > "$T/stub.c"
    cc -shared -fPIC -Wl,-soname,"$3" -o "$1/$2" "$T/stub.c"
}
vendor_torch() { # site: torch headers and CPU libs from the wheel, HIP libs as stubs
    mkdir -p "$1/torch/lib"
    ln -s "$site/torch/include" "$1/torch/include"
    cp "$site/torch/version.py" "$1/torch/version.py"
    for l in libc10.so libtorch.so libtorch_cpu.so libtorch_python.so; do ln -s "$site/torch/lib/$l" "$1/torch/lib/$l"; done
    mk_stub "$1/torch/lib" libc10_hip.so libc10_hip.so
    mk_stub "$1/torch/lib" libtorch_hip.so libtorch_hip.so 'int _ZN4c10d16ProcessGroupNCCLD0Ev(void) { return 0; }'
}
hip_headers() { # root: what torch's headers name under USE_ROCM (see docs/bridge.md)
    mkdir -p "$1/include/hip" "$1/include/hipsolver" "$1/include/rccl"
    cat > "$1/include/hip/hip_runtime_api.h" <<'H'
#pragma once
typedef cudaStreamCaptureStatus hipStreamCaptureStatus;
#define hipStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define hipStreamGetCaptureInfo cudaStreamGetCaptureInfo
#define hipMemcpyWithStream cudaMemcpyAsync
#define hipErrorStreamCaptureUnsupported cudaErrorStreamCaptureUnsupported
H
    printf '#pragma once\n#include <hip/hip_runtime_api.h>\n' > "$1/include/hip/hip_runtime.h"
    printf '#pragma once\ntypedef enum { HIPSOLVER_STATUS_SUCCESS = 0 } hipsolverStatus_t;\n' > "$1/include/hipsolver/hipsolver.h"
    sed 's/NCCL_H_/RCCL_H_/' "$site/nvidia/nccl/include/nccl.h" > "$1/include/rccl/rccl.h"
    printf '#pragma once\n#include "rccl.h"\n' > "$1/include/rccl/nccl.h"
    mk_stub "$1/lib" librccl.so.1 librccl.so.1 '__attribute__((used)) const char rccl_banner[] = "RCCL version 2.18.3+hip6.2";'
}
cuda_compat() { # dir: CUDA-named headers whose runtime API also declares the HIP names
    mkdir -p "$1"
    for f in "$cuda"/include/*; do [ "$(basename "$f")" = cuda_runtime_api.h ] || ln -s "$f" "$1/$(basename "$f")"; done
    printf '#pragma once\n#include "%s/include/cuda_runtime_api.h"\n#include <hip/hip_runtime_api.h>\n' "$cuda" > "$1/cuda_runtime_api.h"
}
check_hip_build() { # vendor build-dir
    local so
    so=$(ls "$2"/cclforge_nccl_bridge/_cclforge_nccl*.so 2>/dev/null)
    [ -n "$so" ] || { bad "$1: extension built"; return; }
    local needed rpath
    needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v -E '^(libstdc\+\+\.so\.6|libgcc_s\.so\.1|libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2)$' | sort | tr '\n' ' ')
    [ "$needed" = "libc10.so libc10_hip.so librccl.so.1 libtorch.so libtorch_cpu.so libtorch_hip.so libtorch_python.so " ] \
        && ok "$1: NEEDED is exactly c10_hip torch_hip rccl + c10 torch torch_cpu torch_python" \
        || { OUT=$needed; RC=0; bad "$1: NEEDED is exactly the HIP set"; }
    rpath=$(readelf -d "$so" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
    case ":$rpath:" in
        *:/*) OUT=$rpath; RC=0; bad "$1: RPATH \$ORIGIN-relative only" ;;
        *) [ -n "$rpath" ] && ok "$1: RPATH \$ORIGIN-relative only ($rpath)" || bad "$1: RPATH present" ;;
    esac
    nm -D --defined-only "$so" | grep -q ' T PyInit__cclforge_nccl$' && ok "$1: PyInit exported" || bad "$1: PyInit exported"
}

dtk=$T/dtk-24.04
hip_headers "$dtk"
cuda_compat "$dtk/cuda/cuda-13/include"
vendor_torch "$T/dtk-site"
t0=$(date +%s)
run env ROCM_PATH="$dtk" "$CCLFORGE" bridge build --libtorch "$T/dtk-site/torch" --bundle "$dtk/lib/librccl.so.1" -o "$T/dtk-build"
expect_rc 0 "DTK: the real bridge source compiles against the real torch headers with HIP defines and links"
echo "# dtk compile+link: $(( $(date +%s) - t0 ))s"
check_hip_build dtk "$T/dtk-build"
grep -q -- '-DUSE_ROCM' "$T/dtk-build/build.log" 2>/dev/null || true
run env ROCM_PATH="$dtk" "$CCLFORGE" bridge plan --libtorch "$T/dtk-site/torch" --bundle "$dtk/lib/librccl.so.1" --json
expect_json 'd["plan"]["vendor"]["value"] == "dtk" and "__HIP_PLATFORM_AMD__=1" in [x["value"] for x in d["plan"]["defines"]] and "USE_ROCM" in [x["value"] for x in d["plan"]["defines"]]' "DTK: vendor detected, HIP defines planned"
expect_json '[x["value"] for x in d["plan"]["includes"]][2:5] == ["'"$dtk"'/include", "'"$dtk"'/include/rccl", "'"$dtk"'/cuda/cuda-13/include"]' "DTK: include roots <root>/include, include/rccl, cuda/cuda-*/include"
run "$CCLFORGE" bridge wheel -o "$T/dtk-build" --wheel-dir "$T/dtk-dist"
expect_rc 0 "DTK: wheel with the bundled librccl"
run "$CCLFORGE" wheel verify "$(ls "$T"/dtk-dist/*.whl)" --site "$T/dtk-site"
expect_rc 0 "DTK: wheel verifies (bundled rccl in the wheel, torch libs on the declared torch/lib)"
expect_out 'ok +needed' "DTK: NEEDED resolved"

rocm=$T/rocm-6.2
hip_headers "$rocm"
cuda_compat "$T/cuda-compat"
vendor_torch "$T/rocm-site"
t0=$(date +%s)
# links planted at the old fixed names of the object file and the log: not followed
mkdir -p "$T/rocm-build"
ln -s "$T/victim" "$T/rocm-build/_cclforge_nccl.o"
ln -s "$T/victim" "$T/rocm-build/build.log"
run "$CCLFORGE" bridge build --vendor rocm --toolkit "$rocm" --libtorch "$T/rocm-site/torch" --include "$T/cuda-compat" --bundle "$rocm/lib/librccl.so.1" -o "$T/rocm-build"
expect_rc 0 "ROCm: the real bridge source compiles with HIP defines and links"
echo "# rocm compile+link: $(( $(date +%s) - t0 ))s"
check_hip_build rocm "$T/rocm-build"
[ "$(cat "$T/victim")" = precious ] && ok "ROCm: the planted object and log links were not written through" || bad "ROCm: wrote through a planted link"

t_end
