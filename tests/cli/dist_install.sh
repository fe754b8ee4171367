#!/usr/bin/env bash
# The release as users get it: scripts/dist.sh builds the two manylinux2014
# wheels (x86_64, aarch64), both tarballs and the sdist; then, as our users
# would on their hosts:
#  - the artefacts: SHA256SUMS holds, the same commit builds the same bytes
#    (x86_64 and the sdist rebuilt from scratch in another directory), auditwheel show places
#    each wheel in manylinux_2_17, readelf finds no GLIBC version above 2.17
#    and no NEEDED outside the policy's libraries, each wheel's binary is the
#    tarball's, and every binary is hardened (tests/support/check_hardening.sh:
#    RELRO, BIND_NOW, PIE, no executable stack, stack protector, fortified
#    calls); check-wheel refuses a wheel whose binary is not;
#  - the README's first command: pip install --no-index --find-links dist
#    cclforge installs this architecture's wheel, and its doctor runs;
#  - a real Debian 11 root (debootstrap, glibc 2.31): the wheel installed
#    without root (pip install --prefix, as user nobody), its command and
#    `python -m cclforge` run there, `doctor --no-python --json`, and `inspect`
#    of that root's own binaries agreeing with that root's own ldd; the
#    tarball extracted anywhere in it and run there, finding its share/;
#  - the sdist, in a Debian 11 root without the libraries' -dev packages,
#    pkg-config or cmake: pip builds it, bundling every pinned library, and
#    the command runs there (doctor, inspect against ldd, wheel verify);
#    (wheel verify inflating with zlib there: the root has no nasm for ISA-L);
#  - the aarch64 binary under qemu-user-static in a real arm64 Debian root
#    (debootstrap --foreign): --version, inspect /bin/ls, and wheel verify
#    of tests/fixtures/small_blocks_wheel.py's wheel through the linked
#    ISA-L (upstream's aarch64 decoder before 2.32 ends that stream early).
# Needs root (debootstrap, chroot), PyPI and the Debian archive; parts whose
# tool is missing are skipped by name.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || t_skip "needs root (debootstrap and chroot make the Debian roots)"
src=${CCLFORGE_SOURCE_DIR:?}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cclforge
tools=$(bash "$src/scripts/dist-tools.sh" 2>"$T_TMP/tools.log" | tail -n 1) ||
    { cat "$T_TMP/tools.log"; t_skip "the release tools (ziglang, auditwheel) cannot be installed from PyPI here"; }
