#!/usr/bin/env bash
# Test set-up for tests/cli/wheel_real.sh and bench/wheel_verify.sh: the real
# PyPI wheels `wheel verify` must pass, at pinned versions, and auditwheel in
# a venv of its own, both cached. Idempotent: a second run only checks the
# stamps. Prints "wheels=DIR" and "auditwheel=PATH" as its last lines.
#
#   CCLFORGE_WHEEL_CACHE  cache root (default ~/.cache/cclforge/wheels)
#   PYTHON                interpreter for auditwheel's venv (default python3)
#
# The wheels are CPython 3.11 manylinux x86_64 builds whatever the local
# Python (pip download --python-version/--platform), so that the same bytes
# are verified everywhere; about 250 MB (nvidia-nccl-cu12 is 189 MB).
# Exit status: 0 ready, 77 the network is needed and cannot be reached (the
# caller skips, visibly), 1 anything else.
set -euo pipefail

PYTHON=${PYTHON:-python3}
root=${CCLFORGE_WHEEL_CACHE:-$HOME/.cache/cclforge/wheels}
AUDITWHEEL_VERSION=6.8.2
WHEELS=(
    numpy==2.4.6
    scipy==1.17.1
    pillow==13.0.0
    markupsafe==3.0.4
    msgpack==1.2.4
    psutil==7.2.2
    orjson==3.13.0
    nvidia-nccl-cu12==2.21.5
    nvidia-cuda-runtime-cu12==12.9.79
)
dir="$root/cp311-x86_64"
venv="$root/venv-auditwheel-$AUDITWHEEL_VERSION"
stamp="$dir/.cclforge-complete"
pin_list=$(printf '%s\n' "${WHEELS[@]}")

"$PYTHON" -m pip --version >/dev/null 2>&1 || {
    echo "wheel-cache: $PYTHON has no pip: install python3-pip (or use a Python that has it)" >&2
    exit 77
}

offline() {
    echo "wheel-cache: $1: the network (PyPI) cannot be reached and nothing is cached in $root" >&2
    exit 77
}

. "$(dirname "$0")/cache-lock.sh"
cache_lock "$root"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$pin_list" ]; then
    mkdir -p "$dir"
    rm -rf "$dir/auditwheel-show" # answers kept by tests/cli/wheel_real.sh for the old pins
    echo "wheel-cache: downloading ${WHEELS[*]} into $dir" >&2
    "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 \
        --platform manylinux2010_x86_64 \
        -d "$dir" "${WHEELS[@]}" 2>"$dir/.pip-download.log" >&2 || {
        cat "$dir/.pip-download.log" >&2
        # an index that answered lists the versions it has: then a pin is wrong, not the network
        if grep -q 'from versions: [^n)]' "$dir/.pip-download.log"; then
            echo "wheel-cache: a pinned version is not on the index (see pip's versions above): fix WHEELS in $0" >&2
            exit 1
        fi
        offline "pip download"
    }
    printf '%s' "$pin_list" >"$stamp"
fi

# auditwheel is installed last: its script existing means the venv is whole
if [ ! -x "$venv/bin/auditwheel" ]; then
    echo "wheel-cache: installing auditwheel $AUDITWHEEL_VERSION into $venv" >&2
    rm -rf "$venv" "$dir/auditwheel-show"
    "$PYTHON" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "auditwheel==$AUDITWHEEL_VERSION" >&2 ||
        { rm -rf "$venv"; offline "pip install auditwheel"; }
fi
echo "wheels=$dir"
echo "auditwheel=$venv/bin/auditwheel"
