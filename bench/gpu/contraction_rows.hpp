// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu's contraction rows (contraction_rows.cpp).
#pragma once

#include <functional>

namespace benchgpu {

/// A prange matrix product (f64, each element summing along k in order) at shapes where a thread per element
/// might beat a contraction's tiles variant (codegen/cuda/launch_model.hpp): skinny, short, few tiles, and large
/// ones. Prints each shape's median time and the form the launch took (the diagnostics' last launch); run it
/// again with KILN_CUDA_CONTRACTION=0 and =1 to time each form. `time_ms` times work queued on the device's stream.
void contraction_rows(const std::function<double(const std::function<void()>&)>& time_ms, int reps);

/// The same product at the suite's gemm shape (2000 x 2100 x 2200) and doitgen's (65536 x 128 x 128), f64 and f32,
/// as kiln's semantics round it (a*b then +, two roundings) and with Options::fast_math (NVVM may fuse them into
/// FMAs): median ms and GFLOP/s (2 m n k / time), to set against the device's arithmetic ceiling of each form.
void product_rows(const std::function<double(const std::function<void()>&)>& time_ms, int reps);

}  // namespace benchgpu
