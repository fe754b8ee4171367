# What cclforge loads at start-up: libzip (and the libcrypto.so.3 and libbz2 it
# brings) only once a wheel command needs it (src/pkg/zip_loader.c), and a
# shared cJSON only once a command builds or reads JSON
# (src/util/cjson_loader.c), so that inspect and the rest start without them
# (docs/bench.md). `wheel verify`
# reads stored and deflated members itself (src/pkg/zip_read.c) and asks
# libzip only for the others (bzip2, lzma); a shared ISA-L (the faster
# inflate, src/pkg/isal_loader.c) is loaded only by wheel verify, and
# CCLFORGE_INFLATE=zlib leaves it out.
. "$(dirname "$0")/lib.sh"

cd "$T_TMP" || exit 1
run env LD_DEBUG=libs "$CCLFORGE" --version
expect_rc 0 "--version runs"
expect_err "calling init: .*libc\.so" "the loader's trace is there to read"
if printf '%s' "$ERR" | grep -q "libzip"; then bad "libzip is not loaded at start-up"; else ok "libzip is not loaded at start-up"; fi
if printf '%s' "$ERR" | grep -q "libisal"; then bad "libisal is not loaded at start-up"; else ok "libisal is not loaded at start-up"; fi
readelf -d "$CCLFORGE" | grep -q 'NEEDED.*libisal' && bad "libisal.so.2 is not a NEEDED library of the executable" ||
    ok "libisal.so.2 is not a NEEDED library of the executable"

# a deflated member: read without libzip
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED).writestr("pkg/__init__.py", "x = 1\n")' pkg-1.0-py3-none-any.whl
run env LD_DEBUG=libs "$CCLFORGE" wheel verify pkg-1.0-py3-none-any.whl
if printf '%s' "$ERR" | grep -q "calling init: .*libzip"; then bad "a deflated wheel is read without libzip"; else ok "a deflated wheel is read without libzip"; fi
expect_out "FAIL record .*RECORD" "and what it read reaches the user"
# ISA-L: loaded by wheel verify where the build loads it (a shared libisal)
if [ -n "${CCLFORGE_BINARY_DIR:-}" ] && grep -q "CCLFORGE_ISAL_LOADED" "$CCLFORGE_BINARY_DIR/CMakeFiles/cclforge_lib.dir/flags.make" 2>/dev/null; then
    expect_err "calling init: .*libisal\.so\.2" "wheel verify loads libisal.so.2 (the default engine)"
    run env LD_DEBUG=libs CCLFORGE_INFLATE=zlib "$CCLFORGE" wheel verify pkg-1.0-py3-none-any.whl
    if printf '%s' "$ERR" | grep -q "libisal"; then bad "CCLFORGE_INFLATE=zlib loads no libisal"; else ok "CCLFORGE_INFLATE=zlib loads no libisal"; fi
else
    t_skip_part "this build does not load a shared ISA-L (linked, or built without it)"
fi
# a bzip2 member: libzip is loaded for it, and what it read reaches the user
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_BZIP2).writestr("bz/__init__.py", "x = 1\n")' bz-1.0-py3-none-any.whl
run env LD_DEBUG=libs "$CCLFORGE" wheel verify bz-1.0-py3-none-any.whl
expect_err "calling init: .*libzip\.so\.4" "a bzip2 member loads libzip"
expect_out "FAIL record .*RECORD" "and libzip's reading reaches the user"
# a file that is not a zip at all is refused from its bytes, libzip never asked
echo "not a zip archive" >junk-1.0-py3-none-any.whl
run "$CCLFORGE" wheel verify junk-1.0-py3-none-any.whl
[ "$RC" -eq 1 ] && ok "a broken wheel fails (exit $RC)" || bad "a broken wheel fails"
expect_out "not a readable zip archive" "and says why"

# cJSON: in the build from source (a shared libcjson.so.1) loaded by the
# first JSON a command makes; the release links it statically (no loader).
if readelf -d "$CCLFORGE" | grep -q 'NEEDED.*libcjson'; then
    RC=1 OUT=$(readelf -d "$CCLFORGE" | grep NEEDED) ERR=
    bad "libcjson.so.1 is not a NEEDED library of the executable (CMakeLists.txt links the loader's aliases)"
elif nm "$CCLFORGE" 2>/dev/null | grep -q ' cf_cJSON_Parse$'; then
    export CCLFORGE_HOME=$T_TMP/home
    run env LD_DEBUG=libs "$CCLFORGE" --version
    if printf '%s' "$ERR" | grep -q "libcjson"; then bad "libcjson is not loaded at start-up"; else ok "libcjson is not loaded at start-up"; fi
    run env LD_DEBUG=libs "$CCLFORGE" inspect --undefined "$CCLFORGE"
    expect_rc 0 "inspect in text runs"
    if printf '%s' "$ERR" | grep -q "libcjson"; then bad "inspect in text loads no libcjson"; else ok "inspect in text loads no libcjson"; fi
    run env LD_DEBUG=libs "$CCLFORGE" inspect --json "$CCLFORGE"
    expect_err "calling init: .*libcjson\.so\.1" "inspect --json loads libcjson"
    expect_json 'd["schema"] == "cclforge.inspect/1" and d["targets"]' "and its JSON is whole"
    # without a loadable libcjson.so.1: what ld.so said at start-up, later
    printf '%s\n' '#define _GNU_SOURCE' '#include <dlfcn.h>' '#include <string.h>' \
        'void *dlopen(const char *f, int m) {' \
        '    if (f && strstr(f, "libcjson")) return NULL;' \
        '    void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");' \
        '    return real(f, m);' '}' >no_cjson.c
    if "${CC:-cc}" -shared -fPIC -o no_cjson.so no_cjson.c -ldl 2>"$T_TMP/cc.err"; then
        hide=(env LD_PRELOAD="$T_TMP/no_cjson.so" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
        run "${hide[@]}" "$CCLFORGE" inspect --undefined "$CCLFORGE"
        expect_rc 0 "without libcjson, inspect in text still runs"
        run "${hide[@]}" "$CCLFORGE" inspect --json "$CCLFORGE"
        expect_rc 127 "without libcjson, --json ends with ld.so's status"
        expect_err "error while loading shared libraries: libcjson\.so\.1" "and ld.so's words, naming the library"
    else
        RC=1 OUT= ERR=$(cat "$T_TMP/cc.err")
        bad "the dlopen shim compiles"
    fi
else
    t_skip_part "cJSON is linked statically into this build: nothing is loaded on first use"
fi
t_end
