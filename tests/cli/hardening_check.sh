#!/usr/bin/env bash
# tests/support/check_hardening.sh can fail: on a program linked without the
# hardening flags it names each of the six missing properties with its flag
# and exits 1; with one property taken away it names that one alone; on the
# same program built hardened it exits 0. (rules.sh and cli.dist_install run
# it on the real binaries.)
. "$(dirname "$0")/lib.sh"

check=${CCLFORGE_SOURCE_DIR:?}/tests/support/check_hardening.sh
cc=${CC:-cc}
command -v "$cc" >/dev/null || t_skip "no C compiler ($cc) to build the fixtures"
command -v readelf >/dev/null || t_skip "readelf is missing (binutils)"

# sizes the compiler cannot see, into a fixed array: the calls fortify can check
cat >"$T_TMP/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char buf[64], line[128];
    size_t n = (size_t)argc * 8;
    memcpy(buf, argv[0], n < sizeof buf ? n : sizeof buf);
    snprintf(buf, n, "%s-%d", argv[0], argc);
    if (fgets(line, argc * 10, stdin)) fputs(line, stdout);
    ssize_t r = read(0, line, n);
    printf("%s %zd\n", buf, r);
    return 0;
}
EOF
build() { # NAME FLAGS...
    local name=$1; shift
    "$cc" -O2 "$@" -o "$T_TMP/$name" "$T_TMP/prog.c" 2>"$T_TMP/$name.log" || { cat "$T_TMP/$name.log"; t_skip "$cc cannot build the $name fixture here"; }
}
build weak -U_FORTIFY_SOURCE -fno-stack-protector -no-pie -Wl,-z,lazy -Wl,-z,norelro -z execstack
build hardened -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack
build lazy -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE -pie -Wl,-z,relro,-z,lazy -Wl,-z,noexecstack

run bash "$check" "$T_TMP/weak"
expect_rc 1 "an unhardened program fails the check"
expect_out "weak: no GNU_RELRO segment.*-Wl,-z,relro" "it names the missing GNU_RELRO and -Wl,-z,relro"
expect_out "weak: no BIND_NOW.*-Wl,-z,now" "it names the missing BIND_NOW and -Wl,-z,now"
expect_out "weak: not position-independent \(ELF type EXEC.*-pie" "it names the missing PIE and -pie"
expect_out "weak: executable stack.*-Wl,-z,noexecstack" "it names the executable stack and -Wl,-z,noexecstack"
expect_out "weak: no stack protector.*-fstack-protector-strong" "it names the missing __stack_chk_fail and -fstack-protector-strong"
expect_out "weak: FORTIFY_SOURCE not in effect \(0 __\*_chk imports.*-D_FORTIFY_SOURCE=3" "it names the missing fortified imports and -D_FORTIFY_SOURCE"
[ "$(printf '%s\n' "$OUT" | grep -c '^.*weak: ')" = 6 ] && ok "one line per missing property, six in all" ||
    bad "the unhardened program's report is not six lines"

run bash "$check" "$T_TMP/hardened"
expect_rc 0 "the same program built hardened passes"
expect_out "hardened: ok \(GNU_RELRO, BIND_NOW, PIE, stack RW, __stack_chk_fail, [0-9]+ __\*_chk imports\)" "it says what it found"

run bash "$check" "$T_TMP/hardened" "$T_TMP/lazy"
expect_rc 1 "lazy binding alone fails the check, beside a file that passes"
[ "$(printf '%s\n' "$OUT" | grep -c 'lazy: ')" = 1 ] && expect_out "lazy: no BIND_NOW" "it names BIND_NOW alone" ||
    bad "lazy binding alone should give one line, BIND_NOW"

run bash "$check" "$T_TMP/prog.c"
expect_rc 2 "a file that is not ELF is an error (exit 2), not a pass"
expect_err "prog\.c: not an ELF file" "it names the file"
run bash "$check"
expect_rc 2 "no file is a usage error"
t_end
