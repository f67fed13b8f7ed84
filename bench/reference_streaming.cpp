// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP for the streaming rows (rows_streaming.cpp): a parallel copy, whose bandwidth is
// the ceiling every streaming row is compared with, and the fused triad a*b + c.
#include "reference_streaming.hpp"

namespace ref {

void copy(const double* x, double* y, long n, int threads) {
  // A plain parallel simd loop: on the 2-core machine it matched or beat a per-thread memcpy (whose
  // non-temporal stores lost to the cache-resident stores here), so it is the ceiling to compare with.
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) y[i] = x[i];
}

void triad(const double* a, const double* b, const double* c, double* out, long n, int threads) {
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) out[i] = a[i] * b[i] + c[i];
}

}  // namespace ref
