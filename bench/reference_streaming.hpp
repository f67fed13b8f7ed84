// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written references of the streaming rows (compiled -O3 -march=native -fopenmp).
#pragma once

namespace ref {

void copy(const double* x, double* y, long n, int threads);
void triad(const double* a, const double* b, const double* c, double* out, long n, int threads);

}  // namespace ref
