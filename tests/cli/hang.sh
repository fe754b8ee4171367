# cclforge hang on real Flight Recorder dumps made here by torch's gloo ranks
# (4 ranks, once per run: tests/cli/hang_gen.py), torch's fr_trace as the
# oracle on copies it can read (pg_config made whole: it crashes on gloo's),
# synthetic dumps in the NCCL layout (tests/support/fr_synth.py), the page in
# Chromium, the document remade by `cclforge report`, hostile inputs.
# CCLFORGE_DOCS_SHOTS=DIR also leaves the page's screenshot there.
. "$(dirname "$0")/lib.sh"

SRC=$CCLFORGE_SOURCE_DIR
SUP=$SRC/tests/support
D=$T_TMP/dumps

# ---- synthetic NCCL layout (no torch needed) ----
python3 "$SUP/fr_synth.py" nccl "$D/nccl"
run "$CCLFORGE" hang --json "$D/nccl/json"
expect_rc 1 "synthetic NCCL dumps: a divergence, exit 1"
expect_json "d['schema'] == 'cclforge.hang/1' and d['first']['seq'] == 9 and d['first']['kind'] == 'dtypes' and d['first']['ranks_odd'] == [2]" \
    "the first divergence: rank 2's BFloat16 all_reduce #9"
expect_json "[(v['seq'], v['kind']) for v in d['groups'][0]['divergences'] if not v['p2p']] == [(9, 'dtypes'), (10, 'state')]" \
    "later divergences listed: #10 started vs completed; the coalesced #7 and the all_gather #8 agree"
expect_json "[(v['kind'], v['ranks_in'], v['ranks_odd']) for v in d['groups'][0]['divergences'] if v['p2p']] == [('not-entered', [2], [3])]" \
    "p2p: rank 2's send that rank 3 never receives; the matched 0->1 pair is no divergence"
expect_json "d['groups'][0]['membership'] == 'pg_config' and d['first']['where'] == '/job/train.py:89 (step)'" \
    "pg_config used where it names the group; the user's frame, not torch's"
expect_json "any(e['duration_ms'] == 1.5 for r in d['ranks'] for e in r['last']) or all(len(r['last']) == 8 for r in d['ranks'])" \
    "durations kept"
syn_json=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([(v["seq"], v["kind"], v["ranks_odd"], v["where"]) for v in d["groups"][0]["divergences"]])')
run "$CCLFORGE" hang --json "$D/nccl/pkl"
syn_pkl=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([(v["seq"], v["kind"], v["ranks_odd"], v["where"]) for v in d["groups"][0]["divergences"]])')
[ "$syn_pkl" = "$syn_json" ] && ok "Python's pickles at protocols 2 to 5 give the JSON's answer" || bad "pickle $syn_pkl, JSON $syn_json"
python3 "$SUP/fr_synth.py" sizes "$D/sizes"
run "$CCLFORGE" hang --json "$D/sizes/json"
expect_json "d['first']['kind'] == 'sizes' and d['first']['ranks_odd'] == [1] and d['first']['op'] == 'all_gather'" \
    "all_gather judged by numel x group size: rank 1's output is 12, not 16"

# ---- hostile and refused input ----
mkdir -p "$D/bad"
cp "$D/nccl/json/rank0.json" "$D/nccl/json/rank1.json" "$D/bad/"
printf '\x80\x02c__builtin__\neval\n' > "$D/bad/rank2.pkl"
head -c 87 "$D/nccl/json/rank3.json" > "$D/bad/rank3.json"
printf 'a log line\n' > "$D/bad/log4"
run "$CCLFORGE" hang --json "$D/bad"
expect_rc 1 "two corrupt dumps beside two good ones: still read, exit 1"
expect_json "[r['rank'] for r in d['ranks'] if r['refused']] == [2, 3] and 4 not in [r['rank'] for r in d['ranks']]" \
    "the refused dumps named (a pickle calling eval, 87 bytes of JSON); a log beside them passed over"
expect_json "d['groups'][0]['absent'] == [2, 3]" "ranks without a readable dump named as such"
printf '{"version": "9.1", "entries": [{"process_group": ["0", "x"], "collective_seq_id": "NaN", "profiling_name": 7, "input_sizes": [[-1, 99999999999]]}]}' > "$D/bad/rank5.json"
run "$CCLFORGE" hang "$D/bad/rank5.json"
expect_out "version 9.1 is not one this reader lists; read by field names" "an unknown version read by names, and said"
run "$CCLFORGE" hang "$T_TMP/nothing-here"
expect_rc 2 "a path that does not exist: usage error"
run "$CCLFORGE" hang "$D/bad/rank2.pkl"
expect_rc 2 "only a refused dump: exit 2"
run "$CCLFORGE" hang --hosts 'node[01' --ranks-per-node 2 "$D/nccl/json"
expect_rc 2 "a malformed hostlist: usage error"

