# cclforge doctor compare: a document that is no host's survey is refused, and
# every difference is shown with the severity it is counted at (the summary,
# the JSON and the exit status agree with the Differences list).
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

# one host with NCCL 2.28.9 (injected, so the test does not depend on this machine's)
echo '{"host":{"hostname":"vm"},"toolkits":[],"comm_libraries":[{"kind":"nccl","path":"/x/libnccl.so.2","how":"loaded","version":"2.28.9"}]}' >inj.json
run "$CCLFORGE" doctor --no-python --json --survey inj.json
expect_rc 0 "doctor --json writes a survey"
printf '%s' "$OUT" >vm.json
# derived hosts: one without any NCCL, one with another NCCL version code
python3 - <<'PY'
import json
d = json.load(open("vm.json"))
d["host"]["hostname"] = "other-host"
d["comm_libraries"] = []
d["toolkits"] = []
json.dump(d, open("none.json", "w"))
d["host"]["hostname"] = "old-host"
d["comm_libraries"] = [{"kind": "nccl", "path": "/y/libnccl.so.2", "how": "loaded", "version": "2.27.5"}]
json.dump(d, open("old.json", "w"))
PY

# ---- a document without a host's facts is not a survey ----
echo '{"schema":"cclforge.doctor/1"}' >empty.json
run "$CCLFORGE" doctor compare vm.json empty.json
expect_rc 2 "a document with only a schema is refused, not compared as a host with nothing"
expect_err "empty.json is not a host's survey" "the error names the document"
expect_err '"host".*"comm_libraries"' "the error names the sections missing"
expect_err "cclforge doctor --json" "the error gives the fix"
expect_no_out "Differences" "nothing is compared"
echo '{"gpus":[{"arch":"sm_80"}]}' >subset.json
run "$CCLFORGE" doctor compare --json subset.json vm.json
expect_rc 2 "a hand-written --survey subset is no host either"
expect_err 'lacks "host", "toolkits", "driver"' "only the sections it lacks are named"
run "$CCLFORGE" doctor compare vm.json vm.json
expect_rc 0 "a whole report compared with itself is fine"
python3 -c 'import json; d=json.load(open("vm.json")); d["summary"]["info"] += 5; json.dump(d, open("miscount.json", "w"))'
run "$CCLFORGE" doctor compare vm.json miscount.json
expect_rc 2 "a report whose summary does not count its findings is refused"
expect_err 'miscount.json: "summary.info" is [0-9]+, but the document holds [0-9]+' "naming the file and the field"
run "$CCLFORGE" doctor --no-python --survey inj.json --save saved.json
run "$CCLFORGE" doctor compare vm.json saved.json
expect_rc 0 "a survey --save wrote is compared as its host"
python3 -c 'import json; d=json.load(open("vm.json")); d["schema"] = "cclforge.smoke/2"; json.dump(d, open("smoke.json", "w"))'
run "$CCLFORGE" doctor compare vm.json smoke.json
expect_rc 2 "a document of another schema is refused"
expect_err "smoke.json: .*schema 'cclforge.smoke/2' is not a survey" "and named"

# ---- the saved documents of tests/fixtures/documents compare as they always did ----
DOCS=$CCLFORGE_SOURCE_DIR/tests/fixtures/documents
run sh -c 'cd "$1" && "$2" doctor compare --json doctor-vm.json doctor-topology.json' sh "$DOCS" "$CCLFORGE"
printf '%s\n' "$OUT" >"$T_TMP/compare.json"
cmp -s "$T_TMP/compare.json" "$DOCS/doctor-compare.json" && ok "doctor compare --json: the same bytes as the unchanged product wrote" || bad "doctor compare --json differs from $DOCS/doctor-compare.json: $(diff "$DOCS/doctor-compare.json" "$T_TMP/compare.json" | head -5)"

