#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds kiln's libFuzzer targets (tests/fuzz) with clang, AddressSanitizer and UBSan, and runs each for a fixed
# time: tools/libfuzz.sh [seconds per target, default 600] [target...]. The corpora grow in build-fuzz/corpus/<target>
# (kept between runs, so a later run starts where the last one stopped); a crash leaves its input in build-fuzz/
# as crash-<sha1>, which `build-fuzz/tests/fuzz/<target> <file>` replays.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_cache_entry fuzz_cache_settings)
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_C_COMPILER=clang-19 \
      -DKILN_FUZZERS=ON -DKILN_ENABLE_LLVM=OFF -DKILN_ENABLE_CUDA=OFF -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF \
      -DKILN_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]}"
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "== $t for $seconds s"
  # -rss_limit_mb / -malloc_limit_mb: an input may not make the reader allocate more than a few hundred MB;
  # -timeout: nor take a second.
  (cd build-fuzz && "tests/fuzz/$t" -max_total_time="$seconds" -rss_limit_mb=512 -malloc_limit_mb=256 -timeout=1 \
     -print_final_stats=1 "corpus/$t")
done
