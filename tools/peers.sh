#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Side-by-side tables of docs/performance.md (issue 8), one command each:
#   bash tools/peers.sh cpu [run_cpu.py args]   kiln vs hand-written C++/OpenMP vs Numba on this machine:
#                                                docs/perf/cpu.csv, cpu.png and cpu.md; then kiln vs the JIT
#                                                peers (Numba, Halide, Dr.Jit, Taichi, Devito) on kiln-bench's
#                                                and the suite's workloads: docs/perf/jit_peers.{md,csv,png}
#                                                (KILN_PEERS_RUNS runs, default 3)
#   bash tools/peers.sh gpu                     on the GPU machine: kiln's CUDA target vs hand CUDA vs CuPy:
#                                                builds with tools/gpu_check.sh (bench step), then
#                                                bench/peers/run_gpu.sh (CuPy, and the JIT peers that
#                                                import: carry .whl-peers from tools/peers_wheels.sh);
#                                                the tables land in $OUT (default /tmp/kiln-peers)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-cpu}
shift || true
case "$what" in
  cpu)
    bash tools/setup.sh
    bash tools/peers_setup.sh
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=ON >/dev/null  # off after tools/demo.sh
    cmake --build build -j "$(nproc)" --target kiln-bench kiln-suite
    mkdir -p docs/perf
    .venv-peers/bin/python bench/peers/run_cpu.py --build build "$@" | tee docs/perf/cpu.md
    .venv-peers/bin/python bench/peers/run_jit_peers.py --build build --threads "$(nproc)" \
      --runs "${KILN_PEERS_RUNS:-3}" --out docs/perf --name jit_peers
    ;;
  gpu)
    bash tools/gpu_check.sh bench
    bash bench/peers/run_gpu.sh "${KILN_GPU_BUILD:-/tmp/kiln-gpu-build}"
    ;;
  *)
    echo "usage: tools/peers.sh cpu|gpu" >&2
    exit 2
    ;;
esac
