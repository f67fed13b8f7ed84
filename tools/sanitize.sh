#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds kiln with AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included) and runs every test
# that does not need the LLVM backend: IR, interpreter, passes, tracing, arrays, fusion, errors, cache
# library. (Kernels JIT-compiled by LLVM are not instrumented, so the CPU backend is left out to keep the
# build small; its own C++ runs under the thread-safety and fuzz campaigns instead: see docs/hardening.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=ON -DKILN_ENABLE_LLVM=OFF \
      -DKILN_ENABLE_CUDA=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_EXAMPLES=OFF
cmake --build build-sanitize -j "$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export KILN_CACHE_DIR="$PWD/build-sanitize/test-kernel-cache"
ctest --test-dir build-sanitize --output-on-failure -j "$jobs"
