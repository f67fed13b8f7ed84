#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# A libkiln that runs on a machine without LLVM: the needed LLVM components linked in statically
# (-DKILN_LLVM_STATIC=ON), stripped, copied to build-static/dist/libkiln.so.0 next to libsodium.so.23 (~30 MB:
# small enough to carry to the GPU machine, where bench/peers/run_cpu_prebuilt.sh compiles kiln-bench against it).
#   bash tools/static_dist.sh [BUILD_DIR]   (default build-static)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-static}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_LLVM_STATIC=ON -DKILN_BUILD_TESTS=OFF \
  -DKILN_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target kiln
mkdir -p "$build/dist"
lib=$(readlink -f "$build/libkiln.so")
strip --strip-unneeded -o "$build/dist/libkiln.so.0" "$lib"
ldd "$build/dist/libkiln.so.0" | grep -i llvm && { echo "static_dist: libLLVM is still linked dynamically" >&2; exit 1; }
# libsodium (the disk cache's seal) stays a shared library (Debian's libsodium.a is not position-independent):
# it travels in dist/ too, found there through LD_LIBRARY_PATH (bench/peers/run_cpu_prebuilt.sh sets it).
sodium=$(ldd "$build/dist/libkiln.so.0" | awk '/libsodium/ {print $3}')
[ -n "$sodium" ] && cp -L "$sodium" "$build/dist/"
ls -l "$build/dist/libkiln.so.0"