version=$(sed -n 's/^project(cclforge VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

# --- the release, twice for x86_64 ---------------------------------------
dist=$T_TMP/dist
# one epoch for both builds (dist.sh's default, the commit's time, would move
# if a commit landed between them)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || echo 315532800)}
run env CCLFORGE_DIST_BUILD="$T_TMP/build-a" bash "$src/scripts/dist.sh" --out "$dist"
if [ "$RC" -ne 0 ] && printf '%s' "$ERR" | grep -qE "cannot read Debian's source index|cannot fetch"; then
    t_skip "the pinned sources cannot be fetched from the Debian archive here"
fi
expect_rc 0 "scripts/dist.sh builds the release"
wx=$dist/cclforge-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
wa=$dist/cclforge-$version-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl
tx=$dist/cclforge-$version-linux-x86_64.tar.gz
ta=$dist/cclforge-$version-linux-aarch64.tar.gz
sd=$dist/cclforge-$version.tar.gz
for f in "$wx" "$wa" "$tx" "$ta" "$sd" "$dist/SHA256SUMS"; do
    [ -f "$f" ] && ok "dist/ has ${f##*/}" || bad "dist/ lacks ${f##*/}"
done
run bash -c "cd '$dist' && sha256sum -c --strict SHA256SUMS"
expect_rc 0 "SHA256SUMS matches every artefact"
[ -z "$(ls -A "$dist" | grep -vE '\.(whl|tar\.gz)$|^SHA256SUMS$')" ] && ok "nothing else in dist/" || bad "dist/ has extra files: $(ls "$dist")"

run env CCLFORGE_DIST_BUILD="$T_TMP/build-b" bash "$src/scripts/dist.sh" --arch x86_64 --out "$T_TMP/dist-b"
expect_rc 0 "a second x86_64 release build in another directory"
for f in "$wx" "$tx" "$sd"; do
    cmp -s "$f" "$T_TMP/dist-b/${f##*/}" && ok "reproducible: ${f##*/} is the same bytes" ||
        bad "${f##*/} differs between two builds of one commit"
done

for w in "$wx" "$wa"; do
    run "$tools/auditwheel" show "$w"
    tag=${w##*-py3-none-}
    tag=${tag%%.*}
    expect_out "\"${tag%.whl}\"" "auditwheel show places ${w##*/} in ${tag%.whl}"
done
wheel_binary() { # WHEEL OUT: the binary pip installs as the command
    python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2], "wb").write(z.read("cclforge-%s.data/scripts/cclforge" % sys.argv[3]))' \
        "$1" "$2" "$version" && chmod +x "$2"
}
mkdir -p "$T_TMP/bins"
for arch in x86_64 aarch64; do
    case $arch in x86_64) w=$wx t=$tx ;; aarch64) w=$wa t=$ta ;; esac
    wheel_binary "$w" "$T_TMP/bins/wheel-$arch"
    tar -xzf "$t" -C "$T_TMP/bins" "cclforge-$version-linux-$arch/bin/cclforge"
    tbin=$T_TMP/bins/cclforge-$version-linux-$arch/bin/cclforge
    cmp -s "$T_TMP/bins/wheel-$arch" "$tbin" && ok "$arch: the wheel and the tarball carry the same binary" ||
        bad "$arch: the wheel's binary is not the tarball's"
    for bin in "$T_TMP/bins/wheel-$arch" "$tbin"; do
        case $bin in */wheel-*) what="$arch, the wheel's binary" ;; *) what="$arch, the tarball's binary" ;; esac
        run bash "$src/tests/support/check_hardening.sh" "$bin"
        expect_rc 0 "$what is hardened: GNU_RELRO, BIND_NOW, PIE, no executable stack, __stack_chk_fail, __*_chk imports"
        [ "$RC" -eq 0 ] && echo "  ${OUT##*: }"
    done
    run readelf -W --dyn-syms -d "$T_TMP/bins/wheel-$arch"
    top=$(printf '%s' "$OUT" | grep -oE 'GLIBC_2\.[0-9]+' | sort -t. -k2 -n | tail -n 1)
    [ "$top" = GLIBC_2.17 ] && ok "$arch: the highest glibc symbol version is $top" || bad "$arch: highest glibc version $top"
    needed=$(printf '%s' "$OUT" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    extra=$(printf '%s\n' $needed | grep -vxE 'libc\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libm\.so\.6|ld-linux.*' || true)
    [ -z "$extra" ] && ok "$arch: NEEDED only glibc's own ($needed)" || bad "$arch: NEEDED outside the policy: $extra"
done

# The README's first command, on this host: pip picks this architecture's
# manylinux2014 wheel from dist/, and the command it installs runs doctor.
host_arch=$(uname -m)
if [ "$host_arch" = x86_64 ] || [ "$host_arch" = aarch64 ]; then
    python3 -m venv "$T_TMP/choice-venv"
    run "$T_TMP/choice-venv/bin/pip" install -q --no-index --find-links "$dist" cclforge
    expect_rc 0 "pip install --no-index --find-links dist cclforge ($host_arch)"
    cmp -s "$T_TMP/choice-venv/bin/cclforge" "$T_TMP/bins/wheel-$host_arch" &&
        ok "pip installed the $host_arch wheel's binary as the command" ||
        bad "pip did not install the $host_arch wheel's binary"
    run "$T_TMP/choice-venv/bin/cclforge" doctor
    [ "$RC" -le 1 ] && [ -n "$OUT" ] && ok "the installed command's doctor runs and reports (exit $RC)" ||
        bad "the installed command's doctor failed"
fi

# A failed release leaves the output directory as it was: the third-party
# cache cannot be made (a path under /dev/null), so the build stops before any
# artefact is made.
mkdir -p "$T_TMP/keep"
echo old >"$T_TMP/keep/SHA256SUMS"
run env CCLFORGE_DIST_CACHE=/dev/null/cache CCLFORGE_DIST_BUILD="$T_TMP/build-c" bash "$src/scripts/dist.sh" --arch x86_64 --no-sdist --out "$T_TMP/keep"
[ "$RC" -ne 0 ] && ok "dist.sh fails when its cache cannot be written (exit $RC)" || bad "dist.sh succeeded without its cache"
[ "$(ls -A "$T_TMP/keep")" = SHA256SUMS ] && [ "$(cat "$T_TMP/keep/SHA256SUMS")" = old ] && [ ! -e "$T_TMP/keep.tmp" ] &&
    ok "the failed release left --out as it was and no staging directory" || bad "the failed release changed $T_TMP/keep"

# The sdist builds from source with pip (scikit-build-core from PyPI) and
# installs the same layout.
python3 -m venv "$T_TMP/sdist-venv"
run "$T_TMP/sdist-venv/bin/pip" install -q "$sd"
if [ "$RC" -ne 0 ] && printf '%s' "$ERR" | grep -qiE "could not find a version|connection|network"; then
    t_skip_part "sdist: its build requirements cannot be fetched from PyPI here"
else
    expect_rc 0 "pip install of the sdist builds it from source"
    run "$T_TMP/sdist-venv/bin/cclforge" --version
    expect_out "^cclforge $version\$" "the sdist's installed command runs"
    run "$T_TMP/sdist-venv/bin/python" -m cclforge bridge plan --vendor nvidia
    expect_no_out "share directory is missing" "the sdist's install finds share/cclforge"
fi

# smoke --backend mpi from the installed wheel, with no MPI at build time:
# Open MPI (libmpi.so.40) under mpirun, MPICH (libmpi.so.12) under its mpiexec.
wbin=$T_TMP/choice-venv/bin/cclforge # the README's install, above
if command -v mpirun >/dev/null; then
    run mpirun --allow-run-as-root --oversubscribe -n 2 "$wbin" smoke --backend mpi
    expect_rc 0 "the wheel's smoke --backend mpi under Open MPI's mpirun"
    expect_out "library: .*libmpi\.so\.40[^ ]* \(Open MPI ABI" "the wheel's binary loaded Open MPI's libmpi"
else
    t_skip_part "smoke from the wheel with Open MPI: no mpirun (scripts/deps.sh installs openmpi-bin)"
fi
mpich=$(bash "$src/scripts/mpich-cache.sh" mpich 2>/dev/null | tail -n 1)
if [ -n "$mpich" ] && [ -x "$mpich/bin/mpiexec" ]; then
    run "$mpich/bin/mpiexec" -n 2 "$wbin" smoke --backend mpi
    expect_rc 0 "the wheel's smoke --backend mpi under MPICH's mpiexec"
    expect_out "library: .*libmpi\.so\.12[^ ]* \(MPICH ABI" "the wheel's binary loaded MPICH's libmpi"
else
    t_skip_part "smoke from the wheel with MPICH: the mpich wheel cannot be fetched from PyPI here"
fi

# The release's own check refuses a binary that breaks the rules: one built
# here by the host's compiler (dlopen@GLIBC_2.34, a shared cJSON, lazy
# binding and no stack protector) packed as a manylinux2014 wheel.
bad=$T_TMP/bad/cclforge-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
mkdir -p "$T_TMP/bad/stage/bin"
printf '%s\n' '#include <cjson/cJSON.h>' '#include <dlfcn.h>' \
    'int main(void) { return cJSON_Version()[0] == 0 && dlopen("x", RTLD_NOW) != 0; }' >"$T_TMP/bad/host.c"
"${CC:-cc}" -O2 -fno-stack-protector -Wl,-z,lazy -o "$T_TMP/bad/stage/bin/cclforge" "$T_TMP/bad/host.c" -lcjson -ldl
cp -r "$T_TMP/build-a/x86_64/stage/share" "$T_TMP/bad/stage/"
python3 "$src/scripts/dist/pack.py" wheel "$T_TMP/bad/stage" "$T_TMP/build-a/x86_64/build/python/cclforge" "$version" "$bad"
run bash "$src/scripts/dist/check-wheel.sh" "$T_TMP/build-a/x86_64/stage/bin/cclforge" "$tools" "$bad"
expect_rc 1 "check-wheel refuses a binary that needs a newer glibc, a shared cJSON, and lacks hardening"
expect_err "scripts/cclforge needs GLIBC_2\.3[0-9]" "check-wheel names the file and the glibc version"
expect_err "needs libcjson\.so\.1" "check-wheel names the NEEDED outside the policy"
expect_err "scripts/cclforge: no BIND_NOW.*-Wl,-z,now" "check-wheel names the lazy binding and its flag"
expect_err "scripts/cclforge: no stack protector.*-fstack-protector-strong" "check-wheel names the missing stack protector and its flag"
expect_err "the binary in ${bad##*/} lacks the hardening" "check-wheel says which wheel's binary is not hardened"

# --- Debian 11: pip install --prefix as an unprivileged user ---------------
mkroot() { # SUITE DIR DEBOOTSTRAP-ARGS...: a cached root, made once
    local suite=$1 dir=$2; shift 2
    [ -e "$dir/.complete" ] && return 0
    rm -rf "$dir.tmp"
    mkdir -p "$(dirname "$dir")"
    if nice -n 10 debootstrap "$@" "$suite" "$dir.tmp" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$dir.log" 2>&1; then
        rm -rf "$dir" && mv "$dir.tmp" "$dir" && touch "$dir/.complete"
    else
        rm -rf "$dir.tmp"
        return 1
    fi
}
if ! command -v debootstrap >/dev/null; then
    t_skip_part "Debian 11 and arm64 roots: debootstrap is not installed (scripts/deps.sh installs it)"
elif ! mkroot bullseye "$cache/dist-roots/bullseye-py" --variant=minbase --include=python3,python3-pip; then
    t_skip_part "Debian 11 root: debootstrap bullseye failed (see $cache/dist-roots/bullseye-py.log)"
else
    root=$cache/dist-roots/bullseye-py
    home=$root/tmp/cclforge-user
    rm -rf "$home"
    mkdir -p "$home"
    mkdir "$home/wheels"
    cp "$dist"/*.whl "$home/wheels/"
    cp "$wx" "$tx" "$src/tests/fixtures/dist/ldd_agrees.py" "$src/tests/support/ldd_compare.py" "$home/"
    chown -R 65534:65534 "$home"
    inroot() { run chroot --userspec=65534:65534 "$root" env -i PATH=/usr/bin:/bin HOME=/tmp/cclforge-user LC_ALL=C "$@"; }
    inroot python3 -m pip install --no-index --no-warn-script-location --prefix /tmp/cclforge-user/pfx --find-links /tmp/cclforge-user/wheels cclforge
    expect_rc 0 "Debian 11: pip install --prefix from the directory of all wheels, as user nobody"
    pfx=/tmp/cclforge-user/pfx
    cmp -s "$root$pfx/bin/cclforge" "$T_TMP/bins/wheel-x86_64" &&
        ok "Debian 11: pip chose the x86_64 manylinux2014 wheel" || bad "Debian 11: pip did not install the x86_64 wheel's binary"
    inroot $pfx/bin/cclforge --version
    expect_out "^cclforge $version\$" "Debian 11: the installed command runs (glibc 2.31)"
    inroot env PYTHONPATH=$pfx/lib/python3.9/site-packages python3 -m cclforge --version
    expect_out "^cclforge $version\$" "Debian 11: python -m cclforge runs the binary"
    inroot env PYTHONPATH=$pfx/lib/python3.9/site-packages python3 -c 'import cclforge; print(cclforge.__version__)'
    expect_out "^$version\$" "Debian 11: cclforge.__version__ is the binary's version"
    inroot $pfx/bin/cclforge doctor --no-python --json
    [ "$RC" -le 1 ] && ok "Debian 11: doctor --no-python --json ran (exit $RC)" || bad "Debian 11: doctor crashed"
    expect_json 'd["schema"].startswith("cclforge.doctor/")' "Debian 11: doctor's report is its JSON"
    inroot $pfx/bin/cclforge bridge plan --vendor nvidia
    expect_out "source .*$pfx/share/cclforge/bridge/" "Debian 11: the --prefix install finds <prefix>/share/cclforge"
    inroot python3 /tmp/cclforge-user/ldd_agrees.py $pfx/bin/cclforge /bin/ls /usr/bin/python3.9 /bin/bash /usr/bin/apt \
        /usr/lib/x86_64-linux-gnu/libapt-pkg.so.6.0 /usr/bin/gpgv
    expect_rc 0 "Debian 11: inspect agrees with the root's own ldd"
    expect_out "same  /usr/bin/apt" "Debian 11: compared apt's closure"
    inroot python3 -m pip install --no-index --no-warn-script-location --user "/tmp/cclforge-user/${wx##*/}"
    expect_rc 0 "Debian 11: pip install --user of the wheel as user nobody"
    inroot /tmp/cclforge-user/.local/bin/cclforge bridge plan --vendor nvidia
    expect_out "source .*/tmp/cclforge-user/.local/share/cclforge/bridge/" "Debian 11: the --user install finds ~/.local/share/cclforge"
    inroot tar -xzf "/tmp/cclforge-user/${tx##*/}" -C /tmp/cclforge-user
    tdir=/tmp/cclforge-user/cclforge-$version-linux-x86_64
    inroot $tdir/bin/cclforge --version
    expect_out "^cclforge $version\$" "Debian 11: the extracted tarball's command runs"
    inroot $tdir/bin/cclforge bridge plan --vendor nvidia
    expect_out "source .*$tdir/share/cclforge/bridge/" "Debian 11: the tarball's binary finds its share/"
    rm -rf "$home"
