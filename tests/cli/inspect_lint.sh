# cclforge inspect: RPATH lint findings (with the loader's $LIB/$PLATFORM and
# --within), bad inputs with a clear error, usage errors, NO_COLOR.
. "$(dirname "$0")/lib.sh"

cd "$T_TMP" || exit 1
cc_ok() { cc "$@" 2>"$T_TMP/.cc" || { echo "cc failed: $*"; cat "$T_TMP/.cc"; exit 1; }; }
printf 'int f(void){return 1;}\n' >f.c

# --- lint: absolute + missing directory + relative + empty entries
cc_ok -shared -fPIC -o libbad.so f.c -Wl,--disable-new-dtags,-rpath,/nonexistent/abs:relative/dir::
run "$CCLFORGE" inspect libbad.so
expect_rc 1 "relative and empty RPATH entries are errors: exit 1"
expect_out "warning.* \[lint\] libbad\.so: absolute: RPATH entry" "absolute entry"
expect_out "warning.* \[lint\] libbad\.so: missing-dir: RPATH entry" "missing directory"
expect_out "error.* \[lint\] libbad\.so: relative: RPATH entry" "relative entry"
expect_out "error.* \[lint\] libbad\.so: empty: RPATH entry" "empty entry"
run "$CCLFORGE" inspect --json libbad.so
expect_json "[f['kind'] for f in d['targets'][0]['objects'][0]['lint']] == ['absolute', 'missing-dir', 'relative', 'empty', 'empty']" "JSON lint kinds in entry order (relative/dir:: holds two empty entries)"

# --- a clean $ORIGIN RUNPATH: no findings; $LIB and $PLATFORM expand as the loader does
mkdir -p pkg/lib/sub pkg/lib/x86_64-linux-gnu outside
cc_ok -shared -fPIC -o pkg/lib/libclean.so f.c -Wl,--enable-new-dtags,-rpath,'$ORIGIN/sub'
run "$CCLFORGE" inspect pkg/lib/libclean.so
expect_rc 0 "clean \$ORIGIN RUNPATH exits 0"
expect_out "0 errors, 0 warnings" "no findings"
ldlib=$("$CCLFORGE" inspect --json pkg/lib/libclean.so | python3 -c "import json,sys; print(json.load(sys.stdin)['targets'][0]['loader']['lib'])")
mkdir -p "pkg/$ldlib"
cc_ok -shared -fPIC -o pkg/lib/libdst.so f.c -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../$LIB'
run "$CCLFORGE" inspect pkg/lib/libdst.so
expect_rc 0 "\$ORIGIN/../\$LIB exists with the loader's \$LIB ($ldlib)"
expect_no_out "missing-dir" "no missing-dir for \$LIB"
run "$CCLFORGE" inspect --json pkg/lib/libdst.so
expect_json "d['targets'][0]['objects'][0]['lint'] == []" "JSON: no lint findings"

# --- --within: an entry that leaves the package tree
cc_ok -shared -fPIC -o pkg/lib/libleaks.so f.c -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../outside'
run "$CCLFORGE" inspect pkg/lib/libleaks.so
expect_rc 0 "without --within leaving the tree is not checked"
run "$CCLFORGE" inspect --within pkg pkg/lib/libleaks.so pkg/lib/libclean.so
expect_rc 1 "--within: outside-tree is an error"
expect_out "error.* \[lint\] pkg/lib/libleaks\.so: outside-tree: RUNPATH" "outside-tree finding names the object"
expect_out "pkg/lib/libclean\.so: 1 object, 0 missing; 0 errors" "the clean library stays clean"
run "$CCLFORGE" inspect --within nonexistent-dir pkg/lib/libclean.so
expect_rc 2 "--within a missing directory is a usage error"
expect_err "--within nonexistent-dir: not a directory" "and says so"

