// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The KILN_* environment variables that steer compilation, read here (frontend/settings.cpp) and nowhere
// else; below the frontend, code generation gets them through codegen::TargetOptions and the passes through
// passes::PipelineOptions. Not here: the disk cache's own (runtime/cache/config.cpp, and KILN_LOG in
// runtime/cache/compile_log.cpp), the runtime's (KILN_NUM_THREADS in runtime/parallel.cpp; KILN_CUDA_DEVICE
// and KILN_CUDA_HEAP_MB in runtime/cuda/context.cpp, read when the device context is made), and the variables
// that say where libraries are (KILN_NVRTC in codegen/cuda/nvrtc.cpp, KILN_CUDA_DRIVER in
// runtime/cuda/driver.cpp: finding a library is not a code-generation setting).
#pragma once

#include "codegen/target_options.hpp"
#include "kiln/options.hpp"
#include "passes/pipeline.hpp"

namespace kiln::detail {

/// What the backend of `opts.target` is told: `opts`' code-generation options and the environment's. Read
/// once per process: KILN_CPU_FEATURES and KILN_LLVM_OPTIONS (LLVM keeps its options for the process), and
/// the CUDA tuning switches (KILN_CUDA_UNROLL, KILN_CUDA_STENCIL, _ROWS, _ROUNDS, KILN_CUDA_WAVES,
/// KILN_CUDA_BLOCK_SIZE). Read at each call, so that a program (or a test) may change them between
/// compilations: the dumps (KILN_DUMP_LLVM, KILN_DUMP_CUDA), KILN_CUDA_ARCH, KILN_CUDA_LINEINFO,
/// KILN_CUDA_KEEP and KILN_CUDA_SYNC.
codegen::TargetOptions target_options(const Options& opts);

/// The CUDA part of target_options() (also for tools that compile CUDA without a kiln::Options).
codegen::cuda::CudaOptions cuda_options();

/// KILN_CUDA_DEVICE_THREADS (1024 to 2^30): the threads that keep a GPU busy, as the device passes schedule for
/// (passes/pass.hpp, kDefaultDeviceThreads, the value when unset or out of range). Read once per process.
std::int64_t device_threads();

/// `popts` with the dumps the environment asks for: KILN_DUMP_IR (set and not "0": the IR after each pass)
/// and KILN_DUMP_DOT (a directory, not "0": the fused parfor graph). Read at each call, so that a program
/// may turn them on for one kernel.
passes::PipelineOptions with_pipeline_dumps(passes::PipelineOptions popts);

/// Whether a compilation must run the compiler even if the code is cached: its output was asked for
/// (Options::keep_llvm_ir, KILN_DUMP_LLVM, KILN_DUMP_IR), and only a compilation produces it.
bool wants_compiler_output(const Options& opts);

/// KILN_DIAGNOSTICS: print each compiled signature's report to stderr.
bool print_diagnostics();

}  // namespace kiln::detail
