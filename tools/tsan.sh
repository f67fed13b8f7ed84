#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds kiln with ThreadSanitizer (LLVM on: the concurrency that matters is in compiling, loading and caching
# kernels) and runs the thread-safety test and the cache tests.
#
# Configuration, deliberately: KILN_NUM_THREADS=1. libgomp is not built with TSan, so its barriers and task
# hand-offs are invisible to it and every parfor run by an OpenMP team would be reported as a race between the
# team's threads. With one thread a parfor runs on the calling thread (runtime/parallel.cpp never opens a
# parallel region), so what TSan sees is exactly the host threads racing through kiln: the signature table,
# the per-kernel compile lock, the JIT, the in-memory code table, the disk cache and its background writer.
# (Determinism and correctness with real OpenMP teams are covered by the differential and reduction tests.)
# LLVM itself and JIT-compiled code are not instrumented either; their own locking is what TSan intercepts.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
flags="-fsanitize=thread -fno-omit-frame-pointer -g"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_ENABLE_CUDA=OFF -DKILN_BUILD_BENCH=OFF \
      -DKILN_BUILD_EXAMPLES=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
cmake --build build-tsan -j "$jobs" --target thread_safety_test cache_unit_test cache_test cache_process_test cache_helper kiln-cache
export KILN_NUM_THREADS=1
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4"
export KILN_CACHE_DIR="$PWD/build-tsan/test-kernel-cache"
# TSan cannot follow a multi-threaded process into fork(): the child may not start threads ("starting new
# threads after multi-threaded fork is not supported"), and the one test that forks has its child start the
# background cache writer. It runs in the normal and the ASan builds.
forks="CacheBackground.AForkedChildWritesItsOwnEntriesAtExitAndLeavesTheParentsAlone"
build-tsan/tests/thread_safety_test --gtest_brief=1 --gtest_repeat=3
build-tsan/tests/cache_unit_test --gtest_brief=1
build-tsan/tests/cache_test --gtest_brief=1 --gtest_filter="-$forks"
build-tsan/tests/cache_process_test --gtest_brief=1
echo "tsan.sh: all clean"
