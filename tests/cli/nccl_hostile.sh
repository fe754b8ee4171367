# `cclforge nccl build` against an attacker or an unlucky user, on the mini
# NCCL tree with the real nvcc: shell and make payloads in every input that
# reaches make (canary files, spawned programs traced with strace), a root
# with a space, HOME unset, a hostile git configuration, a world-writable or
# foreign root, two targets with a common prefix installing at once, a library
# truncated, replaced and re-linked after install, and a link planted at every
# path cclforge writes.
. "$(dirname "$0")/lib.sh"

t_find_cuda && [ -n "$T_NVCC" ] ||
    t_skip "no CUDA toolkit with nvcc found (install one, or set CUDA_HOME); the NCCL build tests need it"
MINI="$CCLFORGE_SOURCE_DIR/tests/fixtures/nccl-mini"
ROOT="$T_TMP/root"
BUILDS="$ROOT/nccl/builds"
export CUDA_HOME=$T_CUDA
unset CCLFORGE_TEST_FAULT CCLFORGE_TEST_STOP TORCH_CUDA_ARCH_LIST PYTORCH_ROCM_ARCH MAX_JOBS
BUILD=("$CCLFORGE" nccl build --root "$ROOT" -j2 --source "$MINI")
B() { "${BUILD[@]}" "$@"; }
CANARY="$T_TMP/canary"
VICTIM="$T_TMP/victim"
echo precious > "$VICTIM"

# traced (lib.sh) runs under strace when it works here
traced true
[ "$T_TRACE" = 1 ] || echo "# strace cannot trace here: canary files only"
# no_canary DESC: no canary file anywhere it could land, and no payload program ran
no_canary() {
    if [ -e "$CANARY" ] || find "$T_TMP" "$MINI" -name 'cfcanary*' 2>/dev/null | grep -q .; then
        bad "$1: a canary appeared (the payload ran)"
    elif grep -qE 'execve\("[^"]*/(touch|id)"' "$T_TMP/trace"; then
        bad "$1: the trace shows the payload's program: $(grep -E 'touch|"id"' "$T_TMP/trace" | head -2)"
    else
        ok "$1: no canary, no payload program spawned"
    fi
    rm -f "$CANARY"
    find "$T_TMP" "$MINI" -name 'cfcanary*' -delete 2>/dev/null
}
spawned_make() { grep -q 'execve("[^"]*/make"' "$T_TMP/trace"; }

# ---- payloads: refused before make (or anything) runs, naming the character ----
traced "${BUILD[@]}" --archs 7.5 --only-funcs "SendRecv\"; touch $CANARY; echo \""
expect_rc 2 "--only-funcs with a quote and ';' is a usage error"
expect_err "--only-funcs contains '\"': NCCL's kernel generator takes words" "the character and the grammar are named"
no_canary "--only-funcs shell payload"
traced "${BUILD[@]}" --archs 7.5 --only-funcs "SendRecv\$(shell touch $CANARY)"
expect_rc 2 "--only-funcs with \$(shell ...) is a usage error"
expect_err "contains '\\$'" "the \$ is named"
no_canary "--only-funcs make payload"
spawned_make && bad "make was spawned for a refused plan" || ok "make never ran for the refused plans"
[ ! -e "$ROOT" ] && ok "nothing was written for the refused plans" || bad "the root was created"

traced "$CCLFORGE" nccl build --root "$T_TMP/r\$(shell touch $CANARY)" -j2 --source "$MINI" --archs 7.5
expect_rc 2 "a root with \$(shell ...) is a usage error"
expect_err "the install root .* contains '\\$': make and NCCL's Makefiles expand \\$ and hand paths to sh unquoted" "and says why"
no_canary "--root make payload"
[ -z "$(ls "$T_TMP" | grep '^r\$')" ] && ok "the payload root was not created" || bad "the payload root exists"

ln -s "$T_CUDA" "$T_TMP/cuda\$(shell touch cfcanary)"
traced "${BUILD[@]}" --archs 7.5 --cuda-home "$T_TMP/cuda\$(shell touch cfcanary)"
expect_rc 2 "a toolkit path with \$(shell ...) is a usage error"
expect_err "the CUDA toolkit .* contains '\\$'" "the toolkit path is named"
no_canary "--cuda-home make payload"

