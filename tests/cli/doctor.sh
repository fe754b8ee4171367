# cclforge doctor: this machine as it is, injected GPU surveys, vendor fixture
# trees (tests/fixtures/doctor_fixtures.sh), and doctor compare.
. "$(dirname "$0")/lib.sh"
FX=$T_TMP/fx
bash "$CCLFORGE_SOURCE_DIR/tests/fixtures/doctor_fixtures.sh" "$FX" >/dev/null || { echo "fixtures failed"; exit 1; }
# the toolkit's NCCL: its version from its nccl.h, its oldest SASS arch and
# newest PTX as inspect lists them (inspect_nccl.sh checks those against cuobjdump)
HAVE_NCCL=0
if t_find_nccl; then
    HAVE_NCCL=1 V_RE=${T_NCCL_VERSION//./\\.}
    read -r OLDEST NEWEST_PTX < <("$CCLFORGE" inspect --json --no-banner "$T_NCCL" | python3 -c '
import json, re, sys
g = json.load(sys.stdin)["targets"][0]["objects"][0]["gpu"]
sm = [int(m.group(1)) for a in g["sass"] for m in [re.fullmatch(r"sm_(\d+)f?", a)] if m]
ptx = sorted(int(a[8:]) for a in g["ptx"] if re.fullmatch(r"compute_\d+", a))
print("sm_%d" % min(sm) if sm else "none", "compute_%d" % ptx[-1] if ptx else "none")')
fi

run "$CCLFORGE" doctor --help
expect_rc 0 "doctor --help exits 0"
expect_out "doctor compare" "help names compare"
expect_out "CCLFORGE_SURVEY" "help documents the survey variable"
run "$CCLFORGE" doctor compare --help
expect_rc 0 "doctor compare --help exits 0"
run "$CCLFORGE" doctor --frob
expect_rc 2 "unknown option is a usage error"
run "$CCLFORGE" doctor extra
expect_rc 2 "stray argument is a usage error"

# ---- this machine, as it is ----
run "$CCLFORGE" doctor
expect_rc 0 "doctor on this machine exits 0 (no error finding)"
expect_out "^Toolkits" "report has a Toolkits section"
expect_out "^GPUs" "report has a GPUs section"
expect_out "^Findings" "findings come last"
if [ "$HAVE_NCCL" = 1 ] && ! command -v nvidia-smi >/dev/null; then
    expect_out "no NVIDIA driver" "no GPU is said plainly"
    expect_out "info +GPUs +\[no-gpu\]" "no GPU is information, not an error"
    expect_out "NCCL $V_RE" "the toolkit's NCCL is found with its version ($T_NCCL_VERSION)"
    expect_out "$OLDEST .*${NEWEST_PTX#none}" "NCCL's archs are listed ($OLDEST .. $NEWEST_PTX)"
    expect_out "has kernels for $OLDEST and newer" "which GPUs this NCCL cannot serve is said"
fi
run "$CCLFORGE" doctor --json
expect_rc 0 "doctor --json exits 0"
expect_json 'd["schema"] == "cclforge.doctor/1"' "json has the schema"
expect_json 'all(k in d for k in ("host","toolkits","gpus","gpu_probes","driver","libtorch","comm_libraries","compilers","findings","summary"))' "json has every section"
expect_json 'd["summary"]["errors"] == 0' "json summary counts no errors"
if [ "$HAVE_NCCL" = 1 ]; then
    expect_json 'any(t["vendor"] == "cuda" and t["comm"] and t["comm"]["version_code"] == '"$T_NCCL_CODE"' for t in d["toolkits"])' "json: CUDA toolkit with NCCL $T_NCCL_CODE"
fi
printf '%s' "$OUT" >"$T_TMP/here.json"

# ---- injected GPUs on this machine's real NCCL ----
if [ "$HAVE_NCCL" = 1 ] && [ "${OLDEST#sm_}" != none ] && [ "${OLDEST#sm_}" -gt 61 ]; then
    run "$CCLFORGE" doctor --no-python --survey "$FX/survey-pascal-blackwell.json"
    expect_rc 1 "Pascal + Blackwell on an NCCL from $OLDEST up is an error"
    expect_out "sm_61" "the uncovered arch is named"
    expect_out "cclforge nccl build --tag v$V_RE-1 --archs sm_61,sm_120" "remedy builds the same release for both GPUs"
    expect_out "NVIDIA GeForce GTX 1080, rev A" "a GPU name with a comma survives"
    run env CCLFORGE_SURVEY="$FX/survey-ampere.json" "$CCLFORGE" doctor --no-python --json
    expect_rc 0 "an Ampere host is covered (survey from CCLFORGE_SURVEY)"
    expect_json '"gpus" in d["host"]["injected_sections"] and d["gpus"][0]["arch"] == "sm_80"' "injected sections are recorded"
    expect_json 'not any(f["id"] == "gpu-arch-not-covered" for f in d["findings"])' "no arch finding for sm_80"
else
    t_skip_part "injected GPUs: no NCCL here whose oldest SASS arch is above Pascal's sm_61"
fi
run "$CCLFORGE" doctor --no-python --survey "$FX/survey-no-gpu.json"
expect_rc 0 "a no-GPU survey exits 0"
expect_out "\[no-gpu\]" "no-GPU finding is shown"

# ---- a DCU host: fake KFD tree + DTK-like root ----
run env ROCM_PATH="$FX/dtk-24.04" HIP_VISIBLE_DEVICES=1 "$CCLFORGE" doctor --no-python --no-nvidia --sysfs-root "$FX/kfd-dcu" --json
expect_rc 1 "DTK RCCL without gfx928 code is an error on a DCU host"
expect_json 'len(d["gpus"]) == 2 and all(g["arch"] == "gfx928" and g["vendor"] == "hygon" for g in d["gpus"])' "two gfx928 DCUs from KFD"
expect_json '[g["visible"] for g in d["gpus"]] == [False, True]' "HIP_VISIBLE_DEVICES=1 shows the second"
expect_json 'any(t["vendor"] == "dtk" and t["version"] == "24.04.1" for t in d["toolkits"])' "DTK root and version"
expect_json 'any(f["id"] == "gpu-arch-not-covered" and "librccl" in f["subject"] for f in d["findings"])' "RCCL arch finding names librccl"
run "$CCLFORGE" doctor --sysfs-root /nonexistent
expect_rc 2 "--sysfs-root must exist"

# ---- libtorch trees ----
run env -u LIBTORCH "$CCLFORGE" doctor --no-python --libtorch "$FX/libtorch-cu124" --survey "$FX/survey-ampere.json"
expect_rc 1 "libtorch loading an older NCCL than it embeds is an error"
expect_out "\[nccl-mismatch\]" "nccl-mismatch reported"
expect_out "\[two-nccl-copies\]" "two copies reported"
expect_out "C\+\+11 ABI: no \(0\)" "old ABI from TorchConfig.cmake"
run env PYTHONPATH="$FX/site" "$CCLFORGE" doctor --libtorch "$FX/variants" --json
expect_json 'd["libtorch"][0]["variant"] == "cu124-2.5.1" and d["libtorch"][0]["cxx11_abi"] is True' "variants root: active variant, new ABI"
expect_json 'd["libtorch"][1]["found_by"].startswith("python") and d["libtorch"][1]["nccl_built_against"] == "2.21.5"' "python torch found without importing it"
run "$CCLFORGE" doctor --libtorch /nonexistent/libtorch
expect_rc 2 "a --libtorch that does not exist is a usage error"
expect_err "/nonexistent/libtorch" "and names the path"
run "$CCLFORGE" doctor --no-python --libtorch "$FX/kfd-none"
expect_rc 2 "a --libtorch that holds no libtorch is a usage error"
expect_err "holds no libtorch" "and says why"
run "$CCLFORGE" doctor --no-python --libtorch "$FX/libtorch-broken" --survey "$FX/survey-no-gpu.json"
expect_rc 1 "missing library in the libtorch closure is an error"
expect_out "libcudnn_gone\.so\.9" "the missing library is named"

run "$CCLFORGE" doctor --no-python --libtorch "$FX/libtorch-undef" --survey "$FX/survey-no-gpu.json"
expect_rc 1 "a symbol libtorch needs that its NCCL lacks is an error"
expect_out "undefined symbol: ncclCommRegister" "the symbol is named as ldd -r would"

# ---- bad survey files ----
echo '{ "gpus": [ { "arch": 61 } ] }' >"$T_TMP/bad.json"
run "$CCLFORGE" doctor --survey "$T_TMP/bad.json"
expect_rc 2 "a malformed survey is a usage error"
expect_err "gpus\[0\]\.arch" "the error names the key"
run "$CCLFORGE" doctor --survey "$T_TMP/none.json"
expect_rc 2 "a missing survey is a usage error"

# ---- --save and compare ----
run "$CCLFORGE" doctor --no-python --survey "$FX/survey-ampere.json" --save "$T_TMP/saved.json"
expect_json_file() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
expect_json_file "$T_TMP/saved.json" 'd["schema"] == "cclforge.survey/1" and d["gpus"][0]["arch"] == "sm_80"' && ok "--save writes a survey" || bad "--save writes a survey"
run "$CCLFORGE" doctor compare "$T_TMP/here.json" "$T_TMP/here.json"
expect_rc 0 "a host compared with itself is fine"
python3 - "$T_TMP/here.json" "$T_TMP/other.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["hostname"] = "other-host"
d["comm_libraries"] = [{"kind": "nccl", "path": "/x/libnccl.so.2", "how": "loaded", "version": "2.27.3", "archs": ["sm_80"]}]
d["toolkits"] = []
d["gpus"] = [{"arch": "sm_61", "name": "Pascal"}]
json.dump(d, open(sys.argv[2], "w"))
PY
run "$CCLFORGE" doctor compare "$T_TMP/here.json" "$T_TMP/other.json"
if [ "$HAVE_NCCL" = 1 ]; then
    expect_rc 1 "different NCCL version codes are an error"
    expect_out "\[nccl-version-differs\]" "nccl-version-differs reported"
fi
run "$CCLFORGE" doctor compare --json "$T_TMP/here.json" "$T_TMP/other.json"
expect_json 'd["schema"] == "cclforge.doctor-compare/1" and len(d["hosts"]) == 2' "compare --json lists hosts"
run "$CCLFORGE" doctor compare "$T_TMP/here.json"
expect_rc 2 "compare needs two reports"
t_end
