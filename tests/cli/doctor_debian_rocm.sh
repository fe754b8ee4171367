# Distribution ROCm in /usr (Debian trixie's real librccl1, hipcc,
# libamdhip64; tests/fixtures/debian_rocm.sh fetches them once, skipped with
# 77 offline): doctor finds the toolkit, and its RCCL line names the library
# the loader emulation finds in lib/<multiarch> (not "header only"), with the
# real package's version and code objects; the loaded RCCL is the same file.
. "$(dirname "$0")/lib.sh"
ROOT=$(bash "$CCLFORGE_SOURCE_DIR/tests/fixtures/debian_rocm.sh" ${CCLFORGE_DEBIAN_ROCM_CACHE:+"$CCLFORGE_DEBIAN_ROCM_CACHE"}) ||
    t_skip "Debian's ROCm packages could not be fetched (no network?)"
LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
run env ROCM_PATH="$ROOT/usr" LD_LIBRARY_PATH="$LIBDIR" "$CCLFORGE" doctor --no-python --no-nvidia --json
# trixie's libraries need glibc 2.38: on an older host doctor rightly reports
# their closure (exit 1); either way it is a report, not a usage error
[ "$RC" -le 1 ] && ok "doctor on distribution ROCm reports (exit $RC)" || bad "doctor on distribution ROCm"
printf '%s' "$OUT" >"$T_TMP/d.json"
expect_json 'any(t["vendor"] == "rocm" and t["root"].endswith("/usr") for t in d["toolkits"])' "ROCm found at its /usr root"
expect_json 'any(t["vendor"] == "rocm" and t["comm"] and (t["comm"]["path"] or "").startswith("'"$LIBDIR"'/librccl.so.1") for t in d["toolkits"])' "the toolkit's RCCL is the library in lib/x86_64-linux-gnu, found by the loader emulation"
expect_json 'any(t["vendor"] == "rocm" and t["comm"]["how"] == "toolkit" and t["comm"]["version"] == "2.13.4" for t in d["toolkits"])' "not 'header only': RCCL 2.13.4 from the library's banner"
expect_json 'any(t["vendor"] == "rocm" and {"gfx803", "gfx1102", "gfx90a"} <= set(t["comm"]["archs"]) for t in d["toolkits"])' "the real package's code objects, gfx803 to gfx1102"
expect_json 'any(t["vendor"] == "rocm" and "'"$LIBDIR"'" in t["lib_dirs"] for t in d["toolkits"])' "lib/x86_64-linux-gnu is among the toolkit's library directories"
expect_json 'any(c["how"] == "loaded" and c["kind"] == "rccl" and c["path"].startswith("'"$LIBDIR"'") for c in d["comm_libraries"])' "the loaded RCCL is found too"
run env ROCM_PATH="$ROOT/usr" "$CCLFORGE" doctor --no-python --no-nvidia
expect_out "RCCL 2\.13\.4 +toolkit +$LIBDIR/librccl\.so\.1" "the text report names the toolkit's library"
expect_no_out "toolkit \(header only\)" "no 'header only' line"
run "$CCLFORGE" inspect --no-banner "$LIBDIR/librccl.so.1"
expect_out "AMD gfx1010 gfx1030 gfx1100 gfx1101 gfx1102 gfx803 gfx900 gfx906 gfx908 gfx90a" "inspect lists the offload targets"
t_end