traced "$CCLFORGE" nccl build --root "$ROOT" --tag v2.28.9-1 --archs 7.5 --docker --docker-image $'ubuntu:22.04\nRUN touch /cfcanary' --dry-run
expect_rc 2 "an image with a newline is a usage error (no Dockerfile line injected)"
expect_err "is not an image reference" "the image grammar is named"
traced "$CCLFORGE" nccl build --root "$ROOT" --tag v2.28.9-1 --archs 7.5 --source "ext::sh -c touch% $CANARY #://x"
expect_rc 2 "an ext:: transport is refused"
no_canary "--source ext:: payload"

# ---- a root with a space: refused before anything is written ----
run "$CCLFORGE" nccl build --root "$T_TMP/my root" -j2 --source "$MINI" --archs 7.5
expect_rc 2 "a root with a space is refused"
expect_err "contains a space" "the space is named"
expect_err "use a root without spaces" "and the fix"
[ ! -e "$T_TMP/my root" ] && ok "nothing written for the spaced root" || bad "the spaced root was created"

# ---- HOME unset (cron, systemd): no default root in a shared directory ----
for cmd in "build --source $MINI --archs 7.5 --dry-run" "list" "env"; do
    run env -u HOME -u CCLFORGE_HOME -u XDG_CACHE_HOME "$CCLFORGE" nccl $cmd
    expect_rc 2 "nccl ${cmd%% *} without HOME is refused"
    expect_err "HOME is not set .* set CCLFORGE_HOME or pass --root" "nccl ${cmd%% *} says to set CCLFORGE_HOME or --root"
done

# ---- a root others can change ----
mkdir -m 0777 "$T_TMP/shared"
chmod 0777 "$T_TMP/shared"
run "$CCLFORGE" nccl build --root "$T_TMP/shared" -j2 --source "$MINI" --archs 7.5
expect_rc 1 "a world-writable root is refused"
expect_err "writable by everyone \(mode 0777\).*chmod go-w" "with the mode and the fix"
[ ! -e "$T_TMP/shared/nccl" ] && ok "nothing written into it" || bad "wrote into the world-writable root"
# ... or whose parent others can change: they could swap the root itself
mkdir -p "$T_TMP/open" "$T_TMP/sticky" && chmod 0777 "$T_TMP/open" && chmod 1777 "$T_TMP/sticky"
for cmd in "list" "env somebuild" "build -j2 --source $MINI --archs 7.5"; do
    run "$CCLFORGE" nccl $cmd --root "$T_TMP/open/root"
    expect_rc 1 "nccl ${cmd%% *}: a root under a world-writable, non-sticky parent is refused"
    expect_err "the install root: $T_TMP/open, a directory above $T_TMP/open/root, is writable by everyone \(mode 0777\) and not sticky.*chmod go-w $T_TMP/open" "nccl ${cmd%% *}: the error names the parent and the fix"
done
[ ! -e "$T_TMP/open/root" ] && ok "the root was not created there" || bad "created a root under a world-writable parent"
run "$CCLFORGE" nccl list --root "$T_TMP/sticky/root"
expect_rc 0 "a root under a sticky 1777 parent (as /tmp) is fine"
if [ "$(id -u)" = 0 ]; then
    mkdir "$T_TMP/theirs" && chown 65534:65534 "$T_TMP/theirs"
    run "$CCLFORGE" nccl list --root "$T_TMP/theirs"
    expect_rc 1 "a root owned by another user is refused"
    expect_err "owned by uid 65534, not by you" "and the owner is named"
else
    echo "# not root: the foreign-owner case is covered by test_nccl_store only as root"
fi

# ---- a hostile git configuration: protocol.ext.allow=always and a URL rewrite ----
mkdir -p "$T_TMP/evil-home"
cat > "$T_TMP/evil-home/.gitconfig" <<EOF
[protocol "ext"]
	allow = always
[url "ext::sh -c touch% $CANARY% >&2% #"]
	insteadOf = https://evil.invalid/
