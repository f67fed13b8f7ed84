// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Everything a backend is told about the code to make: the options common to all targets and each
// target's own. Built once per compilation by the driver (frontend/settings.cpp reads the environment).
#pragma once

#include "codegen/backend.hpp"
#include "codegen/cuda/cuda_options.hpp"
#include "codegen/llvm/cpu_options.hpp"

namespace kiln::codegen {

struct TargetOptions {
  CodegenOptions common;
  cpu::CpuOptions cpu;
  cuda::CudaOptions cuda;
};

}  // namespace kiln::codegen