# ---- hang env: the names by torch version (torch 2.15's header reads both) ----
run "$CCLFORGE" hang env --torch 2.15.0
expect_out '^export TORCH_FR_BUFFER_SIZE=2000 ' "torch 2.15: TORCH_FR_BUFFER_SIZE"
expect_out '^export TORCH_FR_DUMP_TEMP_FILE=' "torch 2.15: TORCH_FR_DUMP_TEMP_FILE"
run "$CCLFORGE" hang env --torch 2.4.1
expect_out '^export TORCH_NCCL_TRACE_BUFFER_SIZE=2000 ' "an older torch: the TORCH_NCCL_* alias"
expect_out '^export TORCH_NCCL_DUMP_ON_TIMEOUT=1 ' "an older torch: TORCH_NCCL_DUMP_ON_TIMEOUT"

# ---- real gloo dumps made by torch ----
site=$(bash "$SRC/scripts/torch-cache.sh" 2>"$T_TMP/torch-cache.log" | tail -n 1)
if [ -z "$site" ] || [ ! -f "$site/torch/distributed/flight_recorder/fr_trace.py" ]; then
    t_skip_part "scripts/torch-cache.sh could not provide torch: no real dumps"
    t_end
    exit $?
fi
gen() { # gen SCENARIO BUFFER PORT
    mkdir -p "$D/$1/pkl" "$D/$1/json"
    for r in 0 1 2 3; do
        TORCH_FR_BUFFER_SIZE=$2 PYTHONPATH="$site" OMP_NUM_THREADS=1 timeout 180 \
            python3 "$SRC/tests/cli/hang_gen.py" "$1" "$r" 4 "$D/$1" "$3" >"$D/$1/log$r" 2>&1 &
    done
}
port=$((20000 + $$ % 20000))
gen mixed 2000 "$port"
gen wrapped 8 $((port + 1))
wait
ls "$D"/mixed/json/rank3.json "$D"/wrapped/json/rank3.json >/dev/null 2>&1 \
    || { cat "$D"/mixed/log* "$D"/wrapped/log*; t_skip "torch's gloo ranks left no dumps"; }

run "$CCLFORGE" hang --json "$D/mixed/json"
expect_rc 1 "real gloo dumps: a divergence, exit 1"
expect_json "d['first']['group'] == '2' and d['first']['kind'] == 'other-op' and d['first']['ranks_odd'] == [2] and d['first']['ranks_in'] == [0, 1, 3]" \
    "first: rank 2 issued a broadcast where ranks 0,1,3 issued all_reduce (group 2)"
expect_json "[(v['seq'], v['kind'], v['ranks_odd']) for g in d['groups'] if g['name'] == '0' for v in g['divergences']] == [(5, 'not-entered', [1])]" \
    "then rank 1 never entered the default group's all_reduce #5"
expect_json "[g['ranks'] for g in d['groups'] if g['name'] == '1'] == [[0, 1]] and not [g for g in d['groups'] if g['name'] == '1'][0]['divergences']" \
    "the subgroup [0, 1] before the divergence: consistent, its ranks from the entries (gloo's pg_config names no group)"
json_answer=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([(g["name"], [(v["seq"], v["kind"], v["ranks_odd"]) for v in g["divergences"]]) for g in d["groups"]])')
run "$CCLFORGE" hang "$D/mixed/json"
expect_out '^hang: at all_reduce #2 of group 2 \(undefined\): rank 2 issued broadcast where the others issued all_reduce' \
    "the text: the verdict first"

run "$CCLFORGE" hang --json "$D/mixed/pkl"
if printf '%s' "$OUT" | grep -q 'not read by this build'; then
    t_skip_part "this build reads no pickle: JSON against pickle"
else
    pkl_answer=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([(g["name"], [(v["seq"], v["kind"], v["ranks_odd"]) for v in g["divergences"]]) for g in d["groups"]])')
    [ "$pkl_answer" = "$json_answer" ] && ok "pickle and JSON give the same answer" || bad "pickle $pkl_answer, JSON $json_answer"
    expect_json "d['first']['where'].endswith('hang_gen.py:36 (<module>)')" "the pickle's frames: the user's line"
fi

# the ring that wrapped
run "$CCLFORGE" hang --json "$D/wrapped/json"
expect_json "d['groups'][0]['known_from'] > 1 and all(r['wrapped'] for r in d['ranks']) and d['first']['seq'] == 13 and d['first']['ranks_odd'] == [3]" \
    "a wrapped ring: knowledge starts past #1, rank 3 never entered #13"
expect_json "any('ring buffer wrapped' in n for n in d['notes'])" "the wrap said"

# a rank whose dump is absent
mkdir -p "$D/absent"
cp "$D/wrapped/json/rank0.json" "$D/wrapped/json/rank1.json" "$D/wrapped/json/rank3.json" "$D/absent/"
run "$CCLFORGE" hang --json "$D/absent"
expect_json "d['groups'][0]['absent'] == [2] and d['first']['ranks_odd'] == [3]" "rank 2's absent dump named; rank 3 still found"

