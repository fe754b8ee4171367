# cclforge report on saved smoke documents: the reader never invents a result.
# The documents the unchanged product wrote (tests/fixtures/documents/) each make
# a page; a document without a verdict reads "unknown", never "passed"; a test of
# size -1, a busbw of 1e308 and a group that does not exist are refused, exit 2,
# the field named.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || t_skip "python3 is missing"
DOCS=$CCLFORGE_SOURCE_DIR/tests/fixtures/documents

for doc in "$DOCS"/smoke_*.json; do
    name=$(basename "$doc" .json)
    run "$CCLFORGE" report -o "$T_TMP/$name.html" "$doc"
    expect_rc 0 "$name: a page"
    verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$doc")
    grep -qF ">$verdict</p>" "$T_TMP/$name.html" && ok "$name: the run's own verdict" || bad "$name: verdict"
done

# mutate KEY PYTHON: the two-rank document changed by PYTHON (over d) into $T_TMP/KEY.json
mutate() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[2], 'w'), indent=1)" \
        "$DOCS/smoke_ops_dtypes.json" "$T_TMP/$1.json"
}

mutate noverdict 'del d["verdict"]'
run "$CCLFORGE" report -o "$T_TMP/noverdict.html" "$T_TMP/noverdict.json"
expect_rc 0 "a document without a verdict still makes a page"
grep -q 'id="verdict">unknown</p>' "$T_TMP/noverdict.html" && ok "whose verdict reads unknown" || bad "no 'unknown' verdict"
grep -q 'id="verdict">passed' "$T_TMP/noverdict.html" && bad "a missing verdict read as passed" || ok "never passed"
mutate noverdict_nook 'del d["verdict"]; del d["ok"]'
run "$CCLFORGE" report -o "$T_TMP/noverdict_nook.html" "$T_TMP/noverdict_nook.json"
grep -q 'class="verdict warning" id="verdict">unknown</p>' "$T_TMP/noverdict_nook.html" \
    && ok "without \"ok\" either: unknown, marked as a warning" || bad "no verdict and no ok"

# refuse KEY PYTHON FIELD DESC: the mutated document is refused naming FIELD
refuse() {
    mutate "$1" "$2"
    run "$CCLFORGE" report -o "$T_TMP/$1.html" "$T_TMP/$1.json"
    expect_rc 2 "$4: refused (exit 2)"
    expect_err "\"$3\"" "$4: the message names $3"
    [ -e "$T_TMP/$1.html" ] && bad "$4: a page was written" || ok "$4: no page written"
}
refuse size 'd["rows"][3]["bytes"] = -1' 'rows\[3\]\.bytes' "a test of size -1"
refuse busbw 'd["rows"][3]["busbw_gbps"] = 1e308' 'rows\[3\]\.busbw_gbps' "a busbw of 1e308"
refuse group 'd["rows"][3]["group"] = 99999999' 'rows\[3\]\.group' "a group 99,999,999 that does not exist"
refuse all 'del d["verdict"]; d["rows"][3]["bytes"] = -1; d["rows"][4]["busbw_gbps"] = 1e308; d["rows"][5]["group"] = 99999999' \
    'rows\[3\]\.bytes' "all four at once"
refuse rank 'd["rows"][0]["slowest_rank"] = 5' 'rows\[0\]\.slowest_rank' "a rank that does not exist"
refuse type 'd["passed"] = "many"' 'passed' "a count of a wrong type"
t_end
