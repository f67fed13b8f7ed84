#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# kiln-suite on a machine without LLVM development files (the GPU machine's 16 cores): libkiln comes prebuilt
# from a KILN_LLVM_STATIC build made elsewhere (tools/static_dist.sh); the suite and its hand-written C++/OpenMP
# references are compiled here with this machine's g++ and bench/CMakeLists.txt's flags (-O3 -march=native for
# the references), so the references are tuned for the CPU they run on, as kiln's JIT is. Then run_suite.sh.
#   bash bench/suite/run_prebuilt.sh LIBDIR [run_suite.sh options: --runs R --reps N --threads T --out DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
libdir=$(cd "${1:?usage: run_prebuilt.sh LIBDIR [run_suite.sh options]}" && pwd)
shift
build=${SUITE_BUILD:-/tmp/kiln-suite-prebuilt}
mkdir -p "$build/bench" "$build/obj"
[ -e "$libdir/libkiln.so" ] || ln -sf libkiln.so.0 "$libdir/libkiln.so"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
common=(-std=c++20 -fopenmp -Iinclude -Ibench -I. -DNDEBUG)
objs=()
for src in bench/suite/suite_main.cpp bench/suite/kernels_*.cpp; do
  obj="$build/obj/$(basename "$src" .cpp).o"
  g++ "${common[@]}" -O3 -c "$src" -o "$obj" &
  objs+=("$obj")
done
for src in bench/suite/reference_*.cpp; do
  obj="$build/obj/$(basename "$src" .cpp).o"
  g++ "${common[@]}" -O3 -march=native -c "$src" -o "$obj" &
  objs+=("$obj")
done
wait
g++ -fopenmp "${objs[@]}" -L"$libdir" -lkiln -Wl,-rpath,"$libdir" -o "$build/bench/kiln-suite"
bash bench/suite/run_suite.sh "$build" "$@"
