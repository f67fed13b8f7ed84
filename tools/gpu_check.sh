#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# One run on a GPU machine: configure and build kiln (no LLVM there: the CPU target is off), run the CUDA
# tests, every example with --target cuda (twice: the second run loads its kernels from the disk cache,
# then kiln-cache lists them), compute-sanitizer memcheck on the examples and the stencil kernels (and
# racecheck on the shared-memory stencil form), and the GPU benchmark with the stencil forms compared.
# A compact summary is printed last; $OUT (or /tmp/kiln-gpu) receives it and logs.tgz with every log.
# Every step has a timeout; the whole run is meant to fit in 10 minutes.
#
# The machine may lack fmt, GoogleTest and libsodium: a prefix with fmt's CMake package, GoogleTest's sources and
# libsodium unpacked by tools/fetch_gpu_deps.sh can be carried in .deps/ (fmt/, googletest/, sodium/); they are
# used only when the system has none.
#   bash tools/gpu_check.sh [all|tests|examples|bench|distributed]...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kiln-gpu}
LOGS=/tmp/kiln-gpu-logs
mkdir -p "$OUT" "$LOGS"
BUILD=${KILN_GPU_BUILD:-/tmp/kiln-gpu-build}
JOBS=$(nproc)
steps=("${@:-all}")
# The whole run fits KILN_GPU_BUDGET_S seconds (default 560, inside a 10-minute device call): each step's
# timeout is cut to what is left, and steps are skipped once too little is left. Most important first.
start_s=$(date +%s)
deadline=$(( start_s + ${KILN_GPU_BUDGET_S:-560} ))
tmo() { local want=$1 left=$(( deadline - $(date +%s) - 10 )); (( left < want )) && want=$left; (( want < 1 )) && want=1; echo "$want"; }
enough() { (( deadline - $(date +%s) > ${1:-30} )); }
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
# nlohmann-json (header-only; kiln-bench's --json lines): unpacked by tools/fetch_gpu_deps.sh into .deps/nlohmann.
if ! printf '#include <nlohmann/json.hpp>\n' | g++ -E -x c++ - >/dev/null 2>&1 && [ -d .deps/nlohmann/usr ]; then
  prefix+=("$PWD/.deps/nlohmann/usr")
  note "nlohmann-json: the carried CMake package (.deps/nlohmann)"
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
# libsodium (the disk cache's keyed seal): cmake finds a copy unpacked into .deps/sodium by
# tools/fetch_gpu_deps.sh by itself; its library must be found at run time too.
if ! printf '#include <sodium.h>\n' | g++ -E -x c++ - >/dev/null 2>&1; then
  sodium_lib=$(ls -d "$PWD"/.deps/sodium/usr/lib/*/ 2>/dev/null | head -1)
  if [ -n "$sodium_lib" ]; then
    export LD_LIBRARY_PATH="$sodium_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    note "libsodium: the carried copy (.deps/sodium)"
  else
    note "libsodium: none on this machine and none carried (run tools/fetch_gpu_deps.sh and carry .deps)"
  fi
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
# Every example of examples/CMakeLists.txt (new ones join without editing this script).
examples=($(tr '\n' ' ' <examples/CMakeLists.txt | sed -n 's/.*set(KILN_EXAMPLES \([^$)]*\)).*/\1/p'))
[ ${#examples[@]} -eq 0 ] && examples=(pi saxpy dot)
targets=(kiln cuda_gpu_test cuda_codegen_test kiln-bench-gpu kiln-cache)
if ! ninja -C "$BUILD" -j "$JOBS" "${targets[@]}" >"$LOGS/build.log" 2>&1; then
  note "build FAILED"; grep -E "error|FAILED" "$LOGS/build.log" | head -40; exit 1
fi
# Examples one by one: one that does not build is reported, the others still run.
ninja -C "$BUILD" -j "$JOBS" -k 0 "${examples[@]}" >>"$LOGS/build.log" 2>&1
# The other GPU test binaries (sort, scans, atomics, random numbers, the asynchronous model, ...): every test
# target with "cuda" or "dlpack" in its name, each built on its own so that one that fails to build does not hide the others.
extra_tests=($(ninja -C "$BUILD" -t targets all 2>/dev/null | sed -n 's/^\([a-z_]*\(cuda\|dlpack\)[a-z_]*_test\): phony$/\1/p' |
               grep -v '^cmake_' | grep -vx 'cuda_gpu_test\|cuda_codegen_test' | sort -u))
ninja -C "$BUILD" -j "$JOBS" -k 0 "${extra_tests[@]}" gpu_streams kiln-bench-gpu-async kiln_dlpack_interop >>"$LOGS/build.log" 2>&1
built=()
for ex in "${examples[@]}"; do
  if [ -x "$BUILD/examples/$ex" ]; then built+=("$ex"); else note "example $ex: build FAILED"; fi
done
examples=("${built[@]}")
note "build: $(( $(date +%s) - t0 )) s"

# ---- tests -----------------------------------------------------------------------------------------------
if want tests; then
  note "== tests"
  timeout $(tmo 300) "$BUILD/tests/cuda_gpu_test" --gtest_brief=1 >"$LOGS/gpu_test.log" 2>&1
  note "cuda_gpu_test: exit $? — $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/gpu_test.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]|Failure|\[ device|\[ compile|\[ cache" "$LOGS/gpu_test.log" | head -40 | tee -a "$summary"
  # The differential suite again with unrolling and __restrict__ off (KILN_CUDA_UNROLL=1, the fallback).
  KILN_CUDA_UNROLL=1 timeout $(tmo 120) "$BUILD/tests/cuda_gpu_test" --gtest_brief=1 --gtest_filter='Cuda/Differential.*' >"$LOGS/gpu_test_unroll1.log" 2>&1
  note "cuda_gpu_test (differential, KILN_CUDA_UNROLL=1): exit $? — $(grep -E '^\[  (PASSED|FAILED) ' "$LOGS/gpu_test_unroll1.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]" "$LOGS/gpu_test_unroll1.log" | head -10 | tee -a "$summary"
  timeout $(tmo 120) "$BUILD/tests/cuda_codegen_test" --gtest_brief=1 >"$LOGS/codegen_test.log" 2>&1
  note "cuda_codegen_test: exit $? — $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/codegen_test.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED  \]" "$LOGS/codegen_test.log" | head -10 | tee -a "$summary"
  if [ -x "$BUILD/examples/gpu_streams" ]; then
    timeout $(tmo 90) "$BUILD/examples/gpu_streams" --reps 5 >"$LOGS/gpu_streams.log" 2>&1
    note "gpu_streams (chunked host data over 3 streams): exit $?"; cat "$LOGS/gpu_streams.log" | tee -a "$summary"
  fi
  if [ -f "$BUILD/tests/libkiln_dlpack_interop.so" ]; then
    for fw in torch cupy jax; do
      XLA_PYTHON_CLIENT_PREALLOCATE=false timeout $(tmo 60) python3 -X faulthandler tests/dlpack/check_interop.py \
        "$BUILD/tests/libkiln_dlpack_interop.so" $fw >"$LOGS/dlpack_$fw.log" 2>&1
      note "DLPack with $fw: exit $?"; tail -25 "$LOGS/dlpack_$fw.log" | tee -a "$summary"
    done
  fi
  for t in "${extra_tests[@]}"; do
    if [ ! -x "$BUILD/tests/$t" ]; then note "$t: build FAILED"; grep -E "error" "$LOGS/build.log" | grep -m5 "${t%_test}" | tee -a "$summary"; continue; fi
    timeout $(tmo 120) "$BUILD/tests/$t" --gtest_brief=1 >"$LOGS/$t.log" 2>&1
    note "$t: exit $? — $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$LOGS/$t.log" | tr '\n' ' ')"
    grep -E "^\[  FAILED  \]|Failure|error" "$LOGS/$t.log" | head -20 | tee -a "$summary"
  done
fi

# ---- kiln::dist on the CUDA target (needs the Open MPI wheel carried in .whl/) --------------------------------
if want distributed; then
  note "== distributed (kiln::dist, one GPU per rank; ranks share the GPU where there are fewer)"
  timeout $(tmo 300) bash tools/gpu_distributed.sh "$BUILD" "$LOGS" 2>&1 | tee -a "$summary"
fi

# ---- benchmark -------------------------------------------------------------------------------------------
if want bench; then
  if [ -x "$BUILD/bench/gpu/kiln-bench-gpu-async" ]; then
    note "== kiln-bench-gpu-async (execution model)"
    timeout $(tmo 120) "$BUILD/bench/gpu/kiln-bench-gpu-async" >"$LOGS/bench_async.log" 2>&1
    note "exit $?"; cat "$LOGS/bench_async.log" | tee -a "$summary"
  fi
  note "== kiln-bench-gpu"
  timeout $(tmo 200) "$BUILD/bench/gpu/kiln-bench-gpu" >"$LOGS/bench.log" 2>&1
  note "exit $?"
  cat "$LOGS/bench.log" >>"$summary"
  note "== stencil forms (smooth1d, jacobi2d; the default is shared-memory tiles, 4 rows, 4 rounds): plain loads, shuffles, other rows and rounds"
  for form in "KILN_CUDA_STENCIL=off" "KILN_CUDA_STENCIL=shuffle" "KILN_CUDA_STENCIL_ROWS=2" "KILN_CUDA_STENCIL_ROWS=8" "KILN_CUDA_STENCIL_ROUNDS=2"; do
    env $form timeout $(tmo 60) "$BUILD/bench/gpu/kiln-bench-gpu" --filter smooth1d,jacobi2d --reps 10 >"$LOGS/bench_$form.log" 2>&1
    grep -E "^(smooth|jacobi)" "$LOGS/bench_$form.log" | sed "s/^/$form: /" | cut -c1-140 | tee -a "$summary"
  done
  note "== SASS of the stencil kernels: loads (LDG), shuffles (SHFL), shared (LDS/STS) per kernel"
  rm -rf /tmp/kiln-keep && mkdir -p /tmp/kiln-keep
  KILN_CACHE=off KILN_CUDA_KEEP=/tmp/kiln-keep timeout $(tmo 60) "$BUILD/bench/gpu/kiln-bench-gpu" --filter smooth1d,jacobi2d,black_scholes --profile >/dev/null 2>&1
  for k in smooth1d jacobi2d black_scholes; do
    cuobjdump -sass "/tmp/kiln-keep/$k.cubin" >"$LOGS/$k.sass" 2>&1
    body=$(awk "/Function : ${k}_k0\$/{f=1} /Function : ${k}_k0_alias/{f=0} f" "$LOGS/$k.sass")
    note "$k: LDG $(grep -c 'LDG' <<<"$body"), SHFL $(grep -c 'SHFL' <<<"$body"), LDS $(grep -c 'LDS' <<<"$body"), STG $(grep -c 'STG' <<<"$body"), MUFU $(grep -c 'MUFU' <<<"$body")"
  done
fi

# ---- examples --------------------------------------------------------------------------------------------
if want examples && enough 60; then
  note "== examples --target cuda (a fresh disk cache: the first run compiles, the second loads)"
  export KILN_CACHE_DIR=/tmp/kiln-gpu-cache
  rm -rf "$KILN_CACHE_DIR"
  for pass in compile load; do
    for ex in "${examples[@]}"; do
      t0=$(date +%s%N)
      KILN_LOG=compile timeout $(tmo 60) "$BUILD/examples/$ex" --target cuda >"$LOGS/example_${ex}_$pass.log" 2>&1
      rc=$?
      ms=$(( ($(date +%s%N) - t0) / 1000000 ))
      note "$ex ($pass): exit $rc, ${ms} ms — $(grep -E 'OK|MISMATCH' "$LOGS/example_${ex}_$pass.log" | tail -1 | cut -c1-80); kernels: $(grep -c 'cache=miss' "$LOGS/example_${ex}_$pass.log") compiled, $(grep -c 'cache=disk' "$LOGS/example_${ex}_$pass.log") from disk"
    done
  done
  grep -h "kiln: compile" "$LOGS"/example_*_load.log | head -8 | cut -c1-150 | tee -a "$summary"
  "$BUILD/tools/kiln-cache/kiln-cache" --dir "$KILN_CACHE_DIR" stats 2>&1 | tee -a "$summary"
  "$BUILD/tools/kiln-cache/kiln-cache" --dir "$KILN_CACHE_DIR" list 2>&1 | head -6 | tee -a "$summary"
  "$BUILD/tools/kiln-cache/kiln-cache" --dir "$KILN_CACHE_DIR" verify >/dev/null 2>&1
  note "kiln-cache verify: exit $?"
  unset KILN_CACHE_DIR
  note "== compute-sanitizer memcheck (examples, n = 100003; the stencil and binding kernels of the differential suite)"
  for ex in "${examples[@]}"; do
    enough 90 || { note "$ex: memcheck skipped (time)"; continue; }
    KILN_CACHE=off timeout $(tmo 40) compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/examples/$ex" 100003 --target cuda >"$LOGS/memcheck_$ex.log" 2>&1
    note "$ex: exit $? — $(grep -E 'ERROR SUMMARY' "$LOGS/memcheck_$ex.log" | tail -1)"
  done
  stencil_filter='Cuda/Differential.MatchesTheInterpreter/stencil_*:Cuda/Differential.MatchesTheInterpreter/bindings:Cuda/Differential.MatchesTheInterpreter/time_steps'
  timeout $(tmo 150) compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/cuda_gpu_test" --gtest_brief=1 --gtest_filter="$stencil_filter" >"$LOGS/memcheck_stencils.log" 2>&1
  note "stencil kernels (default form: shared-memory tiles): exit $? — $(grep -E 'ERROR SUMMARY' "$LOGS/memcheck_stencils.log" | tail -1)"
  timeout $(tmo 60) compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD/tests/cuda_gpu_test" --gtest_brief=1 \
    --gtest_filter='Cuda/Differential.MatchesTheInterpreter/stencil_rows:Cuda/Differential.MatchesTheInterpreter/stencil_3d' >"$LOGS/racecheck_shared.log" 2>&1
  note "racecheck, shared-memory stencil tiles: exit $? — $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$LOGS/racecheck_shared.log" | tail -1)"
