# inspect's remembered answers (src/elf/inspect_answer.c): a warm run prints
# exactly what a run with the cache disabled prints, for every text form,
# and any change to an input is seen at once: the file itself, a dependency
# replaced, a library appearing earlier on the search path, LD_LIBRARY_PATH,
# a directory under --root, the root's ld.so.cache, an RPATH directory the
# lint reported missing. Each step: the cached run right after the change
# (a miss), then a stored answer and a run served from it (the entry's inode
# unchanged: a miss would have stored it anew), all against --no-cache.
# Then the cache controls and corrupt, tampered or foreign entries.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1
export CCLFORGE_HOME=$T_TMP/home
unset LD_LIBRARY_PATH
entries() { stat -c '%n %i' "$CCLFORGE_HOME"/inspect-v1/* 2>/dev/null | sort; }
settle() { sleep 2.2; } # entries of files changed in the last 2 s are not stored

mkdir -p lib1 lib2 llp gone src root/app root/opt/lib root/etc
cat >src/dep.c <<'C'
int dep_fn(void) { return 1; }
C
cat >src/dep_v2.c <<'C'
int dep_other(void) { return 2; }
C
cat >src/extra.c <<'C'
int extra_fn(void) { return 3; }
C
cat >src/top.c <<'C'
extern int dep_fn(void);
extern int extra_fn(void) __attribute__((weak));
int top(void) { return dep_fn() + (extra_fn ? extra_fn() : 0); }
C
cat >src/top_v2.c <<'C'
extern int dep_fn(void);
extern int dep_more(void);
int top(void) { return dep_fn() + dep_more(); }
C
cat >src/sys.c <<'C'
int sys_fn(void) { return 4; }
C
cat >src/top2.c <<'C'
extern int sys_fn(void);
int top2(void) { return sys_fn(); }
C
cc -shared -fPIC -o lib2/libdep.so src/dep.c -Wl,-soname,libdep.so &&
    cc -shared -fPIC -o src/libextra.so src/extra.c -Wl,-soname,libextra.so &&
    cc -shared -fPIC -o libtop.so src/top.c -Wl,--no-as-needed lib2/libdep.so src/libextra.so \
        "-Wl,-rpath,$T_TMP/lib1:$T_TMP/lib2:$T_TMP/gone/sub" -Wl,--enable-new-dtags &&
    cc -shared -fPIC -nostdlib -o liblint.so src/dep.c "-Wl,-rpath,$T_TMP/lintonly" -Wl,--enable-new-dtags &&
    cc -shared -fPIC -o src/libsys.so src/sys.c -Wl,-soname,libsys.so &&
    cc -shared -fPIC -o root/app/libtop2.so src/top2.c -Wl,--no-as-needed src/libsys.so ||
    { echo "cc failed"; exit 1; }
settle

# check STEP ARGS...: the cached run now, then stored and served, each equal to --no-cache
check() {
    local step=$1
    shift
    "$CCLFORGE" inspect --no-cache "$@" >ref.txt 2>ref.err
    local ref_rc=$?
    "$CCLFORGE" inspect "$@" >now.txt 2>/dev/null
    local rc=$?
    cmp -s ref.txt now.txt && [ "$rc" = "$ref_rc" ] && ok "$step: seen at once" ||
        { RC=$rc OUT=$(diff ref.txt now.txt) ERR=""; bad "$step: seen at once"; }
    settle
    "$CCLFORGE" inspect "$@" >stored.txt 2>/dev/null
    local before
    before=$(entries)
    "$CCLFORGE" inspect "$@" >warm.txt 2>/dev/null
    rc=$?
    [ -n "$before" ] && [ "$(entries)" = "$before" ] && ok "$step: the next run is served from the cache" ||
        { RC=$rc OUT="entries: $before / $(entries)" ERR=""; bad "$step: the next run is served from the cache"; }
    cmp -s ref.txt stored.txt && cmp -s ref.txt warm.txt && [ "$rc" = "$ref_rc" ] &&
        ok "$step: warm output byte-identical to --no-cache (exit $rc)" ||
        { RC=$rc OUT=$(diff ref.txt warm.txt) ERR=""; bad "$step: warm output byte-identical to --no-cache"; }
}

# Every text form: cold, then warm, byte for byte.
for form in "-u" "-u --flat" "-u --explain" "-u -a" "--depth 0" "--no-gpu --no-banner -u"; do
    # shellcheck disable=SC2086
    check "form '$form'" $form libtop.so
done
run "$CCLFORGE" inspect -u libtop.so
expect_out 'libdep.so => .*/lib2/libdep.so' "the fixture resolves libdep.so in lib2"
expect_out 'missing-dir' "and lints the missing RPATH directory"

# The file itself rewritten (one more undefined symbol).
cc -shared -fPIC -o libtop.so.new src/top_v2.c -Wl,--no-as-needed lib2/libdep.so src/libextra.so \
    "-Wl,-rpath,$T_TMP/lib1:$T_TMP/lib2:$T_TMP/gone/sub" -Wl,--enable-new-dtags && mv libtop.so.new libtop.so
check "the file rewritten" -u libtop.so
grep -q 'undefined symbol: dep_more' warm.txt && ok "the rewritten file's new reference is reported" ||
    bad "the rewritten file's new reference is reported"

# A dependency replaced in place (same path, dep_fn gone).
cc -shared -fPIC -o lib2/libdep.so.new src/dep_v2.c -Wl,-soname,libdep.so && mv lib2/libdep.so.new lib2/libdep.so
check "a dependency replaced" -u libtop.so
grep -q 'undefined symbol: dep_fn' warm.txt && ok "the replaced dependency's missing symbol is reported" ||
    bad "the replaced dependency's missing symbol is reported"

# A library appearing earlier on the search path (lib1 before lib2).
cc -shared -fPIC -o lib1/libdep.so src/dep.c -Wl,-soname,libdep.so
check "a library earlier on the path" -u libtop.so
grep -q 'libdep.so => .*/lib1/libdep.so' warm.txt && ok "the earlier library is the one found" ||
    bad "the earlier library is the one found"

# An RPATH directory the lint reported missing appears.
mkdir -p gone/sub
check "a missing RPATH directory created" -u libtop.so
grep -q 'missing-dir' warm.txt && bad "the lint finding is gone" || ok "the lint finding is gone"

# An RPATH directory no search reaches (the object needs nothing) appears:
# only the lint asked about it.
check "an RPATH directory only the lint asked about, missing" -u liblint.so
grep -q 'missing-dir.*lintonly' warm.txt && ok "the lint reports it missing" || bad "the lint reports it missing"
mkdir lintonly
check "an RPATH directory only the lint asked about, created" -u liblint.so
grep -q 'missing-dir' warm.txt && bad "that lint finding is gone" || ok "that lint finding is gone"

# LD_LIBRARY_PATH set (libextra.so only there), then changed.
cp src/libextra.so llp/
settle
LD_LIBRARY_PATH=$T_TMP/llp check "LD_LIBRARY_PATH set" -u libtop.so
grep -q 'libextra.so => .*/llp/libextra.so' warm.txt && ok "LD_LIBRARY_PATH's library is found" ||
    bad "LD_LIBRARY_PATH's library is found"
LD_LIBRARY_PATH=$T_TMP/lib1 check "LD_LIBRARY_PATH changed" -u libtop.so

# --root: a library appearing in the root's default directory.
check "--root, missing" -u --root root root/app/libtop2.so
mkdir -p root/usr/lib64 && cp src/libsys.so root/usr/lib64/
check "--root, the library appears" -u --root root root/app/libtop2.so
grep -q 'libsys.so => .*root/usr/lib64/libsys.so' warm.txt && ok "found in the root's default directory" ||
    bad "found in the root's default directory"

# --root: the root's ld.so.cache appears and points elsewhere.
if command -v ldconfig >/dev/null && cp src/libsys.so root/opt/lib/ && echo /opt/lib >root/etc/ld.so.conf &&
    ldconfig -r root 2>/dev/null && [ -s root/etc/ld.so.cache ]; then
    check "--root, ld.so.cache made" -u --root root root/app/libtop2.so
    grep -q 'libsys.so => .*root/opt/lib/libsys.so.*ld.so.cache' warm.txt && ok "found through the new ld.so.cache" ||
        bad "found through the new ld.so.cache"
else
    t_skip_part "ldconfig -r could not make a root's ld.so.cache here"
fi

# --- cache controls ------------------------------------------------------
[ -d "$CCLFORGE_HOME/inspect-v1" ] && ok "answers live under the cache root (CCLFORGE_HOME)" ||
    bad "answers live under the cache root (CCLFORGE_HOME)"
CCLFORGE_HOME=$T_TMP/home2 "$CCLFORGE" inspect --no-cache -u libtop.so >/dev/null
[ ! -e "$T_TMP/home2/inspect-v1" ] && ok "--no-cache keeps no answer" || bad "--no-cache keeps no answer"
CCLFORGE_HOME=$T_TMP/home2 "$CCLFORGE" inspect --json -u libtop.so >/dev/null
[ ! -e "$T_TMP/home2/inspect-v1" ] && ok "--json keeps no answer (its document reports this run's scan cache)" ||
    bad "--json keeps no answer"
mkdir -p shared && chmod 0777 shared
CCLFORGE_HOME=$T_TMP/shared "$CCLFORGE" inspect -u libtop.so >shared.txt 2>/dev/null
"$CCLFORGE" inspect --no-cache -u libtop.so >ref.txt 2>/dev/null
[ ! -e "$T_TMP/shared/inspect-v1" ] && cmp -s ref.txt shared.txt && ok "an untrusted (world-writable) cache root is not used" ||
    bad "an untrusted (world-writable) cache root is not used"

# --- corrupt, tampered, foreign entries -----------------------------------
rm -rf "$CCLFORGE_HOME/inspect-v1"
"$CCLFORGE" inspect -u libtop.so >/dev/null
entry=$(ls "$CCLFORGE_HOME"/inspect-v1/* 2>/dev/null | head -1)
[ -n "$entry" ] && ok "an answer is stored" || bad "an answer is stored"
# tamper ENTRY PYTHON-EXPR-ON-OUTPUT-BYTES: rewrite the stored output, framing kept whole
tamper() {
    python3 - "$1" "$2" <<'PY'
import sys
path, expr = sys.argv[1], sys.argv[2]
b = open(path, 'rb').read()
magic = b'CFDEP1\n'
p = len(magic)
nl = b.index(b'\n', p); kl = int(b[p:nl]); key_end = nl + 1 + kl + 1
nl = b.index(b'\n', key_end); vl = int(b[key_end:nl]); v0 = nl + 1
value, rest = b[v0:v0 + vl], b[v0 + vl:]
head, out = value.split(b'\n', 1)
out = eval(expr, {'out': out})
value = head + b'\n' + out
open(path, 'wb').write(b[:key_end] + str(len(value)).encode() + b'\n' + value + rest)
PY
}
cp "$entry" good.entry
tamper "$entry" "out.replace(b'libtop.so', b'libtop.so\\x1b[2J', 1)"
run "$CCLFORGE" inspect -u libtop.so
[ "$OUT" = "$(cat ref.txt)" ] && ok "an entry holding a control character is refused" ||
    bad "an entry holding a control character is refused"
cp good.entry "$entry"
tamper "$entry" "out.replace(b'libtop.so', b'libTOP.so', 1)"
run "$CCLFORGE" inspect -u libtop.so
printf '%s' "$OUT" | grep -q 'libTOP.so' && ok "the mutation probe: a readable entry of the user's own is served" ||
    bad "the mutation probe: a readable entry of the user's own is served"
chmod g+w "$entry"
run "$CCLFORGE" inspect -u libtop.so
[ "$OUT" = "$(cat ref.txt)" ] && ok "a group-writable entry is refused" || bad "a group-writable entry is refused"
cp good.entry "$entry" && chmod 0600 "$entry"
head -c 300 good.entry >"$entry"
run "$CCLFORGE" inspect -u libtop.so
[ "$OUT" = "$(cat ref.txt)" ] && ok "a truncated entry is refused" || bad "a truncated entry is refused"
printf 'CFDEP1\n99999999999999999999\n' >"$entry"
run "$CCLFORGE" inspect -u libtop.so
[ "$OUT" = "$(cat ref.txt)" ] && ok "an entry with an absurd length is refused" || bad "an entry with an absurd length is refused"
python3 -c "import re, sys; open(sys.argv[1], 'wb').write(re.sub(rb'CFINSPECT1 [01]', b'CFINSPECT1 7', open(sys.argv[2], 'rb').read()))" \
    "$entry" good.entry
run "$CCLFORGE" inspect -u libtop.so
[ "$OUT" = "$(cat ref.txt)" ] && [ "$RC" != 7 ] && ok "an entry with an impossible exit status is refused" ||
    bad "an entry with an impossible exit status is refused"
t_end
