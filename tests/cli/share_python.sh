# The Python cclforge runs is files under share/cclforge/python, found beside
# the executable as the bridge sources are (src/util/share_dir.c): every .py
# of share/cclforge compiles (python3 -m py_compile), the build directory's
# copy is the source tree's, every file the library names is there, the ones
# that need no wheel run here and say what their callers read, and a binary
# with no share/ beside it says which file is missing and the fix. The
# scripts that need a wheel run for real in wheel_smoke_items.sh,
# wheel_install_hostile.sh and wheel_import_error.sh.
. "$(dirname "$0")/lib.sh"

SRC=${CCLFORGE_SOURCE_DIR:?}
SHARE=$SRC/share/cclforge
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null ||
    t_skip "python3 3.8 or newer is missing (PYTHONPYCACHEPREFIX keeps py_compile's output out of the source tree)"

# ---- every .py of share/cclforge compiles, its bytecode kept in $T_TMP ----
mapfile -t PY < <(cd "$SHARE" && find . -name '*.py' | sed 's|^\./||' | LC_ALL=C sort)
RC=0 OUT="${PY[*]}" ERR=
[ "${#PY[@]}" -ge 5 ] && ok "share/cclforge holds the Python scripts (${#PY[@]})" || bad "share/cclforge holds the Python scripts"
for f in "${PY[@]}"; do
    run env PYTHONPYCACHEPREFIX="$T_TMP/pyc" python3 -m py_compile "$SHARE/$f"
    expect_rc 0 "py_compile share/cclforge/$f"
    RC=0 OUT= ERR=
    cmp -s "$SHARE/$f" "${CCLFORGE_BINARY_DIR:?}/share/cclforge/$f" &&
        ok "the build directory's share/cclforge/$f is the source's" || bad "the build directory's share/cclforge/$f is the source's"
done
RC=0 OUT=$(find "$SHARE" -name __pycache__) ERR=
[ -z "$OUT" ] && ok "nothing compiled into the source tree" || bad "nothing compiled into the source tree"

# ---- every share file the library asks for exists ----
mapfile -t NEEDED < <(grep -rhoE 'cf_share_(need|file|looked)\("[^"]+"' "$SRC/src" | sed 's/.*("//;s/"$//' | LC_ALL=C sort -u)
for rel in "${NEEDED[@]}"; do
    RC=0 OUT=$rel ERR=
    [ -f "$SHARE/$rel" ] && ok "src/ names share/cclforge/$rel, which exists" || bad "src/ names share/cclforge/$rel, which is missing"
done
printf '%s\n' "${NEEDED[@]}" | grep -qx python/wheel_smoke.py && ok "the harness is among them" || bad "the harness is among them"

# ---- the scripts that need no wheel, run as their callers run them ----
run python3 "$SHARE/python/python_probe.py"
expect_rc 0 "python_probe.py runs"
expect_json 'd["executable"] and d["version"] == "%d.%d" % __import__("sys").version_info[:2] and isinstance(d["path"], list)' "and describes the interpreter"
# run as a file, not -c: its own folder must not stand in for the working directory
expect_json '"" not in d["path"] and not any(p.rstrip("/").endswith("share/cclforge/python") for p in d["path"])' "its sys.path is the one \`python -c\` sees (no share/cclforge/python on it)"
run python3 -I "$SHARE/python/python_sites.py"
expect_rc 0 "python_sites.py runs isolated"
expect_out "^/" "and prints directories"
run python3 -I "$SHARE/python/venv_platlib.py"
expect_rc 0 "venv_platlib.py runs isolated"
expect_out "^/.*-packages$" "and prints the platlib"

# ---- a binary alone: the missing file named, with the fix ----
mkdir -p "$T_TMP/bare"
cp "$CCLFORGE" "$T_TMP/bare/cclforge"
run "$T_TMP/bare/cclforge" bridge plan --libtorch "$T_TMP/nowhere"
expect_out "share/cclforge/python/python_probe.py is missing \\(looked at $T_TMP/bare/share/cclforge/python/python_probe.py, [^)]*\\): reinstall cclforge" \
    "bridge plan with no share/ names the missing probe, where it looked and the fix"
# a pure-Python wheel that passes every static check: install is attempted
WHEEL=$T_TMP/pure-1.0-py3-none-any.whl
mkdir -p "$T_TMP/site"
python3 - "$WHEEL" <<'PY'
import base64, hashlib, sys, zipfile
files = {"pure.py": b"X = 1\n", "pure-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pure\nVersion: 1.0\n",
         "pure-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
with zipfile.ZipFile(sys.argv[1], "w") as z:
    rec = []
    for n, data in files.items():
        z.writestr(n, data)
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (n, h, len(data)))
    z.writestr("pure-1.0.dist-info/RECORD", "\n".join(rec + ["pure-1.0.dist-info/RECORD,,"]) + "\n")
PY
if python3 -c 'import venv, ensurepip' 2>/dev/null; then
    run "$T_TMP/bare/cclforge" wheel verify "$WHEEL" --install --site "$T_TMP/site"
    expect_rc 1 "wheel verify --install --site with no share/ fails"
    expect_out "FAIL +install +--site: cclforge's share/cclforge/python/venv_platlib.py is missing \\(looked at " \
        "naming the missing script"
    run "$T_TMP/bare/cclforge" wheel verify "$WHEEL" --install --system-site-packages
    expect_rc 1 "wheel verify --system-site-packages with no share/ fails"
    expect_out "share/cclforge/python/python_sites.py is missing" "naming the missing script"
else
    t_skip_part "python3 has no venv/ensurepip: wheel verify with no share/ did not run"
fi

t_end
