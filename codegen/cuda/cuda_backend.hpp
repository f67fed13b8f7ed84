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
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/program.hpp"

namespace kiln::codegen::cuda {

/// The architecture kernels are built for: KILN_CUDA_ARCH ("sm_90"), else the current device's, else
/// sm_90 (no device: compile-only use, as in CI).
std::string target_arch();

/// Whether the GPU target can run here (driver, device and NVRTC); otherwise `why`. Never throws.
bool available(std::string* why = nullptr);

struct Compiled {
  CompiledKernel kernel;
  std::shared_ptr<const Program> program;
  Binary binary;
};

/// Emits, compiles for the current device and loads `f`. Throws DeviceError("no CUDA driver/GPU: ...")
/// without a driver, CompileError when NVRTC rejects the code.
Compiled compile(const ir::Function& f, const CodegenOptions& opts);

/// The seam for a binary cache: a kernel from an emitted program and a binary built for it earlier
/// (compile_source of program->source(), e.g. PTX and CUBIN read back from disk). Emission is cheap and
/// deterministic, so a cache stores only the binary and re-emits the program.
CompiledKernel load(std::shared_ptr<const Program> program, Binary binary, const CodegenOptions& opts);

}  // namespace kiln::codegen::cuda
