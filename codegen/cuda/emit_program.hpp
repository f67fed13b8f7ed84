// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// From a lowered kernel to CUDA C (see program.hpp).
#pragma once

#include "codegen/cuda/program.hpp"

namespace kiln::codegen::cuda {

/// Emits one __global__ function per launch (and a fold kernel per reducing one). Throws
/// CompileError for constructs the GPU backend does not support, ValueError for stencil rows or rounds
/// outside [1, 16].
Program emit_program(const ir::Function& f, const EmitOptions& opts = {});

}  // namespace kiln::codegen::cuda