# --- a static executable: nothing to load, said so
printf 'int main(void){return 0;}\n' >main.c
if cc -static -o static-app main.c 2>/dev/null; then
    run "$CCLFORGE" inspect static-app
    expect_rc 0 "static executable exits 0"
    expect_out "statically linked" "static executable said so"
    run "$CCLFORGE" inspect --json static-app
    expect_json "d['targets'][0]['static'] is True and len(d['targets'][0]['objects']) == 1" "JSON: static, one object"
else
    t_skip_part "cc -static failed (no libc.a): static executable not tested"
fi

# --- bad inputs: exit 1 with an error naming the file; the other files are still inspected
printf 'just text\n' >notelf.txt
head -c 100 pkg/lib/libclean.so >truncated.so
run "$CCLFORGE" inspect notelf.txt
expect_rc 1 "non-ELF input exits 1"
expect_err "notelf\.txt" "non-ELF error names the file"
run "$CCLFORGE" inspect truncated.so
expect_rc 1 "truncated input exits 1"
expect_err "truncated\.so" "truncated error names the file"
run "$CCLFORGE" inspect no-such-file.so
expect_rc 1 "missing input exits 1"
expect_err "no-such-file\.so" "missing-file error names the file"
run "$CCLFORGE" inspect pkg
expect_rc 1 "a directory input exits 1"
expect_err "pkg: is a directory" "directory error says so"
run "$CCLFORGE" inspect notelf.txt pkg/lib/libclean.so
expect_rc 1 "one bad input among good ones exits 1"
expect_out "pkg/lib/libclean\.so: 1 object" "the good file is still inspected"
run "$CCLFORGE" inspect --json no-such-file.so
expect_rc 1 "--json with a bad input exits 1"
expect_json "d['targets'][0]['error'] and d['targets'][0]['problems'][0]['kind'] == 'bad-input'" "JSON carries the error"

# --- usage errors: exit 2
run "$CCLFORGE" inspect --frobnicate
expect_rc 2 "unknown flag exits 2"
expect_err "unknown or incomplete option '--frobnicate'" "unknown flag named"
run "$CCLFORGE" inspect -z
expect_rc 2 "unknown short flag exits 2"
run "$CCLFORGE" inspect --depth x libbad.so
expect_rc 2 "--depth x exits 2"
run "$CCLFORGE" inspect --root
expect_rc 2 "--root without its argument exits 2"
run "$CCLFORGE" inspect --ld-library-path /x --ignore-ld-library-path libbad.so
expect_rc 2 "contradictory LD_LIBRARY_PATH flags exit 2"
run "$CCLFORGE" inspect libbad.so --json
expect_json "d['schema'] == 'cclforge.inspect/1'" "options may follow the files"
run "$CCLFORGE" inspect -- --json
expect_rc 1 "after -- a name is a file, even --json"
expect_err "--json" "and the error names it"
run "$CCLFORGE" inspect --help
expect_rc 0 "--help exits 0"
for flag in --root --ld-library-path --ignore-ld-library-path --undefined --within --explain --all --depth --flat --no-gpu --no-banner --json; do
    printf '%s' "$OUT" | grep -q -- "$flag" && ok "--help documents $flag" || bad "--help documents $flag"
done

# --- colour: on a terminal by default, never with NO_COLOR (script gives a pty)
if command -v script >/dev/null; then
    # shellcheck disable=SC2016
    OUT=$(env -u NO_COLOR TERM=xterm script -qec "\"$CCLFORGE\" inspect libbad.so" /dev/null); RC=0; ERR=
    printf '%s' "$OUT" | grep -q $'\033\[' && ok "colour on a terminal" || bad "colour on a terminal"
    OUT=$(NO_COLOR=1 TERM=xterm script -qec "\"$CCLFORGE\" inspect libbad.so" /dev/null); RC=0; ERR=
    printf '%s' "$OUT" | grep -q $'\033\[' && bad "NO_COLOR: no escape codes" || ok "NO_COLOR: no escape codes"
else
    t_skip_part "'script' (util-linux) not installed: terminal colour not tested"
fi
run "$CCLFORGE" inspect libbad.so
printf '%s' "$OUT$ERR" | grep -q $'\033\[' && bad "no colour into a pipe" || ok "no colour into a pipe"
t_end