EOF
HOME="$T_TMP/evil-home" git ls-remote https://evil.invalid/nccl.git >/dev/null 2>&1
[ -e "$CANARY" ] && ok "the hostile config does run commands through plain git (control)" || bad "control: the hostile git config did not fire"
rm -f "$CANARY"
HOME="$T_TMP/evil-home" traced "$CCLFORGE" nccl build --root "$ROOT" -j2 --source https://evil.invalid/nccl.git --tag v2.28.9-1 --archs 7.5
expect_rc 1 "the rewritten ext:: clone fails"
expect_err "transport 'ext' not allowed" "git refused the transport (GIT_ALLOW_PROTOCOL)"
no_canary "hostile git config, clone"
printf '{ "libtorch": [ { "root": "/x", "embedded": { "kind": "nccl", "version": "2.28.9" } } ] }' > "$T_TMP/torch.json"
HOME="$T_TMP/evil-home" traced "$CCLFORGE" nccl build --root "$ROOT" -j2 --source https://evil.invalid/nccl.git --archs 7.5 --survey "$T_TMP/torch.json" --dry-run
expect_rc 1 "listing tags through the rewritten URL fails"
no_canary "hostile git config, ls-remote"

# ---- the dry run prints exactly what make receives ----
run B --archs 7.5 --no-ptx --only-funcs "AllGather * *|SendRecv" --dry-run
dry=$(printf '%s\n' "$OUT" | grep '^  make ' | sed 's/^  //')
run B --archs 7.5 --no-ptx --only-funcs "AllGather * *|SendRecv"
expect_rc 0 "a grammar-valid --only-funcs with spaces, '*' and '|' builds"
T1=$(ls -d "$BUILDS"/v2.28.9-sm75-noptx-funcs* | head -1)
ran=$(grep '^\$ make ' "$T1/build.log" | sed 's/^\$ //')
[ -n "$dry" ] && [ "$dry" = "$ran" ] && ok "the dry run's make line is the one that ran" || bad "dry run '$dry' vs ran '$ran'"
case "$dry" in *"'ONLY_FUNCS=AllGather * *|SendRecv'"*) ok "ONLY_FUNCS reached make as one word";; *) bad "ONLY_FUNCS word: $dry";; esac
ls "$ROOT/nccl/work/$(basename "$T1")/build/obj/device/gensrc/" | grep -qx SendRecv.cu && ok "the generator received the pattern (SendRecv.cu generated)" || bad "generator did not get the pattern"

# a built root moved under a path with a space: env refuses rather than print a split LD_PRELOAD
mkdir "$T_TMP/moved"
cp -a "$ROOT" "$T_TMP/moved/sp ace"
run "$CCLFORGE" nccl env "$(basename "$T1")" --root "$T_TMP/moved/sp ace"
expect_rc 1 "env for a root with a space fails"
expect_err "contains a space, which ld.so takes as a separator" "and says ld.so would split it"
expect_no_out "LD_PRELOAD" "no LD_PRELOAD line is printed"

# a host survey rejected after part of it was read: an error, nothing leaked
# (the ASan run's LeakSanitizer aborts otherwise)
printf '{ "gpus": [ { "vendor": "nvidia", "name": "T4", "arch": "sm_75" } ], "compilers": [ 5 ] }' > "$T_TMP/half.json"
run "$CCLFORGE" nccl env "$(basename "$T1")" --root "$ROOT" --host-survey "$T_TMP/half.json"
expect_rc 1 "a half-valid host survey is an error"
expect_err "\"compilers\[0\]\" is not an object" "naming the bad part"

# ---- two targets with a common prefix install at once ----
# The first stops (SIGSTOP) with its tree staged; the second, v2.28.9-sm75, runs
# its stale cleanup and installs meanwhile; then the first continues.
CCLFORGE_TEST_STOP=staged "$CCLFORGE" nccl build --root "$ROOT" -j2 --source "$MINI" --archs "7.5;9.0" \
    > "$T_TMP/p1.out" 2> "$T_TMP/p1.err" & p1=$!
for _ in $(seq 600); do
    [ "$(ps -o stat= -p $p1 2>/dev/null | cut -c1)" = T ] && break
    sleep 0.2
