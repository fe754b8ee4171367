#!/usr/bin/env bash
# Bad layout input to `bridge` and the graft/verify options it added, through
# the binary: each a clear error naming the thing and the fix, the right exit
# code, nothing built. Fast: no torch needed.
. "$(dirname "$0")/lib.sh"
T=$T_TMP

run "$CCLFORGE" bridge plan --package 'torch_fl..comm' --libtorch "$T"
expect_rc 2 "--package with an empty component is a usage error"
expect_err "not a dotted Python package name" "and says so"
run "$CCLFORGE" bridge plan --package '1abc.x' --libtorch "$T"
expect_rc 2 "--package starting with a digit"
run "$CCLFORGE" bridge plan --max-glibc 'newest' --libtorch "$T"
expect_rc 2 "--max-glibc that is neither a version nor a manylinux tag"
expect_err "give a glibc version \(2.28\) or a manylinux tag" "and what to give"
run "$CCLFORGE" bridge build --into "$T/not-there" --libtorch "$T"
expect_rc 2 "--into a directory that does not exist"
expect_err "--into $T/not-there: no such directory" "names it"
run "$CCLFORGE" bridge plan --docker '' --libtorch "$T"
expect_rc 2 "--docker with no image"
for bad in /opt/dtk/lib lib_dcu '$ORIGIN/../../../escape' '$ORIGIN/$LIB' '$ORIGIN/a:$ORIGIN/b'; do
    run "$CCLFORGE" bridge plan --rpath "$bad" --package a.b --libtorch "$T" --json
    expect_rc 1 "--rpath '$bad' is a plan problem"
    expect_json 'any(p.startswith("--rpath ") for p in d["plan"]["problems"])' "--rpath '$bad': named with the fix"
done
run "$CCLFORGE" bridge plan --rpath '$ORIGIN/../lib_dcu' --package a.b --libtorch "$T" --json
expect_json '"$ORIGIN/../lib_dcu" in [r["value"] for r in d["plan"]["rpath"]] and "$ORIGIN/../../torch/lib" in [r["value"] for r in d["plan"]["rpath"]]' "a package-tree --rpath is kept and torch/lib is added at the package's depth"
run "$CCLFORGE" bridge plan --define '=1' --libtorch "$T" --json
expect_json 'any("--define" in p for p in d["plan"]["problems"])' "--define without a name is a problem"
run "$CCLFORGE" wheel verify --backend mpi x.whl
expect_rc 2 "wheel verify --backend is nccl or gloo"
expect_err "--backend is nccl or gloo" "and says so"
run "$CCLFORGE" wheel graft
expect_rc 2 "wheel graft with nothing"
run "$CCLFORGE" wheel frobnicate
expect_rc 2 "an unknown wheel subcommand"
expect_err "verify or graft" "lists the subcommands"
t_end
