# One vendor table, three commands: doctor, bridge plan and nccl build find a
# vendor's toolkit root by the same variables in the same order (vendor.h:
# DTK_HOME before ROCM_PATH for DTK; ROCM_PATH for ROCm). The default roots and
# their globs (/opt/dtk, /opt/dtk-*) are test_survey.c's
# test_toolkit_default_root_globs. Fixture roots: tests/fixtures/doctor_fixtures.sh.
. "$(dirname "$0")/lib.sh"
FX=$T_TMP/fx
bash "$CCLFORGE_SOURCE_DIR/tests/fixtures/doctor_fixtures.sh" "$FX" >/dev/null || { echo "fixtures failed"; exit 1; }
DTK=$(cd "$FX/dtk-24.04" && pwd -P)
ROCM=$(cd "$FX/rocm-6.2.4" && pwd -P)
RCCL_SRC=$CCLFORGE_SOURCE_DIR/tests/fixtures/rccl-mini
CLEAN="env -u ROCM_PATH -u ROCM_HOME -u HIP_PATH -u DTK_HOME -u PYTORCH_ROCM_ARCH CCLFORGE_HOME=$T_TMP/home"

field() { printf '%s' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null; }

# --- DTK_HOME names the DTK root: all three commands take it
run $CLEAN DTK_HOME="$FX/dtk-24.04" "$CCLFORGE" nccl build --vendor dtk --source "$RCCL_SRC" --archs gfx928 --dry-run --json
expect_rc 0 "nccl build --vendor dtk plans with DTK_HOME"
expect_json "d['plan']['toolkit_home'] == '$FX/dtk-24.04' and d['plan']['toolkit_origin'] == 'DTK_HOME'" "nccl build: toolkit from DTK_HOME"
expect_json "any('-DROCM_PATH=$FX/dtk-24.04' in c for c in d['plan']['commands'])" "cmake is pointed at the DTK root"
run $CLEAN DTK_HOME="$FX/dtk-24.04" "$CCLFORGE" doctor --no-python --no-nvidia --json
expect_json "any(t['vendor'] == 'dtk' and t['root'] == '$DTK' and t['found_by'] == 'DTK_HOME' for t in d['toolkits'])" "doctor: DTK toolkit from DTK_HOME"
run $CLEAN DTK_HOME="$FX/dtk-24.04" "$CCLFORGE" bridge plan --vendor dtk --python /nonexistent-python --json
expect_json "d['plan']['toolkit_root']['value'] == '$FX/dtk-24.04' and d['plan']['toolkit_root']['from'] == 'DTK_HOME'" "bridge plan: toolkit from DTK_HOME"

# --- both set: DTK_HOME wins for DTK, ROCM_PATH is ROCm's
run $CLEAN DTK_HOME="$FX/dtk-24.04" ROCM_PATH="$FX/rocm-6.2.4" "$CCLFORGE" nccl build --vendor dtk --source "$RCCL_SRC" --archs gfx928 --dry-run --json
expect_json "d['plan']['toolkit_origin'] == 'DTK_HOME'" "nccl build --vendor dtk: DTK_HOME before ROCM_PATH"
run $CLEAN DTK_HOME="$FX/dtk-24.04" ROCM_PATH="$FX/rocm-6.2.4" "$CCLFORGE" bridge plan --vendor dtk --python /nonexistent-python --json
expect_json "d['plan']['toolkit_root']['from'] == 'DTK_HOME'" "bridge plan --vendor dtk: DTK_HOME before ROCM_PATH"
run $CLEAN DTK_HOME="$FX/dtk-24.04" ROCM_PATH="$FX/rocm-6.2.4" "$CCLFORGE" nccl build --vendor rocm --source "$RCCL_SRC" --archs gfx90a --dry-run --json
expect_json "d['plan']['toolkit_home'] == '$FX/rocm-6.2.4' and d['plan']['toolkit_origin'] == 'ROCM_PATH'" "nccl build --vendor rocm: ROCM_PATH, DTK_HOME is not ROCm's"
run $CLEAN DTK_HOME="$FX/dtk-24.04" ROCM_PATH="$FX/rocm-6.2.4" "$CCLFORGE" doctor --no-python --no-nvidia --json
expect_json "any(t['vendor'] == 'rocm' and t['root'] == '$ROCM' for t in d['toolkits']) and any(t['vendor'] == 'dtk' and t['root'] == '$DTK' for t in d['toolkits'])" "doctor: both toolkits, each by its own variable"

# --- the flag beats every variable; the words come from the table
run $CLEAN DTK_HOME="$FX/dtk-24.04" "$CCLFORGE" nccl build --vendor DTK --source "$RCCL_SRC" --archs gfx928 --rocm-path "$FX/rocm-6.2.4" --dry-run --json
expect_json "d['plan']['vendor'] == 'dtk' and d['plan']['toolkit_origin'] == '--rocm-path'" "--rocm-path wins; --vendor is case-insensitive"
run $CLEAN "$CCLFORGE" nccl build --vendor intel --archs gfx928 --dry-run
expect_rc 2 "an unknown --vendor is a usage error"
expect_err "use nvidia, rocm or dtk" "the message lists the table's words"
run $CLEAN "$CCLFORGE" bridge plan --vendor intel --python /nonexistent-python --json
expect_json "any('use nvidia, rocm or dtk' in p for p in d['plan']['problems'])" "bridge plan lists the same words"
t_end
