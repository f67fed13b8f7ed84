#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The CPU side-by-side table on a machine without LLVM development files (the GPU machine: 16 cores, its own
# Numba). libkiln comes prebuilt from a KILN_LLVM_STATIC build made elsewhere (LLVM linked in, ~30 MB);
# kiln-bench itself, and with it the hand-written C++/OpenMP reference, is compiled here with this machine's
# g++ and the flags bench/CMakeLists.txt uses (-O3 -march=native for the reference), so the reference is
# tuned for the CPU it runs on, as kiln's JIT is.
#   bash bench/peers/run_cpu_prebuilt.sh LIBDIR [run_cpu.py args]
# LIBDIR holds libkiln.so.0 (tools/static_dist.sh makes it). PYTHON (default python3) is the Python with
# Numba; OUT (default /tmp/kiln-peers) receives NAME.csv/NAME.png/NAME.md and the build (NAME: --name, cpu16).
set -euo pipefail
cd "$(dirname "$0")/../.."
libdir=$(cd "${1:?usage: run_cpu_prebuilt.sh LIBDIR [run_cpu.py args]}" && pwd)
shift
OUT=${OUT:-/tmp/kiln-peers}
build="$OUT/kiln-bench-prebuilt"
mkdir -p "$build/bench" "$build/obj"
[ -e "$libdir/libkiln.so" ] || ln -sf libkiln.so.0 "$libdir/libkiln.so"
# libkiln's own shared dependencies that tools/static_dist.sh put next to it (libsodium).
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

common=(-std=c++20 -fopenmp -Iinclude -Ibench -Wall -Wextra)
# nlohmann-json (kiln-bench's --json lines) where the machine has none: the copy tools/fetch_gpu_deps.sh unpacks.
[ -d .deps/nlohmann/usr/include ] && common+=(-isystem .deps/nlohmann/usr/include)
objs=()
for src in bench/kiln_bench.cpp bench/rows_*.cpp; do
  obj="$build/obj/$(basename "$src" .cpp).o"
  g++ "${common[@]}" -O3 -DNDEBUG -c "$src" -o "$obj" &
  objs+=("$obj")
done
for src in bench/reference*.cpp; do
  obj="$build/obj/$(basename "$src" .cpp).o"
  g++ "${common[@]}" -O3 -march=native -DNDEBUG -c "$src" -o "$obj" &
  objs+=("$obj")
done
wait
g++ -fopenmp "${objs[@]}" -L"$libdir" -lkiln -Wl,-rpath,"$libdir" -o "$build/bench/kiln-bench"

name=cpu16
for ((i = 1; i <= $#; ++i)); do
  if [ "${!i}" = "--name" ]; then j=$((i + 1)); name=${!j}; fi
done
"${PYTHON:-python3}" bench/peers/run_cpu.py --build "$build" --python "$(command -v "${PYTHON:-python3}")" \
  --out "$OUT" --name "$name" "$@" | tee "$OUT/$name.md"
