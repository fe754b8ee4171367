#!/usr/bin/env bash
# MPICH-ABI MPIs from PyPI, each in a venv made once into the cclforge cache, for
# the tests of smoke's MPI backend over the MPICH ABI (tests/cli/smoke_mpi_abi.sh)
# and of the ABI table (tests/cli/mpi_abi.sh):
#   mpich    (default) MPICH: lib/libmpi.so.12, include/mpi.h, Hydra's bin/mpiexec
#   impi-rt  Intel MPI's runtime: lib/libmpi.so.12, bin/mpiexec (no mpi.h; ~130 MB)
# Idempotent: a second run only checks the stamp. Prints the venv's prefix as its
# last line.
#
#   bash scripts/mpich-cache.sh [mpich|impi-rt]
#   CCLFORGE_MPICH_CACHE    cache root (default ~/.cache/cclforge/mpich)
#   CCLFORGE_MPICH_VERSION  mpich version (default 5.0.2)
#   CCLFORGE_IMPI_VERSION   impi-rt version (default 2021.19.0)
#   PYTHON                  the interpreter to base the venvs on (default python3)
set -euo pipefail

PYTHON=${PYTHON:-python3}
package=${1:-mpich}
case $package in
mpich) version=${CCLFORGE_MPICH_VERSION:-5.0.2}; name=$version; pip_flags=()
    need=(bin/mpiexec lib/libmpi.so.12 include/mpi.h) ;;
# --no-deps: its one dependency, libfabric>=2.6, is not on PyPI for Linux; one node's
# ranks talk through shared memory without it
impi-rt) version=${CCLFORGE_IMPI_VERSION:-2021.19.0}; name=impi-rt-$version; pip_flags=(--no-deps)
    need=(bin/mpiexec lib/libmpi.so.12) ;;
*) echo "mpich-cache: unknown package '$package' (mpich or impi-rt)" >&2; exit 2 ;;
esac
root=${CCLFORGE_MPICH_CACHE:-$HOME/.cache/cclforge/mpich}
venv="$root/venv-$name"
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
echo "mpich-cache: installing $package==$version into $venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
    ${pip_flags[@]+"${pip_flags[@]}"} "$package==$version" >&2
for f in "${need[@]}"; do
    [ -e "$venv/$f" ] || { echo "mpich-cache: the $package $version wheel has no $f" >&2; exit 1; }
done
touch "$stamp"
echo "$venv"
