// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP references of the kernels users commonly write (n-body, statistics by rows and
// columns, multi-stage normalization, a clamped-index stencil, a 2-d histogram), in the loop order a careful
// C++ programmer picks. Sums run in sequence where the kiln kernel sums in sequence (n-body's inner kiln::range)
// and in vector lanes (`simd reduction`) where it uses an array reduction (mean, var, std, sum), which kiln
// reassociates into fixed blocks.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference.hpp"

namespace suite::ref {

void nbody(double* ax, double* ay, double* az, const double* x, const double* y, const double* z, const double* m,
           double eps2, long n, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    double sx = 0.0, sy = 0.0, sz = 0.0;
    for (long j = 0; j < n; ++j) {
      const double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double f = m[j] / (r2 * std::sqrt(r2));
      sx += f * dx;
      sy += f * dy;
      sz += f * dz;
    }
    ax[i] = sx;
    ay[i] = sy;
    az[i] = sz;
  }
}

void row_stats(double* mean, double* var, double* sd, double* col_sd, double* z, const double* x, long rows, long cols,
               int threads) {
  constexpr long kBlock = 256;
  const double nc = static_cast<double>(cols), nr = static_cast<double>(rows);
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (long i = 0; i < rows; ++i) {
      const double* r = x + i * cols;
      double s = 0.0;
#pragma omp simd reduction(+ : s)
      for (long j = 0; j < cols; ++j) s += r[j];
      const double mu = s / nc;
      double ss = 0.0;
#pragma omp simd reduction(+ : ss)
      for (long j = 0; j < cols; ++j) ss += (r[j] - mu) * (r[j] - mu);
      const double v = ss / nc, d = std::sqrt(v);
      mean[i] = mu;
      var[i] = v;
      sd[i] = d;
      double* zr = z + i * cols;
      for (long j = 0; j < cols; ++j) zr[j] = (r[j] - mu) / d;
    }
#pragma omp for schedule(static)
    for (long j0 = 0; j0 < cols; j0 += kBlock) {
      const long j1 = std::min(cols, j0 + kBlock);
      double mu[kBlock], ss[kBlock];
      for (long j = j0; j < j1; ++j) mu[j - j0] = ss[j - j0] = 0.0;
      for (long i = 0; i < rows; ++i)
        for (long j = j0; j < j1; ++j) mu[j - j0] += x[i * cols + j];
      for (long j = j0; j < j1; ++j) mu[j - j0] /= nr;
      for (long i = 0; i < rows; ++i)
        for (long j = j0; j < j1; ++j) {
          const double d = x[i * cols + j] - mu[j - j0];
          ss[j - j0] += d * d;
        }
      for (long j = j0; j < j1; ++j) col_sd[j] = std::sqrt(ss[j - j0] / nr);
    }
  }
}

double normalize_clip_sum(const double* x, long n, double c, int threads) {
  double s = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : s) num_threads(threads)
  for (long i = 0; i < n; ++i) s += x[i];
  const double mu = s / static_cast<double>(n);
  double ss = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : ss) num_threads(threads)
  for (long i = 0; i < n; ++i) ss += (x[i] - mu) * (x[i] - mu);
  const double sd = std::sqrt(ss / static_cast<double>(n));
  double total = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : total) num_threads(threads)
  for (long i = 0; i < n; ++i) total += std::min(std::max((x[i] - mu) / sd, -c), c);
  return total;
}

void stencil27(double* out, const double* in, long n, int threads) {
  const long p = n * n;
#pragma omp parallel for schedule(static) collapse(2) num_threads(threads)
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j)
      for (long k = 0; k < n; ++k) {
        double s = 0.0;
        for (long di = -1; di <= 1; ++di) {
          const long ii = std::min(std::max(i + di, 0L), n - 1);
          for (long dj = -1; dj <= 1; ++dj) {
            const long jj = std::min(std::max(j + dj, 0L), n - 1);
            for (long dk = -1; dk <= 1; ++dk) {
              const long kk = std::min(std::max(k + dk, 0L), n - 1);
              s += in[ii * p + jj * n + kk];
            }
          }
        }
        out[i * p + j * n + k] = s * (1.0 / 27.0);
      }
}

void hist2d(std::int64_t* hist, const double* x, const double* y, long n, long bins, int threads) {
  const double scale = static_cast<double>(bins);
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::int64_t> mine(static_cast<std::size_t>(bins * bins), 0);
#pragma omp for schedule(static)
    for (long i = 0; i < n; ++i) {
      const long bx = static_cast<long>(x[i] * scale), by = static_cast<long>(y[i] * scale);
      ++mine[static_cast<std::size_t>(bx * bins + by)];
    }
#pragma omp critical
    for (long b = 0; b < bins * bins; ++b) hist[b] += mine[static_cast<std::size_t>(b)];
  }
}

}  // namespace suite::ref
