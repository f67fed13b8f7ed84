#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# kiln-bench and kiln-suite on a machine without LLVM development files (the GPU machine's 16 cores): libkiln comes
# prebuilt (a KILN_LLVM_STATIC build made elsewhere: tools/static_dist.sh), the benchmarks and their hand-written
# C++/OpenMP references are compiled here with this machine's g++ and bench/CMakeLists.txt's flags (-O3
# -march=native and the per-file options for the references), so the references are tuned for the CPU they run
# on, as kiln's JIT is. Used by bench/peers/run_cpu_prebuilt.sh, bench/suite/run_prebuilt.sh and
# bench/peers/run_jit_peers_prebuilt.sh.
#   bash bench/build_prebuilt.sh LIBDIR BUILD [kiln-bench] [kiln-suite]   -> BUILD/bench/<target>
# LIBDIR holds libkiln.so.0 and libsodium.so.23, and include/nlohmann where the machine has no nlohmann-json
# (tools/static_dist.sh packs all three). The callers put LIBDIR on LD_LIBRARY_PATH for the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
libdir=$(cd "${1:?usage: build_prebuilt.sh LIBDIR BUILD [kiln-bench] [kiln-suite]}" && pwd)
build=${2:?usage: build_prebuilt.sh LIBDIR BUILD [kiln-bench] [kiln-suite]}
shift 2
targets=("${@:-kiln-bench}")
mkdir -p "$build/bench" "$build/obj"

common=(-std=c++20 -fopenmp -Iinclude -Ibench -I. -DNDEBUG -O3)
# nlohmann-json (kiln-bench's --json lines) where the machine has none: the copy packed with libkiln, or the one
# tools/fetch_gpu_deps.sh unpacks.
if ! printf '#include <nlohmann/json.hpp>\n' | g++ -E -x c++ - >/dev/null 2>&1; then
  for d in "$libdir/include" .deps/nlohmann/usr/include; do
    [ -f "$d/nlohmann/json.hpp" ] && { common+=(-isystem "$d"); break; }
  done
fi
# The references' per-file options, as bench/CMakeLists.txt sets them (bit-for-bit rows: no fused multiply-adds).
ref_flags() {
  case $(basename "$1") in
    reference_element_types.cpp) echo -ffp-contract=off ;;
    reference_random.cpp) echo -ffp-contract=off -fno-math-errno ;;
  esac
}
pids=() bench_objs=() suite_objs=()
compile() {  # compile LIST SRC [flags...] in the background, the object appended to the array named LIST
  local list=$1 src=$2 obj="$build/obj/$(basename "${2%.cpp}").o"
  shift 2
  g++ "${common[@]}" "$@" -c "$src" -o "$obj" &
  pids+=($!)
  eval "$list+=(\"\$obj\")"
}
for t in "${targets[@]}"; do
  case $t in
    kiln-bench)
      for src in bench/kiln_bench.cpp bench/rows_*.cpp; do compile bench_objs "$src" -Wall -Wextra; done
      for src in bench/reference*.cpp; do compile bench_objs "$src" -march=native $(ref_flags "$src"); done ;;
    kiln-suite)
      # bench/CMakeLists.txt's list: support.cpp (suite::dims, compare, random_array) too.
      for src in bench/suite/suite_main.cpp bench/suite/support.cpp bench/suite/kernels_*.cpp; do
        compile suite_objs "$src"
      done
      for src in bench/suite/reference_*.cpp; do compile suite_objs "$src" -march=native; done ;;
    *) echo "build_prebuilt: unknown target $t (kiln-bench or kiln-suite)" >&2; exit 2 ;;
  esac
done
for p in "${pids[@]}"; do wait "$p" || { echo "build_prebuilt: a compilation failed (above)" >&2; exit 1; }; done
link() { g++ -fopenmp "${@:2}" -L"$libdir" -l:libkiln.so.0 -Wl,-rpath,"$libdir" -o "$build/bench/$1"; }
[ ${#bench_objs[@]} -gt 0 ] && link kiln-bench "${bench_objs[@]}"
[ ${#suite_objs[@]} -gt 0 ] && link kiln-suite "${suite_objs[@]}"
exit 0
