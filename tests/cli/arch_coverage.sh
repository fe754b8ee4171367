# One coverage rule, two commands: every row of the table runs through
# `cclforge doctor` (a survey injecting the GPU and a comm library with the
# row's GPU code) and through `cclforge nccl env --host-survey` (an installed
# build whose manifest lists the same code), and both must give the row's
# answer. The rule is src/gpu/arch.c's cf_arch_fit (docs/gpucode.md); its cases
# come from the CUDA Programming Guide and nvcc's own checks (test_arch.c).
. "$(dirname "$0")/lib.sh"

# gpu | code (comma-separated) | native, jit or none
CASES='
sm_86|sm_80|native
sm_86|sm_80,compute_80|native
sm_89|sm_86|native
sm_90|sm_80,compute_80|jit
sm_120|sm_90,compute_90|jit
sm_86|sm_90,compute_90|none
sm_80|sm_86|none
sm_90|sm_90a|native
sm_100|sm_90a,compute_90a|none
sm_103|sm_100f|native
sm_103|sm_100a|none
sm_110|sm_100f,compute_100f|none
sm_121|sm_120f|native
sm_121|compute_120f|jit
sm_120|sm_121|none
sm_61|sm_75,compute_75|none
sm_90|lto_90|none
gfx90a|gfx90a:xnack-|native
gfx942|gfx90a|none
'

json_list() { printf '"%s"' "$1" | sed 's/,/","/g'; }

ROOT=$T_TMP/root
n=0
while IFS='|' read -r gpu code want; do
    [ -n "$gpu" ] || continue
    n=$((n + 1))
    case $gpu in
        gfx*) vendor=amd kind=rccl lib=librccl.so.1 ;;
        *) vendor=nvidia kind=nccl lib=libnccl.so.2 ;;
    esac
    list=$(json_list "$code")
    # doctor: every section injected, so only this library and this GPU are judged
    survey=$T_TMP/case$n.json
    cat >"$survey" <<EOF
{ "host": { "hostname": "case$n" }, "toolkits": [], "gpu_probes": [], "driver": {}, "libtorch": [],
  "compilers": [], "gpus": [ { "vendor": "$vendor", "name": "case $n", "arch": "$gpu" } ],
  "comm_libraries": [ { "kind": "$kind", "path": "/case$n/$lib", "how": "loaded", "version": "2.28.9",
                        "archs": [ $list ] } ] }
EOF
    run "$CCLFORGE" doctor --no-python --no-nvidia --survey "$survey" --json
    doctor=$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("none" if any(f["id"] == "gpu-arch-not-covered" and f["subject"].startswith("/case") for f in d["findings"]) else "covered")' 2>/dev/null)
    # nccl env: an installed build with the same code in its manifest
    name=v2.28.9-case$n
    mkdir -p "$ROOT/nccl/builds/$name/lib"
    sass=$(printf '%s\n' "$code" | tr ',' '\n' | grep -v '^compute_' | paste -sd, -)
    ptx=$(printf '%s\n' "$code" | tr ',' '\n' | grep '^compute_' | paste -sd, -)
    # the library's hash is in the manifest, as in every build cclforge installs:
    # nccl env refuses a build it cannot check
    : >"$ROOT/nccl/builds/$name/lib/$lib.2.28.9"
    sha=$(sha256sum "$ROOT/nccl/builds/$name/lib/$lib.2.28.9" | cut -d' ' -f1)
    cat >"$ROOT/nccl/builds/$name/manifest.json" <<EOF
{ "schema": "cclforge.nccl-manifest/1", "name": "$name", "tag": "v2.28.9-1", "version": "2.28.9",
  "version_code": 22809, "archs": [], "ptx": false, "library": "lib/$lib.2.28.9", "library_sha256": "$sha",
  "sass": [ ${sass:+$(json_list "$sass")} ], "ptx_archs": [ ${ptx:+$(json_list "$ptx")} ] }
EOF
    run "$CCLFORGE" nccl env "$name" --root "$ROOT" --host-survey "$survey" --format json
    env_rc=$RC
    env=$(printf '%s' "$OUT" | python3 -c '
import json, sys
c = json.load(sys.stdin)["coverage"]
print("none" if c["uncovered"] else "jit" if c["ptx_jit_only"] else "native")' 2>/dev/null)
    doctor_want=covered rc_want=0
    [ "$want" = none ] && doctor_want=none rc_want=1
    RC=$env_rc OUT="doctor: $doctor, nccl env: $env (exit $env_rc)" ERR=
    if [ "$doctor" = "$doctor_want" ] && [ "$env" = "$want" ] && [ "$env_rc" = "$rc_want" ]; then
        ok "$code on a $gpu: $want (doctor and nccl env agree)"
    else
        bad "$code on a $gpu: want $want"
    fi
done <<EOF
$CASES
EOF
[ "$n" -ge 19 ] && ok "all $n cases ran" || bad "only $n cases ran"
t_end
