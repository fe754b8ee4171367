# The rules of docs/architecture.md, kept by a test instead of by discipline,
# read from what the compiler produced (nm, readelf), not only from the text:
#   1. the library never prints or exits: no printf/puts/exit/abort/stdout...
#      among the undefined symbols of its objects (src/cli/ is not the library);
#   2. no layer reaches upward: every `#include` and every cf_ call goes to the
#      same layer or a lower one of the table in docs/architecture.md;
#   3. every symbol libcclforge.a exports starts with cf_ (a --wrap target
#      excepted: the linker names it);
#   4. no mutable file-scope state (static locals included): no .data, .bss or
#      thread-local bytes in a library object; constant tables live in .rodata
#      and .data.rel.ro;
#   5. no circle of calls between library files (a.c calls b.c calls a.c):
#      a circle means one idea split badly, or a hub; the ELF reader's pair
#      is the one deliberate exception;
#   6. libcrypto is used only through its low-level digest calls
#      (SHA256_Init...), never a one-shot SHA256() or any EVP_, OSSL_ or
#      OPENSSL_init call, which would link OpenSSL's provider machinery
#      (~700 objects) into the static release binary;
#   7. the executable links no GPU runtime, comm library or MPI (they are
#      loaded with dlopen, so one binary serves every vendor) and nothing
#      beyond glibc and the third-party libraries of docs/architecture.md;
#   8. the executable is hardened as a distribution builds a tool that reads
#      untrusted input: full RELRO, PIE, no executable stack, the stack
#      protector and FORTIFY_SOURCE in effect (tests/support/check_hardening.sh,
#      which dist_install also runs on every release binary);
#   9. every char array given a string keeps room for its NUL, a field of a
#      table's row included (gcc's -Wc++-compat names one that has none,
#      which C itself accepts silently).
# Each rule is first run on a seeded object (compiled here) that breaks it, so
# the test is known to fail when a rule is broken.
. "$(dirname "$0")/lib.sh"
SRC=$CCLFORGE_SOURCE_DIR
OBJ=${CCLFORGE_BINARY_DIR:?}/CMakeFiles/cclforge_lib.dir
for tool in nm readelf cpp; do
    command -v "$tool" >/dev/null || t_skip "$tool (binutils, cpp) is not installed: the rules are read from object files"
done
[ -d "$OBJ/src" ] || { RC=1 OUT="" ERR="no $OBJ/src"; bad "the library's objects are where CMake puts them"; t_end; exit 1; }

# Deliberate exceptions to rule 1, each with its reason (object, symbol).
ALLOWED_CALLS='
src/util/strbuf.c abort     out of memory: cf_xmalloc has nothing sane to return
src/util/spawn.c _exit      the forked child when exec fails (never the caller)
src/util/spawn_keeper.c _exit  the keeper of a contained program, a forked child, ending as its program did (never the caller)
src/smoke/fault.c _exit     an injected fault (CCLFORGE_SMOKE_FAULT=R:exit:OP, R:abort:OP) ends its rank on purpose
src/smoke/supervise.c stdout flushed before a rank is spawned, so no child repeats the parent buffer
src/smoke/supervise.c stderr flushed before a rank is spawned, and line-buffered in the rank
'
FORBIDDEN='printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|putchar|fputc|putc|putchar_unlocked|fwrite|perror|psignal|exit|_exit|_Exit|quick_exit|abort|err|errx|verr|verrx|warn|warnx|vwarn|vwarnx|__printf_chk|__fprintf_chk|__vprintf_chk|__vfprintf_chk|__dprintf_chk|stdout|stderr'
# Deliberate exceptions to rule 5: pairs of files allowed to call each other.
ALLOWED_CIRCLES='
src/elf/elf_file.c src/elf/elf_dynamic.c the reader opens the dynamic section, which reads through the reader
'
# Deliberate exceptions to rule 3: names the linker dictates (none today).
ALLOWED_EXPORTS='^$'
# Deliberate exceptions to rule 4, each with its reason (object).
ALLOWED_STATE='
src/util/mmap_guard.c       the SIGBUS handler sees only globals: the live-mapping table (atomics) and the chained handler
'
# Headers that declare no function (types, inline code): their layer by name.
TYPE_ONLY_HEADERS='
smoke_backend.h smoke
smoke_half.h smoke
'

