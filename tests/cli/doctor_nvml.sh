# cclforge doctor's NVML checks against a libnvidia-ml.so.1 built here from
# NVIDIA's real nvml.h (tests/fixtures/nvml_fixture.c; the header from the CUDA
# toolkit, else NVIDIA's nvidia-nvml-dev wheel via scripts/nvml-cache.sh), loaded
# by doctor's own dlopen("libnvidia-ml.so.1") through LD_LIBRARY_PATH, as any
# program finds it. Each finding: NVLinks down, uncorrected ECC errors, retired
# pages and remapped rows pending or failed, throttle reasons, MIG on or pending;
# an NVML call that fails, a GPU that is lost and an NVML that does not start are
# findings, never a silent pass. NVLink peers: what each active link reaches,
# and the topology page over tests/fixtures/topology_fixture.sh's 8-GPU host
# drawn from them (a DGX-1V's mesh must give nvidia-smi topo -m's matrix; an
# HGX H100's NVSwitches NV18). No real GPU or driver is involved.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
CC=${CC:-cc}
inc=$(bash "$SRC/scripts/nvml-cache.sh" 2>"$T_TMP/nvml-cache.log" | tail -n 1)
if [ -z "$inc" ] || [ ! -f "$inc/nvml.h" ]; then
    cat "$T_TMP/nvml-cache.log"
    t_skip "no NVIDIA nvml.h here (no cuda-nvml-dev, and nvidia-nvml-dev could not be fetched from PyPI): the NVML checks did not run"
fi
echo "# nvml.h from $inc"
L=$T_TMP/nvml
mkdir -p "$L"
if ! "$CC" -Wall -Wextra -Werror -shared -fPIC -I"$inc" -o "$L/libnvidia-ml.so.1" "$SRC/tests/fixtures/nvml_fixture.c" \
    -Wl,-soname,libnvidia-ml.so.1 2>"$T_TMP/cc.log"; then
    cat "$T_TMP/cc.log"
    echo "not ok - the NVML fixture does not compile against $inc/nvml.h"
    exit 1
fi

# the header's #defines give the versioned names the real library exports
OUT=$(nm -D --defined-only "$L/libnvidia-ml.so.1" | awk '{print $3}'); RC=0; ERR=
for sym in nvmlInit_v2 nvmlDeviceGetCount_v2 nvmlDeviceGetHandleByIndex_v2 nvmlDeviceGetPciInfo_v3; do
    expect_out "^$sym\$" "the fixture exports $sym (nvml.h's name for it)"
done
expect_no_out '^(nvmlInit|nvmlDeviceGetCount|nvmlDeviceGetHandleByIndex)$' "and not the unversioned names"

