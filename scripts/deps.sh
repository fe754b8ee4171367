#!/usr/bin/env bash
# Installs what cclforge needs to build and test on Debian/Ubuntu. Idempotent:
# a no-op when everything is present. The CUDA toolkit and NCCL are expected on
# the machine already (see README); they are optional for the build itself.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config clang clang-tools gcc-multilib
  libcjson-dev libzip-dev libssl-dev libcmocka-dev zlib1g-dev libzstd-dev
  libisal-dev nasm patch
  openmpi-bin libopenmpi-dev
  libtree python3 python3-venv python3-dev zip unzip procps git make tar time strace
  iproute2 util-linux
  chromium fonts-dejavu-core
  debootstrap qemu-user-static debian-archive-keyring bzip2 xz-utils perl
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
