#!/usr/bin/env bash
# MPICH from PyPI (the `mpich` wheel: libmpi.so.12, its mpi.h and Hydra's mpiexec)
# in a venv made once into the cclforge cache, for the tests of smoke's MPICH-ABI
# backend (tests/cli/smoke_mpi_abi.sh) and of the ABI table (tests/cli/mpi_abi.sh).
# Idempotent: a second run only checks the stamp. Prints the venv's prefix (with
# bin/mpiexec, lib/libmpi.so.12, include/mpi.h) as its last line.
#
#   CCLFORGE_MPICH_CACHE    cache root (default ~/.cache/cclforge/mpich)
#   CCLFORGE_MPICH_VERSION  mpich version (default 5.0.2)
#   PYTHON                  the interpreter to base the venv on (default python3)
set -euo pipefail

PYTHON=${PYTHON:-python3}
version=${CCLFORGE_MPICH_VERSION:-5.0.2}
root=${CCLFORGE_MPICH_CACHE:-$HOME/.cache/cclforge/mpich}
venv="$root/venv-$version"
stamp="$venv/.cclforge-complete"
if [ -f "$stamp" ]; then
    echo "$venv"
    exit 0
fi
. "$(dirname "$0")/cache-lock.sh"
cache_lock "$root"
if [ -f "$stamp" ]; then # made while this run waited
    echo "$venv"
    exit 0
fi
# a venv's scripts name its directory: made where it stays, stamped when complete
rm -rf "$venv"
"$PYTHON" -m venv "$venv" >&2
echo "mpich-cache: installing mpich==$version into $venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: "mpich==$version" >&2
for f in bin/mpiexec lib/libmpi.so.12 include/mpi.h; do
    [ -e "$venv/$f" ] || { echo "mpich-cache: the mpich $version wheel has no $f" >&2; exit 1; }
done
touch "$stamp"
echo "$venv"