# ---- a difference shown is counted at the severity shown ----
# the JSON's differences, findings, summary and exit status must agree
consistent='all((x["severity"] != "error") or d["summary"]["errors"] > 0 for x in d["differences"]) and all((x["severity"] != "warning") or d["summary"]["warnings"] > 0 for x in d["differences"]) and d["summary"]["errors"] == sum(f["severity"] == "error" for f in d["findings"])'
run "$CCLFORGE" doctor compare vm.json none.json
expect_rc 0 "a host without NCCL is compare's warning (comm-missing-on-host): exit 0"
expect_out "warning NCCL: vm NCCL 2\.28\.9 \(22809\), other-host \(none\)" "the NCCL difference is shown as the warning it is counted as"
expect_no_out "error +NCCL" "no error is shown that the summary leaves out"
expect_out "0 error\(s\), 1 warning\(s\)" "the summary counts it"
run "$CCLFORGE" doctor compare --json vm.json none.json
expect_json "$consistent" "JSON: every difference's severity is counted in the summary"
expect_json 'any(x["label"] == "NCCL" and x["severity"] == "warning" for x in d["differences"])' "JSON: the NCCL difference carries the severity it is counted at"

run "$CCLFORGE" doctor compare vm.json old.json
expect_rc 1 "different NCCL version codes are an error and exit 1"
expect_out "error +NCCL: vm NCCL 2\.28\.9 \(22809\), old-host NCCL 2\.27\.5 \(22705\)" "shown as an error"
expect_out "1 error\(s\)" "and counted as one"
run "$CCLFORGE" doctor compare --json vm.json old.json none.json
expect_rc 1 "three hosts, one older and one without NCCL: exit 1"
expect_json "$consistent" "JSON: three hosts' differences agree with the summary"
expect_json 'any(x["label"] == "NCCL" and x["severity"] == "error" for x in d["differences"]) and any(f["id"] == "nccl-version-differs" for f in d["findings"])' "the worst judgement wins: the NCCL difference is an error"
# ---- the same finding on several hosts is one, with their hostlist ----
python3 - <<'PY'
import json
d = json.load(open("vm.json"))
d["comm_libraries"][0]["archs"] = ["sm_80", "sm_90"]
for i in range(1, 5):
    d["host"]["hostname"] = "n%02d" % i
    d["gpus"] = [{"vendor": "nvidia", "arch": "sm_100" if i == 4 else "sm_90"}]
    json.dump(d, open("n%02d.json" % i, "w"))
PY
run "$CCLFORGE" doctor compare n01.json n02.json n03.json n04.json
expect_rc 1 "a host whose NCCL has no code for its own GPU: exit 1"
expect_out "^  error   n04: /x/libnccl\.so\.2  \[gpu-arch-not-covered\]$" "a finding on one host keeps its name in the subject"
expect_out "^  warning /x/libnccl\.so\.2  \[host-lib-lacks-arch\]$" "the same finding on three hosts is printed once, no host in its subject"
expect_out "^          on 3 hosts: n\[01-03\]$" "with the hosts as a Slurm hostlist"
[ "$(printf '%s\n' "$OUT" | grep -c 'host-lib-lacks-arch')" = 1 ] && ok "once, not once per host" || bad "host-lib-lacks-arch printed $(printf '%s\n' "$OUT" | grep -c 'host-lib-lacks-arch') times"
expect_out "^  4 hosts: n\[01-04\]$" "the hosts compared, as a hostlist"
expect_out "^n\[01-03\] \(3\) +NCCL 2\.28\.9 \(22809\) +none +sm_90$" "the table: hosts alike in one row, their hostlist and count"
expect_out "^n04 +NCCL 2\.28\.9 \(22809\) +none +sm_100$" "and the odd one in its own"
run "$CCLFORGE" doctor compare --json n01.json n02.json n03.json n04.json
expect_json 'sorted(f["subject"] for f in d["findings"] if f["id"] == "host-lib-lacks-arch") == ["n01: /x/libnccl.so.2", "n02: /x/libnccl.so.2", "n03: /x/libnccl.so.2"]' "JSON keeps a finding per host"
t_end
