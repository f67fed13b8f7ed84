// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "reference_scans.hpp"

#include <algorithm>
#include <vector>

#include <omp.h>

namespace ref {

void cumsum(const double* x, double* out, long n, int threads) {
  std::vector<double> totals(static_cast<std::size_t>(threads) + 1, 0.0);
#pragma omp parallel num_threads(threads)
  {
    const long t = omp_get_thread_num(), nt = omp_get_num_threads();
    const long lo = n * t / nt, hi = n * (t + 1) / nt;
    double s = 0;
    for (long i = lo; i < hi; ++i) s += x[i];
    totals[static_cast<std::size_t>(t) + 1] = s;
#pragma omp barrier
#pragma omp single
    for (long k = 1; k <= nt; ++k) totals[static_cast<std::size_t>(k)] += totals[static_cast<std::size_t>(k) - 1];
    double acc = totals[static_cast<std::size_t>(t)];
    for (long i = lo; i < hi; ++i) {
      acc += x[i];
      out[i] = acc;
    }
  }
}

void cumsum_rows_down(const double* x, double* out, long rows, long cols, int threads) {
  if (rows == 0) return;
#pragma omp parallel num_threads(threads)
  {
    const long t = omp_get_thread_num(), nt = omp_get_num_threads();
    const long lo = cols * t / nt, hi = cols * (t + 1) / nt;
    // Column ranges of 512 (4 KiB a row) so that the previous output row stays in L1.
    for (long j0 = lo; j0 < hi; j0 += 512) {
      const long j1 = std::min(j0 + 512, hi);
#pragma omp simd
      for (long j = j0; j < j1; ++j) out[j] = x[j];
      for (long i = 1; i < rows; ++i) {
        const double* xi = x + i * cols;
        double* oi = out + i * cols;
        const double* prev = oi - cols;
#pragma omp simd
        for (long j = j0; j < j1; ++j) oi[j] = prev[j] + xi[j];
      }
    }
  }
}

void cumsum_along_rows(const double* x, double* out, long rows, long cols, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < rows; ++i) {
    double acc = 0;
    for (long j = 0; j < cols; ++j) {
      acc += x[i * cols + j];
      out[i * cols + j] = acc;
    }
  }
}

}  // namespace ref
