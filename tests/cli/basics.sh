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
t_end
