# cclforge doctor: where NCCL's dlopen of its network plugin lands. NCCL calls
# dlopen from inside libnccl.so.2 (or inside libtorch_cuda.so when linked into
# it), so glibc searches from that library's link map: its RPATH and the RPATHs
# up the chain of objects that loaded it (unless it has a RUNPATH), then
# LD_LIBRARY_PATH, then its RUNPATH. Fixtures made by the linker here; the
# oracle is the real glibc (tests/fixtures/dlopen_oracle.c calls a function of
# the library that plays NCCL, which dlopens the plugin itself).
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
CC=${CC:-cc}
P=$T_TMP/p
mkdir -p "$P/bin"
"$CC" -o "$P/bin/oracle" "$SRC/tests/fixtures/dlopen_oracle.c" -ldl || { echo "not ok - the oracle does not build"; exit 1; }
cat >"$T_TMP/nccl.c" <<'C'
#include <dlfcn.h>
/* what NCCL's openPluginLib does: dlopen from inside libnccl */
void *fixture_open_plugin(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
const char banner[] = "NCCL version 2.27.5+cuda12.9";
C
echo 'const int ncclNetPlugin_v9 = 9;' >"$T_TMP/plugin.c"
nccl() { # nccl DIR [linker flags]: a libnccl.so.2 in DIR
    mkdir -p "$1"
    local d=$1
    shift
    "$CC" -shared -fPIC -o "$d/libnccl.so.2" "$T_TMP/nccl.c" -Wl,-soname,libnccl.so.2 "$@" -ldl
}
plugin() { mkdir -p "$1" && "$CC" -shared -fPIC -o "$1/libnccl-net-cfpl.so" "$T_TMP/plugin.c"; }
oracle() { "$P/bin/oracle" "$@"; }
D=("$CCLFORGE" doctor --no-nvidia --no-python)
plug() { # plug FIELD: that field of the NCCL_NET_PLUGIN=cfpl entry
    printf '[p for p in d["nccl_config"]["plugins"] if p["variable"]=="NCCL_NET_PLUGIN"][0]["%s"]' "$1"
}

# ---- 1. libnccl.so.2 with RUNPATH $ORIGIN/../plugins ----
A=$P/a
nccl "$A/lib" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../plugins'
plugin "$A/plugins"
OUT=$(oracle "$A/lib/libnccl.so.2" fixture_open_plugin libnccl-net-cfpl.so); RC=$?; ERR=
expect_out "^$A/lib/../plugins/libnccl-net-cfpl.so$" "glibc: NCCL's dlopen finds the plugin through libnccl's RUNPATH"
OUT=$(oracle "$A/lib/libnccl.so.2" dlopen libnccl-net-cfpl.so); RC=$?
expect_out "^not found" "glibc: the same dlopen from the program does not"
run env LD_LIBRARY_PATH="$A/lib" NCCL_NET_PLUGIN=cfpl "${D[@]}" --json
expect_json "$(plug loader)==\"$A/lib/libnccl.so.2\"" "doctor: the dlopen is libnccl's"
expect_json "$(plug path)==\"$A/lib/../plugins/libnccl-net-cfpl.so\" and $(plug found_by)==\"runpath of $A/lib/libnccl.so.2\"" "doctor: the plugin glibc finds, through libnccl's RUNPATH"
expect_json '"ncclNetPlugin_v9" in '"$(plug symbols)" "and its entry point is read"
expect_json 'not any(f["id"]=="nccl-plugin-missing" for f in d["findings"])' "no nccl-plugin-missing"

# ---- 2. torch's layout: libtorch_cuda.so with DT_RPATH $ORIGIN/../../nvidia/nccl/lib:$ORIGIN
#      loads a libnccl.so.2 with neither; the plugin lies in torch/lib ----
B=$P/b
nccl "$B/nvidia/nccl/lib"
mkdir -p "$B/torch/lib"
echo 'int torch_cpu_fixture(void) { return 0; }' >"$T_TMP/cpu.c"
"$CC" -shared -fPIC -o "$B/torch/lib/libtorch_cpu.so" "$T_TMP/cpu.c" -Wl,-soname,libtorch_cpu.so
"$CC" -shared -fPIC -o "$B/torch/lib/libtorch_cuda.so" "$T_TMP/cpu.c" -Wl,-soname,libtorch_cuda.so \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../../nvidia/nccl/lib:$ORIGIN' -Wl,--no-as-needed \
    -L"$B/nvidia/nccl/lib" -l:libnccl.so.2
plugin "$B/torch/lib"
OUT=$(oracle "$B/torch/lib/libtorch_cuda.so" fixture_open_plugin libnccl-net-cfpl.so); RC=$?
expect_out "^$B/torch/lib/libnccl-net-cfpl.so$" "glibc: libnccl has no RUNPATH, so the RPATH of libtorch_cuda.so, which loaded it, is searched"
run env -u LD_LIBRARY_PATH NCCL_NET_PLUGIN=cfpl "${D[@]}" --libtorch "$B/torch" --json
expect_json "$(plug loader)==\"$B/nvidia/nccl/lib/libnccl.so.2\"" "doctor: libtorch's libnccl makes the call"
expect_json "$(plug path)==\"$B/torch/lib/libnccl-net-cfpl.so\" and $(plug found_by)==\"rpath of $B/torch/lib/libtorch_cuda.so\"" "doctor: found as glibc finds it, up the loader chain"

# ---- 3. the same tree, but libnccl.so.2 has a RUNPATH: the chain is not searched ----
nccl "$B/nvidia/nccl/lib" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../nothing'
OUT=$(oracle "$B/torch/lib/libtorch_cuda.so" fixture_open_plugin libnccl-net-cfpl.so); RC=$?
expect_out "^not found" "glibc: with a RUNPATH on libnccl the RPATH chain is skipped"
run env -u LD_LIBRARY_PATH NCCL_NET_PLUGIN=cfpl "${D[@]}" --libtorch "$B/torch" --json
expect_json "$(plug path) is None" "doctor: not found either"
expect_json 'any(f["id"]=="nccl-plugin-missing" and f["severity"]=="error" for f in d["findings"])' "so it is nccl-plugin-missing, an error"
t_end
