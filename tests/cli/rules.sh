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
#   6. the start-up stays light: libcrypto is used only through its low-level
#      digest calls (SHA256_Init...), never a one-shot SHA256() or any EVP_,
#      OSSL_ or OPENSSL_init call, which link OpenSSL's provider machinery
#      statically (~700 objects, 20,000 relocations ld.so applies on every run);
#      and every object that begins a digest calls cf_crypto_ready() (the CPU
#      probe moved out of start-up, src/util/crypto_cpu.c);
#   7. the executable loads no shared library beyond libc (a shared cJSON,
#      all Debian ships, is loaded on first use: src/util/cjson_loader.c):
#      each one costs every run its mapping and relocations (libm alone was
#      ~0.08 ms of a ~1.4 ms inspect, cJSON ~0.03 ms, docs/bench.md);
#   8. tables hold their strings: the PIE executable keeps its relative
#      relocations under a budget (ld.so writes every page they land in at
#      every start, a copy-on-write fault each: 1,858 of them were 8 pages of
#      a 70-fault --version, docs/bench.md), and every char array given a
#      string keeps room for its NUL (gcc's -Wc++-compat names one that has
#      none, which C itself accepts silently);
#   9. a warm inspect runs in main's code window: the functions a replayed
#      answer calls (WARM_PATH) lie within 64 KB of main, where the
#      fault-around of main's own page maps them (each other 64 KB window of
#      code was a page fault of every run, 2.5 us: docs/bench.md, inspect
#      fourth round); CMakeLists.txt's CCLFORGE_WARM_* lists put them there;
#  10. exit touches no code for nothing: the executable has no DT_FINI (glibc's
#      _fini is an empty frame at the end of .text, a page fault of every
#      run), and its .fini section calls nothing, so that nothing is skipped.
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
src/util/cjson_loader.c _exit  libcjson.so.1 cannot be loaded: the run ends as ld.so would have ended it at start (status 127)
src/util/spawn_keeper.c _exit  the keeper of a contained program, a forked child, ending as its program did (never the caller)
src/smoke/fault.c _exit     an injected fault (CCLFORGE_SMOKE_FAULT=R:exit:OP, R:abort:OP) ends its rank on purpose
src/doctor/local_ranks.c _exit  the starter of the local ranks of doctor --gather -n, a forked child, ending once they have (never the caller)
src/smoke/supervise.c stdout flushed before a rank is spawned, so no child repeats the parent buffer
src/smoke/supervise.c stderr flushed before a rank is spawned, and line-buffered in the rank
'
FORBIDDEN='printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|putchar|fputc|putc|putchar_unlocked|fwrite|perror|psignal|exit|_exit|_Exit|quick_exit|abort|err|errx|verr|verrx|warn|warnx|vwarn|vwarnx|__printf_chk|__fprintf_chk|__vprintf_chk|__vfprintf_chk|__dprintf_chk|stdout|stderr'
# Deliberate exceptions to rule 5: pairs of files allowed to call each other.
ALLOWED_CIRCLES='
src/elf/elf_file.c src/elf/elf_dynamic.c the reader opens the dynamic section, which reads through the reader
'
# Deliberate exceptions to rule 3: names the linker dictates.
ALLOWED_EXPORTS='__wrap_OPENSSL_cpuid_setup' # -Wl,--wrap: src/util/crypto_cpu.c
# Deliberate exceptions to rule 4, each with its reason (object).
ALLOWED_STATE='
src/util/mmap_guard.c       the SIGBUS handler sees only globals: the live-mapping table (atomics) and the chained handler
src/util/mmap_exit.c        the budget of mappings left to process exit: process-wide by nature, set once by the CLI (atomics)
src/util/crypto_cpu.c       the pthread_once of the libcrypto CPU probe: process-wide by nature, as the capability words it fills
src/util/cjson_loader.c     the addresses of the loaded libcjson.so.1 functions: process-wide by nature, as the loaded library (atomics)
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
        # a digest begun before libcrypto's CPU probe runs would take its generic code
        undef=$(nm -u "$o" | awk '{ print $NF }')
        if printf '%s\n' "$undef" | grep -qxE 'SHA(1|224|256|384|512)_Init' &&
            ! printf '%s\n' "$undef" | grep -qx cf_crypto_ready; then
            echo "$rel begins a digest (SHA*_Init) without cf_crypto_ready(): call it first (src/util/crypto_cpu.c says why)"
        fi
    done <"$1"
}

