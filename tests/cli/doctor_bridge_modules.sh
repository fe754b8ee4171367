#!/usr/bin/env bash
# doctor finds cclforge-built bridge modules beside torch by their own ABI
# facts (a plugin's pip or CMake wheel has no cclforge.json): a
# site-packages laid out by hand, its extension modules real ELF files linked
# here from tests/fixtures/bridge_facts/facts.c, the toolkit library a real
# ELF of that soname. Checks: the library missing names it, the module and the
# fix; present through LD_LIBRARY_PATH gives none; in the toolkit ROCM_PATH
# names but off the loader's path says so; the walk's bounds (torch/ skipped,
# only packages); a truncated module and a symbol of another size reported,
# never a crash; the remembered walk serves a warm run and a new module
# added afterwards is seen.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
T=$T_TMP
command -v gcc >/dev/null || t_skip "no gcc to link the stand-in modules"
export CCLFORGE_HOME=$T/home
unset DTK_HOME ROCM_PATH ROCM_HOME HIP_PATH
site=$T/site
mkdir -p "$site/torch" "$site/plug/sub" "$site/loose" "$site/tk/lib"
touch "$site/torch/__init__.py" "$site/plug/__init__.py" "$site/plug/sub/__init__.py"
module() { # OUT VENDOR VERSION LIBS [cc args]: a stand-in extension module with cclforge_abi_info
    local out=$1 v=$2 ver=$3 libs=$4; shift 4
    gcc -shared -fPIC -fvisibility=hidden -o "$out" "-DVENDOR=\"$v\"" "-DTOOLKIT_VERSION=\"$ver\"" "-DTOOLKIT_LIBS=\"$libs\"" "$@" "$SRC/tests/fixtures/bridge_facts/facts.c"
}
SFX=.cpython-311-x86_64-linux-gnu.so
module "$site/plug/sub/_br$SFX" dtk 24.04.1 "libcftest_tk.so.1 libc.so.6" || t_skip "gcc cannot link a shared object"
module "$site/torch/_in_torch$SFX" dtk 24.04.1 "libcftest_torch_only.so.1"   # torch's own tree: not walked
module "$site/loose/_nopkg$SFX" dtk 24.04.1 "libcftest_nopkg.so.1"           # no __init__.py: not a package
module "$site/plug/_odd$SFX" dtk 24.04.1 "libcftest_odd.so.1" -DFACTS_SIZE_OFF=8
head -c 2000 "$site/plug/sub/_br$SFX" > "$site/plug/_cut$SFX"
printf 'int plain(void) { return 1; }\n' > "$T/plain.c" && gcc -shared -fPIC -o "$site/plug/_plain$SFX" "$T/plain.c"
mkdir -p "$site/torch/lib" # a CPU torch as doctor reads one: its lib/libtorch_cpu.so
gcc -shared -fPIC -Wl,-soname,libtorch_cpu.so -o "$site/torch/lib/libtorch_cpu.so" "$T/plain.c"
# the toolkit library, a real ELF of that soname
printf 'int cftest_tk(void) { return 2; }\n' > "$T/tk.c"
gcc -shared -fPIC -Wl,-soname,libcftest_tk.so.1 -o "$site/tk/lib/libcftest_tk.so.1" "$T/tk.c"
mv "$site/tk" "$T/tk"
sleep 3 # the probe cache stores nothing changed in the last two seconds

