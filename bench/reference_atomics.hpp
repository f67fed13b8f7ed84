// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP atomics for the atomics rows (rows_atomics.cpp).
#pragma once

#include <cstdint>

namespace ref {

/// Adds the counts of x (values in [0, 1), bin = long(x * bins)) to hist with one `#pragma omp atomic` update per
/// element: the hand form of kiln::atomic_add(hist[bin], 1) in a prange.
void histogram_atomic(const double* x, long n, std::int64_t* hist, long bins, int threads);

}  // namespace ref
