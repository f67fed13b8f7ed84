// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu's random-number rows (random_rows.cpp).
#pragma once

#include <functional>

#include "runtime/cuda/context.hpp"

namespace benchgpu {

/// Fills n floats with kiln::random::uniform<float> and n doubles with kiln::random::normal<double> on the
/// device, against hand-written CUDA Philox-4x32-10 kernels drawing the same numbers (checked bit for bit),
/// interleaved; `time_ms` times work queued on the device's stream. Prints its lines; cuRAND's figures
/// come from bench/gpu/curand_philox.py.
void random_rows(kiln::gpu::Device& dev, const std::function<double(const std::function<void()>&)>& time_ms, int reps,
                 long long n);

}  // namespace benchgpu