fi

# --- Debian 11 without the -dev packages: the sdist built by pip -------------
# A root with gcc, make, perl and python3-venv, but no libcjson-dev,
# libssl-dev, zlib1g-dev, libzstd-dev or libzip-dev, no pkg-config and no
# cmake: pip fetches cmake, ninja and scikit-build-core from PyPI, and the
# project's CMake builds every library of scripts/dist/deps.lock from the
# tarballs the sdist carries (cmake/bundled_deps.cmake). pip there trusts
# this host's CA bundle (the machine's TLS set-up; a user's host has its own).
# No /proc in the chroot: CMAKE_BUILD_PARALLEL_LEVEL gives the jobs.
ca=${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
if ! command -v debootstrap >/dev/null; then
    t_skip_part "the sdist in Debian 11 without -dev packages: debootstrap is not installed"
elif ! mkroot bullseye "$cache/dist-roots/bullseye-cc" --variant=minbase --include=python3,python3-pip,python3-venv,gcc,make,perl,libc6-dev; then
    t_skip_part "the sdist in Debian 11 without -dev packages: debootstrap failed (see $cache/dist-roots/bullseye-cc.log)"
else
    croot=$cache/dist-roots/bullseye-cc
    lacks=""
    for f in usr/include/zlib.h usr/include/zstd.h usr/include/openssl usr/include/cjson usr/include/zip.h usr/bin/pkg-config usr/bin/cmake; do
        [ -e "$croot/$f" ] && lacks="$lacks /$f"
    done
    [ -z "$lacks" ] && ok "the build root has no -dev files of the five libraries, no pkg-config, no cmake" ||
        bad "the build root is not bare:$lacks"
    chome=$croot/tmp/cclforge-sdist
    rm -rf "$chome"
    mkdir -p "$chome"
    cp "$sd" "$wx" "$src/tests/fixtures/dist/ldd_agrees.py" "$src/tests/support/ldd_compare.py" "$chome/"
    [ -f "$ca" ] && cp "$ca" "$chome/ca.crt"
    chown -R 65534:65534 "$chome"
    incroot() { run chroot --userspec=65534:65534 "$croot" env -i PATH=/usr/bin:/bin HOME=/tmp/cclforge-sdist LC_ALL=C \
        PIP_CERT=/tmp/cclforge-sdist/ca.crt CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$@"; }
    v=/tmp/cclforge-sdist/venv
    incroot python3 -m venv $v
    t0=$(date +%s)
    incroot nice -n 10 $v/bin/pip install -v --no-warn-script-location "/tmp/cclforge-sdist/${sd##*/}"
    secs=$(($(date +%s) - t0))
    log=$(printf '%s\n%s' "$OUT" "$ERR")
    if [ "$RC" -ne 0 ] && printf '%s' "$log" | grep -qiE "could not find a version|connection|network|ssl"; then
        t_skip_part "the sdist in Debian 11 without -dev packages: PyPI cannot be reached from the root here"
    else
        expect_rc 0 "Debian 11 without -dev packages: pip install of the sdist builds it from source (${secs} s)"
        [ "$RC" -eq 0 ] || printf '%s\n' "$log" | grep -vE "Skipping link|Found link" | tail -n 60
        bundled=$(printf '%s' "$log" | sed -n 's/.*-- cclforge: bundled ([^)]*): //p' | head -n 1)
        for n in $(grep -vE '^[[:space:]]*(#|$)' "$src/scripts/dist/deps.lock" | awk '{ print $1 }'); do
            [ "$n" != libisal ] || continue # optional, and this root has no nasm: below
            case " $bundled " in *" $n "*) ok "the sdist's build bundled $n" ;; *) bad "the sdist's build did not bundle $n (bundled: $bundled)" ;; esac
        done
        case " $bundled " in
        *" libisal "*) bad "the sdist's build bundled ISA-L in a root without nasm" ;;
        *) printf '%s' "$log" | grep -q "libisal not bundled: its x86-64 code needs nasm" &&
            ok "without nasm the sdist's build leaves ISA-L out, saying why" || bad "the sdist's build does not say why ISA-L is left out" ;;
        esac
        incroot $v/bin/cclforge --version
        expect_out "^cclforge $version\$" "Debian 11: the command built from the sdist runs"
        run readelf -d "$croot$v/bin/cclforge"
        needed=$(printf '%s' "$OUT" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
        extra=$(printf '%s\n' $needed | grep -vxE 'libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux.*' || true)
        [ -z "$extra" ] && ok "the sdist's binary NEEDs only glibc ($needed)" || bad "the sdist's binary NEEDs $extra"
        incroot $v/bin/cclforge doctor --no-python --json
        [ "$RC" -le 1 ] && ok "Debian 11: the sdist's doctor --no-python --json ran (exit $RC)" || bad "the sdist's doctor crashed"
        expect_json 'd["schema"].startswith("cclforge.doctor/")' "Debian 11: the sdist's doctor report is its JSON"
        incroot python3 /tmp/cclforge-sdist/ldd_agrees.py $v/bin/cclforge /bin/ls /usr/bin/python3.9 /bin/bash /usr/bin/make
        expect_rc 0 "Debian 11: the sdist's inspect agrees with the root's own ldd"
        expect_out "same  /bin/ls" "Debian 11: compared /bin/ls's closure"
        # the bundled libzip is linked (the root has no libzip.so.4 to load)
        incroot $v/bin/cclforge wheel verify --json "/tmp/cclforge-sdist/${wx##*/}"
        expect_rc 0 "Debian 11: the sdist's wheel verify reads the release wheel (libzip linked)"
        expect_json 'd["inflate"] == "zlib"' "Debian 11: the sdist built without ISA-L inflates with zlib"
        incroot $v/bin/cclforge bridge plan --vendor nvidia
        expect_out "source .*$v/share/cclforge/bridge/" "Debian 11: the sdist's install finds its share/cclforge"
    fi
    rm -rf "$chome"
fi

# --- aarch64 under qemu-user-static -----------------------------------------
qemu=$(command -v qemu-aarch64-static || true)
aroot=$cache/dist-roots/bullseye-arm64
if [ -z "$qemu" ]; then
    t_skip_part "aarch64: qemu-user-static is not installed (scripts/deps.sh installs it)"
elif ! command -v debootstrap >/dev/null || ! mkroot bullseye "$aroot" --foreign --arch=arm64 --variant=minbase; then
    t_skip_part "aarch64: debootstrap --foreign --arch=arm64 bullseye failed (see $aroot.log)"
else
    # the tarball's binary, which is the wheel's (checked above)
    adir=$T_TMP/arm
    mkdir -p "$adir"
    tar -xzf "$ta" -C "$adir"
    abin=$adir/cclforge-$version-linux-aarch64/bin/cclforge
    run "$qemu" -L "$aroot" "$abin" --version
    expect_out "^cclforge $version\$" "aarch64: the binary runs under qemu with Debian 11's arm64 glibc"
    run "$qemu" -L "$aroot" "$abin" inspect --root "$aroot" --no-gpu --no-banner "$aroot/bin/ls"
    expect_rc 0 "aarch64: inspect /bin/ls of the arm64 root"
    expect_out "libc\.so\.6.*lib/aarch64-linux-gnu/libc\.so\.6" "aarch64: inspect resolves libc.so.6 in the arm64 root"
    blocks=$(python3 "$src/tests/fixtures/small_blocks_wheel.py" "$adir")
    run env TMPDIR="$adir" "$qemu" -L "$aroot" "$abin" wheel verify --json "$adir/$blocks"
    expect_rc 0 "aarch64: wheel verify reads 20,000 small deflate blocks whole (intel/isa-l#316 fixed), on its threads"
    expect_json 'd["inflate"] == "isal"' "aarch64: through the ISA-L the release links"
fi
t_end
