#!/usr/bin/env bash
# Checks ELF executables for the hardening a distribution builds a tool that
# reads untrusted input with, and names each missing property with the flag
# that gives it:
#   GNU_RELRO segment           -Wl,-z,relro
#   BIND_NOW (full RELRO)       -Wl,-z,now
#   PIE (ASLR for the program)  -fPIE -pie
#   non-executable stack        -Wl,-z,noexecstack
#   __stack_chk_fail imported   -fstack-protector-strong
#   3+ __*_chk imports          -D_FORTIFY_SOURCE=3 (or 2) with -O1 or more
# Exit 0 when every FILE has all six (one "ok" line each), 1 when any lacks
# one (a line per missing property), 2 on a usage error or a file readelf
# cannot read as ELF.
#   bash tests/support/check_hardening.sh FILE...
set -uo pipefail
export LC_ALL=C
[ $# -gt 0 ] || { echo "usage: check_hardening.sh FILE..." >&2; exit 2; }
command -v readelf >/dev/null || { echo "check_hardening: readelf is missing (binutils)" >&2; exit 2; }
min_fortified=3
rc=0
for f in "$@"; do
    if ! header=$(readelf -hW "$f" 2>/dev/null); then
        echo "$f: not an ELF file readelf can read" >&2
        rc=2
        continue
    fi
    segments=$(readelf -lW "$f" 2>/dev/null)
    dynamic=$(readelf -dW "$f" 2>/dev/null)
    # the undefined dynamic symbols, version suffixes cut: "__memcpy_chk@GLIBC_2.3.4 (2)" -> __memcpy_chk
    imports=$(readelf --dyn-syms -W "$f" 2>/dev/null | awk '$7 == "UND" && $8 != "" { sub(/@.*/, "", $8); print $8 }' | sort -u)
    missing=0
    lack() { echo "$f: $1: $2"; missing=1; }

    # here-strings, not `printf | grep -q`: grep -q leaves at its match, and under
    # pipefail a printf still writing dies of SIGPIPE and fails the test (1 run in
    # ~1,500 on a loaded machine)
    grep -qE '^[[:space:]]*GNU_RELRO[[:space:]]' <<<"$segments" ||
        lack "no GNU_RELRO segment (relocated data stays writable)" "link with -Wl,-z,relro"

    flags=$(printf '%s\n' "$dynamic" | sed -n 's/.*(FLAGS)[[:space:]]*//p')
    flags1=$(printf '%s\n' "$dynamic" | sed -n 's/.*(FLAGS_1)[[:space:]]*Flags:[[:space:]]*//p')
    if ! grep -q '(BIND_NOW)' <<<"$dynamic" && ! [[ " $flags " == *" BIND_NOW "* ]] && ! [[ " $flags1 " == *" NOW "* ]]; then
        lack "no BIND_NOW (lazy binding: the GOT stays writable, RELRO is partial)" "link with -Wl,-z,now"
    fi

    type=$(printf '%s\n' "$header" | sed -n 's/^[[:space:]]*Type:[[:space:]]*\([A-Z]*\).*/\1/p')
    interp=$(printf '%s\n' "$segments" | grep -cE '^[[:space:]]*INTERP[[:space:]]')
    if [ "$type" != DYN ] || { ! [[ " $flags1 " == *" PIE "* ]] && [ "$interp" -eq 0 ]; }; then
        lack "not position-independent (ELF type ${type:-unknown}: loaded at a fixed address, no ASLR)" "compile with -fPIE and link with -pie"
    fi

    # Flg sits between MemSiz and Align and may hold spaces ("R E"): fields 7 .. NF-1
    stack=$(printf '%s\n' "$segments" | awk '$1 == "GNU_STACK" { s = ""; for (i = 7; i < NF; i++) s = s $i; print s }')
    if [ -z "$stack" ]; then
        lack "no GNU_STACK segment (the loader makes the stack executable)" "link with -Wl,-z,noexecstack"
    elif [[ $stack == *E* ]]; then
        lack "executable stack (GNU_STACK flags $stack)" "link with -Wl,-z,noexecstack (and find the object that asks for it)"
    fi

    grep -qx '__stack_chk_fail' <<<"$imports" ||
        lack "no stack protector (__stack_chk_fail is not imported)" "compile with -fstack-protector-strong"

    fortified=$(printf '%s\n' "$imports" | grep -E '^__[a-z0-9_]+_chk$' | grep -vxE '__stack_chk_(fail|guard)' | tr '\n' ' ')
    n=$(printf '%s' "$fortified" | wc -w)
    [ "$n" -ge "$min_fortified" ] ||
        lack "FORTIFY_SOURCE not in effect ($n __*_chk imports${fortified:+: ${fortified% }}; at least $min_fortified expected)" \
            "compile with -D_FORTIFY_SOURCE=3 (2 where the compiler lacks 3) and -O1 or more"

    if [ "$missing" = 0 ]; then
        echo "$f: ok (GNU_RELRO, BIND_NOW, PIE, stack ${stack}, __stack_chk_fail, $n __*_chk imports)"
    elif [ "$rc" = 0 ]; then
        rc=1
    fi
done
exit $rc
