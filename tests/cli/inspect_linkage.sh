# cclforge inspect on fixtures compiled here with the linker flags each case
# needs: reasons in the tree, a missing library with --explain, LD_LIBRARY_PATH,
# undefined symbols and versions against `ldd -r`, cycles, JSON.
. "$(dirname "$0")/lib.sh"

P=$T_TMP/pkg
mkdir -p "$P/lib" "$P/bin" "$P/gone"
cd "$T_TMP" || exit 1
cc_ok() { cc "$@" 2>"$T_TMP/.cc" || { echo "cc failed: $*"; cat "$T_TMP/.cc"; exit 1; }; }

printf 'int a_fn(void){return 1;}\n' >a.c
printf 'int a_fn(void); int b_fn(void){return a_fn()+1;}\n' >b.c
printf 'int b_fn(void); int main(void){return b_fn();}\n' >app.c
cc_ok -shared -fPIC -o "$P/lib/liba.so" a.c -Wl,-soname,liba.so
# libb finds liba through its RUNPATH, the program finds libb through its RPATH.
cc_ok -shared -fPIC -o "$P/lib/libb.so" b.c -L"$P/lib" -la -Wl,-soname,libb.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
cc_ok -o "$P/bin/app" app.c -L"$P/lib" -lb -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../lib'

# --- a clean closure: exit 0, each reason shown
run "$CCLFORGE" inspect "$P/bin/app"
expect_rc 0 "clean closure exits 0"
expect_out "libb\.so => $P/bin/\.\./lib/libb\.so \[rpath of $P/bin/app\]" "libb found through the program's RPATH"
expect_out "liba\.so => $P/(bin/\.\./)?lib/liba\.so \[runpath of $P/(bin/\.\./)?lib/libb\.so\]" "liba found through libb's RUNPATH"
expect_out "libc\.so\.6 => /.*libc\.so\.6 \[ld\.so\.cache\]" "libc from ld.so.cache"
expect_out "ld-linux-x86-64\.so\.2 => .* \[the dynamic loader\]" "the dynamic loader is named"
expect_out "└── " "drawn as a tree"
expect_out "$P/bin/app: 5 objects, 0 missing; 0 errors" "summary line"
# the tree agrees with ldd on every path (ldd runs the loader; safe on our own fixture)
ldd "$P/bin/app" | awk '/=>/ {print $3; next} $1 ~ /^\// {print $1}' | sort >ldd.paths
printf '%s\n' "$OUT" | sed -n 's/.* => \([^ ]*\) \[.*/\1/p' | sort >ours.paths
if diff -q ldd.paths ours.paths >/dev/null; then ok "paths equal ldd's"; else RC=0; OUT=$(diff ldd.paths ours.paths); ERR=; bad "paths equal ldd's"; fi

# the facts line stays empty for plain C objects, and --depth limits the tree
run "$CCLFORGE" inspect --depth 1 "$P/bin/app"
expect_rc 0 "--depth 1 exits 0"
expect_out "more below --depth 1" "--depth cuts the tree"
expect_no_out "liba\.so =>" "--depth 1 hides depth 2"
run "$CCLFORGE" inspect --flat "$P/bin/app"
expect_out "^    libb\.so => " "--flat lists in load order"
expect_no_out "├──" "--flat draws no tree"

# --- LD_LIBRARY_PATH: a program with no RPATH
cc_ok -o "$P/bin/plain" app.c -L"$P/lib" -lb
run env -u LD_LIBRARY_PATH "$CCLFORGE" inspect --ld-library-path "$P/lib" "$P/bin/plain"
expect_rc 0 "--ld-library-path finds libb"
expect_out "libb\.so => $P/lib/libb\.so \[LD_LIBRARY_PATH\]" "reason LD_LIBRARY_PATH"
run env LD_LIBRARY_PATH="$P/lib" "$CCLFORGE" inspect "$P/bin/plain"
expect_out "\[LD_LIBRARY_PATH\]" "the environment's LD_LIBRARY_PATH is used"
run env LD_LIBRARY_PATH="$P/lib" "$CCLFORGE" inspect --ignore-ld-library-path "$P/bin/plain"
expect_rc 1 "--ignore-ld-library-path: libb missing, exit 1"
expect_out "libb\.so => not found" "missing libb shown"

