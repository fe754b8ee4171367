# doctor's closure check (which libraries a libtorch's closure lacks, what
# stays undefined in it) is remembered between runs (src/survey/closure_cache.c).
# Exactness: a warm run serves the stored answer only while the tree it was
# read from is unchanged. A real libtorch tree (cc -shared) whose
# libtorch_cuda.so needs libdep.so through RUNPATH $ORIGIN/first:$ORIGIN is
# changed between warm runs: a new file earlier on the search path, a file
# rewritten in place (same inode), files removed, a new empty directory in a
# search list. Each change must show in the very next run.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null || t_skip "no C compiler for the fixture"
cd "$T_TMP" || exit 1
export CCLFORGE_HOME=$T_TMP/home
unset LIBTORCH LD_LIBRARY_PATH
RC=0 OUT= ERR=
LT=$T_TMP/lt
mkdir -p "$LT/lib/first" "$LT/share/cmake/Torch"
echo 'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=1")' >"$LT/share/cmake/Torch/TorchConfig.cmake"
echo "2.5.1+cu124" >"$LT/build-version"
echo 'int stub(void) { return 0; }' >stub.c
echo 'int dep_fn(void) { return 1; }' >good.c
echo 'int other_fn(void) { return 2; }' >bad.c
echo 'int dep_fn(void); int torch_cuda_fn(void) { return dep_fn(); }' >tc.c
cc -shared -fPIC -o "$LT/lib/libc10.so" stub.c
cc -shared -fPIC -o "$LT/lib/libtorch_cpu.so" stub.c
cc -shared -fPIC -o good.so good.c -Wl,-soname,libdep.so
cc -shared -fPIC -o bad.so bad.c -Wl,-soname,libdep.so
cp bad.so "$LT/lib/libdep.so"
cc -shared -fPIC -o "$LT/lib/libtorch_cuda.so" tc.c -L"$LT/lib" -Wl,--no-as-needed -ldep -Wl,--enable-new-dtags,-rpath,'$ORIGIN/first:$ORIGIN'

# doctor NAME: its JSON in NAME.json; sets MISSING and UNDEF (dep_fn reported: 1)
doctor() {
    "$CCLFORGE" doctor --no-python --libtorch "$LT" --json >"$1.json" 2>"$1.err"
    MISSING=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["libtorch"][0]; print(" ".join(t["missing_libs"]))' "$1.json")
    UNDEF=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["libtorch"][0]; print(int(any("dep_fn" in u for u in t["undefined_symbols"])))' "$1.json")
}
# stored: what doctor just read is older than two seconds, so the next run stores its answer
stored() { sleep 3; doctor "$1"; }
# opens_dep NAME: a doctor run under strace; whether it opened a libdep.so (the closure
# check reads it; an answer served from the cache does not)
opens_dep() {
    strace -f -qq -e trace=open,openat -o "$1.trace" "$CCLFORGE" doctor --no-python --libtorch "$LT" --json >"$1.json" 2>/dev/null
    grep -q 'libdep\.so"' "$1.trace" && echo 1 || echo 0
}
have_strace=0
strace -f -qq -e trace=openat -o /dev/null true 2>/dev/null && have_strace=1

stored a
[ "$UNDEF" = 1 ] && [ -z "$MISSING" ] && ok "cold: dep_fn undefined in libdep.so (lib/)" || bad "cold run (undef=$UNDEF missing=$MISSING)"
doctor b
[ "$UNDEF" = 1 ] && ok "warm: the same answer" || bad "warm answer"
[ -n "$(ls "$CCLFORGE_HOME/closure-v2" 2>/dev/null)" ] && ok "the answer is stored" || bad "no closure-v2 entry"
if [ "$have_strace" = 1 ]; then
    [ "$(opens_dep c)" = 0 ] && ok "warm: served from the cache (libdep.so not opened)" || bad "warm run read the closure again"
    [ "$(CCLFORGE_HOME=$T_TMP/other opens_dep c2)" = 1 ] && ok "and the check does open it when there is nothing stored" || bad "strace sees no open of libdep.so"
else
    t_skip_part "strace cannot trace here: that a warm run reads nothing is not checked"
fi

# a new file earlier on the search path: first/ changes (its mtime), the answer must too
cp good.so "$LT/lib/first/libdep.so"
doctor d
[ "$UNDEF" = 0 ] && [ -z "$MISSING" ] && ok "new file in first/: seen at once (dep_fn defined)" || bad "new file not seen (undef=$UNDEF)"

# rewritten in place: the same inode, another size and mtime
stored e
[ "$UNDEF" = 0 ] && ok "stored with first/libdep.so" || bad "stored run"
cat bad.so >"$LT/lib/first/libdep.so"
doctor f
[ "$UNDEF" = 1 ] && ok "rewritten in place: seen at once (dep_fn undefined again)" || bad "in-place rewrite not seen"

# the same size and content, another mtime only: still the right answer
stored g
touch -d '2 hours ago' "$LT/lib/first/libdep.so"
doctor h
[ "$UNDEF" = 1 ] && ok "mtime changed: answered again, the same" || bad "after touch"

# removed: the closure lacks the library
stored i
rm -f "$LT/lib/first/libdep.so" "$LT/lib/libdep.so"
doctor j
[ "$MISSING" = libdep.so ] && ok "removed: libdep.so missing at once" || bad "removal not seen (missing=$MISSING)"

# a search directory that did not exist appears (RUNPATH $ORIGIN/first was there;
# here a glibc-hwcaps subdirectory of it, which the loader searches first)
cp good.so "$LT/lib/libdep.so"
stored k
[ "$UNDEF" = 0 ] && [ -z "$MISSING" ] && ok "back: libdep.so in lib/" || bad "restored (undef=$UNDEF missing=$MISSING)"
mkdir -p "$LT/lib/first/glibc-hwcaps/x86-64-v2" "$LT/lib/first/glibc-hwcaps/x86-64-v3" "$LT/lib/first/glibc-hwcaps/x86-64-v4"
doctor l0
stored l1
for v in x86-64-v2 x86-64-v3 x86-64-v4; do cp bad.so "$LT/lib/first/glibc-hwcaps/$v/libdep.so"; done
doctor l
if [ "$(uname -m)" = x86_64 ]; then
    [ "$UNDEF" = 1 ] && ok "a library in an existing (empty until now) hwcaps subdirectory: seen at once" || bad "hwcaps subdirectory change not seen"
else
    t_skip_part "x86-64 hwcaps names: not this machine"
fi

# --no-cache stores nothing
rm -rf "$CCLFORGE_HOME"
"$CCLFORGE" doctor --no-python --no-cache --libtorch "$LT" --json >m.json 2>/dev/null
[ ! -e "$CCLFORGE_HOME/closure-v2" ] && ok "--no-cache keeps no answer" || bad "--no-cache stored an answer"
t_end