D=("$CCLFORGE" doctor --no-python)
has() { # has ID SUBJECT-PREFIX [TEXT]: a finding with that id, subject and text in its why
    printf 'any(f["id"]=="%s" and f["subject"].startswith("%s") and "%s" in f["why"] for f in d["findings"])' "$1" "$2" "${3:-}"
}
run env LD_LIBRARY_PATH="$L" "${D[@]}" --json
expect_rc 1 "GPU faults are errors: exit 1"
expect_json 'd["fabric"]["nvml_ok"] and d["fabric"]["nvml_note"]=="driver 580.65.06" and len(d["fabric"]["nvml"])==6' "NVML loaded and initialised, six GPUs read"
expect_json '[g["bdf"] for g in d["fabric"]["nvml"]][:5]==["0000:03:00.0","0000:81:00.0","0000:c1:00.0","0001:02:00.0","0000:e1:00.0"]' "bus ids from nvmlDeviceGetPciInfo_v3 as sysfs writes them (the header's nvmlPciInfo_t layout)"
expect_json "$(has nvlink-down "GPU 0 NVIDIA H100" "2 of 18 NVLinks are inactive")" "two NVLinks of 18 down"
expect_json '[(g["nvlinks_active"], g["nvlink_version"]) for g in d["fabric"]["nvml"]][:4]==[(16,6),(6,2),(12,4),(0,0)]' "each GPU's NVLink version (nvmlNvlinkVersion_t: 4.0, 2.0, 3.0), none without NVLinks"
expect_json '[(p["bdf"], p["type"], p["links"]) for p in d["fabric"]["nvml"][0]["nvlink_peers"]]==[("0000:05:00.0","switch",4),("0000:06:00.0","switch",3),("0000:15:00.0","switch",4),("0000:16:00.0","switch",5)]' "the H100's 16 active NVLinks by the NVSwitch each reaches (nvmlDeviceGetNvLinkRemotePciInfo_v2), its two down links counted nowhere"
expect_json 'not d["fabric"]["nvml"][1].get("nvlink_peers") and not any("RemotePciInfo" in e for g in d["fabric"]["nvml"] for e in g.get("errors") or [])' "a GPU whose NVML cannot name the far ends (not supported) has none, and no error"
expect_json "$(has gpu-ecc-uncorrected "GPU 0 " "2 uncorrected ECC errors")" "uncorrected volatile ECC errors are an error"
expect_json 'any(f["id"]=="gpu-ecc-uncorrected" and f["severity"]=="error" for f in d["findings"])' "with severity error"
expect_json "$(has gpu-throttled "GPU 0 " "hw_slowdown, sw_thermal (reasons 0x29)")" "HW slowdown and SW thermal named; the idle bit is not"
expect_json "$(has gpu-memory-repair "GPU 1 Tesla V100" "a memory repair is pending; retired pages: 2 single-bit, 1 double-bit")" "retired pages pending a reset (pre-Ampere)"
expect_json "$(has gpu-memory-repair "GPU 2 " "row remapping failed; remapped rows: 0 correctable, 3 uncorrectable")" "a failed row remap (Ampere+)"
expect_json 'any(f["id"]=="gpu-memory-repair" and f["subject"].startswith("GPU 2 ") and f["severity"]=="error" for f in d["findings"])' "is an error"
expect_json "$(has gpu-mig-enabled "GPU 2 ")" "MIG enabled"
expect_json "$(has gpu-mig-pending "GPU 3 " "current 0, after reset 1")" "a MIG change pending"
expect_json "$(has nvml-error "GPU 3 NVIDIA A100-PCIE-40GB (0001:02:00.0)" "nvmlDeviceGetTotalEccErrors: Unknown Error")" "an NVML call that fails is a finding"
expect_json 'len([f for f in d["findings"] if f["id"]=="nvml-error" and f["subject"].startswith("GPU 3 ")])==1' "once, however often the call is made"
expect_json "$(has nvml-error "GPU 5" "nvmlDeviceGetHandleByIndex_v2: GPU is lost")" "a GPU that fell off the bus is a finding"
expect_json 'not any(f["subject"].startswith("GPU 4 ") for f in d["findings"])' "the healthy GPU (application clocks, idle) has nothing to say"
expect_json 'not any(f["subject"].startswith("GPU 1 ") and f["id"] in ("nvlink-down","gpu-throttled","gpu-mig-enabled") for f in d["findings"])' "six active NVLinks and no throttling on GPU 1: silent"
run env LD_LIBRARY_PATH="$L" "${D[@]}" --json --save "$T_TMP/nvml.json"
run "$CCLFORGE" doctor --survey "$T_TMP/nvml.json" --no-python --no-nvidia --json
expect_json 'd["fabric"]["nvml"][2]["remap_failure"]==1 and d["fabric"]["nvml"][3]["errors"]==["nvmlDeviceGetTotalEccErrors: Unknown Error"]' "the NVML readings survive a save and reload"
expect_json "$(has gpu-memory-repair "GPU 2 " "row remapping failed")" "and give the same findings from the saved report"
run env LD_LIBRARY_PATH="$L" "${D[@]}"
expect_out "NVML: ok: driver 580.65.06" "the text report says NVML was read"

# ---- NVLink peers drawn: doctor --report over the two-socket, 8-GPU sysfs tree ----
. "$SRC/tests/fixtures/topology_fixture.sh"
topology_fixture "$T_TMP/fx"
# matrix FILE: the page's GPU x GPU classes, a line per GPU (as nvidia-smi topo -m)
matrix() {
    python3 - "$1" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
m = {(a, b): c for a, b, c in re.findall(r'<td[^>]*data-a="GPU(\d)"[^>]*data-b="GPU(\d)"[^>]*data-cls="([^"]*)"', h)}
print("\n".join(" ".join(m.get((str(i), str(j)), "?") for j in range(8)) for i in range(8)))
PY
}
# nvidia-smi topo -m on a DGX-1V: the hybrid cube-mesh of its eight V100s
DGX1="X NV1 NV1 NV2 NV2 SYS SYS SYS
NV1 X NV2 NV1 SYS NV2 SYS SYS
NV1 NV2 X NV2 SYS SYS NV1 SYS
NV2 NV1 NV2 X SYS SYS SYS NV1
NV2 SYS SYS SYS X NV1 NV1 NV2
SYS NV2 SYS SYS NV1 X NV2 NV1
SYS SYS NV1 SYS NV1 NV2 X NV2
SYS SYS SYS NV1 NV2 NV1 NV2 X"
run env LD_LIBRARY_PATH="$L" NVML_FIXTURE=dgx1 "${D[@]}" --sysfs-root "$T_TMP/fx" --report "$T_TMP/dgx1.html" --json
expect_json '[(p["bdf"], p["type"], p["links"]) for p in d["fabric"]["nvml"][0]["nvlink_peers"]]==[("0000:04:00.0","gpu",1),("0000:13:00.0","gpu",1),("0000:14:00.0","gpu",2),("0000:83:00.0","gpu",2)]' "a DGX-1V's GPU0: its six NVLinks to four GPUs"
printf '%s\n' "$OUT" >"$T_TMP/dgx1.json"
got=$(matrix "$T_TMP/dgx1.html")
[ "$got" = "$DGX1" ] && ok "the page's matrix is nvidia-smi topo -m's on a DGX-1V (NV1, NV2 over the PCIe classes; SYS where no NVLink)" \
    || bad "the DGX-1V matrix differs: $got"
