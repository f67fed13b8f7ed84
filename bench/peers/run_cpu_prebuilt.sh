#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The CPU side-by-side table on a machine without LLVM development files (the GPU machine: 16 cores, its own
# Numba). libkiln comes prebuilt from a KILN_LLVM_STATIC build made elsewhere (LLVM linked in, ~30 MB);
# kiln-bench itself, and with it the hand-written C++/OpenMP reference, is compiled here by bench/build_prebuilt.sh
# with this machine's g++ and bench/CMakeLists.txt's flags, so the reference is tuned for the CPU it runs on.
#   bash bench/peers/run_cpu_prebuilt.sh LIBDIR [run_cpu.py args]
# LIBDIR holds libkiln.so.0 (tools/static_dist.sh makes it). PYTHON (default python3) is the Python with
# Numba; OUT (default /tmp/kiln-peers) receives NAME.csv/NAME.png/NAME.md and the build (NAME: --name, cpu16).
set -euo pipefail
cd "$(dirname "$0")/../.."
libdir=$(cd "${1:?usage: run_cpu_prebuilt.sh LIBDIR [run_cpu.py args]}" && pwd)
shift
OUT=${OUT:-/tmp/kiln-peers}
build="$OUT/kiln-bench-prebuilt"
# libkiln's own shared dependencies that tools/static_dist.sh put next to it (libsodium).
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bash bench/build_prebuilt.sh "$libdir" "$build" kiln-bench

name=cpu16
for ((i = 1; i <= $#; ++i)); do
  if [ "${!i}" = "--name" ]; then j=$((i + 1)); name=${!j}; fi
done
"${PYTHON:-python3}" bench/peers/run_cpu.py --build "$build" --python "$(command -v "${PYTHON:-python3}")" \
  --out "$OUT" --name "$name" "$@" | tee "$OUT/$name.md"