# --- a missing library, with --explain
printf 'int gone_fn(void){return 3;}\n' >gone.c
printf 'int gone_fn(void); int main(void){return gone_fn();}\n' >usegone.c
cc_ok -shared -fPIC -o "$P/gone/libgone.so" gone.c -Wl,-soname,libgone.so
cc_ok -o "$P/bin/usegone" usegone.c -L"$P/gone" -lgone -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../lib'
run "$CCLFORGE" inspect "$P/bin/usegone"
expect_rc 1 "missing library exits 1"
expect_out "libgone\.so => not found" "not found in the tree"
expect_out "$P/bin/\.\./lib/libgone\.so  \[rpath\] not found" "the considered paths of a missing library are always listed"
expect_out "error.* \[missing\] libgone\.so => not found \(needed by $P/bin/usegone\)" "problem line names the needer"
expect_out "1 missing; 1 error" "summary counts it"
run "$CCLFORGE" inspect --explain "$P/bin/usegone"
expect_rc 1 "--explain still exits 1"
expect_out "/lib/x86_64-linux-gnu/libgone\.so  \[default dirs\] not found" "--explain lists the default dirs"
expect_out "/usr/lib/libgone\.so  \[default dirs\] not found" "... all of them in order"
expect_out "/lib/x86_64-linux-gnu/libc\.so\.6  \[ld\.so\.cache\] used" "--explain also shows how found libraries were found"
ldd "$P/bin/usegone" | grep -q "libgone.so => not found" && ok "ldd agrees it is missing" || bad "ldd agrees it is missing"

# --- undefined symbol and missing version, with --undefined, in ldd -r's words
printf 'int sym_old(void){return 1;}\nint sym_new(void){return 2;}\n' >v1.c
printf 'int sym_old(void){return 1;}\n' >v0.c
printf 'int sym_new(void); int main(void){return sym_new();}\n' >usesym.c
mkdir -p "$P/sym"
cc_ok -shared -fPIC -o "$P/sym/libsym.so" v1.c -Wl,-soname,libsym.so
cc_ok -o "$P/bin/usesym" usesym.c -L"$P/sym" -lsym -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../sym'
cc_ok -shared -fPIC -o "$P/sym/libsym.so" v0.c -Wl,-soname,libsym.so    # sym_new is gone now
run "$CCLFORGE" inspect "$P/bin/usesym"
expect_rc 0 "without --undefined the symbol is not checked"
run "$CCLFORGE" inspect --undefined "$P/bin/usesym"
expect_rc 1 "undefined symbol exits 1"
want=$(ldd -r "$P/bin/usesym" 2>&1 | grep 'undefined symbol' | sed 's/^[[:space:]]*//')
[ -n "$want" ] && ok "ldd -r reports the symbol" || bad "ldd -r reports the symbol"
printf '%s\n' "$OUT" | grep -qF -- "$want" && ok "same message as ldd -r: $want" || bad "same message as ldd -r ($want)"
expect_out "1 undefined symbol, 0 missing versions" "summary counts the symbol"