fi

# ---- ncu -------------------------------------------------------------------------------------------------
# The stencils (memory-bound: DRAM throughput and cache hit rates) and black_scholes, whose hand-written kernel
# also stays below 85 % of the copy ceiling: the compute sections show whether the math pipes bound it.
if want bench && enough 60; then
  note "== ncu (kiln and hand kernels of jacobi2d, smooth1d and black_scholes; clocks as found)"
  : >"$LOGS/ncu.log"
  # One ncu run per workload: a shared --launch-count would be spent on the first workload's launches.
  for w in jacobi2d smooth1d black_scholes; do
    enough 30 || break
    timeout $(tmo 60) ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
      --section ComputeWorkloadAnalysis -k "regex:^(${w}_k0|ref_${w})\$" --launch-count 4 \
      "$BUILD/bench/gpu/kiln-bench-gpu" --filter "$w" --profile >>"$LOGS/ncu.log" 2>&1
    note "ncu $w: exit $?"
  done
  grep -E "^  [a-z_0-9]+(_k0|jacobi2d|smooth1d|black_scholes) \(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|Achieved Occupancy|L1/TEX Hit|L2 Hit|Registers Per" "$LOGS/ncu.log" |
    head -120 | tee -a "$summary"
fi

note "total: $(( $(date +%s) - start_s )) s"
echo
echo "================ summary ================"
cat "$summary"