check_exports() { # OBJLIST
    while read -r o folder rel; do
        nm --defined-only -g "$o" | awk 'NF >= 3 { print $3 }' | grep -v '^cf_' |
            grep -vE '^(__odr_asan|__asan|__ubsan|__sancov|__tsan)' |
            grep -vxE "$ALLOWED_EXPORTS" | sed "s|^|$rel exports |;s|\$|: prefix it cf_ or make it static|"
    done <"$1"
}

# rule 7: the shared libraries the executable may need
LIGHT_NEEDED='libc\.so\.6'
check_needed() { # EXECUTABLE
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -vxE "$LIGHT_NEEDED" |
        sed "s|^|$(basename "$1") needs |;s|\$|: link it statically or drop it (rule 7, tests/cli/rules.sh)|"
}

# rule 8: relocated data at start-up, and strings that fit their arrays
RELATIVE_BUDGET=400
check_relocations() { # EXECUTABLE
    local n
    n=$(readelf -rW "$1" | grep -c '_RELATIVE ')
    [ "$n" -le "$RELATIVE_BUDGET" ] ||
        echo "$(basename "$1") has $n relative relocations (budget $RELATIVE_BUDGET): hold the strings of a table in its rows (char name[N]), not pointers to them (rule 8, tests/cli/rules.sh)"
}
# rule 9: the functions of a warm inspect (a replayed answer), beyond main
WARM_PATH='cf_mmap_leave_to_exit cli_cache_root cf_cache_root_usable cf_dir_trusted cmd_inspect cli_getopt
cf_term_is_tty cf_inspect_answer_key cf_self_exe cf_readlink cf_getcwd cf_ldso_env_key cf_inspect_answer_get
cf_depcache_get_at cf_inspect_answer_decode cf_sb_add cf_xmalloc cf_write_all'
check_warm_window() { # EXECUTABLE FUNCTION...
    local exe=$1
    shift
    nm "$exe" | awk -v want="$*" -v exe="$(basename "$exe")" '
        function hex(s,   v, i) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
        BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) if (w[i] != "") need[w[i]] = 1 }
        $2 ~ /^[Tt]$/ { addr[$3] = hex($1) }
        END {
            if (!("main" in addr)) { print exe ": no main in its symbols"; exit }
            for (f in need)
                if (!(f in addr)) print exe ": " f " is not in its symbols (renamed? update WARM_PATH, rule 9)"
                else if (addr[f] - addr["main"] >= 65536 || addr["main"] - addr[f] >= 65536)
                    printf "%s: %s lies %d KB from main: a warm inspect faults its window in (rule 9: CMakeLists.txt CCLFORGE_WARM_*)\n", exe, f, (addr[f] - addr["main"]) / 1024
        }'
}

# rule 10: no DT_FINI, and nothing in .fini that leaving it out would skip
check_fini() { # EXECUTABLE
    readelf -d "$1" | grep -q '(FINI) ' &&
        echo "$(basename "$1") has DT_FINI: ld.so calls _fini at every exit (rule 10: link with -Wl,-fini=cf_no_dt_fini)"
    objdump -d -j .fini "$1" 2>/dev/null | awk -F '\t' -v exe="$(basename "$1")" '
        $3 ~ /^(call|callq|bl|blr|jmp|b)[ \t]/ { print exe ": .fini runs code (" $3 "): it needs its DT_FINI (rule 10)" }'
}