# torch's fr_trace on copies it can read (pg_config made whole)
mkdir -p "$D/oracle"
PYTHONPATH="$site" python3 - "$D/mixed/pkl" "$D/oracle" <<'EOF2'
import glob, os, pickle, sys
src, dst = sys.argv[1:]
dumps = {int(os.path.basename(f)[4:-4]): pickle.load(open(f, "rb")) for f in glob.glob(src + "/rank*.pkl")}
groups = {}
for r, d in dumps.items():
    for e in d["entries"]:
        groups.setdefault(e["process_group"][0], [e["process_group"][1], set()])[1].add(r)
groups["0"][1] = set(dumps)
for r, d in dumps.items():
    d["pg_config"] = {n: {"name": n, "desc": v[0], "ranks": str(sorted(v[1]))} for n, v in groups.items()}
    pickle.dump(d, open(f"{dst}/rank{r}", "wb"))
EOF2
PYTHONPATH="$site" timeout 300 python3 -m torch.distributed.flight_recorder.fr_trace "$D/oracle" >"$T_TMP/fr.out" 2>&1
python3 - "$T_TMP/fr.out" "$json_answer" <<'EOF2' && ok "fr_trace finds the same divergences (group, number, culprit)" || bad "fr_trace disagrees: $(cat "$T_TMP/fr.out" | tail -30)"
import ast, re, sys
text, ours = open(sys.argv[1]).read(), dict(ast.literal_eval(sys.argv[2]))
found = []
for block in re.split(r"\n(?=Collective sequence number|Not all ranks joining)", text):
    m = re.search(r"sequence number: (\d+)", block)
    g = re.search(r"group info: ([^:\n]+)", block)
    who = re.search(r"missing ranks: \{([\d, ]+)\}", block) or re.search(r"Culprit rank (\d+)", block)
    if m and g and who:
        found.append((g.group(1), int(m.group(1)), sorted(int(x) for x in who.group(1).split(","))))
assert found, text
for g, seq, ranks in found:
    assert any(s == seq and odd == ranks for s, _, odd in ours.get(g, [])), (g, seq, ranks, ours)
EOF2

# ---- hosts, the page, the document remade ----
run "$CCLFORGE" hang --hosts 'gpu[07-08]' --ranks-per-node 2 --report "$T_TMP/hang.html" "$D/mixed/json"
expect_out '^  rank 2: host gpu08, GPU 0$' "the odd rank's host and GPU"
expect_out '^exclude: gpu08$' "the Slurm exclude: line"
python3 "$SUP/smoke_doc.py" 4 >"$T_TMP/smoke.json"
run "$CCLFORGE" hang --job "$T_TMP/smoke.json" "$D/mixed/json"
expect_out '^  rank 2: host node0003$' "a smoke document of the same job: the rank's host"
mkdir -p "$D/named"
for r in 0 1 2 3; do cp "$D/mixed/json/rank$r.json" "$D/named/gpu0$((r / 2)).nccl_trace_rank_$r.json"; done
run "$CCLFORGE" hang --prefix nccl_trace_rank_ "$D/named"
expect_out '^  rank 2: host gpu01$' "--prefix: the host from a file name that carries it"
expect_out '^exclude: gpu01$' "--prefix: the exclude: line"
"$CCLFORGE" hang --json --hosts 'gpu[07-08]' --ranks-per-node 2 "$D/mixed/json" >"$T_TMP/hang.json"
run "$CCLFORGE" report -o "$T_TMP/remade.html" "$T_TMP/hang.json"
expect_rc 0 "cclforge report remakes the page from the document"
cmp -s "$T_TMP/hang.html" "$T_TMP/remade.html" && ok "the remade page is the run's own, byte for byte" \
    || bad "the remade page differs: $(diff <(tr '>' '\n' <"$T_TMP/hang.html") <(tr '>' '\n' <"$T_TMP/remade.html") | head -10)"
python3 "$SUP/html_page.py" selfcontained "$T_TMP/hang.html" \
    && ok "the page references nothing outside itself" || bad "the page references something outside itself"
grep -q 'class="op div"' "$T_TMP/hang.html" && ok "the divergence marked on the lanes" || bad "no lane marks the divergence"
if command -v chromium >/dev/null && command -v unshare >/dev/null; then
    unshare -n timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
        --proxy-server=none --screenshot="$T_TMP/hang.png" --window-size=1100,900 "file://$T_TMP/hang.html" \
        >/dev/null 2>"$T_TMP/chromium.log"
    [ -s "$T_TMP/hang.png" ] && ok "Chromium drew the page" || bad "no screenshot: $(tail -5 "$T_TMP/chromium.log")"
    grep -E 'CONSOLE|Refused to|Uncaught' "$T_TMP/chromium.log" && bad "the page logged to the console" || ok "no console message"
    [ -n "${CCLFORGE_DOCS_SHOTS:-}" ] && cp "$T_TMP/hang.png" "$CCLFORGE_DOCS_SHOTS/hang-report.png"
else
    t_skip_part "chromium or unshare is missing: the page is not drawn"
fi
t_end
