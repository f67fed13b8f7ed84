// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP prefix sums for the scan rows (rows_scans.cpp): what a careful programmer writes by
// hand. Arrays are dense and row-major; `out` never aliases `x`.
#pragma once

namespace ref {

/// Inclusive prefix sum of x[0..n): the classic two-pass scan, one contiguous chunk per thread (each thread
/// sums its chunk; the chunk totals are scanned in order; each thread scans its chunk again from its carry).
void cumsum(const double* x, double* out, long n, int threads);
/// Inclusive prefix sum down the columns of a rows x cols matrix (np.cumsum(x, axis=0)): one pass, each thread
/// owning a range of columns, each row added to the previous output row with unit-stride (vectorized) loops.
void cumsum_rows_down(const double* x, double* out, long rows, long cols, int threads);
/// Inclusive prefix sum along each row (np.cumsum(x, axis=1)): one pass, rows spread over the threads.
void cumsum_along_rows(const double* x, double* out, long rows, long cols, int threads);

}  // namespace ref
