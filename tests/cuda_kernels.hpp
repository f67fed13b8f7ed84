// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kernels the CUDA tests run: built as IR and offloaded (what the backend receives after the passes), each with the
// inputs the differential test feeds it. The codegen test compiles every one of them with NVRTC; the GPU
// test runs every one against the interpreter.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"

namespace kiln::cudatest {

struct KernelCase {
  std::string name;
  ir::Function f;
  std::function<std::vector<Args>()> inputs;  ///< input sets (drawn lazily: the codegen test needs none)
  Tolerance tol;
};

/// Every test kernel: elementwise over 1-4 d with every layout, sequential loops and parfors nested in a
/// parfor, branches and short-circuit guards, every operator, cast and intrinsic on every type, reductions
/// of every op and type, argmin/argmax, array reductions, allocations, checks, host-side time loops and
/// element accesses, and empty iteration spaces.
std::vector<KernelCase> kernel_catalogue();

}  // namespace kiln::cudatest
