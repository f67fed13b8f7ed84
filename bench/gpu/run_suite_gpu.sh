#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The public kernel suite on a GPU machine: CuPy's times first (bench/gpu/cupy_suite.py, the kernels as NumPy
# users write them), then kiln-bench-gpu's suite rows (kiln's CUDA target against hand-written CUDA, results
# checked), which prints the table of docs/performance.md with CuPy's column beside kiln's.
#   bench/gpu/run_suite_gpu.sh BUILD_DIR [--reps R] [--small] [--filter a,b] [--out DIR]
# BUILD_DIR holds bench/gpu/kiln-bench-gpu (bash tools/gpu_check.sh build: /tmp/kiln-gpu-build). Writes
# cupy_suite.txt and suite.txt to DIR ($OUT, else a fresh temporary directory) and prints the table.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: run_suite_gpu.sh BUILD_DIR [--reps R] [--small] [--filter a,b] [--out DIR]}
shift
reps=20 small=() filter=suite out=${OUT:-$(mktemp -d)}
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --small) small=(--small); shift ;;
    --filter) filter=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run_suite_gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
export PATH="$PATH:/usr/local/cuda/bin:/opt/torch/.venv/bin"
# libnvrtc loads its builtins from the toolkit's library directory.
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

cupy_filter=()
[ "$filter" != suite ] && cupy_filter=(--filter "$filter")
if python3 -c 'import cupy' 2>/dev/null; then
  timeout 90 python3 bench/gpu/cupy_suite.py --reps "$reps" "${small[@]}" "${cupy_filter[@]}" >"$out/cupy_suite.txt" 2>&1
  echo "cupy_suite.py: exit $?" >&2
else
  echo "# no CuPy on this machine" >"$out/cupy_suite.txt"
fi
timeout 180 "$build/bench/gpu/kiln-bench-gpu" --filter "$filter" --reps "$reps" "${small[@]}" --cupy "$out/cupy_suite.txt" \
  >"$out/suite.txt" 2>&1
status=$?
echo "kiln-bench-gpu --filter $filter: exit $status" >&2
sed -n '/^suite (/,$p' "$out/suite.txt"
grep -E "failed|FAILED" "$out/cupy_suite.txt" || true
exit $status