done
[ "$(ps -o stat= -p $p1 | cut -c1)" = T ] && ok "the v2.28.9-sm75-sm90 build stopped with its tree staged" || bad "the first build never stopped"
run B --archs "7.5"
expect_rc 0 "v2.28.9-sm75 builds while v2.28.9-sm75-sm90 is mid-install"
kill -CONT $p1
wait $p1; r1=$?
[ $r1 -eq 0 ] && ok "v2.28.9-sm75-sm90 then installs (exit 0)" || bad "v2.28.9-sm75-sm90 failed (rc $r1): $(cat "$T_TMP/p1.err")"
for t in v2.28.9-sm75 v2.28.9-sm75-sm90; do
    [ -f "$BUILDS/$t/include/nccl.h" ] && [ -f "$BUILDS/$t/lib/libnccl.so.2.28.9" ] && ok "$t is complete" || bad "$t is incomplete"
done
run "$CCLFORGE" nccl list --root "$ROOT"
expect_rc 0 "list: every build intact"
expect_no_out "DAMAGED" "no build is damaged"

# ---- a killed install's staging goes on the next run of any target ----
CCLFORGE_TEST_FAULT=staged run B --archs "8.6" --no-ptx
[ "$RC" -eq 137 ] && ok "killed with its tree staged" || bad "fault did not kill (rc $RC)"
[ -n "$(ls "$ROOT/nccl/staging/v2.28.9-sm86-noptx" 2>/dev/null)" ] && ok "it left its staging" || bad "no staging left to clean"
run B --archs "7.5"
expect_out "^cached" "a cache hit of another target"
[ -z "$(ls "$ROOT/nccl/staging/v2.28.9-sm86-noptx" 2>/dev/null)" ] && ok "removed the dead build's staging" || bad "stale staging survived a run"

# ---- tampering after install: found, reported, rebuilt, never served ----
T8="$BUILDS/v2.28.9-sm80-noptx"
LIB="$T8/lib/libnccl.so.2.28.9"
run B --archs 8.0 --no-ptx
expect_rc 0 "sm_80 build"
size=$(stat -c %s "$LIB")
: > "$LIB"
run "$CCLFORGE" nccl list --root "$ROOT"
expect_rc 1 "list exits 1 with a damaged build"
expect_out "v2.28.9-sm80-noptx .*DAMAGED" "list marks it DAMAGED"
expect_err "v2.28.9-sm80-noptx is damaged: lib/libnccl.so.2.28.9 has 0 bytes, the manifest says $size" "and says what is wrong"
run "$CCLFORGE" nccl env v2.28.9-sm80-noptx --root "$ROOT"
expect_rc 1 "env refuses the damaged build"
expect_no_out "LD_PRELOAD" "no environment for a damaged build"
run B --archs 8.0 --no-ptx
expect_rc 0 "the next build run succeeds"
expect_err "the cached v2.28.9-sm80-noptx was damaged \(lib/libnccl.so.2.28.9 has 0 bytes" "reported as damaged"
expect_out "^installed" "rebuilt, not served from the cache"
[ "$(stat -c %s "$LIB")" = "$size" ] && ok "the library is whole again" || bad "the library was not restored"
head -c 100 "$LIB" > "$T_TMP/head" && cat "$T_TMP/head" > "$LIB"
run B --archs 8.0 --no-ptx --json
expect_json "d['cache_hit'] is False and 'has 100 bytes' in d['damaged_cache'] and d['ok'] is True" "truncated to 100 bytes: rebuilt (--json damaged_cache)"
head -c "$size" /usr/bin/cmake > "$T_TMP/other" && mv "$T_TMP/other" "$LIB" && chmod 755 "$LIB"
run "$CCLFORGE" nccl list --root "$ROOT" --json
expect_json "[b['damage'] for b in d['builds'] if b['name']=='v2.28.9-sm80-noptx'][0].startswith('lib/libnccl.so.2.28.9 was changed after install')" "replaced by another ELF of the same size: the hash finds it"
run B --archs 8.0 --no-ptx
expect_out "^installed" "rebuilt after the replacement"
ln -sfn /lib/x86_64-linux-gnu/libc.so.6 "$T8/lib/libnccl.so.2"
run B --archs 8.0 --no-ptx
expect_err "lib/libnccl.so.2 should be a link to libnccl.so.2.28.9" "a re-linked soname is found"
expect_out "^installed" "and rebuilt"
run B --archs 8.0 --no-ptx --verify
expect_out "^cached" "--verify: every hash checked, intact, cached"

