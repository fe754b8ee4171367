#!/usr/bin/env bash
# Prints a directory holding NVIDIA's real nvml.h, for the tests that build a
# libnvidia-ml.so.1 from it (tests/fixtures/nvml_fixture.c). The CUDA toolkit's
# own header wins when it is installed (cuda-nvml-dev: <cuda>/targets/*/include
# or /usr/include); else NVIDIA's nvidia-nvml-dev wheel from PyPI (the header
# alone, ~150 KB) is fetched once into a cache. Exits 1 when neither is
# possible (no network): the caller skips.
#
#   CCLFORGE_NVML_CACHE    cache root (default ~/.cache/cclforge/nvml)
#   CCLFORGE_NVML_VERSION  nvidia-nvml-dev version (default 13.0.87, CUDA 13.0's)
#   PYTHON                 the interpreter whose pip fetches it (default python3)
set -euo pipefail

for dir in /usr/local/cuda/targets/*/include /usr/local/cuda-*/targets/*/include /usr/include; do
    if [ -f "$dir/nvml.h" ] && grep -q 'NVML_API_VERSION' "$dir/nvml.h"; then
        echo "$dir"
        exit 0
    fi
done

PYTHON=${PYTHON:-python3}
version=${CCLFORGE_NVML_VERSION:-13.0.87}
root=${CCLFORGE_NVML_CACHE:-$HOME/.cache/cclforge/nvml}
inc="$root/nvidia-nvml-dev-$version/include"
if [ -f "$inc/nvml.h" ]; then
    echo "$inc"
    exit 0
fi
. "$(dirname "$0")/cache-lock.sh"
cache_lock "$root"
if [ -f "$inc/nvml.h" ]; then # made while this run waited
    echo "$inc"
    exit 0
fi
mkdir -p "$root/wheels"
echo "nvml-cache: downloading nvidia-nvml-dev==$version into $root/wheels" >&2
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --retries 1 --timeout 20 -d "$root/wheels" "nvidia-nvml-dev==$version" >&2
wheel=$(ls -1 "$root/wheels"/nvidia_nvml_dev-"$version"-*.whl | head -n 1)
tmp="$inc.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
"$PYTHON" - "$wheel" "$tmp" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.endswith("/include/nvml.h")]
    if len(names) != 1:
        sys.exit("nvml-cache: no include/nvml.h in " + sys.argv[1])
    open(sys.argv[2] + "/nvml.h", "wb").write(z.read(names[0]))
PY
rm -rf "$inc"
mv "$tmp" "$inc"
echo "$inc"