# ---- the layer table: "| 3 | `src/survey/` | ..." rows of docs/architecture.md
LAYERS=$T_TMP/layers
sed -n 's/^| *\([0-9][0-9]*\) *| *`src\/\([a-z_]*\)\/` *|.*/\2 \1/p' "$SRC/docs/architecture.md" >"$LAYERS"
layer_of() { awk -v f="$1" '$1 == f { print $2; found = 1 } END { if (!found) print "?" }' "$LAYERS"; }
RC=0 OUT=$(cat "$LAYERS") ERR=
[ "$(wc -l <"$LAYERS")" -ge 10 ] && [ "$(layer_of util)" = 0 ] && [ "$(layer_of cli)" -gt "$(layer_of smoke)" ] \
    && ok "the layer table is read from docs/architecture.md" || bad "the layer table is read from docs/architecture.md"

# objects as "path folder source" lines; an object whose source is gone (a moved
# file's leftover in the build directory) is not part of the library
list_objects() { # ROOT SRCROOT
    find "$1/src" -name '*.c.o' | sort | while read -r o; do
        rel=${o#"$1"/}
        rel=${rel%.o}
        [ -f "$2/$rel" ] && printf '%s %s %s\n' "$o" "$(printf '%s' "$rel" | cut -d/ -f2)" "$rel"
    done
}
OBJS=$T_TMP/objects
list_objects "$OBJ" "$SRC" >"$OBJS"

# defined global symbols: "symbol folder"
definitions() { # OBJLIST...
    cat "$@" | while read -r o folder rel; do
        nm --defined-only -g "$o" | awk -v f="$folder" 'NF >= 3 { print $3, f }'
    done | sort -u
}

check_printing() { # OBJLIST
    while read -r o folder rel; do
        nm -u "$o" | awk '{ print $NF }' | grep -xE "$FORBIDDEN" | while read -r sym; do
            printf '%s\n' "$ALLOWED_CALLS" | awk -v r="$rel" -v s="$sym" '$1 == r && $2 == s { f = 1 } END { exit !f }' ||
                echo "$rel uses $sym: the library returns errors and results; only src/cli/ prints or exits"
        done
    done <"$1"
}

HEAVY_CRYPTO='SHA1|SHA224|SHA256|SHA384|SHA512|MD5|HMAC|EVP_.*|OSSL_.*|OPENSSL_init.*'
check_crypto() { # OBJLIST
    while read -r o folder rel; do
        nm -u "$o" | awk '{ print $NF }' | grep -xE "$HEAVY_CRYPTO" |
            sed "s|^|$rel uses |;s|\$|: use cf_sha256 / the SHA*_Init calls (cclforge/fs.h says why)|"
    done <"$1"
}

check_exports() { # OBJLIST
    while read -r o folder rel; do
        nm --defined-only -g "$o" | awk 'NF >= 3 { print $3 }' | grep -v '^cf_' |
            grep -vE '^(__odr_asan|__asan|__ubsan|__sancov|__tsan)' |
            grep -vxE "$ALLOWED_EXPORTS" | sed "s|^|$rel exports |;s|\$|: prefix it cf_ or make it static|"
    done <"$1"
}

# rule 7: the shared libraries the executable may need: glibc's, and the
# third-party ones Debian ships shared only (the release needs glibc alone,
# scripts/dist/check-wheel.sh)
ALLOWED_NEEDED='(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux.*|libcjson\.so\.1|libisal\.so\.2|libcrypto\.so\.3|libzstd\.so\.1|libz\.so\.1)'
check_needed() { # EXECUTABLE
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -vxE "$ALLOWED_NEEDED" |
        sed "s|^|$(basename "$1") needs |;s|\$|: load it with dlopen where it is used, or link it statically (rule 7, tests/cli/rules.sh)|"
}

# rule 8: the hardening a distribution gives a tool that reads untrusted input
HARDENING_CHECK=$SRC/tests/support/check_hardening.sh
check_hardening() { # EXECUTABLE
    bash "$HARDENING_CHECK" "$1" 2>&1 | grep -v ': ok (' | sed 's|$| (rule 8, CMakeLists.txt)|'
}

check_nul_room() { # SOURCE...: a char array initialised by a string as long as the array drops the NUL
    printf '%s\n' "$@" | xargs "${CC:-cc}" -fsyntax-only -std=c11 -D_GNU_SOURCE -DCCLFORGE_VERSION='"0"' \
        -I"$SRC/include" -I"$SRC/src" -Wc++-compat 2>&1 |
        sed -nE "s@^(.*/)?((src|tests/fixtures)/[^:]*:[0-9]+):[0-9]+: warning: initializer-string for array of .*char.* is too long.*@\2: a string as long as its array has no NUL: make it a const char * (rule 9)@p" | sort -u
}

sanitized() { # OBJLIST: the objects carry sanitizer instrumentation
    head -n 3 "$1" | while read -r o folder rel; do nm -u "$o"; done | grep -qE '__(asan|ubsan)_'
}

check_state() { # OBJLIST
    while read -r o folder rel; do
        printf '%s\n' "$ALLOWED_STATE" | awk -v r="$rel" '$1 == r { f = 1 } END { exit !f }' && continue
        readelf -S -W "$o" | sed 's/^ *\[ *[0-9]*\] *//' |
            awk '$1 ~ /^\.(data|bss|tdata|tbss)/ && $1 !~ /^\.data\.rel\.ro/ && $5 !~ /^0+$/ { print $1 }' |
            while read -r section; do
                syms=$(nm "$o" | awk '$2 ~ /^[dDbBC]$/ { printf "%s ", $3 }')
                echo "$rel has mutable state in $section (${syms:-no symbol}): make it const, or move it into a struct the caller owns"
            done
        nm "$o" | awk -v r="$rel" '$(NF-1) == "C" { print r " has a common symbol " $NF }'
    done <"$1"
}

check_links() { # OBJLIST DEFS: every cf_ symbol an object needs is defined at its layer or below
    while read -r o folder rel; do
        nm -u "$o" | awk -v r="$rel" -v f="$folder" '$NF ~ /^cf_/ { print r, f, $NF }'
    done <"$1" | awk -v layers="$LAYERS" -v defs="$2" '
        BEGIN { while ((getline l < layers) > 0) { split(l, a, " "); layer[a[1]] = a[2] }
                while ((getline l < defs) > 0) { split(l, a, " "); def[a[1]] = a[2] } }
        { d = def[$3]
          if (d != "" && (d in layer) && ($2 in layer) && layer[d] + 0 > layer[$2] + 0)
              print $1 " (src/" $2 ", layer " layer[$2] ") calls " $3 " of src/" d " (layer " layer[d] ")" }'
}

check_circles() { # OBJLIST: tsort names the files of each loop of "caller callee" edges
    while read -r o folder rel; do
        nm --defined-only -g "$o" | awk -v r="$rel" 'NF >= 3 && $3 ~ /^cf_/ { print "D", $3, r }'
        nm -u "$o" | awk -v r="$rel" '$NF ~ /^cf_/ { print "U", $NF, r }'
    done <"$1" | awk -v allowed="$ALLOWED_CIRCLES" '
        BEGIN { n = split(allowed, l, "\n")
                for (i = 1; i <= n; i++) if (split(l[i], a, " ") >= 2) ok[a[1] " " a[2]] = ok[a[2] " " a[1]] = 1 }
        $1 == "D" { def[$2] = $3; next }
        { use[++m] = $3 " " $2 }
        END { for (i = 1; i <= m; i++) { split(use[i], a, " "); d = def[a[2]]
                  if (d != "" && d != a[1] && !ok[a[1] " " d]) print a[1], d } }' |
        sort -u | tsort 2>&1 >/dev/null | sed -n 's/^tsort: \(src\/.*\)/\1/p' | tr '\n' ' ' |
        awk 'NF { print "a circle of calls between " $0 ": move what they share into a file of its own" }'
}

# public header -> the folder(s) that define the functions it declares
header_owners() { # DEFS
    for h in "$SRC"/include/cclforge/*.h; do
        name=$(basename "$h")
        owners=$(cpp -fpreprocessed -P -w "$h" 2>/dev/null | grep -oE '\bcf_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u |
            awk -v defs="$1" 'BEGIN { while ((getline l < defs) > 0) { split(l, a, " "); def[a[1]] = a[2] } }
                              def[$1] != "" { print def[$1] }' | sort -u | tr '\n' ' ')
        [ -n "$owners" ] || owners=$(printf '%s\n' "$TYPE_ONLY_HEADERS" | awk -v n="$name" '$1 == n { print $2 }')
        printf '%s %s\n' "$name" "$owners"
    done
}

check_headers() { # OWNERS: one header, one folder
    awk 'NF != 2 { print "include/cclforge/" $1 " declares functions of " (NF > 1 ? NF - 1 " folders" : "no folder") \
                         ": one header per module (or list it in TYPE_ONLY_HEADERS)" }' "$1"
}

check_includes() { # OWNERS FILE...: no #include of a higher layer
    owners=$1
    shift
    for f in "$@"; do
        rel=${f#"$SRC"/}
        sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | sed "s|^|$rel |"
    done | awk -v layers="$LAYERS" -v owners="$owners" '
        BEGIN { while ((getline l < layers) > 0) { split(l, a, " "); layer[a[1]] = a[2] }
                while ((getline l < owners) > 0) { n = split(l, a, " "); if (n == 2) owner[a[1]] = a[2] } }
        { split($1, p, "/"); mine = p[2]; inc = $2
          if (inc ~ /^cclforge\//) { sub(/^cclforge\//, "", inc); theirs = owner[inc] }
          else if (inc ~ /\//) { split(inc, q, "/"); theirs = q[1] }
          else theirs = mine
          if (theirs != "" && (theirs in layer) && (mine in layer) && layer[theirs] + 0 > layer[mine] + 0)
              print $1 " (layer " layer[mine] ") includes " $2 " of src/" theirs " (layer " layer[theirs] ")" }'
}

# expect_rule NAME OUTPUT: none is a pass
expect_rule() {
    RC=0 ERR= OUT=$2
    [ -z "$2" ] && ok "$1" || bad "$1"
}
# expect_caught NAME OUTPUT PATTERN: the seeded violation is reported
expect_caught() {
    RC=0 ERR= OUT=$2
    printf '%s' "$2" | grep -q -- "$3" && ok "$1" || bad "$1 (no report matching /$3/)"
}

DEFS=$T_TMP/defs
definitions "$OBJS" >"$DEFS"
OWNERS=$T_TMP/owners
header_owners "$DEFS" >"$OWNERS"

# ---- a seeded object that breaks every rule: the checks must see each break
SEED=$T_TMP/seed
mkdir -p "$SEED/src/util" "$SEED/obj/src/util"
cat >"$SEED/src/util/seeded.c" <<'EOF'
#include <stdio.h>
#include "cclforge/survey.h"
unsigned char *SHA256(const unsigned char *d, unsigned long n, unsigned char *md);
int SHA512_Init(void *ctx);
int seeded_counter;
void cf_seeded_pair(void);
void cf_seeded(void)
{
    cf_seeded_pair();
    static int calls;
    printf("%d\n", ++calls + seeded_counter);
    cf_survey_release(NULL);
    SHA256(NULL, 0, NULL);
    SHA512_Init(NULL);
}
const struct { const char *name; char word[4]; } seeded_words[] = { { "three", "four" } };
EOF
printf 'void cf_seeded(void);\nvoid cf_seeded_pair(void) { cf_seeded(); }\n' >"$SEED/src/util/seeded_pair.c"
if "${CC:-cc}" -c -I"$SRC/include" -o "$SEED/obj/src/util/seeded.c.o" "$SEED/src/util/seeded.c" 2>"$T_TMP/seed.err" &&
    "${CC:-cc}" -c -o "$SEED/obj/src/util/seeded_pair.c.o" "$SEED/src/util/seeded_pair.c" 2>>"$T_TMP/seed.err"; then
    SEEDED=$T_TMP/seeded
    list_objects "$SEED/obj" "$SEED" >"$SEEDED"
    expect_caught "rule 1 catches a seeded printf" "$(check_printing "$SEEDED")" "seeded.c uses printf"
    expect_caught "rule 2 catches a seeded upward call" "$(check_links "$SEEDED" "$DEFS")" "calls cf_survey_release of src/survey"
    SRC_SAVED=$SRC
    SRC=$SEED
    expect_caught "rule 2 catches a seeded upward include" "$(check_includes "$OWNERS" "$SEED/src/util/seeded.c")" \
        "includes cclforge/survey.h of src/survey"
    SRC=$SRC_SAVED
    expect_caught "rule 3 catches a seeded unprefixed export" "$(check_exports "$SEEDED")" "exports seeded_counter"
    expect_caught "rule 5 catches a seeded circle" "$(check_circles "$SEEDED")" "circle of calls between src/util/seeded"
    expect_caught "rule 4 catches seeded mutable state" "$(check_state "$SEEDED")" "mutable state in .bss"
    expect_caught "rule 6 catches a seeded one-shot SHA256()" "$(check_crypto "$SEEDED")" "seeded.c uses SHA256"
    expect_caught "rule 9 catches a seeded field without room for its NUL" "$(check_nul_room "$SEED/src/util/seeded.c")" \
        "src/util/seeded.c:[0-9]*: a string as long as its array has no NUL"
    if printf 'int main(void) { return 0; }\n' | "${CC:-cc}" -x c -o "$SEED/seeded_exe" - -Wl,--no-as-needed -lstdc++ \
        2>>"$T_TMP/seed.err"; then
        expect_caught "rule 7 catches a seeded libstdc++" "$(check_needed "$SEED/seeded_exe")" "seeded_exe needs libstdc++.so.6"
    else
        RC=1 OUT= ERR=$(cat "$T_TMP/seed.err")
        bad "the seeded executable links"
    fi
    # an executable linked with none of the hardening
    printf '#include <string.h>\nint main(int c, char **v) { char b[8]; strcpy(b, v[0]); return b[c]; }\n' >"$SEED/soft.c"
    if "${CC:-cc}" -O2 -U_FORTIFY_SOURCE -fno-stack-protector -no-pie -fno-pie -Wl,-z,lazy -Wl,-z,norelro -Wl,-z,execstack \
        -o "$SEED/seeded_soft" "$SEED/soft.c" 2>>"$T_TMP/seed.err"; then
        soft=$(check_hardening "$SEED/seeded_soft")
        expect_caught "rule 8 catches a seeded lazy binding" "$soft" "BIND_NOW"
        expect_caught "rule 8 catches a seeded executable without RELRO" "$soft" "RELRO"
        expect_caught "rule 8 catches a seeded executable without PIE" "$soft" "PIE"
        expect_caught "rule 8 catches a seeded executable without the stack protector" "$soft" "__stack_chk_fail"
        expect_caught "rule 8 catches a seeded executable without FORTIFY_SOURCE" "$soft" "FORTIFY_SOURCE not in effect"
        expect_caught "rule 8 catches a seeded executable stack" "$soft" "executable stack"
    else
        RC=1 OUT= ERR=$(cat "$T_TMP/seed.err")
        bad "the seeded unhardened executable links"
    fi
else
    RC=1 OUT= ERR=$(cat "$T_TMP/seed.err")
    bad "the seeded object compiles"
fi

# ---- the library itself
RC=0 OUT="$(wc -l <"$OBJS") objects" ERR=
[ "$(wc -l <"$OBJS")" -ge 50 ] && ok "the library's objects are found ($(wc -l <"$OBJS"))" || bad "the library's objects are found"
expect_rule "rule 1: no printing or exiting outside src/cli/" "$(check_printing "$OBJS")"
expect_rule "rule 2: no cf_ call reaches a higher layer" "$(check_links "$OBJS" "$DEFS")"
expect_rule "rule 2: every public header belongs to one folder" "$(check_headers "$OWNERS")"
expect_rule "rule 2: no #include of a higher layer" \
    "$(check_includes "$OWNERS" $(find "$SRC/src" -name '*.[ch]' | sort))"
expect_rule "rule 2: every source folder has a layer" \
    "$(for d in "$SRC"/src/*/; do d=$(basename "$d"); [ "$(layer_of "$d")" = "?" ] && echo "src/$d is not in docs/architecture.md's layer table"; done)"
expect_rule "rule 3: every exported symbol starts with cf_" "$(check_exports "$OBJS")"
expect_rule "rule 5: no circle of calls between library files" "$(check_circles "$OBJS")"
expect_rule "rule 6: libcrypto only through its low-level digest calls" "$(check_crypto "$OBJS")"
if sanitized "$OBJS"; then
    echo "# rule 4 not checked in this build: sanitizer instrumentation adds .data of its own (the plain build checks it)"
else
    expect_rule "rule 4: no mutable file-scope or static-local state" "$(check_state "$OBJS")"
fi
if sanitized "$OBJS"; then
    echo "# rule 7 not checked in this build: the sanitizers' runtimes are shared libraries of their own"
else
    expect_rule "rule 7: the executable links no vendor runtime, nothing beyond glibc and its listed libraries" "$(check_needed "$CCLFORGE_BINARY_DIR/cclforge")"
fi
if sanitized "$OBJS"; then
    echo "# rule 8 not checked in this build: the sanitizer build is unoptimised, without FORTIFY_SOURCE (the plain build checks it)"
else
    expect_rule "rule 8: the executable is hardened (RELRO, BIND_NOW, PIE, stack, FORTIFY)" \
        "$(check_hardening "$CCLFORGE_BINARY_DIR/cclforge")"
fi
expect_rule "rule 9: every string given to a char array keeps its NUL" \
    "$(check_nul_room $(find "$SRC/src" "$SRC/tests/fixtures" -name '*.c' | sort))"

t_end
