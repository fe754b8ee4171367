#!/usr/bin/env bash
# `wheel verify --smoke N --backend gloo`: the harness through torch's own
# backend registry, each item a check, at 2 and 4 ranks on PyPI's real torch
# (from the cache). The module under test is a small C extension compiled
# here that defines make_nccl_backend and nothing of torch: NOT a bridge (its
# factory only raises), but what gloo's run needs of one (an installed module
# that exports the factory, imported in every rank). What it proves is the
# harness: the registry path, every item's exact check, the report. A variant
# that corrupts rank 1's all_reduce after the fact shows an item failing with
# the rank and what differed while the others still pass. Real bridges run
# the same harness in bridge_torch.sh and bridge_plugin.sh.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
T=$T_TMP
inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
[ -f "$inc/Python.h" ] || t_skip "no Python.h for python3 (python3-dev)"
python3 -c 'import venv, ensurepip' 2>/dev/null || t_skip "python3 has no venv/ensurepip"
site=$(bash "$SRC/scripts/torch-cache.sh" 2>"$T/torch-cache.log" | tail -n 1)
[ -n "$site" ] && [ -d "$site/torch" ] || { cat "$T/torch-cache.log"; t_skip "scripts/torch-cache.sh could not provide torch 2.15.0 (PyPI is needed once)"; }
[ "$(python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')" = 311 ] || t_skip "python3 is not 3.11, the cached torch's"

cat > "$T/fake.c" <<'C'
#include <Python.h>
/* defines the factory's name, and is no bridge: it makes no process group */
static PyObject *make_nccl_backend(PyObject *self, PyObject *args, PyObject *kw)
{
    PyErr_SetString(PyExc_RuntimeError, "make_nccl_backend: a test module, not a bridge");
    return NULL;
}
static PyMethodDef methods[] = {
    { "make_nccl_backend", (PyCFunction)(void (*)(void))make_nccl_backend, METH_VARARGS | METH_KEYWORDS, NULL },
    { NULL, NULL, 0, NULL },
};
static struct PyModuleDef def = { PyModuleDef_HEAD_INIT, "_fake", NULL, -1, methods };
PyMODINIT_FUNC PyInit__fake(void)
{
#ifdef CORRUPT
    /* rank 1's all_reduce adds 1 after the real one: a wrong result, nothing else */
    if (PyRun_SimpleString("import os\n"
                           "if os.environ.get('RANK') == '1':\n"
                           "    import torch.distributed as d\n"
                           "    real = d.all_reduce\n"
                           "    def all_reduce(t, *a, **k):\n"
                           "        w = real(t, *a, **k)\n"
                           "        if w is not None:\n"
                           "            w.wait()\n"
                           "        t.add_(1)\n"
                           "        return w\n"
                           "    d.all_reduce = all_reduce\n") < 0)
        return NULL;
#endif
    return PyModule_Create(&def);
}
C
mkwheel() { t_mkwheel "$@"; } # NAME DIR [REQUIRES-DIST...]: its path on stdout
for v in fakebridge corruptbridge; do
    mkdir -p "$T/$v/$v"
    printf '' > "$T/$v/$v/__init__.py"
    cc -shared -fPIC -I"$inc" $([ $v = corruptbridge ] && echo -DCORRUPT) -o "$T/$v/$v/_fake$suffix" "$T/fake.c" \
        || { echo "not ok - the fixture does not compile"; exit 1; }
done
good=$(mkwheel fakebridge "$T/fakebridge")
corrupt=$(mkwheel corruptbridge "$T/corruptbridge")

for n in 2 4; do
    start=$(date +%s)
    run "$CCLFORGE" wheel verify "$good" --smoke $n --backend gloo --site "$site" --json
    expect_rc 0 "--smoke $n --backend gloo through the registry"
    echo "# $n ranks: $(( $(date +%s) - start )) s"
    printf '%s' "$OUT" | python3 -c 'import json,sys; [print("#   %-5s %-20s %s" % (c["status"], c["name"], c["detail"][:150])) for c in json.load(sys.stdin)["checks"]]' 2>/dev/null
    expect_smoke_items $n gloo "$n ranks"
    expect_json '[c["status"] for c in d["checks"] if c["name"] == "smoke"] == ["ok"] and len(d["smoke"]) == '$n' and all(l.startswith("RANK_PASS") for l in d["smoke"])' "$n ranks: RANK_PASS on every rank"
    expect_json 'd["imported"] == ["fakebridge._fake"] and d["import_failed"] == []' "$n ranks: the module imported from the venv"
done

# one item wrong on one rank: that item fails naming the rank and the values,
# the others still pass; the text report, one line per item
run "$CCLFORGE" wheel verify "$corrupt" --smoke 2 --backend gloo --site "$site"
expect_rc 1 "a rank whose all_reduce is off by one fails the run"
expect_out 'FAIL +smoke all_reduce +rank 1: sum: 1024 element\(s\) differ, the first at \[0\]: got 4\.0, expected 3\.0' "smoke all_reduce names rank 1 and what differed"
expect_out 'FAIL +smoke async +rank 1: all_reduce: ' "the async item's all_reduce fails too"
for item in broadcast all_gather reduce_scatter send_recv barrier ddp fsdp2; do
    expect_out "ok +smoke $item +2 ranks, gloo: " "smoke $item, which calls no all_reduce of torch.distributed's, still passes"
done
expect_out 'n/a +smoke device_mesh +not applicable: needs at least 4 ranks' "DeviceMesh is n/a with 2 ranks, saying why"
expect_no_out 'ok +smoke device_mesh' "and is not counted as passed"
expect_out 'FAIL +smoke +2-rank gloo run .*1 rank\(s\) failed: rank 1 exit 1 after' "the run fails, naming the rank"
expect_out 'RANK_FAIL rank=1 local_rank=1 value=4\.0 failed=all_reduce,async' "rank 1 ends RANK_FAIL, naming its items"

# usage: a smoke option without the smoke
run "$CCLFORGE" wheel verify "$good" --backend gloo
expect_rc 2 "--backend without --smoke"
expect_err "picks the backend of the --smoke run: give --smoke N too" "says what is missing"
run "$CCLFORGE" wheel verify "$good" --keep
expect_rc 2 "--keep without --install"
t_end
