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
t_end
