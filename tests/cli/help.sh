# Every command and subcommand: --help (and -h) prints a usage line on stdout and
# exits 0; a bad flag exits 2 and points at that command's --help. Then, per
# command, the long options the code accepts (its getopt tables), those its
# --help lists and those its man page documents must be the same set.
. "$(dirname "$0")/lib.sh"

SRC=${CCLFORGE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

COMMANDS=("doctor" "doctor compare" "inspect" "nccl" "nccl build" "nccl list" "nccl activate"
    "nccl remove" "nccl env" "bridge" "bridge plan" "bridge build" "bridge wheel" "wheel"
    "wheel verify" "smoke" "hang" "hang env" "report")

run "$CCLFORGE" --help
expect_rc 0 "cclforge --help exits 0"
expect_out "^usage: cclforge " "cclforge --help starts with a usage line"
expect_out "Exit status" "cclforge --help has an exit status line"

for cmd in "${COMMANDS[@]}"; do
    read -r -a words <<<"$cmd"
    for flag in --help -h; do
        run "$CCLFORGE" "${words[@]}" "$flag"
        expect_rc 0 "$cmd $flag exits 0"
        [ -z "$ERR" ] && ok "$cmd $flag writes nothing on stderr" || bad "$cmd $flag writes nothing on stderr"
    done
    # the first line is the usage line, naming the command
    first=$(printf '%s\n' "$OUT" | head -1)
    case "$first" in
    "usage: cclforge ${words[0]}"*) ok "$cmd --help starts with its usage line" ;;
    *) bad "$cmd --help starts with its usage line (got '$first')" ;;
    esac
    expect_out "([Ee]xit status)" "$cmd --help states the exit status"
    expect_out "^  -h, --help|^  --help" "$cmd --help lists -h, --help"

    run "$CCLFORGE" "${words[@]}" --no-such-flag
    expect_rc 2 "$cmd --no-such-flag exits 2"
    expect_err "--no-such-flag" "$cmd --no-such-flag names the flag"
    expect_err "Try 'cclforge ${cmd} --help'" "$cmd --no-such-flag points at its own --help"
    [ -z "$OUT" ] && ok "$cmd --no-such-flag writes nothing on stdout" || bad "$cmd --no-such-flag writes nothing on stdout"
done

# The subcommand-less forms: a usage error when nothing follows.
for cmd in nccl bridge wheel; do
    run "$CCLFORGE" "$cmd"
    expect_rc 2 "bare '$cmd' is a usage error"
    expect_err "^usage: cclforge $cmd" "bare '$cmd' prints its usage on stderr"
done

# ---- options: code == --help == man page ----

# long options in getopt tables: { "name", no_argument|required_argument, ...
code_opts() {
    grep -oE '\{ *"[a-z][a-z-]*", *(no|required|optional)_argument' "$SRC/src/cli/$1" |
        sed -E 's/\{ *"([^"]*)".*/--\1/' | sort -u
}
# long options in the option column of --help (rows that start with "  -"; the
# description starts after two spaces)
help_opts() {
    local h=""
    for sub in "$@"; do
        read -r -a words <<<"$sub"
        h+=$("$CCLFORGE" "${words[@]}" --help)$'\n'
    done
    printf '%s' "$h" | grep -E '^ +-' | sed -E 's/^ +//; s/  .*//' | grep -oE -- '--[a-z][a-z-]*' | sort -u
}
# long options the man page defines: the .B/.BI/.BR line after each .TP
man_opts() {
    awk 'prev == ".TP" && /^\.B/ { print } { prev = $0 }' "$SRC/docs/man/$1" |
        sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z-]*' | sort -u
}
same_set() { # NAME A B
    if [ "$2" = "$3" ]; then
        ok "$1"
    else
        RC=0 OUT="only left: $(comm -23 <(printf '%s\n' "$2") <(printf '%s\n' "$3") | tr '\n' ' ')" \
            ERR="only right: $(comm -13 <(printf '%s\n' "$2") <(printf '%s\n' "$3") | tr '\n' ' ')"
        bad "$1"
    fi
}
check_options() { # SOURCE MANPAGE SUBCOMMAND...
    local src=$1 man=$2
    shift 2
    local c h m
    c=$(code_opts "$src")
    h=$(help_opts "$@")
    m=$(man_opts "$man")
    # nccl build reads --help before getopt (no table entry); every command takes it,
    # and --color, which main takes out of argv for every command (term.c) and
    # cclforge.1 documents once
    c=$(printf '%s\n--help\n--color\n' "$c" | sort -u)
    m=$(printf '%s\n%s\n' "$m" "$(man_opts cclforge.1 | grep -x -- --color)" | sort -u)
    same_set "$1: options the code accepts == options its --help lists" "$c" "$h"
    same_set "$1: options its --help lists == options $man documents" "$h" "$m"
}
check_options cmd_doctor.c cclforge-doctor.1 "doctor" "doctor compare"
check_options cmd_inspect.c cclforge-inspect.1 "inspect"
check_options cmd_nccl.c cclforge-nccl.1 "nccl build" "nccl list" "nccl activate" "nccl remove" "nccl env"
check_options cmd_bridge.c cclforge-bridge.1 "bridge plan"
check_options cmd_wheel.c cclforge-wheel.1 "wheel verify"
check_options cmd_smoke.c cclforge-smoke.1 "smoke"
check_options cmd_report.c cclforge-report.1 "report"
check_options cmd_hang.c cclforge-hang.1 "hang" "hang env"

# Every man page renders without warnings (when man is installed).
if command -v man >/dev/null && command -v groff >/dev/null; then
    for page in "$SRC"/docs/man/*.1; do
        w=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
        RC=0 OUT="" ERR=$w
        [ -z "$w" ] && ok "$(basename "$page") renders without warnings" || bad "$(basename "$page") renders without warnings"
    done
else
    t_skip_part "man page rendering: man or groff not installed"
fi
t_end
