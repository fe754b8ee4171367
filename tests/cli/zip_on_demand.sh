# What cclforge loads at start-up: libzip (and the libcrypto.so.3 and libbz2 it
# brings) only once a wheel command needs it (src/pkg/zip_loader.c), so that
# inspect and the rest start without them. `wheel verify` reads stored and
# deflated members itself (src/pkg/zip_read.c) and asks libzip only for the
# others (bzip2, lzma).
. "$(dirname "$0")/lib.sh"

cd "$T_TMP" || exit 1
run env LD_DEBUG=libs "$CCLFORGE" --version
expect_rc 0 "--version runs"
expect_err "calling init: .*libc\.so" "the loader's trace is there to read"
if printf '%s' "$ERR" | grep -q "libzip"; then bad "libzip is not loaded at start-up"; else ok "libzip is not loaded at start-up"; fi

# a deflated member: read without libzip
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED).writestr("pkg/__init__.py", "x = 1\n")' pkg-1.0-py3-none-any.whl
run env LD_DEBUG=libs "$CCLFORGE" wheel verify pkg-1.0-py3-none-any.whl
if printf '%s' "$ERR" | grep -q "calling init: .*libzip"; then bad "a deflated wheel is read without libzip"; else ok "a deflated wheel is read without libzip"; fi
expect_out "FAIL record .*RECORD" "and what it read reaches the user"
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

t_end