grep -q 'data-nvlinks="16"' "$T_TMP/dgx1.html" && ok "16 NVLink bonds drawn, each once though both GPUs list it" || bad "not 16 bonds: $(grep -o 'data-nvlinks="[0-9]*"' "$T_TMP/dgx1.html")"
grep -q "far ends NVML does not name" "$T_TMP/dgx1.html" && bad "the page says NVML named no far ends" || ok "and no note that NVLink peers are unknown"
run "$CCLFORGE" report -o "$T_TMP/dgx1-remade.html" "$T_TMP/dgx1.json"
[ "$(matrix "$T_TMP/dgx1-remade.html")" = "$DGX1" ] && ok "the page remade from the saved JSON has the same matrix" || bad "the remade matrix differs"
run env LD_LIBRARY_PATH="$L" NVML_FIXTURE=hgx "${D[@]}" --sysfs-root "$T_TMP/fx" --report "$T_TMP/hgx.html"
got=$(matrix "$T_TMP/hgx.html")
[ "$(printf '%s\n' "$got" | grep -o 'NV18' | wc -l)" = 42 ] && [ "$(printf '%s\n' "$got" | grep -o 'NV17' | wc -l)" = 14 ] \
    && ok "an HGX H100: GPU pairs on the NVSwitches are NV18, and NV17 with GPU7, one of whose links is down" || bad "the HGX matrix: $got"
[ "$(grep -c 'data-kind="nvswitch"' "$T_TMP/hgx.html")" -ge 1 ] && [ "$(grep -o '<g data-link="nvlink"[^>]*data-b="nvswitch"[^>]*data-count="18"' "$T_TMP/hgx.html" | wc -l)" = 7 ] \
    && ok "one NVSwitch drawn, each GPU's four switches' links summed into its bond (18, 17 for GPU7)" || bad "the NVSwitch bonds are not drawn as summed"

# NVML that does not start: a finding wherever NVIDIA GPUs are, never a pass
run env LD_LIBRARY_PATH="$L" NVML_FIXTURE=init-fails "${D[@]}" --json
expect_json 'not d["fabric"]["nvml_ok"] and d["fabric"]["nvml_note"]=="nvmlInit_v2 failed: Driver Not Loaded"' "nvmlInit_v2's error is kept"
expect_json 'any(f["id"]=="nvml-unavailable" for f in d["findings"]) == any(g["vendor"]=="nvidia" for g in d["gpus"])' "nvml-unavailable exactly when this host has NVIDIA GPUs"
cuda_h=
t_find_cuda && cuda_h=$T_CUDA/include/cuda.h
if [ -f "$cuda_h" ]; then
    # a driver API with one NVIDIA GPU, built from the toolkit's real cuda.h
    cat >"$T_TMP/cuda.c" <<'C'
#include <cuda.h>
#include <stdio.h>
CUresult cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int i) { if (i) return CUDA_ERROR_INVALID_DEVICE; *d = 0; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *b, int len, CUdevice d) { (void)d; snprintf(b, (size_t)len, "NVIDIA H100 80GB HBM3"); return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    (void)d;
    if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *v = 9;
    else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *v = 0;
    else return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *b, CUdevice d) { (void)d; *b = (size_t)80 << 30; return CUDA_SUCCESS; }
C
    "$CC" -shared -fPIC -I"$(dirname "$cuda_h")" -o "$L/libcuda.so.1" "$T_TMP/cuda.c" -Wl,-soname,libcuda.so.1
    for scenario in init-fails count-fails; do
        run env LD_LIBRARY_PATH="$L" NVML_FIXTURE=$scenario PATH=/usr/bin:/bin "${D[@]}" --json
        expect_rc 1 "$scenario with an NVIDIA GPU: exit 1"
        expect_json 'any(f["id"]=="nvml-unavailable" and f["severity"]=="error" for f in d["findings"])' "$scenario with an NVIDIA GPU is an error (ECC, NVLink, throttling unchecked)"
    done
    expect_json 'd["fabric"]["nvml_note"]=="nvmlDeviceGetCount_v2 failed: Unknown Error"' "nvmlDeviceGetCount_v2's error is kept"
else
    echo "# no cuda.h ($cuda_h): the NVML-fails-with-an-NVIDIA-GPU cases did not run"
fi
t_end
