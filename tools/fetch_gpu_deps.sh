#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Unpacks libsodium (headers and shared library; the disk cache seals entries with it) into .deps/sodium, and
# nlohmann-json into .deps/nlohmann and DLPack's header into .deps/dlpack, for a machine without apt such as the GPU machine: run it here, then carry .deps there. cmake
# (cmake/KilnDependencies.cmake) uses .deps/sodium when the system has no libsodium, and tools/gpu_check.sh puts
# its library on LD_LIBRARY_PATH.
#   bash tools/fetch_gpu_deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.deps/sodium
tmp=$(mktemp -d)
chmod 755 "$tmp"  # apt-get download writes as the _apt user when it can
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download libsodium-dev libsodium23 nlohmann-json3-dev libdlpack-dev)
rm -rf "$dest" .deps/nlohmann .deps/dlpack
mkdir -p "$dest" .deps/nlohmann .deps/dlpack
for deb in "$tmp"/libsodium*.deb; do dpkg -x "$deb" "$dest"; done
# nlohmann-json (header-only, kiln-bench's --json lines): its headers and CMake package, for gpu_check.sh and
# bench/peers/run_cpu_prebuilt.sh.
dpkg -x "$tmp"/nlohmann-json3-dev*.deb .deps/nlohmann
# DLPack's header (kiln/dlpack.hpp, tests/dlpack_test).
dpkg -x "$tmp"/libdlpack-dev*.deb .deps/dlpack
ls .deps/dlpack/usr/include/dlpack/dlpack.h "$dest"/usr/include/sodium.h "$dest"/usr/lib/*/libsodium.so* .deps/nlohmann/usr/include/nlohmann/json.hpp
