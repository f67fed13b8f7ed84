// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA C of the random intrinsics (see prelude_random.cpp).
#pragma once

#include <string>

namespace kiln::codegen::cuda {

/// Device functions kiln_random_bits, kiln_random_uniform_f32/_f64 and kiln_random_normal_f32/_f64 (the
/// intrinsics' names with a kiln_ prefix), computing what ir/random.hpp defines, bit for bit.
std::string random_prelude();

}  // namespace kiln::codegen::cuda
