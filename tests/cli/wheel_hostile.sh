#!/usr/bin/env bash
# `wheel verify` on hostile wheels (and a few sound ones) made by
# tests/fixtures/hostile_wheels.py: each case asserts the exit code, the check
# that fails and what it says, one valid JSON document, memory under 64 MB
# (max RSS from GNU time) and a time bound generous enough for a loaded
# 2-core machine. Then the loader itself as the oracle for the empty RPATH
# entry: glibc really loads a library from the current directory through it.
# Run once per inflate engine (cli.wheel_hostile.zlib, .isal): every report
# must name it.
. "$(dirname "$0")/lib.sh"
t_inflate_engine
SRC=${CCLFORGE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

for tool in cc g++ readelf python3; do
    command -v "$tool" >/dev/null || t_skip "$tool is not installed (scripts/deps.sh installs it)"
done
[ -x /usr/bin/time ] || t_skip "GNU time (/usr/bin/time) is not installed (scripts/deps.sh installs it)"

W=$T_TMP/wheels
mkdir -p "$W"
if ! nice -n 10 python3 "$SRC/tests/fixtures/hostile_wheels.py" "$W"; then
    bad "the hostile wheel generator ran"
    t_end
    exit 1
fi

# One line per case from the runner: "ok - ..." or "not ok - ..." with the reasons.
while IFS= read -r line; do
    case "$line" in
    "ok - "*) T_PASS=$((T_PASS + 1)); echo "$line" ;;
    "not ok - "*) T_FAIL=$((T_FAIL + 1)); echo "$line" ;;
    *) echo "$line" ;;
    esac
done < <(python3 - "$CCLFORGE" "$W" <<'PY'
import json, os, re, subprocess, sys, time
cclforge, out = sys.argv[1], sys.argv[2]
# The bound is on what a wheel makes cclforge hold: its peak RSS less the
# RSS of `cclforge --version` in the same environment (the binary's own
# pages, 2.5 MB plain and 25 MB under ASan, which grow with the code, not
# with the wheel).
limit_kb = 48 * 1024
env = dict(os.environ)
# Under AddressSanitizer, freed memory is held in ASan's quarantine (256 MB by
# default) to catch use after free: the bound is on cclforge's memory, so the
# quarantine is emptied for these runs (70,000 members: 37 MB plain, 66 MB
# under ASan then, 41 MB of it over start-up; 210 MB with the quarantine).
ldd = subprocess.run(["ldd", cclforge], capture_output=True, text=True).stdout
if "libasan" in ldd:
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0").lstrip(":")
    print("under ASan: quarantine_size_mb=0 for the memory bound")
base_file = os.path.join(out, ".rss-base")
subprocess.run(["/usr/bin/time", "-f", "%M", "-o", base_file, cclforge, "--version"], capture_output=True, env=env)
base_kb = int(open(base_file).read().split()[-1])
print("start-up RSS (cclforge --version): %d KB" % base_kb)
for c in json.load(open(os.path.join(out, "manifest.json"))):
    mem = os.path.join(out, ".rss")
    argv = ["/usr/bin/time", "-f", "%M", "-o", mem, cclforge, "wheel", "verify", "--json"] + c["args"] + \
           [os.path.join(out, c["wheel"])]
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, cwd=out, env=env)
    took = time.monotonic() - t0
    why = []
    rss = int(open(mem).read().split()[-1]) if os.path.exists(mem) else -1
    if p.returncode != c["rc"]:
        why.append("exit %d, wanted %d" % (p.returncode, c["rc"]))
    try:
        doc = json.loads(p.stdout.decode("utf-8"))
    except Exception as e:
        doc = None
        why.append("stdout is not one JSON document (%s): %r" % (e, p.stdout[:300]))
    if doc is not None:
        failed = [k for k in doc.get("checks", []) if k["status"] == "fail"]
        if c["check"] is None and failed:
            why.append("checks failed: %s" % "; ".join(k["name"] + ": " + k["detail"][:300] for k in failed))
        if c["check"] is not None:
            hit = [k for k in failed if k["name"] == c["check"]]
            if not hit:
                why.append("check %s did not fail (failed: %s)" % (c["check"], [k["name"] for k in failed]))
            elif c["detail"] and not re.search(c["detail"], hit[0]["detail"]):
                why.append("%s says %r, wanted /%s/" % (c["check"], hit[0]["detail"][:600], c["detail"]))
        if doc.get("ok") != (c["rc"] == 0):
            why.append("JSON ok is %s" % doc.get("ok"))
        engine = os.environ.get("CCLFORGE_INFLATE")
        if engine and doc.get("inflate") != engine:
            why.append("inflated by %s, not %s" % (doc.get("inflate"), engine))
    if rss < 0 or rss - base_kb > limit_kb:
        why.append("max RSS %d KB, %d KB over start-up: over %d KB" % (rss, rss - base_kb, limit_kb))
    if took > c["seconds"]:
        why.append("took %.1f s, over %d s" % (took, c["seconds"]))
    tag = "%s (exit %d, %s%s, %d KB, %.1f s)" % (c["name"], p.returncode, c["check"] or "all pass",
                                                  "" if c["check"] is None else " fails", rss, took)
    if why:
        print("not ok - " + tag)
        for w in why:
            print("  " + w)
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-1000:])
    else:
        print("ok - " + tag)
PY
)

# Text output: what came from the archive never reaches the terminal raw.
run "$CCLFORGE" wheel verify "$W/esc-1.0-py3-none-any.whl"
if printf '%s' "$OUT" | grep -q $'\x1b'; then bad "no raw escape byte in the text output"; else ok "no raw escape byte in the text output"; fi
run "$CCLFORGE" wheel verify "$W/hw"$'\x1b'"[2J-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
if printf '%s' "$OUT" | grep -q $'\x1b'; then bad "no raw escape byte from the file name in the text output"; else ok "no raw escape byte from the file name in the text output"; fi

# The oracle for the empty RPATH entry: the same library, loaded by glibc from
# a directory holding a stranger's libhelper.so, takes that one.
mkdir -p "$T_TMP/hijack/pkg" "$T_TMP/hijack/evil"
cp "$W/fixtures/ext_rp2.so" "$T_TMP/hijack/pkg/ext.so"
echo 'int helper(void) { return 666; }' >"$T_TMP/hijack/evil.c"
cc -shared -fPIC -o "$T_TMP/hijack/evil/libhelper.so" "$T_TMP/hijack/evil.c" -Wl,-soname,libhelper.so
run bash -c "cd '$T_TMP/hijack/evil' && LD_DEBUG=libs python3 -c 'import ctypes; l = ctypes.CDLL(\"$T_TMP/hijack/pkg/ext.so\"); print(\"helper says\", l.PyInit_ext())'"
expect_out "helper says 666" "glibc loads the stranger's library through RUNPATH '\$ORIGIN:' (from the current directory)"
expect_err "trying file=libhelper.so" "LD_DEBUG shows the bare name tried in the current directory"
t_end
