#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the Debian packages kiln needs, if any are missing (runs `apt-get update` once, only then).
# Safe to run repeatedly. Needs root (or sudo) only when something must be installed.
set -euo pipefail

packages=(cmake ninja-build g++ make pkg-config llvm-19-dev libfmt-dev libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev zlib1g-dev libzstd-dev libxml2-dev libedit-dev libffi-dev libsodium-dev
          libdlpack-dev libopenmpi-dev openmpi-bin doxygen)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "kiln setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "kiln setup: all Debian packages present"
fi

if [ -f /usr/local/cuda/include/cuda.h ] && [ -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "kiln setup: CUDA toolkit found at /usr/local/cuda (GPU target will be built)"
else
  echo "kiln setup: no CUDA toolkit at /usr/local/cuda: the GPU target will be unavailable (CPU target unaffected)"
fi
