#!/usr/bin/env bash
# `cclforge wheel graft` on small wheels made here (Python's zipfile writes
# them, as pip does; cc builds the extension): members kept byte for byte,
# the new file added and recorded, tags and Root-Is-Purelib updated, the
# marker written, signatures dropped, a repeat byte-identical; bad input is
# refused with the thing named. tests/cli/bridge_host.sh grafts the real bridge.
. "$(dirname "$0")/lib.sh"
T=$T_TMP

mkwheel() { # PATH [extra member name]: a pure wheel of package plug (0.1.0)
    python3 - "$@" <<'PY'
import base64, hashlib, sys, zipfile
path = sys.argv[1]
extra = sys.argv[2] if len(sys.argv) > 2 else None
files = {
    "plug/__init__.py": b"VALUE = 1\n",
    "plug/comm/__init__.py": b"",
    "plug-0.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: plug\nVersion: 0.1.0\n\n",
    "plug-0.1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "plug-0.1.0.dist-info/RECORD.jws": b"{}",
}
if extra:
    files[extra] = b"x"
rec = ""
for n, d in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
    rec += "%s,sha256=%s,%d\n" % (n, h, len(d))
rec += "plug-0.1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for n, d in files.items():
        z.writestr(n, d)
    z.writestr("plug-0.1.0.dist-info/RECORD", rec)
PY
}

mkwheel "$T/plug-0.1.0-py3-none-any.whl"
printf 'int PyInit__ext(void) { return 0; }\n' > "$T/ext.c"
cc -shared -fPIC -Wl,-rpath,'$ORIGIN/../../torch/lib' -o "$T/_ext.cpython-311-x86_64-linux-gnu.so" "$T/ext.c"
printf 'int vendor(void) { return 1; }\n' > "$T/v.c"
cc -shared -fPIC -Wl,-soname,libvendor.so.1 -o "$T/libvendor.so.1" "$T/v.c"

run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug/comm \
    --bundle "$T/libvendor.so.1" -o "$T/out" --json
expect_rc 0 "graft an extension and a bundled library into a pure wheel"
expect_json 'd["schema"] == "cclforge.wheel-graft/1" and d["module"] == "plug.comm._ext"' "the extension's module is named"
expect_json 'd["tag"].startswith("cp311-cp311-") and d["wheel"].endswith("/plug-0.1.0-" + d["tag"] + ".whl")' "cp311 tags for a CPython extension, in the file name"
expect_json 'd["added"] == ["plug/comm/_ext.cpython-311-x86_64-linux-gnu.so", "plug/comm/lib/libvendor.so.1"] and d["dropped"] == ["plug-0.1.0.dist-info/RECORD.jws"]' "added at --at and --bundle-at; the old signature dropped"
out=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["wheel"])')
python3 - "$T/plug-0.1.0-py3-none-any.whl" "$out" <<'PY' && ok "members byte for byte, RECORD complete and last, WHEEL updated, marker written" || bad "the grafted wheel's contents"
import base64, csv, hashlib, io, json, sys, zipfile
old, new = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])
names = [i.filename for i in new.infolist()]
for n in ("plug/__init__.py", "plug/comm/__init__.py", "plug-0.1.0.dist-info/METADATA"):
    assert new.read(n) == old.read(n), n
assert names[-1] == "plug-0.1.0.dist-info/RECORD", names
assert "plug-0.1.0.dist-info/RECORD.jws" not in names
rows = {r[0]: r for r in csv.reader(io.StringIO(new.read(names[-1]).decode()))}
assert set(rows) == set(names), (set(rows) ^ set(names))
for n in names[:-1]:
    h = base64.urlsafe_b64encode(hashlib.sha256(new.read(n)).digest()).rstrip(b"=").decode()
    assert rows[n][1] == "sha256=" + h, n
wheel = new.read("plug-0.1.0.dist-info/WHEEL").decode()
assert "Root-Is-Purelib: false" in wheel and "Tag: cp311-cp311-" in wheel, wheel
marker = json.loads(new.read("plug-0.1.0.dist-info/cclforge.json"))
assert marker["module"] == "plug.comm._ext" and marker["externals"] == ["torch/lib"], marker
assert (new.getinfo("plug/comm/_ext.cpython-311-x86_64-linux-gnu.so").external_attr >> 16) & 0o111
PY
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug/comm \
    --bundle "$T/libvendor.so.1" -o "$T/out2"
expect_rc 0 "the same graft again"
cmp -s "$out" "$T/out2/$(basename "$out")" && ok "byte-identical: reproducible" || bad "byte-identical: reproducible"
run "$CCLFORGE" wheel graft "$out" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug/comm -o "$T/out3"
expect_rc 0 "grafting the same file again replaces it"
expect_out 'replaced plug/comm/_ext.cpython-311-x86_64-linux-gnu.so' "and says so"
run "$CCLFORGE" wheel verify "$out" --external torch/lib
expect_rc 0 "the grafted wheel passes wheel verify's static checks"

