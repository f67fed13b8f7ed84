// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu's contraction rows (contraction_rows.cpp).
#pragma once

#include <functional>

namespace benchgpu {

/// A prange matrix product (f64, each element summing along k in order) at shapes on both sides of the launch
/// model's rule between a contraction's tiles variant and a thread per element (codegen/cuda/launch_model.hpp,
/// contraction_form): skinny, short, few tiles, just enough tiles, large. Prints each shape's median time and
/// the form the model chose (the diagnostics' last launch); run it again with KILN_CUDA_CONTRACTION=0 and =1 to
/// time the other form. `time_ms` times work queued on the device's stream.
void contraction_rows(const std::function<double(const std::function<void()>&)>& time_ms, int reps);

}  // namespace benchgpu
