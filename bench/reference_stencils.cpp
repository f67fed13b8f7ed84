// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The border handling is split from the interior as a programmer would do by hand: row pointers are
// clamped once per row (nearest), and the inner loop over the contiguous dimension runs without any index
// arithmetic on its interior, so that it vectorizes; only its first and last elements clamp.
#include "reference_stencils.hpp"

#include <algorithm>

namespace ref {

void jacobi2d(const double* in, double* out, long rows, long cols, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 1; i < rows - 1; ++i) {
    const double* up = in + (i - 1) * cols;
    const double* mid = in + i * cols;
    const double* down = in + (i + 1) * cols;
    double* o = out + i * cols;
#pragma omp simd
    for (long j = 1; j < cols - 1; ++j) o[j] = 0.25 * (mid[j + 1] + mid[j - 1] + up[j] + down[j]);
  }
}

void heat3d(const double* u, double* out, long n0, long n1, long n2, double c, int threads) {
  const long plane = n1 * n2;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads)
  for (long i = 0; i < n0; ++i) {
    for (long j = 0; j < n1; ++j) {
      const long im = std::max(i - 1, 0L), ip = std::min(i + 1, n0 - 1);
      const long jm = std::max(j - 1, 0L), jp = std::min(j + 1, n1 - 1);
      const double* x = u + i * plane + j * n2;
      const double* xim = u + im * plane + j * n2;
      const double* xip = u + ip * plane + j * n2;
      const double* xjm = u + i * plane + jm * n2;
      const double* xjp = u + i * plane + jp * n2;
      double* o = out + i * plane + j * n2;
      auto at = [&](long k) {
        const long km = std::max(k - 1, 0L), kp = std::min(k + 1, n2 - 1);
        return x[k] + c * (xim[k] + xip[k] + xjm[k] + xjp[k] + x[km] + x[kp] - 6.0 * x[k]);
      };
      o[0] = at(0);
#pragma omp simd
      for (long k = 1; k < n2 - 1; ++k)
        o[k] = x[k] + c * (xim[k] + xip[k] + xjm[k] + xjp[k] + x[k - 1] + x[k + 1] - 6.0 * x[k]);
      if (n2 > 1) o[n2 - 1] = at(n2 - 1);
    }
  }
}

void smooth1d(const double* in, double* out, long n, int threads) {
  if (n <= 0) return;
  out[0] = 0.25 * in[0] + 0.5 * in[0] + 0.25 * in[std::min(1L, n - 1)];
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 1; i < n - 1; ++i) out[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
  if (n > 1) out[n - 1] = 0.25 * in[n - 2] + 0.5 * in[n - 1] + 0.25 * in[n - 1];
}

void conv2d_5x5(const double* in, const double* w, double* out, long rows, long cols, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < rows; ++i) {
    const double* r[5];
    for (long p = 0; p < 5; ++p) r[p] = in + std::clamp(i + p - 2, 0L, rows - 1) * cols;
    double* o = out + i * cols;
    auto at = [&](long j) {
      double acc = 0.0;
      for (long p = 0; p < 5; ++p)
        for (long q = 0; q < 5; ++q) acc += w[p * 5 + q] * r[p][std::clamp(j + q - 2, 0L, cols - 1)];
      return acc;
    };
    const long lo = std::min(2L, cols), hi = std::max(lo, cols - 2);
    for (long j = 0; j < lo; ++j) o[j] = at(j);
#pragma omp simd
    for (long j = lo; j < hi; ++j) {
      double acc = 0.0;
      for (long p = 0; p < 5; ++p)
        for (long q = 0; q < 5; ++q) acc += w[p * 5 + q] * r[p][j + q - 2];
      o[j] = acc;
    }
    for (long j = hi; j < cols; ++j) o[j] = at(j);
  }
}

}  // namespace ref
