#!/usr/bin/env bash
# A Python build environment for the tests that build a real project's wheel
# with `pip wheel --no-build-isolation` (tests/cli/bridge_host.sh): a venv with
# setuptools and wheel from PyPI (bdist_wheel is in the `wheel` package for
# setuptools < 70), made once into the cclforge cache. Idempotent; prints the
# venv's python as its last line.
#
#   CCLFORGE_PYBUILD_CACHE  cache root (default ~/.cache/cclforge/pybuild)
#   PYTHON                  the interpreter to base it on (default python3)
set -euo pipefail

PYTHON=${PYTHON:-python3}
root=${CCLFORGE_PYBUILD_CACHE:-$HOME/.cache/cclforge/pybuild}
tag=$("$PYTHON" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
venv="$root/venv-$tag"
stamp="$venv/.cclforge-complete"
if [ -f "$stamp" ]; then
    echo "$venv/bin/python"
    exit 0
fi
. "$(dirname "$0")/cache-lock.sh"
cache_lock "$root"
if [ -f "$stamp" ]; then # made while this run waited
    echo "$venv/bin/python"
    exit 0
fi
# a venv's scripts name its directory: made where it stays, stamped when complete
rm -rf "$venv"
"$PYTHON" -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "setuptools>=61" wheel >&2
touch "$stamp"
echo "$venv/bin/python"
