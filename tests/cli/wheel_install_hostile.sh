#!/usr/bin/env bash
# `wheel verify --install` on wheels whose own code lies or lingers (their
# modules run in the import step, with the user's rights): a package that
# prints a result line of its own and calls os._exit(0) before its extension
# is imported, one that writes a forged result to every descriptor it has,
# and one that double-forks a setsid() daemon at import. The liars are failed
# imports; the daemon neither delays verify (which returns long before its
# --timeout) nor survives it (its pid file names a process that is gone). A
# sound wheel of the same extension passes, and a .pth file is listed. The
# extension is a real CPython module compiled here for this python3.
. "$(dirname "$0")/lib.sh"
for tool in cc python3; do
    command -v "$tool" >/dev/null || t_skip "$tool is not installed"
done
python3 -m venv "$T_TMP/probe-venv" >/dev/null 2>&1 && "$T_TMP/probe-venv/bin/python" -m pip --version >/dev/null 2>&1 ||
    t_skip "python3 -m venv with pip does not work here (python3-venv)"
rm -rf "$T_TMP/probe-venv"
inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || t_skip "no Python.h for this python3 (python3-dev)"
W=$T_TMP/w
mkdir -p "$W"
cat >"$W/ext.c" <<'C'
#include <Python.h>
static struct PyModuleDef def = { PyModuleDef_HEAD_INIT, "ext", NULL, -1, NULL };
PyMODINIT_FUNC PyInit_ext(void) { return PyModule_Create(&def); }
C
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cc -shared -fPIC -O1 -I"$inc" -o "$W/ext$suffix" "$W/ext.c" || t_skip "cannot compile a CPython extension here"
PIDFILE=$T_TMP/daemon.pid
export HW_PIDFILE=$PIDFILE

python3 - "$W" "$W/ext$suffix" <<'PY'
import base64, hashlib, os, sys, sysconfig, zipfile
out, ext = sys.argv[1], sys.argv[2]
tag = "cp%d%d" % sys.version_info[:2]
plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
TAG = "%s-%s-%s" % (tag, tag, plat)
so = open(ext, "rb").read()
def digest(d):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
def wheel(dist, init, extra=()):
    di = "%s-1.0.dist-info" % dist
    files = [("hw/__init__.py", init.encode()), ("hw/" + os.path.basename(ext), so)] + list(extra)
    files += [(di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\nTag: %s\n" % TAG).encode()),
              (di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % dist).encode())]
    rec = "".join("%s,%s,%d\n" % (n, digest(d), len(d)) for n, d in files) + di + "/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(out, "%s-1.0-%s.whl" % (dist, TAG)), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            z.writestr(n, d)
        z.writestr(di + "/RECORD", rec)
wheel("sound", "")
# the liar: the result line verify used to take from stdout, then out before hw.ext is imported
wheel("liar", "import json, os, sys\n"
              "print(json.dumps({'module': 'hw.ext', 'file': os.path.join(sys.prefix, 'hw', 'ext.so'),\n"
              "                  'has_make_nccl_backend': False, 'bridge': False}), flush=True)\n"
              "os._exit(0)\n")
# the forger: the same line on every descriptor it has, then out
wheel("forger", "import json, os\n"
                "line = (json.dumps({'module': 'hw.ext', 'file': '/x', 'bridge': False}) + '\\n').encode()\n"
                "for fd in range(3, 64):\n"
                "    try:\n"
                "        os.write(fd, line)\n"
                "    except OSError:\n"
                "        pass\n"
                "os._exit(0)\n")
# the daemon: double fork, setsid, keeps stdout and stderr open, writes its pid, sleeps
wheel("daemon", "import os, time\n"
                "if os.fork() == 0:\n"
                "    os.setsid()\n"
                "    if os.fork() == 0:\n"
                "        with open(os.environ['HW_PIDFILE'] + '.tmp', 'w') as f:\n"
                "            f.write(str(os.getpid()))\n"
                "        os.rename(os.environ['HW_PIDFILE'] + '.tmp', os.environ['HW_PIDFILE'])\n"
                "        time.sleep(300)\n"
                "    os._exit(0)\n"
                "time.sleep(0.5)\n")
# the liar again, as a bridge (the marker names its module): --smoke's ranks import it too
wheel("liarbridge", "import os\nif os.environ.get('RANK') is not None:\n    os._exit(0)\n",
      extra=[("liarbridge-1.0.dist-info/cclforge.json", b'{"schema": "cclforge.wheel-graft/1", "module": "hw.ext"}\n')])