doctor() { run env -u LD_LIBRARY_PATH "$@" "$CCLFORGE" doctor --libtorch "$site/torch" --no-nvidia --json; }
missing='any(f["id"] == "bridge-toolkit-lib-missing" and f["subject"] == "libcftest_tk.so.1" and "libcftest_tk.so.1 for plug.sub._br (dtk toolkit 24.04.1 at build): not on this host" in f["why"] and "LD_LIBRARY_PATH" in f["remedy"] for f in d["findings"])'
doctor
expect_json "$missing" "missing: names libcftest_tk.so.1, the module plug.sub._br, DTK 24.04.1 and the fix"
expect_json 'sum(f["id"] == "bridge-toolkit-lib-missing" for f in d["findings"]) == 1' "libc.so.6, which the host has, is no finding; nothing else is"
expect_json 'not any("libcftest_torch_only" in f["why"] or "libcftest_nopkg" in f["why"] for f in d["findings"])' "torch's own tree and a directory without __init__.py are not walked"
expect_json 'any(f["id"] == "bridge-facts-unreadable" and f["subject"] == "plug._cut" for f in d["findings"])' "a truncated module is reported (bridge-facts-unreadable)"
expect_json 'any(f["id"] == "bridge-facts-unreadable" and f["subject"] == "plug._odd" and "another size" in f["why"] for f in d["findings"])' "a cclforge_abi_info of another size is reported, not trusted"
expect_json 'not any(f["subject"] == "plug._plain" for f in d["findings"])' "a module without cclforge_abi_info is no finding"
[ -n "$(ls -A "$CCLFORGE_HOME/bridge-walk-v2" 2>/dev/null)" ] \
    && ok "the walk is remembered in the probe cache" || { OUT=$(find "$CCLFORGE_HOME" -maxdepth 3); RC=0; bad "the walk is remembered in the probe cache"; }
doctor
expect_json "$missing" "warm run (the remembered walk): the same finding"
LD_LIBRARY_PATH=$T/tk/lib run "$CCLFORGE" doctor --libtorch "$site/torch" --no-nvidia --json
expect_json 'not any(f["id"] == "bridge-toolkit-lib-missing" for f in d["findings"]) and any("libcftest_tk.so.1 -> '"$T"'/tk/lib/libcftest_tk.so.1 (LD_LIBRARY_PATH) for plug.sub._br" in l for l in d["libtorch"][0]["bridge_toolkit_found"])' "present through LD_LIBRARY_PATH: found, no finding"
doctor ROCM_PATH="$T/tk"
expect_json 'any(f["id"] == "bridge-toolkit-lib-missing" and "in the toolkit ROCM_PATH names ('"$T"'/tk/lib/libcftest_tk.so.1) but not where the loader looks" in f["why"] for f in d["findings"])' "in the toolkit ROCM_PATH names, off the loader's path: said so"
# a module added after the walk was remembered: its directory changed, so it is seen
module "$site/plug/sub/_new$SFX" rocm 6.2 "libcftest_new.so.1"
doctor
expect_json 'any(f["id"] == "bridge-toolkit-lib-missing" and f["subject"] == "libcftest_new.so.1" and "plug.sub._new (rocm toolkit 6.2 at build)" in f["why"] for f in d["findings"])' "a module installed after the remembered walk is seen on the next run"
run env -u LD_LIBRARY_PATH "$CCLFORGE" doctor --libtorch "$site/torch" --no-nvidia --no-cache --json
expect_json "$missing" "--no-cache walks again: the same finding"
# a large environment (a real ML image has thousands of packages): 2,100 package
# directories pass the walk's bound. The bound is its own finding (not "unreadable"),
# and the bounded walk is remembered: the warm run reads no directory again
for i in $(seq -w 1 2100); do mkdir -p "$site/zz$i" && : >"$site/zz$i/__init__.py"; done
sleep 3
doctor
expect_json 'any(f["id"] == "bridge-walk-bounded" and "more than 2048 package directories" in f["why"] and "wheel verify --install" in f["remedy"] for f in d["findings"])' "the bound reached: bridge-walk-bounded, with a way to check a bridge directly"
expect_json 'not any(f["id"] == "bridge-facts-unreadable" and "more than" in f["why"] for f in d["findings"])' "and not filed as an unreadable module"
expect_json "$missing" "the bridges before the bound are still checked"
strace -f -e trace=openat -o "$T/warm.trace" env -u LD_LIBRARY_PATH "$CCLFORGE" doctor --libtorch "$site/torch" --no-nvidia --json >/dev/null 2>&1
opened=$(grep -c "$site/zz" "$T/warm.trace")
[ "$opened" = 0 ] && ok "warm run after the bounded walk: no package directory opened again" \
    || { OUT="$opened directories opened"; RC=0; bad "warm run after the bounded walk: no package directory opened again"; }
t_end
