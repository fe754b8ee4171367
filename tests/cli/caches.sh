# The scan cache (inspect, doctor) and the probe cache (doctor's Python and
# compilers): an entry is used only for the very file it was made from: a
# library rewritten in place with the same size and its mtime put back (only
# ctime moves) is scanned again. Plus --no-cache,
# concurrent writers, a corrupt entry, the size bound, and a Python probe
# that is asked once, then again when its site directory changes.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
export CCLFORGE_HOME=$T_TMP/home
stat_of() { stat -c '%s %Y' "$1"; }
json() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

cat >banner.c <<'C'
const char cf_banner[] = "NCCL version 2.28.9+cuda13.0";
const char *cf_version(void) { return cf_banner; }
C
cc -shared -fPIC -o libnccl.so.2 banner.c -Wl,-soname,libnccl.so.2 || { echo "cc failed"; exit 1; }
sleep 2.2 # files changed in the last 2 s are not remembered (a timestamp tick could hide a change)

"$CCLFORGE" inspect --json libnccl.so.2 >a.json
[ "$(json a.json 'd["targets"][0]["objects"][0]["from_cache"]')" = False ] && ok "first run scans" || bad "first run scans"
[ "$(json a.json 'd["scan_cache"]["stored"] >= 1')" = True ] && ok "and stores an entry" || bad "and stores an entry"
"$CCLFORGE" inspect --json libnccl.so.2 >b.json
[ "$(json b.json 'd["targets"][0]["objects"][0]["from_cache"]')" = True ] && ok "second run is served from the cache" || bad "second run from the cache"
[ "$(json b.json 'd["targets"][0]["objects"][0]["comm"]["banner"]["version"]')" = 2.28.9 ] && ok "with the banner it stored" || bad "banner from the cache"

# rewrite in place: same size, mtime restored, only ctime moves
before=$(stat_of libnccl.so.2)
mtime_ns=$(stat -c '%.9Y' libnccl.so.2)
python3 - <<'PY'
import os
p = "libnccl.so.2"
data = open(p, "rb").read()
i = data.index(b"2.28.9+cuda")
with open(p, "r+b") as f:
    f.seek(i + 5)
    f.write(b"8")
PY
touch -m -d "@$mtime_ns" libnccl.so.2
after=$(stat_of libnccl.so.2)
[ "$before" = "$after" ] && ok "size and mtime are what they were ($after)" || bad "size and mtime restored ($before vs $after)"
"$CCLFORGE" inspect --json libnccl.so.2 >c.json
[ "$(json c.json 'd["targets"][0]["objects"][0]["from_cache"]')" = False ] && ok "rewritten in place: not served from the cache" || bad "stale entry served"
[ "$(json c.json 'd["targets"][0]["objects"][0]["comm"]["banner"]["version"]')" = 2.28.8 ] && ok "the new banner is read" || bad "the new banner is read"

# --no-cache: nothing read from or written to disk
rm -rf "$CCLFORGE_HOME"
"$CCLFORGE" inspect --json --no-cache libnccl.so.2 >d.json
[ "$(json d.json 'd["scan_cache"]["dir"]')" = None ] && [ ! -e "$CCLFORGE_HOME/scan-v2" ] && ok "--no-cache keeps nothing on disk" || bad "--no-cache"

# concurrent writers: eight runs at once, then every entry decodes (a run serves them all)
sleep 2.2
for i in 1 2 3 4 5 6 7 8; do "$CCLFORGE" inspect --json libnccl.so.2 >"par$i.json" & done
wait
n_ok=0
for i in 1 2 3 4 5 6 7 8; do python3 -c "import json; json.load(open('par$i.json'))" 2>/dev/null && n_ok=$((n_ok + 1)); done
[ "$n_ok" = 8 ] && ok "eight concurrent runs all finish" || bad "concurrent runs ($n_ok of 8)"
leftovers=$(find "$CCLFORGE_HOME/scan-v2" -name '.tmp-*' | wc -l)
[ "$leftovers" = 0 ] && ok "no temporary files left" || bad "temporary files left: $leftovers"
"$CCLFORGE" inspect --json libnccl.so.2 >e.json
[ "$(json e.json 'd["scan_cache"]["disk_hits"] >= 1 and d["scan_cache"]["misses"] == 0')" = True ] && ok "after them every entry is whole" || bad "entries after concurrent writers"

# a corrupt entry is a miss, and is replaced
for f in $(find "$CCLFORGE_HOME/scan-v2" -type f ! -name '.*'); do printf 'garbage' >"$f"; done
"$CCLFORGE" inspect --json libnccl.so.2 >f.json
[ "$(json f.json 'd["scan_cache"]["disk_hits"] == 0 and d["targets"][0]["objects"][0]["comm"]["banner"]["version"] == "2.28.8"')" = True ] &&
    ok "corrupt entries are scanned again" || bad "corrupt entries"

# the size bound: with a 1-byte bound the sweep removes what it finds
rm -rf "$CCLFORGE_HOME"
CCLFORGE_SCAN_CACHE_MAX=1 "$CCLFORGE" inspect --json libnccl.so.2 >g.json
[ "$(json g.json 'd["scan_cache"]["evicted"] >= 1')" = True ] && ok "the directory is kept under its bound" || bad "size bound"