check_nul_room() { # SOURCE...: a char array initialised by a string as long as the array drops the NUL
    local f
    for f in "$@"; do
        "${CC:-cc}" -fsyntax-only -std=c11 -D_GNU_SOURCE -DCCLFORGE_VERSION='"0"' -I"$SRC/include" -I"$SRC/src" \
            -Wc++-compat "$f" 2>&1 | sed -n "s|^.*/\(src/[^:]*:[0-9]*\):[0-9]*: warning: initializer-string for array of .char. is too long.*|\1: a string as long as its array has no NUL: make the array longer (rule 8)|p"
    done
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
const char seeded_words[][4] = { "four" };
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
    expect_caught "rule 6 catches a digest begun without cf_crypto_ready()" "$(check_crypto "$SEEDED")" \
        "seeded.c begins a digest (SHA\*_Init) without cf_crypto_ready"
    expect_caught "rule 8 catches a seeded string without room for its NUL" "$(check_nul_room "$SEED/src/util/seeded.c")" \
        "src/util/seeded.c:[0-9]*: a string as long as its array has no NUL"
    # a table of 500 pointers to strings
    awk 'BEGIN { printf "const char *const seeded_table[] = {"; for (i = 0; i < 500; i++) printf " \"w%d\",", i
                 print " 0 };"; print "int main(int c, char **v) { return seeded_table[c][0] == *v[0]; }" }' >"$SEED/table.c"
    if printf 'int main(void) { return 0; }\n' | "${CC:-cc}" -x c -o "$SEED/seeded_exe" - -Wl,--no-as-needed -lm -lcjson \
        2>>"$T_TMP/seed.err" && "${CC:-cc}" -fPIE -pie -o "$SEED/seeded_table" "$SEED/table.c" 2>>"$T_TMP/seed.err"; then
        expect_caught "rule 7 catches a seeded libm" "$(check_needed "$SEED/seeded_exe")" "seeded_exe needs libm.so.6"
        expect_caught "rule 7 catches a seeded shared cJSON" "$(check_needed "$SEED/seeded_exe")" "seeded_exe needs libcjson.so.1"
        expect_caught "rule 8 catches a seeded table of string pointers" "$(check_relocations "$SEED/seeded_table")" \
            "seeded_table has 50[0-9] relative relocations"
    else
        RC=1 OUT= ERR=$(cat "$T_TMP/seed.err")
        bad "the seeded executable links"
    fi
    # an executable linked as usual (DT_FINI), and one whose .fini calls a function
    case $(uname -m) in x86_64) call=call ;; aarch64) call=bl ;; *) call= ;; esac
    printf 'int main(void) { return 0; }\nvoid cf_seeded_fini(void) {}\n' >"$SEED/fini.c"
    [ -z "$call" ] || printf '__asm__(".section .fini,\\"ax\\"\\n%s cf_seeded_fini\\n.text\\n");\n' "$call" >>"$SEED/fini.c"
    if "${CC:-cc}" -o "$SEED/seeded_fini" "$SEED/fini.c" 2>>"$T_TMP/seed.err"; then
        expect_caught "rule 10 catches a seeded DT_FINI" "$(check_fini "$SEED/seeded_fini")" "seeded_fini has DT_FINI"
        [ -z "$call" ] || expect_caught "rule 10 catches a seeded $call in .fini" "$(check_fini "$SEED/seeded_fini")" \
            "seeded_fini: .fini runs code ($call.*cf_seeded_fini"
    else
        RC=1 OUT= ERR=$(cat "$T_TMP/seed.err")
        bad "the seeded .fini executable links"
    fi
    # a function 128 KB of code away from main
    printf 'int main(void) { return 0; }\n__asm__(".text\\n.skip 131072\\n");\nvoid cf_seeded_far(void) {}\n' >"$SEED/far.c"
    if "${CC:-cc}" -O0 -fno-toplevel-reorder -o "$SEED/seeded_far" "$SEED/far.c" 2>>"$T_TMP/seed.err"; then
        expect_caught "rule 9 catches a seeded function far from main" "$(check_warm_window "$SEED/seeded_far" cf_seeded_far)" \
            "seeded_far: cf_seeded_far lies 128 KB from main"
        expect_caught "rule 9 catches a function not found" "$(check_warm_window "$SEED/seeded_far" cf_seeded_gone)" \
            "cf_seeded_gone is not in its symbols"
    else
        RC=1 OUT= ERR=$(cat "$T_TMP/seed.err")
        bad "the seeded far executable links"
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
    expect_rule "rule 7: the executable needs only libc" "$(check_needed "$CCLFORGE_BINARY_DIR/cclforge")"
fi
if sanitized "$OBJS"; then
    echo "# rule 8's relocation budget not checked in this build: the sanitizers add relocated metadata of their own"
else
    expect_rule "rule 8: the executable's relocated tables stay within budget" \
        "$(check_relocations "$CCLFORGE_BINARY_DIR/cclforge")"
fi
if sanitized "$OBJS"; then
    echo "# rule 9 not checked in this build: sanitizer instrumentation spreads the code"
else
    expect_rule "rule 9: a warm inspect's functions lie within 64 KB of main" \
        "$(check_warm_window "$CCLFORGE_BINARY_DIR/cclforge" $WARM_PATH)"
fi
expect_rule "rule 10: no DT_FINI, and .fini calls nothing" "$(check_fini "$CCLFORGE_BINARY_DIR/cclforge")"
expect_rule "rule 8: every string given to a char array keeps its NUL" \
    "$(check_nul_room $(find "$SRC/src" "$SRC/tests/fixtures" -name '*.c' | sort))"

t_end