printf 'VERS_1 { global: ver_fn; local: *; };\n' >v1.map
printf 'VERS_1 { local: *; }; VERS_2 { global: ver_fn; } VERS_1;\n' >v2.map
printf 'int ver_fn(void){return 7;}\n' >ver.c
printf 'int ver_fn(void); int main(void){return ver_fn();}\n' >usever.c
mkdir -p "$P/ver"
cc_ok -shared -fPIC -o "$P/ver/libver.so" ver.c -Wl,-soname,libver.so -Wl,--version-script,v2.map
cc_ok -o "$P/bin/usever" usever.c -L"$P/ver" -lver -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../ver'
cc_ok -shared -fPIC -o "$P/ver/libver.so" ver.c -Wl,-soname,libver.so -Wl,--version-script,v1.map
run "$CCLFORGE" inspect --undefined "$P/bin/usever"
expect_rc 1 "missing version exits 1"
# ldd prefixes the loader's version error with the program name ("PROG: ")
want=$(ldd -r "$P/bin/usever" 2>&1 | grep "version \`VERS_2' not found" | sed "s|^$P/bin/usever: ||")
[ -n "$want" ] && ok "ldd -r reports the version" || bad "ldd -r reports the version"
printf '%s\n' "$OUT" | grep -qF -- "$want" && ok "same message as ldd -r: $want" || bad "same message as ldd -r ($want)"
expect_out "\[version-not-found\]" "kind version-not-found"
want=$(ldd -r "$P/bin/usever" 2>&1 | grep "undefined symbol: ver_fn")
printf '%s\n' "$OUT" | grep -qF -- "$want" && ok "the versioned reference too, as ldd -r: $want" || bad "versioned undefined symbol as ldd -r"

# --- a cycle: liby needs libx needs liby
printf 'int y_fn(void); int x_fn(void){return y_fn();}\n' >x.c
printf 'int x_fn(void); int y_fn(void){return x_fn();}\n' >y.c
mkdir -p "$P/cyc"
cc_ok -shared -fPIC -o "$P/cyc/libx.so" x.c -Wl,-soname,libx.so -Wl,--allow-shlib-undefined
cc_ok -shared -fPIC -o "$P/cyc/liby.so" y.c -L"$P/cyc" -lx -Wl,-soname,liby.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
cc_ok -shared -fPIC -o "$P/cyc/libx.so" x.c -L"$P/cyc" -ly -Wl,-soname,libx.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
run "$CCLFORGE" inspect -a "$P/cyc/liby.so"
expect_rc 0 "a cycle terminates and is fine"
expect_out "liby\.so => .* \[already loaded\]" "-a shows the back edge as 'already loaded'"
run "$CCLFORGE" inspect "$P/cyc/liby.so"
expect_no_out "already loaded" "without -a already-loaded entries are hidden"

# --- JSON: schema, every node has path and why, problems and symbols typed
run "$CCLFORGE" inspect --json --undefined --explain "$P/bin/app" "$P/bin/usegone" "$P/bin/usesym"
expect_rc 1 "--json keeps the exit code"
expect_json "d['schema'] == 'cclforge.inspect/1' and d['mode'] == 'files'" "schema and mode"
expect_json "all('path' in n and 'why' in n and 'reason' in n for t in d['targets'] for n in t['nodes'])" "every node has path, why, reason"
expect_json "all(n['considered'] for t in d['targets'] for n in t['nodes'] if n['reason'] not in ('root','already loaded'))" "--explain keeps considered for every searched node"
expect_json "[n['why'] for n in d['targets'][0]['nodes'] if n['needed']=='libb.so'] == ['rpath of $P/bin/app']" "why of libb"
expect_json "any(n['path'] is None and n['reason']=='not found' for n in d['targets'][1]['nodes'])" "missing node has path null"
expect_json "[p['kind'] for p in d['targets'][1]['problems']] == ['missing', 'undefined-symbol']" "missing library, then the symbol it would have defined"
expect_json "d['targets'][2]['symbols']['undefined'] == 1 and d['targets'][2]['symbols']['problems'][0]['symbol'] == 'sym_new'" "symbols section"
expect_json "d['targets'][0]['loader']['lib'] == 'lib/x86_64-linux-gnu' or d['targets'][0]['loader']['lib'] == 'lib64'" "loader \$LIB reported"
expect_json "d['summary']['ok'] is False and d['summary']['errors'] == 3" "summary: errors counted"
expect_json "all(o['comm']['found'] is False and o['gpu']['sass'] == [] for o in d['targets'][0]['objects'])" "plain objects: no banner, no GPU code"
t_end
