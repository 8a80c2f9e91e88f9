#!/usr/bin/env bash
# Installs the Debian 12 packages hetrt needs to build, test and run its demo.
# Idempotent: packages already present are left alone; apt-get update runs
# only when something is missing.  Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev
  libopenblas-dev libdnnl-dev libhwloc-dev libyaml-dev check
  libonnx-testdata graphviz doxygen chromium
  python3 python3-dev python3-onnx python3-numpy python3-torch python3-torchvision
  python3-setuptools python3-pip python3-wheel python3-pytest python3-dask python3-distributed
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