# ---- remove works without a manifest ----
rm "$T8/manifest.json"
run "$CCLFORGE" nccl list --root "$ROOT" --json
expect_json "[b['damage'] for b in d['builds'] if b['name']=='v2.28.9-sm80-noptx'] == ['manifest.json is missing or not JSON']" "list --json names a build without a manifest as damaged"
run "$CCLFORGE" nccl remove v2.28.9-sm80-noptx --root "$ROOT"
expect_rc 0 "remove of a build without a manifest"
[ ! -e "$T8" ] && ok "it is gone" || bad "it is still there"

# ---- a link planted at every path cclforge writes ----
check_victim() { [ "$(cat "$VICTIM")" = precious ] && ok "$1: the link's target is untouched" || bad "$1: wrote through the link"; }
printf '{ "gpus": [ { "vendor": "nvidia", "name": "T4", "arch": "sm_75" } ] }' > "$T_TMP/host.json"
ln -s "$VICTIM" "$T_TMP/out.json"
run "$CCLFORGE" doctor --survey "$T_TMP/host.json" --save "$T_TMP/out.json"
expect_rc 1 "doctor --save onto a planted link fails"
expect_err "is a symbolic link: cclforge never writes through one" "and says why"
check_victim "doctor --save"
ln -s "$VICTIM" "$ROOT/nccl/locks/v2.28.9-sm89-noptx.lock"
run B --archs 8.9 --no-ptx
expect_rc 1 "a planted lock link is refused"
expect_err "the lock file: it is a symbolic link" "and named"
check_victim "lock file"
rm "$ROOT/nccl/locks/v2.28.9-sm89-noptx.lock"
mkdir -p "$ROOT/nccl/work/v2.28.9-sm89-noptx" && ln -s "$VICTIM" "$ROOT/nccl/work/v2.28.9-sm89-noptx/build.log"
mkdir "$T_TMP/elsewhere" && ln -s "$T_TMP/elsewhere" "$ROOT/nccl/staging/v2.28.9-sm89-noptx"
run B --archs 8.9 --no-ptx
expect_rc 0 "planted build.log and staging links are removed, not followed"
check_victim "build.log"
[ -z "$(ls "$T_TMP/elsewhere")" ] && [ ! -L "$ROOT/nccl/staging/v2.28.9-sm89-noptx" ] && ok "nothing staged through the planted staging link" || bad "staged into the link's target"
cp -a "$BUILDS/v2.28.9-sm75" "$T_TMP/decoy"
mv "$BUILDS/v2.28.9-sm75" "$T_TMP/was-sm75"
ln -s "$T_TMP/decoy" "$BUILDS/v2.28.9-sm75"
run B --archs 7.5
expect_err "the cached v2.28.9-sm75 was damaged \(it is not a directory" "a build dir replaced by a link is not served"
expect_out "^installed" "it is rebuilt"
[ -d "$BUILDS/v2.28.9-sm75" ] && [ ! -L "$BUILDS/v2.28.9-sm75" ] && [ -f "$T_TMP/decoy/manifest.json" ] && ok "the link was swapped out, its target untouched" || bad "planted build link"
mkdir "$T_TMP/victim-dir"
ln -sfn "$T_TMP/victim-dir" "$ROOT/nccl/active"
run "$CCLFORGE" nccl activate v2.28.9-sm75 --root "$ROOT"
expect_rc 0 "activate over a planted active link"
[ "$(readlink "$ROOT/nccl/active")" = builds/v2.28.9-sm75 ] && [ -z "$(ls "$T_TMP/victim-dir")" ] && ok "the link was replaced, not written through" || bad "active link"
mv "$BUILDS" "$T_TMP/builds-real" && ln -s "$T_TMP/builds-real" "$BUILDS"
run B --archs 7.5
expect_rc 1 "a builds/ directory replaced by a link is refused"
expect_err "nccl/builds is not a directory \(a link or a file is there\)" "and named"
t_end
