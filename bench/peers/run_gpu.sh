#!/usr/bin/env bash
# The GPU side-by-side table (issue 8), on the GPU machine: kiln's CUDA target and hand-written CUDA
# (kiln-bench-gpu, same process) and CuPy (cupy_bench.py: unfused array code and its fused forms) on the
# same device, sizes and run. Writes $OUT/gpu_kiln.txt, $OUT/gpu_cupy.jsonl and prints a markdown table.
#   bash bench/peers/run_gpu.sh [BUILD_DIR]   (BUILD_DIR holds bench/gpu/kiln-bench-gpu; tools/gpu_check.sh makes it)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-${KILN_GPU_BUILD:-/tmp/kiln-gpu-build}}
OUT=${OUT:-/tmp/kiln-peers}
mkdir -p "$OUT"
py=python3
[ -x .venv-peers/bin/python ] && py=.venv-peers/bin/python
"$build/bench/gpu/kiln-bench-gpu" --reps 20 >"$OUT/gpu_kiln.txt" 2>&1 || echo "kiln-bench-gpu failed" >&2
"$py" bench/peers/cupy_bench.py --reps 20 >"$OUT/gpu_cupy.jsonl" 2>"$OUT/gpu_cupy.err" || echo "cupy_bench failed" >&2
"$py" bench/peers/gpu_table.py "$OUT/gpu_kiln.txt" "$OUT/gpu_cupy.jsonl" "$OUT/gpu.png" | tee "$OUT/gpu_table.md"
