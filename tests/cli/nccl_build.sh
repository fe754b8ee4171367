# `cclforge nccl build` end to end on the NCCL-shaped mini tree with the real
# nvcc: build, verify, install layout, cache hit, list/activate/env/remove,
# wrong-arch detection, a failing build, kill-during-install recovery,
# concurrent builds of one target, git and tarball sources, RCCL's CMake path.
. "$(dirname "$0")/lib.sh"

t_find_cuda && [ -n "$T_NVCC" ] && [ -n "$T_CUDA_VERSION" ] ||
    t_skip "no CUDA toolkit with nvcc and cuda.h found (install one, or set CUDA_HOME); the NCCL build tests need it"
CV_RE=${T_CUDA_VERSION//./\\.}
MINI="$CCLFORGE_SOURCE_DIR/tests/fixtures/nccl-mini"
ROOT="$T_TMP/root"
BUILDS="$ROOT/nccl/builds"
export CUDA_HOME=$T_CUDA
unset CCLFORGE_TEST_FAULT TORCH_CUDA_ARCH_LIST PYTORCH_ROCM_ARCH MAX_JOBS
B() { "$CCLFORGE" nccl build --root "$ROOT" -j2 "$@"; }
# staged [TARGET]: some staging directory (of TARGET) is left under <root>/nccl/staging
staged() { find "$ROOT/nccl/staging" -mindepth 2 -maxdepth 2 -path "$ROOT/nccl/staging/${1:-*}/*" 2>/dev/null | grep -q .; }

for sub in "" build list activate remove env; do
    run "$CCLFORGE" nccl $sub --help
    expect_rc 0 "nccl $sub --help exits 0"
    expect_out "^usage: cclforge nccl" "nccl $sub --help prints usage"
done
run "$CCLFORGE" nccl frobnicate
expect_rc 2 "an unknown subcommand is a usage error"
run B --jobs zero --dry-run
expect_rc 2 "a bad --jobs is a usage error"

# ---- dry run: the exact command, nothing built ----
run B --source "$MINI" --archs "sm_75,sm_90" --dry-run
expect_rc 0 "dry run exits 0"
expect_out "make -C $MINI src.build 'NVCC_GENCODE=-gencode=arch=compute_75,code=sm_75 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90' BUILDDIR=$ROOT/nccl/work/v2.28.9-sm75-sm90/build CUDA_HOME=$T_CUDA -j2" "dry run prints the exact make command"
[ ! -e "$BUILDS" ] && ok "dry run builds nothing" || bad "dry run created $BUILDS"

run B --source "$MINI" --archs "6.1;12.0" --dry-run
expect_rc 2 "sm_61 with CUDA 13 is a usage error"
expect_err "sm_61 cannot be targeted by CUDA 13" "the reason names the arch and toolkit"
run B --source "$MINI" --archs "gfx90a" --vendor nvidia --dry-run
expect_rc 2 "gfx arch with --vendor nvidia is refused"
run B --source "$MINI" --archs "7.5" --tag v2.28.9 --dry-run
expect_rc 2 "a tag without -N is refused"
expect_err "vX.Y.Z-N" "the expected tag form is named"
run B --source "$MINI" --tag 2.28 --dry-run
expect_rc 2 "a malformed tag without --archs is refused"
expect_err "'2.28' is not an NCCL release tag" "the bad tag is named before missing archs"

# ---- build, verify, install ----
run B --source "$MINI" --archs "7.5;9.0" --only-funcs SendRecv
expect_rc 0 "mini NCCL builds"
T="$BUILDS/$(ls "$BUILDS" | grep '^v2.28.9-sm75-sm90-funcs' | head -1)"
expect_out "installed $T" "the install dir is reported"
expect_out "banner  NCCL version 2.28.9\+cuda$CV_RE" "the banner was verified"
expect_err "^\[3/3\] 100% .*SendRecv.cu|^\[3/3\] 100% .*common.cu|^\[3/3\] 100% .*init.cc" "plain progress lines count units out of the estimated total (3)"
expect_out "code    sm_75 sm_90 compute_90\(PTX\)" "the archs and PTX were found by the inspect engine"
[ "$(readlink "$T/lib/libnccl.so")" = libnccl.so.2 ] && [ "$(readlink "$T/lib/libnccl.so.2")" = libnccl.so.2.28.9 ] \
    && [ -f "$T/lib/libnccl.so.2.28.9" ] && ok "libnccl.so -> .so.2 -> .so.2.28.9" || bad "library symlinks"
grep -q "#define NCCL_VERSION_CODE 22809" "$T/include/nccl.h" && ok "include/nccl.h generated like upstream" || bad "nccl.h"
grep -q "^prefix=$T\$" "$T/lib/pkgconfig/nccl.pc" && grep -q "^Version: 2.28.9" "$T/lib/pkgconfig/nccl.pc" \
    && ok "nccl.pc points at the install" || bad "nccl.pc"
OUT=$(cat "$T/manifest.json")
expect_json "d['schema']=='cclforge.nccl-manifest/1' and d['tag']=='v2.28.9-1' and d['version_code']==22809" "manifest: tag and version code"
expect_json "d['archs']==['sm_75','sm_90'] and d['ptx'] is True and d['cuda_version']=='$T_CUDA_VERSION'" "manifest: archs, ptx, CUDA $T_CUDA_VERSION"
expect_json "len(d['library_sha256'])==64 and d['flags']['ONLY_FUNCS']=='SendRecv' and d['build_seconds']>0" "manifest: sha256, flags, seconds"
expect_json "d['library_sha256']=='$(sha256sum "$T/lib/libnccl.so.2.28.9" | cut -d' ' -f1)'" "manifest sha256 matches the file"
[ -s "$T/build.log" ] && [ -s "$ROOT/nccl/work/$(basename "$T")/build.log" ] && ok "full log kept" || bad "build log"

# ---- cache hit: proven by what did not happen, not by a stopwatch ----
# nothing rebuilt or reinstalled: no make spawned (strace), the work log and
# the installed files (inode, mtime, ctime) untouched, no staging left
snapshot() { stat -c '%n %i %Y %Z %s' "$T/lib/libnccl.so.2.28.9" "$T/manifest.json" "$T/include/nccl.h" \
                 "$ROOT/nccl/work/$(basename "$T")/build.log"; }
before=$(snapshot)
traced "$CCLFORGE" nccl build --root "$ROOT" -j2 --source "$MINI" --archs "7.5;9.0" --only-funcs SendRecv
expect_rc 0 "same inputs again"
expect_out "^cached $T" "reported as a cache hit"
[ "$(snapshot)" = "$before" ] && ok "the cache hit rewrote nothing (library, manifest, header, work log)" \
    || bad "the cache hit changed files: $before / $(snapshot)"
staged && bad "the cache hit left a staging directory" || ok "the cache hit staged nothing"
if [ "$T_TRACE" = 1 ]; then
    grep -q 'execve("[^"]*/make"' "$T_TMP/trace" && bad "the cache hit spawned make: $(grep make "$T_TMP/trace" | head -2)" \
        || ok "the cache hit spawned no make"
else
    t_skip_part "strace cannot trace here: the cache hit's spawned programs are not checked"
fi
run B --source "$MINI" --archs "7.5;9.0" --only-funcs SendRecv --json
expect_json "d['schema']=='cclforge.nccl-build/1' and d['cache_hit'] is True and d['ok'] is True" "--json cache hit"

# ---- list, activate, env, remove ----
NAME=$(basename "$T")
run "$CCLFORGE" nccl list --root "$ROOT" --json
expect_json "d['schema']=='cclforge.nccl-list/1' and [b['name'] for b in d['builds']]==['$NAME'] and d['builds'][0]['active'] is False" "list --json"
run "$CCLFORGE" nccl env --root "$ROOT"
expect_rc 1 "env without an active build fails"
expect_err "no active NCCL build" "and says so"
run "$CCLFORGE" nccl activate "$NAME" --root "$ROOT"
expect_rc 0 "activate"
[ "$(readlink "$ROOT/nccl/active")" = "builds/$NAME" ] && ok "active symlink" || bad "active symlink"
run "$CCLFORGE" nccl list --root "$ROOT"
expect_out "$NAME +v2.28.9-1 +$CV_RE +sm_75;sm_90 +yes +\*" "list marks the active build"
run "$CCLFORGE" nccl env --root "$ROOT"
expect_out "^export LD_PRELOAD=$T/lib/libnccl.so.2" "env: LD_PRELOAD"
expect_out "export LD_LIBRARY_PATH=$T/lib" "env: LD_LIBRARY_PATH"
expect_out "export NCCL_HOME=$T" "env: NCCL_HOME"
expect_out "^# every rank: mpirun -x NCCL_HOME -x LD_LIBRARY_PATH -x LD_PRELOAD" "env: the mpirun -x form"
expect_out "^# every rank: srun --export=ALL,NCCL_HOME,LD_LIBRARY_PATH,LD_PRELOAD" "env: the srun --export form"
run "$CCLFORGE" nccl env "$NAME" --root "$ROOT" --format yaml
expect_out "^LD_PRELOAD: \"$T/lib/libnccl.so.2\"" "env yaml"
run "$CCLFORGE" nccl env --root "$ROOT" --format json
expect_json "d['schema']=='cclforge.nccl-env/1' and d['env']['NCCL_HOME']=='$T'" "env json"
run "$CCLFORGE" nccl env --root "$ROOT" --format toml
expect_rc 2 "unknown env format"
# a worker host's doctor JSON: its GPUs must be covered by SASS or usable PTX
cat > "$T_TMP/host-ok.json" <<'JSON'
{ "gpus": [ { "vendor": "nvidia", "name": "Tesla T4", "arch": "sm_75" },
            { "vendor": "nvidia", "name": "RTX PRO 6000", "compute_capability": "12.0" } ] }
JSON
cat > "$T_TMP/host-bad.json" <<'JSON'
{ "gpus": [ { "vendor": "nvidia", "name": "A10", "arch": "sm_86" }, { "vendor": "nvidia", "name": "H100", "arch": "sm_90" } ] }
JSON
run "$CCLFORGE" nccl env --root "$ROOT" --host-survey "$T_TMP/host-ok.json" --format json
expect_rc 0 "a host with sm_75 + sm_120 is covered (sm_120 through compute_90 PTX)"
expect_json "d['coverage']['covered'] is True and d['coverage']['ptx_jit_only']==['sm_120'] and d['coverage']['host_archs']==['sm_75','sm_120']" "coverage: sm_120 by PTX JIT only"
expect_err "runs through PTX JIT" "the JIT-only arch is warned about"
run "$CCLFORGE" nccl env --root "$ROOT" --host-survey "$T_TMP/host-bad.json"
expect_rc 1 "a host with sm_86 is not covered"
expect_err "does not cover the host's sm_86" "the uncovered arch is named"
expect_out "export LD_PRELOAD=" "the environment is still printed"
run "$CCLFORGE" nccl activate ../etc --root "$ROOT"
expect_rc 2 "a path is not a build name"

# ---- wrong arch: the Makefile ignores NVCC_GENCODE -> verification fails, nothing installed ----
CCLFORGE_MINI_IGNORE_GENCODE=1 run B --source "$MINI" --archs "7.5;9.0"
expect_rc 1 "a library lacking sm_90 fails the build"
expect_err "no sm_90 machine code" "the missing arch is named"
expect_err "no compute_90 PTX" "the missing PTX is named"
[ ! -e "$BUILDS/v2.28.9-sm75-sm90" ] && ok "nothing installed after a failed verification" || bad "installed anyway"
staged && bad "staging left behind" || ok "no staging left"

# ---- a failing compile: the last lines and the log path, exit 1 ----
CCLFORGE_MINI_FAIL=1 run B --source "$MINI" --archs "7.5"
expect_rc 1 "a failing make exits 1"
expect_err "last lines of $ROOT/nccl/work/v2.28.9-sm75/build.log" "the log path is named"
expect_err "CCLFORGE_MINI_FAIL: this build fails on purpose" "the compiler's error is shown"
expect_err "make failed \(exit 2\)" "how make ended"

# ---- killed while installing: no half target, the next run recovers ----
for point in after-build staged; do
    CCLFORGE_TEST_FAULT=$point run B --source "$MINI" --archs "7.5"
    [ "$RC" -eq 137 ] && ok "killed at $point (SIGKILL)" || bad "fault $point did not kill (rc $RC)"
    [ ! -e "$BUILDS/v2.28.9-sm75" ] && ok "no target after a kill at $point" || bad "target exists after kill at $point"
done
staged v2.28.9-sm75 && ok "the killed run left its staging dir" || bad "no staging dir to recover from"
run B --source "$MINI" --archs "7.5"
expect_rc 0 "the next run builds"
[ -f "$BUILDS/v2.28.9-sm75/manifest.json" ] && ok "target installed on recovery" || bad "not installed on recovery"
staged v2.28.9-sm75 && bad "stale staging not cleaned" || ok "stale staging cleaned"
run "$CCLFORGE" nccl list --root "$ROOT" --json
expect_json "len(d['builds'])==2" "list shows only complete builds"

# ---- two builds of one target at once: one builds, the other waits and hits the cache ----
B --source "$MINI" --archs "9.0" > "$T_TMP/c1.out" 2> "$T_TMP/c1.err" & p1=$!
sleep 0.7
run B --source "$MINI" --archs "9.0" --no-wait
expect_rc 1 "--no-wait fails while the target is being built"
expect_err "another build of v2.28.9-sm90 is running \(pid [0-9]+" "and names the other build"
B --source "$MINI" --archs "9.0" > "$T_TMP/c2.out" 2> "$T_TMP/c2.err" & p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && ok "both concurrent builds succeed" || bad "concurrent builds rc $r1 $r2"
grep -q "waiting for it to finish" "$T_TMP/c2.err" && ok "the second one waited" || bad "second did not wait: $(cat "$T_TMP/c2.err")"
grep -q "^installed" "$T_TMP/c1.out" && grep -q "^cached" "$T_TMP/c2.out" && ok "one install, one cache hit" \
    || bad "expected one install and one cache hit: $(cat "$T_TMP/c1.out" "$T_TMP/c2.out")"
[ "$(grep -c '^\$ make' "$BUILDS/v2.28.9-sm90/build.log")" -eq 1 ] && ok "make ran once" || bad "make ran more than once"

# ---- git source: a local repository with several -N tags ----
REPO="$T_TMP/nccl-repo"
git init -q "$REPO" && cp -r "$MINI/." "$REPO/" && rm -rf "$REPO/build"
gitc() { git -C "$REPO" -c user.email=t@example.com -c user.name=t "$@"; }
gitc add -A && gitc commit -qm "2.28.9-1" && gitc tag v2.28.9-1
sed -i 's/^PKG_REVISION := 1/PKG_REVISION := 2/' "$REPO/makefiles/version.mk"
gitc commit -qam "2.28.9-2" && gitc tag v2.28.9-2
gitc tag v2.26.2-1   # a tag whose tree says 2.28.9: the banner will not match
commit=$(git -C "$REPO" rev-parse v2.28.9-2)
run B --source "file://$REPO" --tag v2.28.9-2 --archs "7.5" --no-ptx
expect_rc 0 "builds from a git URL at a tag"
OUT=$(cat "$BUILDS/v2.28.9-sm75-noptx/manifest.json")
expect_json "d['source']['kind']=='git' and d['source']['commit']=='$commit' and d['tag']=='v2.28.9-2' and d['ptx'] is False" "manifest records the git commit"
# same target name, different source: rebuilt and swapped in atomically (RENAME_EXCHANGE)
run B --source "$MINI" --archs "7.5" --no-ptx
expect_out "^installed $BUILDS/v2.28.9-sm75-noptx" "changed inputs are not a cache hit"
OUT=$(cat "$BUILDS/v2.28.9-sm75-noptx/manifest.json")
expect_json "d['source']['kind']=='dir' and d['tag']=='v2.28.9-1'" "the new build replaced the old one"
staged v2.28.9-sm75-noptx && bad "the replaced build was left behind" || ok "the replaced build was removed"

# no --tag: libtorch's NCCL (from the survey) and the newest -N of it in the repository
cat > "$T_TMP/torch.json" <<'JSON'
{ "gpus": [ { "vendor": "nvidia", "name": "T4", "arch": "sm_75" } ],
  "libtorch": [ { "root": "/opt/libtorch", "version": "2.9.1+cu130", "embedded": { "kind": "nccl", "version": "2.28.9" } } ] }
JSON
run B --source "file://$REPO" --survey "$T_TMP/torch.json" --dry-run
expect_rc 0 "defaults from the survey"
expect_out "^tag +v2.28.9-2 \(libtorch's NCCL 2.28.9, newest revision in the source\)" "the newest -N of libtorch's NCCL is picked"
expect_out "^archs +sm_75 \(GPU survey\)" "archs from the survey's GPUs"
run B --source "file://$REPO" --tag v2.26.2-1 --archs "7.5" --no-ptx
expect_rc 1 "a tree whose banner differs from the tag is refused"
expect_err "does not match the tag v2.26.2-1" "the banner mismatch is named"
[ ! -e "$BUILDS/v2.26.2-sm75-noptx" ] && ok "nothing installed for the mismatched tag" || bad "installed a mismatched tag"
run B --source "file://$REPO" --tag v2.28.9-7 --archs "7.5"
expect_rc 1 "a tag absent from the repository fails"
expect_err "v2.28.9-7" "and names the tag"

# an unreachable remote (.invalid never resolves): said plainly
run B --source https://nccl.invalid/NVIDIA/nccl.git --tag v2.28.9-1 --archs "7.5"
expect_rc 1 "an unreachable git remote fails"
expect_err "cannot reach https://nccl.invalid/NVIDIA/nccl.git \(no network or a proxy is needed\)" "and says the network is the problem"

# ---- tarball source ----
tar -czf "$T_TMP/nccl-2.28.9-1.tar.gz" -C "$CCLFORGE_SOURCE_DIR/tests/fixtures" nccl-mini
run B --source "$T_TMP/nccl-2.28.9-1.tar.gz" --archs "8.0" --no-ptx
expect_rc 0 "builds from a tarball"
OUT=$(cat "$BUILDS/v2.28.9-sm80-noptx/manifest.json")
expect_json "d['source']['kind']=='tarball' and d['source']['sha256']=='$(sha256sum "$T_TMP/nccl-2.28.9-1.tar.gz" | cut -d' ' -f1)'" "manifest records the tarball sha256"

# ---- RCCL: the CMake command line on a stand-in tree (no ROCm, no AMD GPU here) ----
run B --vendor rocm --source "$CCLFORGE_SOURCE_DIR/tests/fixtures/rccl-mini" --archs "gfx942;gfx90a" --rocm-path "$T_TMP/rocm" --dry-run
expect_rc 0 "RCCL dry run"
expect_out "cmake -S .*rccl-mini -B $ROOT/nccl/work/v2.22.3-gfx90a-gfx942/build -DCMAKE_BUILD_TYPE=Release '-DGPU_TARGETS=gfx90a;gfx942' -DROCM_PATH=$T_TMP/rocm" "the cmake configure line"
run B --vendor rocm --source "$CCLFORGE_SOURCE_DIR/tests/fixtures/rccl-mini" --archs "gfx90a" --rocm-path "$T_TMP/rocm"
expect_rc 1 "a host-only RCCL stand-in is built by cmake but refused"
expect_err "no gfx90a code object" "verification wants the gfx code objects"
grep -q "GPU_TARGETS=gfx90a ROCM_PATH=$T_TMP/rocm" "$ROOT/nccl/work/v2.22.3-gfx90a/build.log" && ok "cmake received GPU_TARGETS and ROCM_PATH" || bad "cmake did not get the targets"

# ---- remove ----
run "$CCLFORGE" nccl remove "$NAME" --root "$ROOT"
expect_rc 0 "remove"
[ ! -e "$T" ] && [ ! -L "$ROOT/nccl/active" ] && ok "removed with its active link" || bad "remove left things"
run "$CCLFORGE" nccl remove "$NAME" --root "$ROOT"
expect_rc 1 "removing it again fails"
t_end
