#!/usr/bin/env bash
# `wheel verify --install` of a wheel whose extension fails to import with a
# long traceback: the failure's words are cut at a line's start, keeping the
# end (the exception itself), never mid-word at the front ("ck (most recent
# call last)"). Every module is imported, and each that does not import is a
# failure saying why: one needing a module the wheel does not carry (declared
# in Requires-Dist or not), the bridge (a module whose data names
# make_nccl_backend); --smoke without a bridge that imported runs nothing and
# fails. The extensions are compiled here; the wheels written by Python's
# zipfile with a RECORD of real digests.
. "$(dirname "$0")/lib.sh"
T=$T_TMP
inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
[ -f "$inc/Python.h" ] || t_skip "no Python.h for python3 (python3-dev)"
python3 -c 'import venv, ensurepip' 2>/dev/null || t_skip "python3 has no venv/ensurepip"

# a module whose import runs Python code that fails deep in a call chain:
# the traceback is far longer than what a check shows
cat > "$T/boom.c" <<'C'
#include <Python.h>
PyMODINIT_FUNC PyInit_boom(void)
{
    /* f and g alternate, so Python prints every frame (it folds only repeats) */
    PyRun_SimpleString("def f(n):\n    return g(n - 1) if n else int('THE-REAL-CAUSE')\n"
                       "def g(n):\n    return f(n - 1)\n"
                       "import sys\nsys.setrecursionlimit(200)\ntry:\n    f(60)\nexcept Exception as e:\n"
                       "    import builtins\n    builtins._boom = e\n");
    PyObject *main = PyImport_AddModule("builtins");
    PyObject *e = main ? PyObject_GetAttrString(main, "_boom") : NULL;
    if (e) {
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
        Py_DECREF(e);
    } else {
        PyErr_SetString(PyExc_ImportError, "boom");
    }
    return NULL;
}
C
mkdir -p "$T/pkg/boompkg"
cc -shared -fPIC -I"$inc" -o "$T/pkg/boompkg/boom$suffix" "$T/boom.c" || { echo "not ok - the fixture does not compile"; exit 1; }
printf '' > "$T/pkg/boompkg/__init__.py"
mkwheel() { t_mkwheel "$@"; } # NAME DIR [REQUIRES-DIST...]: its path on stdout
whl=$(mkwheel boompkg "$T/pkg")
run "$CCLFORGE" wheel verify "$whl" --install --json
expect_rc 1 "an extension that fails to import fails verify"
detail=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print([c["detail"] for c in json.load(sys.stdin)["checks"] if c["name"] == "import" and c["status"] == "fail"][0])' 2>/dev/null)
OUT=$detail
expect_out "ValueError: invalid literal for int\(\) with base 10: 'THE-REAL-CAUSE'" "the exception itself, at the end, is kept"
expect_out '\[\.\.\.\]' "the cut is marked"
printf '%s' "$detail" | python3 -c 'import sys
t = sys.stdin.read()
cut = t.split("[...]\n", 1)[1]
sys.exit(0 if cut.startswith(("  File ", "Traceback", "    ", "ValueError")) else 1)' \
    && ok "what is shown starts at a line's start" || bad "what is shown starts at a line's start"

