#!/usr/bin/env bash
# One run on a GPU machine: configure and build kiln (no LLVM there: the CPU target is off), run the CUDA
# tests, every example with --target cuda, compute-sanitizer memcheck on the examples, and the GPU
# benchmark. A compact summary is printed last; $OUT (or /tmp/kiln-gpu) receives it and logs.tgz with every log.
#
# The machine may lack fmt and GoogleTest: a prefix with fmt's CMake package and GoogleTest's sources can
# be carried in .deps/ (fmt/ and googletest/); they are used only when the system has none.
#   bash tools/gpu_check.sh [all|tests|examples|bench]...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kiln-gpu}
LOGS=/tmp/kiln-gpu-logs
mkdir -p "$OUT" "$LOGS"
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-gpu-build}
JOBS=$(nproc)
steps=("${@:-all}")
want() { [[ " ${steps[*]} " == *" all "* || " ${steps[*]} " == *" $1 "* ]]; }
summary="$LOGS/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
# Whatever happens, the logs come back.
trap 'tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null; cp "$summary" "$OUT/summary.txt" 2>/dev/null' EXIT
export PATH="$PATH:/usr/local/cuda/bin:/opt/torch/.venv/bin"
export NCCL_NVLS_ENABLE=0

note "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$summary"
note "tools: $(command -v cmake) $(cmake --version | head -1 | cut -d' ' -f3), ninja $(ninja --version 2>/dev/null), $(g++ --version | head -1)"

# ---- dependencies ----------------------------------------------------------------------------------------
prefix=()
if ! printf '#include <fmt/core.h>\n' | g++ -E -x c++ - >/dev/null 2>&1 && [ -d .deps/fmt ]; then
  prefix+=("$PWD/.deps/fmt")
  note "fmt: the carried CMake package (.deps/fmt)"
fi
if ! printf '#include <gtest/gtest.h>\n' | g++ -E -x c++ - >/dev/null 2>&1 && [ -d .deps/googletest ]; then
  if [ ! -f /tmp/gtest-prefix/include/gtest/gtest.h ]; then
    (cmake -S .deps/googletest -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/gtest-prefix \
       -DBUILD_GMOCK=OFF >"$LOGS/deps.log" 2>&1 && ninja -C /tmp/gtest-build -j "$JOBS" install >>"$LOGS/deps.log" 2>&1) ||
      note "GoogleTest build FAILED (see deps.log)"
  fi
  prefix+=(/tmp/gtest-prefix)
  note "googletest: built from the carried sources"
fi
prefix_path=$(IFS=';'; echo "${prefix[*]:-}")

# The toolkit's headers (cuda.h, nvrtc.h) and NVRTC: where this image has them.
cuda_root=""
for d in "${CUDA_HOME:-}" /usr/local/cuda /usr/local/cuda-13.0 /usr/local/cuda-12.8; do
  if [ -n "$d" ] && [ -f "$d/include/cuda.h" ]; then cuda_root=$d; break; fi
done
note "cuda: root '${cuda_root}', nvcc $(command -v nvcc), headers: $(ls ${cuda_root:-/nonexistent}/include/{cuda,nvrtc}.h 2>&1 | tr '\n' ' ')"
# libnvrtc loads its builtins library from the library path; kiln finds libnvrtc itself (or via KILN_NVRTC).
[ -n "$cuda_root" ] && export LD_LIBRARY_PATH="$cuda_root/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
note "nvrtc: $(ldconfig -p | grep -o 'libnvrtc.so[.0-9]*' | sort -u | tr '\n' ' ') $(ls ${cuda_root:-/nonexistent}/lib64/libnvrtc.so* 2>/dev/null | tr '\n' ' ')"

# ---- build -----------------------------------------------------------------------------------------------
t0=$(date +%s)
if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_ENABLE_LLVM=OFF -DKILN_ENABLE_CUDA=ON \
     -DCMAKE_PREFIX_PATH="$prefix_path" ${cuda_root:+-DCUDAToolkit_ROOT=$cuda_root} >"$LOGS/configure.log" 2>&1; then
  note "configure FAILED"; tail -30 "$LOGS/configure.log"; exit 1
fi
targets=(kiln cuda_gpu_test cuda_codegen_test pi saxpy dot kiln-bench-gpu)
if ! ninja -C "$BUILD" -j "$JOBS" "${targets[@]}" >"$LOGS/build.log" 2>&1; then
  note "build FAILED"; grep -E "error|FAILED" "$LOGS/build.log" | head -40; exit 1
