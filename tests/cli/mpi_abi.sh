# The MPI ABI tables of smoke's MPI backend (src/smoke/mpi_abi.c) against the real
# headers: tests/fixtures/mpi_abi_check.c is compiled against Open MPI's mpi.h
# (Debian's libopenmpi-dev, linked with its libmpi) and MPICH's (the `mpich` wheel
# from PyPI, scripts/mpich-cache.sh), and must agree on every handle, constant, size
# and MPI_Status offset; a table with one constant changed must not.
. "$(dirname "$0")/lib.sh"
SRC=${CCLFORGE_SOURCE_DIR:?}
CHECK=$SRC/tests/fixtures/mpi_abi_check.c
cc_check() { # OUT TABLE_SOURCE COMPILER FLAGS...
    local out=$1 table=$2 compiler=$3; shift 3
    "$compiler" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$SRC/include" -I"$SRC/src" "$@" "$CHECK" "$table" \
        -o "$out" -ldl
}
# the table with one value of this ABI changed: what the check must catch
mutant() { # FROM TO
    sed "s/$1/$2/" "$SRC/src/smoke/mpi_abi.c" >"$T_TMP/mpi_abi_mutant.c"
    grep -qF -- "$2" "$T_TMP/mpi_abi_mutant.c" || bad "the mutation $1 -> $2 did not apply"
}
checked=0

# ---- Open MPI (its mpicc is the compiler with mpi.h's directory and libmpi) ----
ompicc=$(command -v mpicc.openmpi || true)
if [ -z "$ompicc" ] && command -v mpicc >/dev/null && mpicc --showme:version 2>/dev/null | grep -q "Open MPI"; then
    ompicc=$(command -v mpicc)
fi
if [ -n "$ompicc" ]; then
    run cc_check "$T_TMP/check_ompi" "$SRC/src/smoke/mpi_abi.c" "$ompicc"
    expect_rc 0 "the check compiles against Open MPI's mpi.h ($("$ompicc" --showme:incdirs | cut -d' ' -f1))"
    run "$T_TMP/check_ompi"
    expect_rc 0 "the Open MPI table agrees with mpi.h"
    expect_out "^checking the Open MPI table against Open MPI [0-9.]+'s mpi.h" "against Open MPI's own header"
    [ "$(printf '%s\n' "$OUT" | grep -c '^ok ')" -ge 30 ] && ok "every entry compared" || bad "too few comparisons"
    mutant '"ompi_mpi_float"' '"ompi_mpi_double"'
    run cc_check "$T_TMP/mutant_ompi" "$T_TMP/mpi_abi_mutant.c" "$ompicc"
    run "$T_TMP/mutant_ompi"
    expect_rc 1 "a table naming the wrong global for MPI_FLOAT fails"
    expect_out "^MISMATCH MPI_FLOAT: " "and names it"
    mutant '.status_size = 24, .status_source = 0, .status_tag = 4' '.status_size = 24, .status_source = 0, .status_tag = 8'
    run cc_check "$T_TMP/mutant_ompi" "$T_TMP/mpi_abi_mutant.c" "$ompicc"
    run "$T_TMP/mutant_ompi"
    expect_rc 1 "a wrong MPI_Status offset fails"
    expect_out "^MISMATCH offsetof\(MPI_Status, MPI_TAG\)" "and names it"
    checked=$((checked + 1))
else
    t_skip_part "Open MPI's mpicc is missing (apt-get install libopenmpi-dev): its table is not checked"
fi

# ---- MPICH (the wheel's include/mpi.h; integer handles: nothing to link) ----
mpich=$(bash "$SRC/scripts/mpich-cache.sh" 2>"$T_TMP/mpich-cache.log" | tail -n 1)
if [ -n "$mpich" ] && [ -f "$mpich/include/mpi.h" ]; then
    run cc_check "$T_TMP/check_mpich" "$SRC/src/smoke/mpi_abi.c" cc -I"$mpich/include"
    expect_rc 0 "the check compiles against MPICH's mpi.h ($mpich/include)"
    run "$T_TMP/check_mpich"
    expect_rc 0 "the MPICH table agrees with mpi.h"
    expect_out "^checking the MPICH table against MPICH [0-9.]+'s mpi.h" "against MPICH's own header"
    expect_out "^ok MPI_COMM_WORLD = 0x44000000" "MPI_COMM_WORLD"
    expect_out "^ok MPI_FLOAT = 0x4c00040a" "MPI_FLOAT"
    expect_out "^ok MPI_SUM = 0x58000003" "MPI_SUM"
    mutant '\[CF_MPI_FLOAT\] = 0x4c00040a' '[CF_MPI_FLOAT] = 0x4c00040b'
    run cc_check "$T_TMP/mutant_mpich" "$T_TMP/mpi_abi_mutant.c" cc -I"$mpich/include"
    run "$T_TMP/mutant_mpich"
    expect_rc 1 "a table with a wrong MPI_FLOAT fails"
    expect_out "^MISMATCH MPI_FLOAT: table 0x4c00040b, mpi.h 0x4c00040a" "and names both values"
    mutant '.in_place = -1,' '.in_place = 1,'
    run cc_check "$T_TMP/mutant_mpich" "$T_TMP/mpi_abi_mutant.c" cc -I"$mpich/include"
    run "$T_TMP/mutant_mpich"
    expect_rc 1 "a wrong MPI_IN_PLACE fails"
    checked=$((checked + 1))
else
    cat "$T_TMP/mpich-cache.log"
    t_skip_part "scripts/mpich-cache.sh could not install the mpich wheel (PyPI is needed once): its table is not checked"
fi
[ "$checked" -gt 0 ] || t_skip "no real mpi.h to check the tables against"
t_end
