#!/usr/bin/env bash
# `wheel verify --install` of a wheel whose extension fails to import with a
# long traceback: the failure's words are cut at a line's start, keeping the
# end (the exception itself), never mid-word at the front ("ck (most recent
# call last)"). The extension is compiled here; the wheel written by Python's
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
tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
whl=$T/boompkg-1.0-$tag-$tag-linux_x86_64.whl
python3 - "$T/pkg" "$whl" "$tag" <<'PY'
import base64, hashlib, os, sys, zipfile
root, out, tag = sys.argv[1:]
files = {}
for d, _, names in os.walk(root):
    for n in names:
        p = os.path.join(d, n)
        files[os.path.relpath(p, root)] = open(p, "rb").read()
di = "boompkg-1.0.dist-info/"
files[di + "METADATA"] = b"Metadata-Version: 2.1\nName: boompkg\nVersion: 1.0\n"
files[di + "WHEEL"] = ("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: %s-%s-linux_x86_64\n" % (tag, tag)).encode()
rec = []
with zipfile.ZipFile(out, "w") as z:
    for name, data in sorted(files.items()):
        z.writestr(name, data)
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (name, h, len(data)))
    rec.append(di + "RECORD,,")
    z.writestr(di + "RECORD", "\n".join(rec) + "\n")
PY
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
t_end
