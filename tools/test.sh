#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs what is missing, builds kiln with its tests, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
jobs=$(nproc)
# The options are given explicitly: tools/demo.sh configures the same build/ with only the examples on.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=ON -DKILN_BUILD_EXAMPLES=ON \
      -DKILN_BUILD_BENCH=ON -DKILN_BUILD_TOOLS=ON
cmake --build build -j "$jobs"
# The tests' kernels go to a cache of their own, not the user's.
export KILN_CACHE_DIR="$PWD/build/test-kernel-cache"
ctest --test-dir build --output-on-failure -j "$jobs"
