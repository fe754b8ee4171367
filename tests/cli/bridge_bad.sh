#!/usr/bin/env bash
# Bad input to `bridge` and `wheel verify`, through the real binary: each a clear
# error and the right exit code. Fast: no torch compile here.
. "$(dirname "$0")/lib.sh"
T=$T_TMP
unset LIBTORCH NCCL_HOME

run "$CCLFORGE" bridge --help
expect_rc 0 "bridge --help"
expect_out 'make_nccl_backend' "help says what the bridge is"
run "$CCLFORGE" bridge plan --help
expect_rc 0 "bridge plan --help"
run "$CCLFORGE" bridge frobnicate
expect_rc 2 "unknown subcommand is a usage error"
run "$CCLFORGE" bridge plan --vendor
expect_rc 2 "missing option argument is a usage error"
run "$CCLFORGE" bridge plan --name 'not-an-identifier' --libtorch "$T"
expect_rc 2 "a module name that is not an identifier is a usage error"
expect_err 'not a Python identifier' "and says so"

# no libtorch where pointed
run "$CCLFORGE" bridge plan --libtorch "$T/nowhere"
expect_rc 1 "no libtorch: exit 1"
expect_out "$T/nowhere: no such directory" "no libtorch: names the directory"
run "$CCLFORGE" bridge build --libtorch "$T/nowhere" -o "$T/out"
expect_rc 1 "build refuses a plan with problems"
expect_err 'nothing was built' "and builds nothing"

# a CPU-only libtorch: headers, no libtorch_cuda.so
mkdir -p "$T/cpu/torch/include/torch/csrc/distributed/c10d" "$T/cpu/torch/lib"
: > "$T/cpu/torch/include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp"
for l in libc10.so libtorch.so libtorch_cpu.so libtorch_python.so; do
    echo 'int f(void){return 0;}' > "$T/s.c"; cc -shared -fPIC -o "$T/cpu/torch/lib/$l" "$T/s.c"
done
run "$CCLFORGE" bridge plan --libtorch "$T/cpu/torch" --json
expect_rc 1 "CPU-only libtorch: exit 1"
expect_json 'any("CPU-only libtorch" in p for p in d["plan"]["problems"]) and d["plan"]["ok"] is False' "CPU-only libtorch: said in the JSON"

# an old compiler first on PATH (gcc and g++ both say 8.5)
mkdir -p "$T/oldbin"
for c in gcc g++; do printf '#!/bin/sh\necho "%s (GCC) 8.5.0 20210514"\n' "$c" > "$T/oldbin/$c"; chmod +x "$T/oldbin/$c"; done
run env PATH="$T/oldbin:$PATH" CXX= "$CCLFORGE" bridge plan --libtorch "$T/cpu/torch"
expect_rc 1 "old compiler: exit 1"
expect_out 'is GCC 8.5.0 .*too old, the bridge needs GCC >= 9' "old compiler: the gate and the fix"

# wheel verify: usage and unreadable input
run "$CCLFORGE" wheel verify
expect_rc 2 "wheel verify without a wheel is a usage error"
run "$CCLFORGE" wheel verify "$T/none.whl"
expect_rc 1 "a missing wheel: exit 1"
expect_out 'FAIL file +.*no such file' "and says so"
echo 'not a zip' > "$T/junk-1.0-py3-none-any.whl"
run "$CCLFORGE" wheel verify "$T/junk-1.0-py3-none-any.whl"
expect_rc 1 "a file that is not a zip: exit 1"
expect_out 'FAIL zip +not a readable zip archive' "and says so"
run "$CCLFORGE" wheel verify "$T/junk-1.0-py3-none-any.whl" --smoke 0
expect_rc 2 "--smoke 0 is a usage error"

# a zip-slip member and a tampered RECORD in one wheel, made with Python's zipfile
python3 - "$T/evil-1.0-py3-none-any.whl" <<'PY'
import base64, hashlib, sys, zipfile
def h(b): return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
files = {"evil/__init__.py": b"x = 1\n", "../../etc/cron.d/evil": b"* * * * * root sh\n",
         "evil-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = "".join("%s,%s,%d\n" % (n, h(b"tampered" if n.endswith("__init__.py") else b), len(b)) for n, b in files.items())
rec += "evil-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for n, b in files.items(): z.writestr(n, b)
    z.writestr("evil-1.0.dist-info/RECORD", rec)
PY
run "$CCLFORGE" wheel verify "$T/evil-1.0-py3-none-any.whl" --json
expect_rc 1 "zip slip + tampered RECORD: exit 1"
expect_json 'any(c["name"] == "zip" and c["status"] == "fail" and "zip slip" in c["detail"] for c in d["checks"])' "zip slip named"
expect_json 'any(c["name"] == "record" and c["status"] == "fail" and "evil/__init__.py" in c["detail"] for c in d["checks"])' "tampered RECORD entry named"
expect_json 'd["schema"] == "cclforge.wheel-verify/1"' "JSON schema field"
run "$CCLFORGE" wheel verify "$T/evil-1.0-py3-none-any.whl" --install --smoke 2 --backend gloo
expect_rc 1 "--install and --smoke of a wheel that failed the static checks"
expect_out 'FAIL +install +not attempted: [0-9]+ static check\(s\) above failed' "no install of a wheel that failed the static checks: asked for, not run, a failure"
expect_out 'FAIL +smoke +asked for a 2-rank smoke; nothing was installed; nothing ran' "and the smoke asked for says it did not run"

# The bridge source is found beside the executable by one rule, from any
# directory the binary is copied to: <exe dir>/share/cclforge, then
# <exe dir>/../share/cclforge (an installed prefix).
mkdir -p "$T/oot/bin" "$T/oot/share/cclforge/bridge" "$T/bare"
cp "$CCLFORGE" "$T/bare/cclforge"
run "$T/bare/cclforge" bridge plan --libtorch "$T/nowhere"
expect_out "share directory is missing \\(looked at [^ ]*/share/cclforge/bridge/cclforge_nccl_bridge.cpp, " "no share/ beside a copied binary: the error says where it looked"
cp "$CCLFORGE" "$T/oot/bin/cclforge"
cp "$CCLFORGE_SOURCE_DIR/share/cclforge/bridge/cclforge_nccl_bridge.cpp" "$T/oot/share/cclforge/bridge/"
run "$T/oot/bin/cclforge" bridge plan --libtorch "$T/nowhere"
expect_out "source +$T/oot/share/cclforge/bridge/cclforge_nccl_bridge.cpp" "an installed prefix: found in ../share/cclforge"
run "$CCLFORGE" bridge plan --libtorch "$T/nowhere"
expect_out "source +$CCLFORGE_BINARY_DIR/share/cclforge/bridge/cclforge_nccl_bridge.cpp" "a build directory: its own copy of share/"

t_end