wheel("pth", "", extra=[("hw_boot.pth", b"# comment\nimport os; os.environ.setdefault('HW', '1')\n"),
                        ("hw_paths.pth", b"hw_extra\n")])
print(TAG)
PY
TAG=$(python3 -c 'import sys, sysconfig; t = "cp%d%d" % sys.version_info[:2]; print("%s-%s-%s" % (t, t, sysconfig.get_platform().replace("-", "_").replace(".", "_")))')
whl() { echo "$W/$1-1.0-$TAG.whl"; }
import_detail() { printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" | ".join(c["status"] + ": " + c["detail"] for c in d["checks"] if c["name"] == "import"))'; }

run "$CCLFORGE" wheel verify --install --timeout 120 --json "$(whl sound)"
expect_rc 0 "the sound wheel: installed and imported"
expect_json 'any(c["name"] == "import" and c["status"] == "ok" for c in d["checks"])' "its import is ok"

run "$CCLFORGE" wheel verify --install --timeout 120 --json "$(whl liar)"
expect_rc 1 "the liar (a result line on stdout, then os._exit(0) before the extension) fails"
expect_json 'any(c["name"] == "import" and c["status"] == "fail" and "did not complete" in c["detail"] and "os._exit" in c["detail"] for c in d["checks"])' "as an import that did not complete: $(import_detail | cut -c1-160)"

run "$CCLFORGE" wheel verify --install --timeout 120 --json "$(whl forger)"
expect_rc 1 "the forger (its line on every descriptor) fails"
expect_json 'any(c["name"] == "import" and c["status"] == "fail" and "not the import script" in c["detail"] for c in d["checks"])' "its line is not taken for the script's: $(import_detail | cut -c1-160)"

rm -f "$PIDFILE"
# a verify that waited for the daemon's end of the pipe would meet --timeout
# (120 s), and the import would not complete
run "$CCLFORGE" wheel verify --install --timeout 120 --json "$(whl daemon)"
expect_rc 0 "the daemon's wheel imports (its import completes)"
expect_json 'any(c["name"] == "import" and c["status"] == "ok" and "left 1 process(es) running, killed" in c["detail"] for c in d["checks"])' "and the process it left is named: $(import_detail | cut -c1-200)"
if [ -s "$PIDFILE" ]; then
    dpid=$(cat "$PIDFILE")
    if kill -0 "$dpid" 2>/dev/null; then
        bad "the daemon (pid $dpid) is still alive after verify returned"
        kill -9 "$dpid" 2>/dev/null
    else
        ok "the daemon (pid $dpid) is gone when verify returns"
    fi
else
    bad "the daemon wrote its pid file (it ran)"
fi

# --smoke's ranks run the wheel's code too: a rank that exits 0 early (os._exit at
# import, before the collectives) is a failed rank, not a passed one
if [ -n "${CCLFORGE_SOURCE_DIR:-}" ] && site=$(bash "$CCLFORGE_SOURCE_DIR/scripts/torch-cache.sh" 2>/dev/null | tail -n 1) &&
    [ -d "$site/torch" ]; then
    run "$CCLFORGE" wheel verify --install --smoke 2 --backend gloo --site "$site" --timeout 300 --json "$(whl liarbridge)"
    expect_rc 1 "--smoke 2 --backend gloo with ranks that exit 0 at import fails"
    expect_json 'any(c["name"] == "smoke" and c["status"] == "fail" and "exited 0 without the harness'"'"'s RANK_PASS line" in c["detail"] for c in d["checks"])' "the smoke check says why: $(printf '%s' "$OUT" | python3 -c 'import json,sys; print([c["detail"][:150] for c in json.load(sys.stdin)["checks"] if c["name"] == "smoke"])' 2>/dev/null)"
else
    t_skip_part "--smoke with a lying rank: scripts/torch-cache.sh has no torch here (PyPI is needed once)"
fi

run "$CCLFORGE" wheel verify --json "$(whl pth)"
expect_rc 0 "a wheel with .pth files passes the static checks"
expect_json 'any(c["name"] == "pth" and "2 .pth file(s), 1 running code" in c["detail"] and "hw_boot.pth'"'"' runs code at every interpreter start (1 line(s) site.py executes; line 2: '"'"'import os" in c["detail"] and "hw_paths.pth'"'"' adds directories" in c["detail"] for c in d["checks"])' "and lists them, naming the one that runs code"
run "$CCLFORGE" wheel verify --json "$(whl sound)"
expect_json 'any(c["name"] == "pth" and c["status"] == "ok" and c["detail"].startswith("no .pth file") for c in d["checks"])' "a wheel without one says so"
t_end
