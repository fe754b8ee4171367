# The CLI's common contract: --help, --version, unknown commands.
. "$(dirname "$0")/lib.sh"

run "$CCLFORGE" --help
expect_rc 0 "--help exits 0"
expect_out "inspect" "--help lists inspect"
run "$CCLFORGE" --version
expect_rc 0 "--version exits 0"
expect_out "^cclforge [0-9]+\.[0-9]+" "--version prints a version"
run "$CCLFORGE" frobnicate
expect_rc 2 "unknown command is a usage error"
expect_err "not a command" "unknown command is named"
run "$CCLFORGE"
expect_rc 2 "no command is a usage error"

# Output that cannot be written is an error (exit 1, stdout named), never a
# silent 0: a closed stdout here; a full disk where /dev/full exists. Every
# way a run ends: --version's one write, --help through stdio, a command
# returning to main (inspect with its scan cache warm, and without it).
export CCLFORGE_HOME=$T_TMP/home
run "$CCLFORGE" inspect /bin/sh
expect_rc 0 "inspect /bin/sh (its scans kept)"
lost() { # lost LABEL REDIRECT-TARGET CMD...
    local label=$1 target=$2; shift 2
    if [ "$target" = closed ]; then
        "$@" >&- 2>"$T_TMP/.lost"; RC=$?
    else
        "$@" >"$target" 2>"$T_TMP/.lost"; RC=$?
    fi
    OUT="" ERR=$(cat "$T_TMP/.lost")
    expect_rc 1 "$label: output lost to $target is exit 1"
    expect_err "cannot write to standard output" "$label: output lost to $target is said"
}
for target in closed /dev/full; do
    if [ "$target" = /dev/full ] && ! [ -c /dev/full ]; then
        t_skip_part "a full disk: no /dev/full here"
        continue
    fi
    lost --version "$target" "$CCLFORGE" --version
    lost --help "$target" "$CCLFORGE" --help
    lost "inspect (scan cache warm)" "$target" "$CCLFORGE" inspect /bin/sh
    lost "inspect --no-cache" "$target" "$CCLFORGE" inspect --no-cache /bin/sh
done
# A closed stdout is held by /dev/null before a command opens anything, so no
# file it opens becomes fd 1 and takes its output.
if strace -qq -o /dev/null true 2>/dev/null; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -qq -o "$T_TMP/held" -e trace=openat "$CCLFORGE" inspect --no-cache /bin/sh >&- 2>/dev/null
    # (ld.so's own opens come first and are closed again)
    after=$(sed -n '/"\/dev\/null", O_RDONLY|O_NOCTTY) = 1$/,$p' "$T_TMP/held" | sed 1d)
    grep -q '"/dev/null", O_RDONLY|O_NOCTTY) = 1$' "$T_TMP/held" && ! printf '%s\n' "$after" | grep -q ') = 1$' &&
        ok "a closed stdout is held by /dev/null (no file opened takes fd 1)" ||
        bad "a closed stdout is held by /dev/null (no file opened takes fd 1): $(grep ') = 1$' "$T_TMP/held")"
else
    t_skip_part "the held closed stdout: no working strace here"
fi
# Every numeric flag goes through one parser: junk, nothing, a negative and a
# value past the range are usage errors naming the flag and the range, never
# read in part or clamped; a value in range is taken (the run then stops at
# the unknown option after it, not at the number).
number_flag() { # number_flag FLAG GOOD TOO_BIG CMD...
    local flag=$1 good=$2 big=$3 v; shift 3
    for v in 12x "" -1 "$big"; do
        run "$@" "$flag" "$v"
        expect_rc 2 "$* $flag '$v' is a usage error"
        expect_err "$flag '$v': expected .* from [0-9.]+[KMGT]? to [0-9.]+[KMGT]?" "$* $flag '$v' names the flag and the range"
    done
    run "$@" "$flag" "$good" --no-such-flag
    expect_err "no-such-flag" "$* $flag $good is taken"
    printf '%s' "$ERR" | grep -q -- "$flag '" && bad "$* $flag $good is taken (the number refused)" || ok "$* $flag $good is not refused"
}
number_flag --timeout 1.5 100000 "$CCLFORGE" doctor --gather
number_flag --depth 3 9999999999 "$CCLFORGE" inspect
number_flag --jobs 4 5000 "$CCLFORGE" nccl build
number_flag --smoke 2 2000 "$CCLFORGE" wheel verify
number_flag --timeout 1.5 100000 "$CCLFORGE" wheel verify
number_flag --max-size 4G 2048T "$CCLFORGE" wheel verify
number_flag --timeout 1.5 100000 "$CCLFORGE" smoke
number_flag -n 2 5000 "$CCLFORGE" smoke
number_flag -b 8M 2048T "$CCLFORGE" smoke
number_flag -f 2 2000 "$CCLFORGE" smoke
# the size forms smoke and wheel verify have always taken
for v in 8 64K 128m 1GB 8MiB; do
    run "$CCLFORGE" smoke -e "$v" --no-such-flag
    printf '%s' "$ERR" | grep -q -- "-e '" && bad "smoke -e $v is a size" || ok "smoke -e $v is a size"
done
t_end
