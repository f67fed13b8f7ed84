// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// C entry points to the hand-written references of kiln-bench (bench/reference*.cpp), so that
// same_arrays.py can call them through ctypes on Numba's own NumPy arrays, in Numba's process.
#include "reference.hpp"
#include "reference_streaming.hpp"

extern "C" {
void kiln_ref_triad(const double* a, const double* b, const double* c, double* out, long n, int threads) {
  ref::triad(a, b, c, out, n, threads);
}
void kiln_ref_saxpy(double a, const double* x, double* y, long n, int threads) { ref::saxpy(a, x, y, n, threads); }
double kiln_ref_dot(const double* x, const double* y, long n, int threads) { return ref::dot(x, y, n, threads); }
}
