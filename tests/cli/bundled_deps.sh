#!/usr/bin/env bash
# The sdist's bundled third-party libraries (cmake/bundled_deps.cmake), as
# CMake configures the real project: which ones it builds from the pinned
# tarballs (none where pkg-config finds all, the one pkg-config lacks, all
# without pkg-config or with CCLFORGE_BUNDLED_DEPS=ON; ISA-L, optional, only
# where its recipe can build: nasm on x86-64, and left out saying why
# without it; its bundled build then made and holding igzip), and the bad input: a
# tarball whose sha256 is not the lock's, at configure time and again at
# build time, and a missing one, each stops the build naming the file.
# The full build from the sdist in a root without the -dev packages is
# cli.dist_install's (minutes: OpenSSL's libcrypto).
. "$(dirname "$0")/lib.sh"

src=${CCLFORGE_SOURCE_DIR:?}
lock=$src/scripts/dist/deps.lock
command -v cmake >/dev/null || t_skip "no cmake"
command -v pkg-config >/dev/null || t_skip "no pkg-config (the host side of the choice needs it)"
tp=$T_TMP/third_party
mkdir -p "$tp"
bash "$src/scripts/dist/sources.sh" --copy-to "$tp" >/dev/null 2>"$T_TMP/sources.log" ||
    { cat "$T_TMP/sources.log"; t_skip "the pinned sources cannot be fetched from the Debian archive here"; }
names=$(grep -vE '^[[:space:]]*(#|$)' "$lock" | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')
# ISA-L is bundled only where its recipe can build (cmake/bundled_deps.cmake)
isal_here=1
case $(uname -m) in
x86_64) command -v nasm >/dev/null || isal_here=0 ;;
aarch64) ;;
*) isal_here=0 ;;
esac
command -v patch >/dev/null || isal_here=0
[ "$isal_here" = 1 ] || names=$(printf '%s\n' $names | grep -vx libisal | tr '\n' ' ' | sed 's/ $//')

# Every entry of the lock has its recipe (the sdist carries every tarball).
for n in $names; do
    grep -q "^function(cclforge_bundle_$n " "$src/cmake/bundled_deps.cmake" &&
        ok "the lock's $n has a recipe" || bad "the lock's $n has no cclforge_bundle_$n() in cmake/bundled_deps.cmake"
done

n=0
configure() { # CMAKE-ARGS...: a fresh configure of the project in $T_TMP/b<n>
    n=$((n + 1))
    B=$T_TMP/b$n
    run cmake -S "$src" -B "$B" -DCCLFORGE_TESTS=OFF -DCCLFORGE_BUNDLED_DIR="$tp" "$@"
    ERR=$(printf '%s' "$ERR" | tr '\n' ' ' | tr -s ' ') # CMake wraps its messages
}
# the names on CMake's "bundled" line, sorted, one space apart
bundled_line() { printf '%s' "$OUT" | sed -n 's/^-- cclforge: bundled[^:]*: //p' | tr ' ' '\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//'; }

configure
expect_rc 0 "configure with every -dev package"
expect_out "^-- cclforge: bundled: none " "nothing bundled where pkg-config finds all"

# pkg-config that knows every module but cJSON
pc=$T_TMP/pc
mkdir -p "$pc"
for m in zlib libzstd libcrypto libzip; do
    d=$(pkg-config --variable=pcfiledir "$m") || t_skip "pkg-config does not find $m (bash scripts/deps.sh)"
    cp "$d/$m.pc" "$pc/"
done
want=cjson # and ISA-L, optional, when the host has none and it can be built here
if d=$(pkg-config --variable=pcfiledir libisal 2>/dev/null); then cp "$d/libisal.pc" "$pc/"; elif [ "$isal_here" = 1 ]; then want="cjson libisal"; fi
PKG_CONFIG_LIBDIR=$pc configure
expect_rc 0 "configure where pkg-config lacks libcjson"
[ "$(bundled_line)" = "$want" ] && ok "only $want bundled" || bad "bundled: $(bundled_line) (wanted $want)"

configure -DPKG_CONFIG_EXECUTABLE=/nonexistent/pkg-config
expect_rc 0 "configure without pkg-config"
[ "$(bundled_line)" = "$names" ] &&
    ok "without pkg-config every entry of the lock is bundled ($names)" || bad "bundled: $(bundled_line) (wanted $names)"

configure -DCCLFORGE_BUNDLED_DEPS=ON
expect_rc 0 "configure with CCLFORGE_BUNDLED_DEPS=ON"
[ "$(bundled_line)" = "$names" ] && ok "CCLFORGE_BUNDLED_DEPS=ON bundles every entry although pkg-config finds them" ||
    bad "bundled: $(bundled_line) (wanted $names)"
forced=$B
if [ "$isal_here" = 1 ]; then
    expect_out "^-- cclforge: inflate engines: ISA-L igzip \(linked\), zlib" "the bundled ISA-L is linked"
    run cmake --build "$forced" --target bundled_libisal
    expect_rc 0 "the bundled ISA-L builds from its pinned source (upstream's Makefile.unx, the patches applied)"
    run nm "$forced/bundled/lib/libisal.a"
    expect_out " T isal_inflate$" "the bundled libisal.a holds isal_inflate"
    expect_out " T crc32_gzip_refl$" "and crc32_gzip_refl"
else
    t_skip_part "the bundled ISA-L: no nasm (x86-64) or patch here, or another CPU"
fi
if [ "$(uname -m)" = x86_64 ]; then
    configure -DCCLFORGE_BUNDLED_DEPS=ON -DCCLFORGE_NASM=CCLFORGE_NASM-NOTFOUND
    expect_rc 0 "configure where nasm is not found"
    case " $(bundled_line) " in *" libisal "*) bad "ISA-L bundled without nasm" ;; *) ok "without nasm ISA-L is left out" ;; esac
    expect_out "libisal not bundled: its x86-64 code needs nasm, which is not installed: zlib inflates" "saying why"
    expect_out "^-- cclforge: inflate engines: zlib " "and zlib inflates"
fi

# Bad input: one byte more in zlib's tarball.
zt=$(awk '$1 == "zlib" { print $3 }' "$lock")
cp "$tp/$zt" "$T_TMP/$zt.good"
printf 'x' >>"$tp/$zt"
configure -DCCLFORGE_BUNDLED_DEPS=ON
expect_rc 1 "configure stops on a tampered tarball"
expect_err "third_party/$zt has sha256 [0-9a-f]{64}, but .*deps\.lock pins" "the error names the tampered file and the lock"
# ... and after configure: ExternalProject's own hash check stops the build
run cmake --build "$forced" --target bundled_zlib
[ "$RC" -ne 0 ] && ok "the build of a tarball tampered after configure fails (exit $RC)" || bad "bundled_zlib built from a tampered tarball"
printf '%s\n%s' "$OUT" "$ERR" | grep -qiE "hash mismatch.*|$zt" && printf '%s\n%s' "$OUT" "$ERR" | grep -q "$zt" &&
    ok "the build's error names $zt" || bad "the build's error does not name $zt"
cp "$T_TMP/$zt.good" "$tp/$zt"

# A missing one
ot=$(awk '$1 == "openssl" { print $3 }' "$lock")
rm "$tp/$ot"
PKG_CONFIG_LIBDIR=$T_TMP/empty configure
expect_rc 1 "configure stops when a needed tarball is absent"
expect_err "pkg-config does not find libcrypto, and its pinned source .*/$ot is absent" "the error names the module and the missing file"
t_end