fi
note "build: $(( $(date +%s) - t0 )) s"

# ---- tests -----------------------------------------------------------------------------------------------
if want tests; then
  note "== tests"
  timeout 420 "$BUILD/tests/cuda_gpu_test" --gtest_brief=1 >"$LOGS/gpu_test.log" 2>&1
  note "cuda_gpu_test: exit $? — $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/gpu_test.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]|Failure|\[ device|\[ compile" "$LOGS/gpu_test.log" | head -40 | tee -a "$summary"
  # The differential suite again with unrolling and __restrict__ off (KILN_CUDA_UNROLL=1, the fallback).
  KILN_CUDA_UNROLL=1 timeout 300 "$BUILD/tests/cuda_gpu_test" --gtest_brief=1 --gtest_filter='Cuda/Differential.*' >"$LOGS/gpu_test_unroll1.log" 2>&1
  note "cuda_gpu_test (differential, KILN_CUDA_UNROLL=1): exit $? — $(grep -E '^\[  (PASSED|FAILED) ' "$LOGS/gpu_test_unroll1.log" | tr '\n' ' ')"
  timeout 300 "$BUILD/tests/cuda_codegen_test" --gtest_brief=1 >"$LOGS/codegen_test.log" 2>&1
  note "cuda_codegen_test: exit $? — $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/codegen_test.log" | tr '\n' ' ')"
fi

# ---- examples --------------------------------------------------------------------------------------------
if want examples; then
  note "== examples --target cuda"
  for ex in pi saxpy dot; do
    timeout 120 "$BUILD/examples/$ex" --target cuda >>"$LOGS/examples.log" 2>&1
    note "$ex: exit $? — $(grep -E 'OK|MISMATCH' "$LOGS/examples.log" | tail -1)"
  done
  note "== compute-sanitizer memcheck (examples, n = 100003)"
  for ex in pi saxpy dot; do
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/examples/$ex" 100003 --target cuda >"$LOGS/memcheck_$ex.log" 2>&1
    note "$ex: exit $? — $(grep -E 'ERROR SUMMARY' "$LOGS/memcheck_$ex.log" | tail -1)"
  done
fi

# ---- benchmark -------------------------------------------------------------------------------------------
if want bench; then
  note "== kiln-bench-gpu"
  timeout 400 "$BUILD/bench/gpu/kiln-bench-gpu" >"$LOGS/bench.log" 2>&1
  note "exit $?"
  cat "$LOGS/bench.log" >>"$summary"
  note "== 1-d elementwise grids capped at 8 waves (KILN_CUDA_WAVES=8; unrolled kernels are not capped by default)"
  KILN_CUDA_WAVES=8 timeout 120 "$BUILD/bench/gpu/kiln-bench-gpu" --filter fused_abc,smooth1d,black_scholes --reps 10 >"$LOGS/bench_waves8.log" 2>&1
  grep -E "^(fused|smooth|black)" "$LOGS/bench_waves8.log" | tee -a "$summary"
  note "== SASS of fused a*b+c: loads (LDG) and stores (STG) of the unrolled loop, in issue order"
  rm -rf /tmp/kiln-keep && mkdir -p /tmp/kiln-keep
  KILN_CUDA_KEEP=/tmp/kiln-keep timeout 120 "$BUILD/bench/gpu/kiln-bench-gpu" --filter fused_abc --profile >/dev/null 2>&1
  cuobjdump -sass /tmp/kiln-keep/fused_abc.cubin >"$LOGS/fused_abc.sass" 2>&1
  awk '/Function : fused_abc_k0$/,/Function : fused_abc_k0_alias/' "$LOGS/fused_abc.sass" | grep -oE "(LDG|STG)[.A-Z0-9]*" | head -20 | tr '\n' ' ' | tee -a "$summary"
  echo | tee -a "$summary"
  note "== ncu (kiln and hand kernels of jacobi2d and smooth1d; clocks as found)"
  timeout 300 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    -k 'regex:^(jacobi2d_k0|ref_jacobi2d|smooth1d_k0|ref_smooth1d)$' --launch-count 8 \
    "$BUILD/bench/gpu/kiln-bench-gpu" --filter jacobi2d,smooth1d --profile >"$LOGS/ncu.log" 2>&1
  note "ncu exit $?"
  grep -E "^  [a-z_0-9]+(_k0|jacobi2d|smooth1d)|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|L1/TEX Hit|L2 Hit|Registers Per" "$LOGS/ncu.log" |
    head -60 | tee -a "$summary"
fi

echo
echo "================ summary ================"
cat "$summary"