# bad input: named, non-zero, nothing written
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so"
expect_rc 2 "no --at: usage error"
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at ../up
expect_rc 2 "--at climbing out of the wheel: usage error"
expect_err "--at '../up'" "names the option and value"
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug-0.1.0.dist-info
expect_rc 2 "--at into .dist-info: usage error"
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/missing.so" --at plug
expect_rc 2 "a missing FILE"
expect_err "missing.so: no such file" "is named"
printf 'not a zip' > "$T/fake-0.1-py3-none-any.whl"
run "$CCLFORGE" wheel graft "$T/fake-0.1-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug -o "$T/none"
expect_rc 1 "a wheel that is not a zip"
expect_err "not a readable zip" "is refused"
mkwheel "$T/evil-0.1.0-py3-none-any.whl" "../../etc/evil"
run "$CCLFORGE" wheel graft "$T/evil-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug -o "$T/none"
expect_rc 1 "a wheel with a member climbing out"
expect_err "not a clean relative path" "is refused"
[ ! -e "$T/none" ] || [ -z "$(ls "$T/none")" ] && ok "nothing written for refused input" || bad "nothing written for refused input"
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" --at plug
expect_rc 2 "no FILE: usage error"
# FIFOs (no writer: opening one to read would block) as the wheel and as a FILE
mkfifo "$T/fifo-0.1-py3-none-any.whl" "$T/fifo.so"
run timeout 20 "$CCLFORGE" wheel graft "$T/fifo-0.1-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug -o "$T/none"
expect_rc 1 "a FIFO as the wheel is refused, not waited on"
expect_err "fifo-0.1-py3-none-any.whl: no such file, or not a regular file" "and named"
run timeout 20 "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/fifo.so" --at plug -o "$T/none"
expect_rc 2 "a FIFO as a FILE is refused"
expect_err "fifo.so: no such file, or not a regular file" "and named"
# control characters: in --at, --bundle-at or a FILE's name (its member name), a usage error naming the argument
for c in $'\r' $'\n' $'\x01' $'\e' $'\x7f' $'\t' $'\xc2\x9b'; do
    shown=$(printf '%s' "$c" | od -An -tx1 | tr -d ' \n')
    run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at "plug/co${c}mm" -o "$T/none"
    expect_rc 2 "--at with a control character (0x$shown): usage error"
    expect_err "--at 'plug/co.*mm': a control character \(byte 8\)" "names --at and where"
    # one line, and no control byte in it (escaped as \xNN)
    [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] && ! printf '%s' "$ERR" | LC_ALL=C grep -q $'[\x01-\x1f\x7f]' &&
        ok "no raw 0x$shown in the message" || bad "the raw control character (0x$shown) reached stderr"
done
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug/comm \
    --bundle "$T/libvendor.so.1" --bundle-at $'plug/li\nb' -o "$T/none"
expect_rc 2 "--bundle-at with a line feed: usage error"
expect_err "--bundle-at 'plug/li.x0ab': a control character" "names --bundle-at"
cp "$T/libvendor.so.1" "$T/libvendor"$'\r'".so.1"
run "$CCLFORGE" wheel graft "$T/plug-0.1.0-py3-none-any.whl" "$T/libvendor"$'\r'".so.1" --at plug/comm -o "$T/none"
expect_rc 2 "a FILE named with a CR: usage error"
expect_err "FILE '.*libvendor.x0d.so.1': a control character in its name" "names the FILE"
# members that would be one file once installed
mkwheel "$T/twin-0.1.0-py3-none-any.whl" "plug/Comm/__init__.py"
run "$CCLFORGE" wheel graft "$T/twin-0.1.0-py3-none-any.whl" "$T/_ext.cpython-311-x86_64-linux-gnu.so" --at plug -o "$T/none"
expect_rc 1 "a wheel with case-only twins is refused"
expect_err "'plug/comm/__init__.py' and 'plug/Comm/__init__.py' differ only in case" "naming both members"
cp "$T/_ext.cpython-311-x86_64-linux-gnu.so" "$T/_EXT.cpython-311-x86_64-linux-gnu.so"
run "$CCLFORGE" wheel graft "$out" "$T/_EXT.cpython-311-x86_64-linux-gnu.so" --at plug/comm -o "$T/none"
expect_rc 1 "grafting a case twin of a member is refused"
expect_err "'plug/comm/_ext.cpython-311-x86_64-linux-gnu.so' and 'plug/comm/_EXT.cpython-311-x86_64-linux-gnu.so' differ only in case" "naming both"
[ ! -e "$T/none" ] || [ -z "$(ls "$T/none")" ] && ok "nothing written for any of them" || bad "nothing written for any of them"
t_end
