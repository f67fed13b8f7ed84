// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP stable sorts for the sort rows (rows_sort.cpp), in NumPy's order (NaN last, -0.0 equal
// to +0.0): a parallel merge sort, as a careful programmer writes one (each thread std::stable_sorts a contiguous
// chunk, then rounds of pairwise std::merge, the merges of a round in parallel), and std::stable_sort on one
// thread for scale.
#pragma once

#include <cstdint>

namespace ref {

/// x sorted stably in place.
void sort(double* x, long n, int threads);
void sort(std::int32_t* x, long n, int threads);
/// The positions that sort x stably (x is left as it is).
void argsort(const double* x, std::int64_t* out, long n, int threads);
/// std::stable_sort of x on the calling thread.
void stable_sort_serial(double* x, long n);
void stable_sort_serial(std::int32_t* x, long n);

}  // namespace ref
