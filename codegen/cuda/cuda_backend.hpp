// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA backend as the compile driver sees it: kiln IR -> CUDA C -> NVRTC (PTX + CUBIN) -> a module on
// the device, run by the host executor. No CUDA header here.
//
// Calls take kiln's calling convention (kiln/abi.hpp) plus argv[nparams]: a `const ArgMemory*` (or null)
// saying which array arguments are device arrays. Host arrays are copied to the device before the call and
// the ones the kernel writes are copied back; a returned array comes back as host memory.
#pragma once

#include <memory>
#include <string>

#include "codegen/backend.hpp"
#include "codegen/cuda/arg_memory.hpp"
#include "codegen/cuda/cuda_options.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/program.hpp"

namespace kiln::codegen::cuda {

/// The architecture kernels are built for: opts.arch (KILN_CUDA_ARCH, "sm_90"), else the current device's,
/// else sm_90 (no device: compile-only use, as in CI).
std::string target_arch(const CudaOptions& opts);

/// Everything a binary depends on besides the kernel's IR, the codegen options and the NVRTC version, for
/// the disk cache's key: the architecture (target_arch()), every emission setting (emission_settings():
/// unrolling and the stencil form change the CUDA C) and -lineinfo. The generated code assumes no device
/// limit (block sizes are chosen at launch), so nothing else is needed. "sm_90;unroll=4;stencil=...".
std::string cache_description(const CudaOptions& opts);

/// Whether the GPU target can run here (driver, device and NVRTC); otherwise `why`. Never throws.
bool available(std::string* why = nullptr);

struct Compiled {
  CompiledKernel kernel;
  std::shared_ptr<const Program> program;
  Binary binary;
};

/// Emits, compiles for the current device and loads `f`. Throws DeviceError("no CUDA driver/GPU: ...")
/// without a driver, CompileError when NVRTC rejects the code.
Compiled compile(const ir::Function& f, const CodegenOptions& opts, const CudaOptions& cuda);

/// The seam for a binary cache: a kernel from an emitted program and a binary built for it earlier
/// (compile_source of program->source(), e.g. PTX and CUBIN read back from disk). Emission is cheap and
/// deterministic, so a cache stores only the binary and re-emits the program.
CompiledKernel load(std::shared_ptr<const Program> program, Binary binary, const CodegenOptions& opts,
                    const CudaOptions& cuda);

/// The disk cache's loader: the kernel of `lowered` from PTX and CUBIN compiled for it earlier, without
/// NVRTC. Re-emits the program (microseconds) and checks that the binary is for target_arch(cuda) and defines
/// every __global__ function of it; CacheError if not (the entry is then discarded and the kernel
/// compiled). Then DeviceError without a driver or device, like compile().
CompiledKernel load_binary(const ir::Function& lowered, Binary binary, const CodegenOptions& opts,
                           const CudaOptions& cuda);

}  // namespace kiln::codegen::cuda
