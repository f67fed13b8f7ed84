// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu's prefix-sum rows (scan_rows.cpp).
#pragma once

#include <functional>

#include "runtime/cuda/context.hpp"

namespace benchgpu {

/// The CUDA C of the hand-written scans (compiled by NVRTC where the rows run).
const char* scan_reference_source();

/// kiln::cumsum of n doubles, and of a side x side matrix along axis 0, on device arrays, against hand-written
/// CUDA: a reduce-then-scan over tiles of 4096 (tile totals; one block scans them into carries; each tile staged
/// through shared memory, scanned per thread and per block, its carry added), and a thread per column walking
/// down the rows. Interleaved, medians; `time_ms` times work queued on the device's stream. Prints its lines;
/// CuPy's (CUB's) figures come from bench/gpu/cupy_cumsum.py.
/// `axis0_only`: the matrix row alone (`--filter cumsum_axis0`).
void scan_rows(kiln::gpu::Device& dev, const std::function<double(const std::function<void()>&)>& time_ms, int reps,
               long long n, long long side, bool axis0_only = false);

/// kiln::cumsum of n doubles and of n floats alone (kiln's order), each checked bitwise on the host.
void scan_float_rows(const std::function<double(const std::function<void()>&)>& time_ms, int reps, long long n);

}  // namespace benchgpu
