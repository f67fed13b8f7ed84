// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA C every generated module starts with (see prelude.cpp).
#pragma once

#include <string>

namespace kiln::codegen::cuda {

/// Device helpers: kiln's arithmetic, fixed-order block reductions, atomics, failure reporting.
std::string prelude();

}  // namespace kiln::codegen::cuda
