#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The GPU side-by-side table (issue 8), on the GPU machine: kiln's CUDA target and hand-written CUDA
# (kiln-bench-gpu, same process) and CuPy (cupy_bench.py: unfused array code and its fused forms) on the
# same device, sizes and run. Writes $OUT/gpu_kiln.txt, $OUT/gpu_cupy.jsonl and prints a markdown table;
# then the JIT peers (issue 20, below): $OUT/gpu_<peer>.jsonl, gpu_jit_table.md, gpu_jit.png.
#   bash bench/peers/run_gpu.sh [BUILD_DIR]   (BUILD_DIR holds bench/gpu/kiln-bench-gpu; tools/gpu_check.sh makes it)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-${KILN_GPU_BUILD:-/tmp/kiln-gpu-build}}
OUT=${OUT:-/tmp/kiln-peers}
mkdir -p "$OUT"
py=python3
[ -x .venv-peers/bin/python ] && py=.venv-peers/bin/python
# KILN_JIT_ONLY=1: only the JIT peers below (a device call that carries one peer's wheels; its files are
# merged with the first call's gpu_kiln.txt by gpu_jit_table.py).
if [ -z "${KILN_JIT_ONLY:-}" ]; then
  "$build/bench/gpu/kiln-bench-gpu" --reps 20 >"$OUT/gpu_kiln.txt" 2>&1 || echo "kiln-bench-gpu failed" >&2
  "$py" bench/peers/cupy_bench.py --reps 20 >"$OUT/gpu_cupy.jsonl" 2>"$OUT/gpu_cupy.err" || echo "cupy_bench failed" >&2
  "$py" bench/peers/gpu_table.py "$OUT/gpu_kiln.txt" "$OUT/gpu_cupy.jsonl" "$OUT/gpu.png" | tee "$OUT/gpu_table.md"
fi

# The JIT peers (issue 20) on kiln-bench-gpu's rows, f32 at its sizes (2^27 elements, jacobi 16384^2): Dr.Jit
# (drjit.cuda), Taichi (ti.cuda) and Halide (CUDA target, hand gpu_tile schedules), each where it imports.
# The machine has no network: tools/peers_wheels.sh makes .whl-peers/ here, and a device call carries the part
# of it one step needs (docs/performance.md, "JIT peers": 64 MiB a call), installed here first.
# KILN_JIT_PEERS (default drjit,taichi,halide) picks the peers; gpu_jit_table.py merges the files of calls.
source bench/peers/install_carried.sh
jsonl=() fresh=()
peers=${KILN_JIT_PEERS:-drjit,taichi,halide}
for p in ${peers//,/ }; do
  "$py" -c "import $p" 2>"$OUT/gpu_$p.err" || { echo "run_gpu: $p does not import here: no $p column" >&2; continue; }
  args=(--peer "$p" --target cuda --dtype f32 --sets bench --n $((1 << 27)) --side 16384 --reps 20
        --cache "$OUT/$p-cache" --filter triad,dot,softmax,smooth1d,jacobi2d,black_scholes)
  "$py" bench/peers/peer_harness.py "${args[@]}" >"$OUT/gpu_$p.jsonl" 2>>"$OUT/gpu_$p.err"
  "$py" bench/peers/peer_harness.py "${args[@]}" --first-only >"$OUT/gpu_${p}_fresh.jsonl" 2>>"$OUT/gpu_$p.err"
  jsonl+=("$OUT/gpu_$p.jsonl") fresh+=("$OUT/gpu_${p}_fresh.jsonl")
done
if [ ${#jsonl[@]} -gt 0 ] && [ -s "$OUT/gpu_kiln.txt" ]; then
  "$py" bench/peers/gpu_jit_table.py "$OUT/gpu_kiln.txt" "${jsonl[@]}" --fresh "${fresh[@]}" --plot "$OUT/gpu_jit.png" |
    tee "$OUT/gpu_jit_table.md"
fi
