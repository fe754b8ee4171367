#!/usr/bin/env bash
# Fetches the real `torch` wheel from PyPI (the default Linux x86_64 build, which
# is the CUDA build) and what importing it needs, and installs them with
# `pip install --no-deps --target` into a cache that the bridge tests reuse.
# Idempotent: a second run only checks the stamp. Prints the site directory as
# its last line.
#
#   CCLFORGE_TORCH_CACHE  cache root (default ~/.cache/cclforge/torch)
#   CCLFORGE_TORCH_VERSION  torch version (default 2.15.0)
#   PYTHON                the interpreter whose wheels to fetch (default python3)
#
# What is fetched and why (about 1.1 GB):
#   torch                  headers, libtorch*, libc10* and libtorch_python: compile and link
#   nvidia-nccl-cu13       the libnccl.so.2 and nccl.h torch was built against (it needs
#                          symbols such as ncclCommResume that older NCCLs lack)
#   nvidia-cufile, nvidia-cusparselt-cu13, nvidia-nvshmem-cu13
#                          NEEDED by libtorch_cuda / libtorch_nvshmem at import; the CUDA
#                          toolkit on the machine has none of them
#   filelock typing-extensions sympy mpmath networkx jinja2 markupsafe fsspec
#                          torch's pure-Python imports
# cudart, cuBLAS, cuFFT, cuSPARSE, cuDNN and NVRTC come from the machine's CUDA
# toolkit (CUDA_HOME/lib64 on LD_LIBRARY_PATH) instead of ~2 GB more wheels.
set -euo pipefail

PYTHON=${PYTHON:-python3}
version=${CCLFORGE_TORCH_VERSION:-2.15.0}
root=${CCLFORGE_TORCH_CACHE:-$HOME/.cache/cclforge/torch}
pytag=$("$PYTHON" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
site="$root/site-$version-$pytag"
stamp="$site/.cclforge-complete"

if [ -f "$stamp" ]; then
    echo "$site"
    exit 0
fi
. "$(dirname "$0")/cache-lock.sh"
cache_lock "$root"
if [ -f "$stamp" ]; then # made while this run waited
    echo "$site"
    exit 0
fi

packages=(
    "torch==$version"
    "nvidia-nccl-cu13==2.30.7"
    "nvidia-cufile"
    "nvidia-cusparselt-cu13==0.8.1"
    "nvidia-nvshmem-cu13==3.7.2"
    filelock typing-extensions sympy mpmath networkx jinja2 markupsafe fsspec
)

mkdir -p "$root/wheels-$pytag"
echo "torch-cache: downloading ${packages[*]} into $root/wheels-$pytag" >&2
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$root/wheels-$pytag" "${packages[@]}" >&2

# One pip call into a fresh directory: pip --target skips top-level folders that
# already exist (nvidia/ is shared by several wheels), so never install twice.
tmp="$site.tmp.$$"
rm -rf "$tmp"
echo "torch-cache: installing into $site" >&2
wheels=()
for p in "${packages[@]}"; do
    name=${p%%==*}
    norm=$(printf '%s' "$name" | tr '-' '_')
    if [ "$name" = torch ]; then
        pattern="torch-$version-$pytag-*.whl"
    else
        pattern="${norm}-*.whl"
    fi
    match=$(cd "$root/wheels-$pytag" && ls -1 $pattern 2>/dev/null | sort | tail -n 1)
    [ -n "$match" ] || { echo "torch-cache: no wheel for $p in $root/wheels-$pytag" >&2; exit 1; }
    wheels+=("$root/wheels-$pytag/$match")
done
"$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --no-index --no-compile \
    --target "$tmp" "${wheels[@]}" >&2
rm -rf "$site"
mv "$tmp" "$site"
touch "$stamp"
echo "$site"