# every module is imported: one that imports and one that needs a module the
# wheel does not carry, which Requires-Dist declares (--no-deps installs none)
# or not; each failure is named, the good one imported
ext() { # DIR/MODULE LEAF C-BODY: an extension module compiled here
    printf '#include <Python.h>\nstatic struct PyModuleDef d = { PyModuleDef_HEAD_INIT, "%s", NULL, -1, NULL };\nPyMODINIT_FUNC PyInit_%s(void)\n{\n%s\n    return PyModule_Create(&d);\n}\n' "$2" "$2" "$3" > "$T/$2.c"
    cc -shared -fPIC -I"$inc" -o "$1$suffix" "$T/$2.c" || { echo "not ok - the fixture $2 does not compile"; exit 1; }
}
mkdir -p "$T/deps/depspkg"
printf '' > "$T/deps/depspkg/__init__.py"
ext "$T/deps/depspkg/fine" fine ''
ext "$T/deps/depspkg/declared" declared '    if (!PyImport_ImportModule("cf_absent_dep")) return NULL;'
ext "$T/deps/depspkg/undeclared" undeclared '    if (!PyImport_ImportModule("cf_other_dep.sub")) return NULL;'
deps=$(mkwheel depspkg "$T/deps" "cf-absent-dep>=1.2")
run "$CCLFORGE" wheel verify "$deps" --install --json
expect_rc 1 "modules that need what the wheel does not carry fail verify"
expect_json 'sorted(d["imported"]) == ["depspkg.fine"] and sorted(d["import_failed"]) == ["depspkg.declared", "depspkg.undeclared"]' "every module imported, each failure listed"
expect_json 'any(c["name"] == "import" and c["status"] == "fail" and c["detail"].startswith("import depspkg.declared failed (it needs module cf_absent_dep, which the wheel does not carry and nothing in the venv provides (the wheel declares it, Requires-Dist: cf-absent-dep>=1.2; --no-deps installs no dependency); to import it, give --site DIR where cf_absent_dep is installed, or --system-site-packages)") for c in d["checks"])' "a declared dependency: named, with the way to import it"
expect_json 'any(c["name"] == "import" and c["status"] == "fail" and "it needs module cf_other_dep, which the wheel does not carry and nothing in the venv provides (no Requires-Dist of the wheel is named so: an undeclared dependency?)" in c["detail"] and "ModuleNotFoundError" in c["detail"] for c in d["checks"])' "an undeclared one: said so, with the exception"
expect_json 'any(c["name"] == "import" and c["status"] == "ok" and c["detail"].startswith("import depspkg.fine from ") for c in d["checks"])' "the module that imports passes"

# --smoke with no bridge: nothing ran, and that is a failure
run "$CCLFORGE" wheel verify "$deps" --smoke 2 --backend gloo
expect_rc 1 "--smoke 2 of a wheel without a bridge"
expect_out 'FAIL +smoke +asked for a 2-rank smoke; no bridge module found; nothing ran' "says no bridge was found and nothing ran"
mkdir -p "$T/libonly/libonly"
printf 'int libonly_f(void) { return 1; }\n' > "$T/libonly.c"
cc -shared -fPIC -Wl,-soname,libonly.so.1 -o "$T/libonly/libonly/libonly.so.1" "$T/libonly.c"
libonly=$(mkwheel libonly "$T/libonly")
run "$CCLFORGE" wheel verify "$libonly" --install --smoke 2 --backend gloo
expect_rc 1 "--smoke 2 of a library-only wheel"
expect_out 'n/a +import +nothing to import: the wheel carries no extension module' "nothing to import is not applicable, never ok"
expect_out 'FAIL +smoke +asked for a 2-rank smoke; no bridge module found; nothing ran' "and the smoke that was asked for fails"
expect_no_out 'the wheel passed' "the wheel does not pass"
run "$CCLFORGE" wheel verify "$libonly" --install
expect_rc 0 "--install alone of a library-only wheel: installed, nothing to import"

# a bridge (its data names make_nccl_backend) that does not import: the tier
# is lost, and the smoke asked for did not run. Here torch is not in the venv.
mkdir -p "$T/lost/lostpkg"
printf '' > "$T/lost/lostpkg/__init__.py"
ext "$T/lost/lostpkg/_bridge" _bridge '    static const char *volatile factory = "make_nccl_backend";
    PyErr_Format(PyExc_ImportError, "%s: the bridge fails at import", factory);
    return NULL;'
lost=$(mkwheel lostpkg "$T/lost" "torch")
run "$CCLFORGE" wheel verify "$lost" --smoke 2 --backend gloo --json
expect_rc 1 "a bridge that does not import"
expect_json 'any(c["name"] == "import" and c["status"] == "fail" and c["detail"].startswith("import lostpkg._bridge failed (it needs module torch, ") and "it is the wheel'"'"'s bridge (its data names make_nccl_backend): the wheel installs, and the native tier is lost)" in c["detail"] for c in d["checks"])' "named the bridge, the tier lost"
expect_json 'any(c["name"] == "smoke" and c["status"] == "fail" and c["detail"] == "asked for a 2-rank smoke; the bridge module lostpkg._bridge did not import (see import); nothing ran" for c in d["checks"])' "the smoke says the bridge did not import and nothing ran"
t_end
