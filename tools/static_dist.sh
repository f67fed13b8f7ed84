#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# A libkiln that runs on a machine without LLVM: the needed LLVM components linked in statically
# (-DKILN_LLVM_STATIC=ON), stripped, copied to build-static/dist/libkiln.so.0 next to libsodium and libfmt (~43 MB:
# small enough to carry to the GPU machine, where bench/build_prebuilt.sh compiles kiln-bench and kiln-suite
# against it), and packed with nlohmann-json's headers into build-static/kiln-dist.tar.xz.
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
# So does libfmt where it is a shared library (Debian's libfmt.so.9): the GPU machine's image has another
# version or none, and only the device driver's LD_LIBRARY_PATH (its .deps) had provided it so far.
for dep in $(ldd "$build/dist/libkiln.so.0" | awk '/libsodium|libfmt/ {print $3}'); do cp -L "$dep" "$build/dist/"; done
# nlohmann-json's headers (kiln-bench's --json lines; bench/build_prebuilt.sh uses them where the machine has none),
# and the whole as one archive to carry (build-static/kiln-dist.tar.xz, ~11 MB: bench/peers/run_jit_peers_prebuilt.sh).
json=$(printf '#include <nlohmann/json.hpp>\n' | g++ -E -x c++ - 2>/dev/null | grep -m1 -o '/[^"]*/nlohmann/json.hpp' || true)
if [ -n "$json" ]; then
  rm -rf "$build/dist/include" && mkdir -p "$build/dist/include" && cp -r "$(dirname "$json")" "$build/dist/include/"
fi
# The commit the library was built from (and whether the tree had changes), so that a run elsewhere can say
# which code it measured: the carried source tree, a git archive, has no history to ask.
{ git rev-parse HEAD 2>/dev/null || echo unknown; git status --porcelain --untracked-files=no 2>/dev/null | grep -q . \
    && echo "with uncommitted changes"; } >"$build/dist/SOURCE" || true
tar -cf - -C "$build" dist | xz -T0 -6 >"$build/kiln-dist.tar.xz"
ls -l "$build/dist/libkiln.so.0" "$build/kiln-dist.tar.xz"