# doctor's Python probe: asked once, then not while nothing changes, then again when site-packages changes
# (the wrapper counts its runs in a file that exists before: a launcher script
# makes the working directory part of the key, and a new file would change it)
mkdir -p bin site/cfprobe logs
: >logs/python-runs
real_py=$(command -v python3)
cat >bin/python3 <<SH
#!/bin/sh
echo run >>"$T_TMP/logs/python-runs"
exec "$real_py" "\$@"
SH
chmod +x bin/python3
sleep 2.2
runs() { wc -l <"$T_TMP/logs/python-runs"; }
run env PATH="$T_TMP/bin:$PATH" PYTHONPATH="$T_TMP/site" "$CCLFORGE" doctor --no-nvidia --json
[ "$(runs)" = 1 ] && ok "doctor asks Python once" || bad "doctor asks Python once ($(runs))"
run env PATH="$T_TMP/bin:$PATH" PYTHONPATH="$T_TMP/site" "$CCLFORGE" doctor --no-nvidia --json
[ "$(runs)" = 1 ] && ok "and not again while nothing changed" || bad "python probe cached ($(runs))"
mkdir site/torch && printf '' >site/torch/__init__.py
run env PATH="$T_TMP/bin:$PATH" PYTHONPATH="$T_TMP/site" "$CCLFORGE" doctor --no-nvidia --json
[ "$(runs)" = 2 ] && ok "a new package in a sys.path directory asks again" || bad "python probe after a change ($(runs))"
expect_json 'any(t["root"] and "/site/torch" in t["root"] for t in d["libtorch"]) or "site/torch" in json.dumps(d["libtorch"])' "and sees the new torch"
run env PATH="$T_TMP/bin:$PATH" PYTHONPATH="$T_TMP/site" "$CCLFORGE" doctor --no-nvidia --no-cache --json
[ "$(runs)" = 3 ] && ok "doctor --no-cache asks again" || bad "doctor --no-cache ($(runs))"

# no safe cache root (HOME, CCLFORGE_HOME and XDG_CACHE_HOME unset, as under
# cron): nothing is kept, and never in a shared directory such as /tmp
before=$(ls -d /tmp/.cache/cclforge 2>/dev/null)
run env -u HOME -u CCLFORGE_HOME -u XDG_CACHE_HOME PATH="$T_TMP/bin:$PATH" PYTHONPATH="$T_TMP/site" "$CCLFORGE" doctor --no-nvidia --json
[ "$RC" -le 1 ] && ok "doctor runs without a cache root" || bad "doctor without a cache root (exit $RC)"
run env -u HOME -u CCLFORGE_HOME -u XDG_CACHE_HOME "$CCLFORGE" inspect --json /bin/sh
expect_rc 0 "inspect runs without a cache root"
expect_json 'd["scan_cache"]["dir"] is None' "and keeps its scans in memory only"
[ -z "$before" ] && [ ! -e /tmp/.cache/cclforge ] && ok "nothing appears under /tmp/.cache/cclforge" ||
    { [ -n "$before" ] && t_skip_part "/tmp/.cache/cclforge existed before this test: cannot tell" || bad "a cache appeared in /tmp"; }
# ---- a cache root another user could write is not used, and that is said once ----
# The entries are copies of good ones: what matters is that they are not
# believed, wherever they came from (another user could have planted them).
env CCLFORGE_HOME="$T_TMP/good" "$CCLFORGE" inspect --json libnccl.so.2 >/dev/null
run env CCLFORGE_HOME="$T_TMP/good" "$CCLFORGE" inspect --json libnccl.so.2
expect_json 'd["targets"][0]["objects"][0]["from_cache"]' "a trusted cache root serves the entry"
mkdir -p shared sticky
cp -a good shared/cache && cp -a good sticky/cache
chmod 0777 shared && chmod 1777 sticky
run env CCLFORGE_HOME="$T_TMP/shared/cache" "$CCLFORGE" inspect --json libnccl.so.2
expect_rc 0 "inspect still runs under an untrusted cache root"
expect_json 'not d["targets"][0]["objects"][0]["from_cache"] and d["scan_cache"]["dir"] is None' "the entries under a world-writable, non-sticky parent are not used"
expect_err "warning: the cache root $T_TMP/shared/cache is not used: $T_TMP/shared, a directory above $T_TMP/shared/cache, is writable by everyone \(mode 0777\) and not sticky.*chmod go-w $T_TMP/shared.*running without a cache" "the warning names the directory and the fix"
[ "$(printf '%s\n' "$ERR" | grep -c 'is not used')" -eq 1 ] && ok "said once" || bad "said $(printf '%s\n' "$ERR" | grep -c 'is not used') times"
run env CCLFORGE_HOME="$T_TMP/sticky/cache" "$CCLFORGE" inspect --json libnccl.so.2
expect_json 'd["targets"][0]["objects"][0]["from_cache"]' "a sticky 1777 parent (as /tmp) is fine"
expect_no_err "is not used" "and nothing is said of the cache root"
[ -z "$ERR" ] && ok "nothing at all on stderr" || bad "nothing at all on stderr"
chmod 0777 home
run env CCLFORGE_HOME="$T_TMP/home" "$CCLFORGE" doctor --no-python --no-nvidia --json
expect_err "warning: the cache root $T_TMP/home is not used: $T_TMP/home is writable by everyone \(mode 0777\)" "doctor: a 0777 cache root itself is not used"
[ "$(printf '%s\n' "$ERR" | grep -c 'is not used')" -eq 1 ] && ok "doctor says it once" || bad "doctor said it $(printf '%s\n' "$ERR" | grep -c 'is not used') times"
chmod 0755 home
t_end
