// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "reference_atomics.hpp"

namespace ref {

void histogram_atomic(const double* x, long n, std::int64_t* hist, long bins, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < n; ++i) {
    const long b = static_cast<long>(x[i] * static_cast<double>(bins));
#pragma omp atomic
    hist[b] += 1;
  }
}

}  // namespace ref
