#!/usr/bin/env bash
# Seeds for fuzz_gpucode_window: the fatbin and bundle seeds together.
set -euo pipefail
here=$(dirname "$0")
bash "$here/fuzz_fatbin.sh" "$1"
bash "$here/fuzz_bundle.sh" "$1"
