#!/usr/bin/env bash
# The installed CMake module: a plugin's CMake project calls
# cclforge_add_nccl_bridge() and `cmake --build` runs `cclforge bridge build`
# (against PyPI's torch, as bridge_torch.sh; the object cache makes a repeat a
# link). Its argument checks fail the configure step.
. "$(dirname "$0")/lib.sh"
T=$T_TMP
export CCLFORGE_HOME=${CCLFORGE_TEST_HOME:-$HOME/.cache/cclforge/test-home}
module=${CCLFORGE_BINARY_DIR:?}/share/cclforge/cmake/CCLForgeBridge.cmake
[ -f "$module" ] && ok "the module is mirrored into the build directory" || bad "the module is mirrored into the build directory"
command -v cmake >/dev/null || t_skip "no cmake"

mkdir -p "$T/bad"
cat > "$T/bad/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(bad NONE)
include("$module")
cclforge_add_nccl_bridge(b NAME _x)
CM
run cmake -S "$T/bad" -B "$T/bad/build"
[ "$RC" -ne 0 ] && ok "configure fails without PACKAGE" || bad "configure fails without PACKAGE"
expect_err 'PACKAGE and NAME are required' "and says what is missing"

t_torch_inputs

mkdir -p "$T/plugin/src/myplug/comm"
cat > "$T/plugin/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(myplug NONE)
include("$module")
cclforge_add_nccl_bridge(nccl_bridge
  PACKAGE myplug.comm NAME _flagos_nccl  # as bridge_host.sh: one cached object serves both
  LIBTORCH "$site/torch"
  INTO "\${CMAKE_SOURCE_DIR}/src")
CM
run cmake -S "$T/plugin" -B "$T/plugin/build"
expect_rc 0 "configure a project that calls cclforge_add_nccl_bridge"
t0=$(date +%s)
run cmake --build "$T/plugin/build"
expect_rc 0 "cmake --build runs cclforge bridge build"
echo "# cmake build: $(( $(date +%s) - t0 ))s"
ls "$T"/plugin/src/myplug/comm/_flagos_nccl.cpython-*.so >/dev/null 2>&1 \
    && ok "the extension is at src/myplug/comm/ (INTO)" || bad "the extension is at src/myplug/comm/"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["package"] == "myplug.comm" and d["module"] == "_flagos_nccl" else 1)' \
    "$T/plugin/build/nccl_bridge/cclforge-build.json" && ok "cclforge-build.json in the target's directory" || bad "cclforge-build.json in the target's directory"
t_end
