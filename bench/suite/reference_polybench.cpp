// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP references of the suite's PolyBench/C 4.2 kernels, written from the kernels'
// mathematical descriptions in the loop order a careful C++ programmer picks for row-major arrays: rows in
// parallel, contiguous innermost loops, products in i-k-j order, and the transposed products (A^T v) over
// blocks of columns so that each thread streams whole rows of its block. Floating-point sums run in the order of
// the mathematics where the kiln kernel sums in sequence (a kiln::range accumulating into a scalar), and in vector
// lanes (`omp simd reduction`) where it uses an array reduction (kiln::dot, sum, mean, var), which kiln
// reassociates into fixed blocks.
#include <algorithm>
#include <cmath>
#include <vector>

#include "reference.hpp"

namespace suite::ref {

namespace {
/// Columns per block of the transposed products: 256 doubles (2 KiB) of accumulators per block.
constexpr long kColumnBlock = 256;
}  // namespace

void jacobi_1d(double* A, double* B, long n, long tsteps, int threads) {
#pragma omp parallel num_threads(threads)
  for (long t = 0; t < tsteps; ++t) {
#pragma omp for schedule(static)
    for (long i = 1; i < n - 1; ++i) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
#pragma omp for schedule(static)
    for (long i = 1; i < n - 1; ++i) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}

namespace {
void jacobi_2d_sweep(const double* in, double* out, long n) {
#pragma omp for schedule(static)
  for (long i = 1; i < n - 1; ++i) {
    const double* r = in + i * n;
    double* o = out + i * n;
    for (long j = 1; j < n - 1; ++j) o[j] = 0.2 * (r[j] + r[j - 1] + r[j + 1] + r[j + n] + r[j - n]);
  }
}

void heat_3d_sweep(const double* in, double* out, long n) {
  const long p = n * n;
#pragma omp for schedule(static)
  for (long i = 1; i < n - 1; ++i)
    for (long j = 1; j < n - 1; ++j) {
      const double* a = in + i * p + j * n;
      double* b = out + i * p + j * n;
      for (long k = 1; k < n - 1; ++k)
        b[k] = 0.125 * (a[k + p] - 2.0 * a[k] + a[k - p]) + 0.125 * (a[k + n] - 2.0 * a[k] + a[k - n]) +
               0.125 * (a[k + 1] - 2.0 * a[k] + a[k - 1]) + a[k];
    }
}
}  // namespace

void jacobi_2d(double* A, double* B, long n, long tsteps, int threads) {
#pragma omp parallel num_threads(threads)
  for (long t = 0; t < tsteps; ++t) {
    jacobi_2d_sweep(A, B, n);
    jacobi_2d_sweep(B, A, n);
  }
}

void heat_3d(double* A, double* B, long n, long tsteps, int threads) {
#pragma omp parallel num_threads(threads)
  for (long t = 0; t < tsteps; ++t) {
    heat_3d_sweep(A, B, n);
    heat_3d_sweep(B, A, n);
  }
}

void fdtd_2d(double* ex, double* ey, double* hz, const double* fict, long nx, long ny, long tmax, int threads) {
#pragma omp parallel num_threads(threads)
  for (long t = 0; t < tmax; ++t) {
#pragma omp for schedule(static)
    for (long j = 0; j < ny; ++j) ey[j] = fict[t];
#pragma omp for schedule(static)
    for (long i = 1; i < nx; ++i)
      for (long j = 0; j < ny; ++j) ey[i * ny + j] = ey[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
#pragma omp for schedule(static)
    for (long i = 0; i < nx; ++i)
      for (long j = 1; j < ny; ++j) ex[i * ny + j] = ex[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[i * ny + j - 1]);
#pragma omp for schedule(static)
    for (long i = 0; i < nx - 1; ++i)
      for (long j = 0; j < ny - 1; ++j)
        hz[i * ny + j] = hz[i * ny + j] - 0.7 * (ex[i * ny + j + 1] - ex[i * ny + j] + ey[(i + 1) * ny + j] -
                                                 ey[i * ny + j]);
  }
}

void gemm(double* C, const double* A, const double* B, double alpha, double beta, long ni, long nj, long nk,
          int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < ni; ++i) {
    double* c = C + i * nj;
    for (long j = 0; j < nj; ++j) c[j] *= beta;
    for (long k = 0; k < nk; ++k) {
      const double a = alpha * A[i * nk + k];
      const double* b = B + k * nj;
      for (long j = 0; j < nj; ++j) c[j] += a * b[j];
    }
  }
}

void two_mm(double* D, const double* A, const double* B, const double* C, double* tmp, double alpha, double beta,
            long ni, long nj, long nk, long nl, int threads) {
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (long i = 0; i < ni; ++i) {
      double* t = tmp + i * nj;
      for (long j = 0; j < nj; ++j) t[j] = 0.0;
      for (long k = 0; k < nk; ++k) {
        const double a = alpha * A[i * nk + k];
        const double* b = B + k * nj;
        for (long j = 0; j < nj; ++j) t[j] += a * b[j];
      }
    }
#pragma omp for schedule(static)
    for (long i = 0; i < ni; ++i) {
      double* d = D + i * nl;
      for (long l = 0; l < nl; ++l) d[l] *= beta;
      for (long j = 0; j < nj; ++j) {
        const double t = tmp[i * nj + j];
        const double* c = C + j * nl;
        for (long l = 0; l < nl; ++l) d[l] += t * c[l];
      }
    }
  }
}

namespace {
/// out[j] = sum_i A[i][j] v[i] for the columns [j0, j1) of A (rows x cols), rows in order.
void transposed_block(double* acc, const double* A, const double* v, long rows, long cols, long j0, long j1) {
  for (long j = j0; j < j1; ++j) acc[j - j0] = 0.0;
  for (long i = 0; i < rows; ++i) {
    const double s = v[i];
    const double* a = A + i * cols;
    for (long j = j0; j < j1; ++j) acc[j - j0] += a[j] * s;
  }
}

/// a . v as kiln::dot sums it: reassociated into vector lanes (kiln's array reductions add in fixed blocks, not
/// in sequence), so the reference is allowed the same.
double row_dot(const double* a, const double* v, long n) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (long j = 0; j < n; ++j) s += a[j] * v[j];
  return s;
}

/// a . v summed in sequence, as a kiln::range loop accumulating into a scalar does.
double row_dot_in_order(const double* a, const double* v, long n) {
  double s = 0.0;
  for (long j = 0; j < n; ++j) s += a[j] * v[j];
  return s;
}
}  // namespace

void atax(double* y, const double* A, const double* x, double* tmp, long m, long n, int threads) {
  // One pass over A, as the mathematics reads: row i gives tmp[i] = A[i] . x and, while it is in cache, adds
  // tmp[i] A[i] into y (a per-thread copy, combined by OpenMP's array reduction).
  for (long j = 0; j < n; ++j) y[j] = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : y[:n]) num_threads(threads)
  for (long i = 0; i < m; ++i) {
    const double* a = A + i * n;
    const double t = row_dot(a, x, n);
    tmp[i] = t;
    for (long j = 0; j < n; ++j) y[j] += t * a[j];
  }
}

void bicg(double* s, double* q, const double* A, const double* r, const double* p, long n, long m, int threads) {
  // One pass over A, as the mathematics reads: each row adds r[i] A[i][:] into s (a per-thread copy, combined
  // by OpenMP's array reduction) and gives q[i].
  for (long j = 0; j < m; ++j) s[j] = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s[:m]) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    const double* a = A + i * m;
    const double ri = r[i];
    double qi = 0.0;
#pragma omp simd reduction(+ : qi)
    for (long j = 0; j < m; ++j) {
      s[j] += ri * a[j];
      qi += a[j] * p[j];
    }
    q[i] = qi;
  }
}

void mvt(double* x1, double* x2, const double* A, const double* y1, const double* y2, long n, int threads) {
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (long i = 0; i < n; ++i) x1[i] = x1[i] + row_dot(A + i * n, y1, n);
#pragma omp for schedule(static)
    for (long j0 = 0; j0 < n; j0 += kColumnBlock) {
      double acc[kColumnBlock];
      const long j1 = std::min(n, j0 + kColumnBlock);
      transposed_block(acc, A, y2, n, n, j0, j1);
      for (long j = j0; j < j1; ++j) x2[j] = x2[j] + acc[j - j0];
    }
  }
}

void gemver(double* A, double* x, double* w, const double* u1, const double* v1, const double* u2, const double* v2,
            const double* y, const double* z, double alpha, double beta, long n, int threads) {
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (long i = 0; i < n; ++i) {
      double* a = A + i * n;
      for (long j = 0; j < n; ++j) a[j] = a[j] + u1[i] * v1[j] + u2[i] * v2[j];
    }
#pragma omp for schedule(static)
    for (long j0 = 0; j0 < n; j0 += kColumnBlock) {
      double acc[kColumnBlock];
      const long j1 = std::min(n, j0 + kColumnBlock);
      transposed_block(acc, A, y, n, n, j0, j1);
      for (long j = j0; j < j1; ++j) x[j] = x[j] + (beta * acc[j - j0] + z[j]);
    }
#pragma omp for schedule(static)
    for (long i = 0; i < n; ++i) w[i] = w[i] + alpha * row_dot(A + i * n, x, n);
  }
}

void gesummv(double* y, const double* A, const double* B, const double* x, double alpha, double beta, long n,
             int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    const double* a = A + i * n;
    const double* b = B + i * n;
    double sa = 0.0, sb = 0.0;
#pragma omp simd reduction(+ : sa, sb)
    for (long j = 0; j < n; ++j) {
      sa += a[j] * x[j];
      sb += b[j] * x[j];
    }
    y[i] = alpha * sa + beta * sb;
  }
}

void syrk(double* C, const double* A, double alpha, double beta, long n, long m, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i)
    for (long j = 0; j <= i; ++j) C[i * n + j] = beta * C[i * n + j] + alpha * row_dot_in_order(A + i * m, A + j * m, m);
}

namespace {
/// The column means of data (n x m) into mean.
void column_means(double* mean, const double* data, long n, long m) {
#pragma omp for schedule(static)
  for (long j0 = 0; j0 < m; j0 += kColumnBlock) {
    const long j1 = std::min(m, j0 + kColumnBlock);
    for (long j = j0; j < j1; ++j) mean[j] = 0.0;
    for (long i = 0; i < n; ++i)
      for (long j = j0; j < j1; ++j) mean[j] += data[i * m + j];
    for (long j = j0; j < j1; ++j) mean[j] /= static_cast<double>(n);
  }
}

/// out (m x m) = d^T d / divisor, rows of out in parallel, i-k-j order.
void gram(double* out, const double* d, long n, long m, double divisor) {
#pragma omp for schedule(static)
  for (long i = 0; i < m; ++i) {
    double* o = out + i * m;
    for (long j = 0; j < m; ++j) o[j] = 0.0;
    for (long k = 0; k < n; ++k) {
      const double dki = d[k * m + i];
      const double* row = d + k * m;
      for (long j = 0; j < m; ++j) o[j] += dki * row[j];
    }
    for (long j = 0; j < m; ++j) o[j] /= divisor;
  }
}
}  // namespace

void covariance(double* cov, const double* data, double* d, long n, long m, int threads) {
  std::vector<double> mean(static_cast<std::size_t>(m));
#pragma omp parallel num_threads(threads)
  {
    column_means(mean.data(), data, n, m);
#pragma omp for schedule(static)
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < m; ++j) d[i * m + j] = data[i * m + j] - mean[j];
    gram(cov, d, n, m, static_cast<double>(n - 1));
  }
}

void correlation(double* corr, const double* data, double* d, long n, long m, int threads) {
  std::vector<double> mean(static_cast<std::size_t>(m)), sd(static_cast<std::size_t>(m));
  const double root_n = std::sqrt(static_cast<double>(n));
#pragma omp parallel num_threads(threads)
  {
    column_means(mean.data(), data, n, m);
#pragma omp for schedule(static)
    for (long j0 = 0; j0 < m; j0 += kColumnBlock) {
      const long j1 = std::min(m, j0 + kColumnBlock);
      for (long j = j0; j < j1; ++j) sd[j] = 0.0;
      for (long i = 0; i < n; ++i)
        for (long j = j0; j < j1; ++j) sd[j] += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
      for (long j = j0; j < j1; ++j) {
        const double s = std::sqrt(sd[j] / static_cast<double>(n));
        sd[j] = s <= 0.1 ? 1.0 : s;
      }
    }
#pragma omp for schedule(static)
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < m; ++j) d[i * m + j] = (data[i * m + j] - mean[j]) / (root_n * sd[j]);
    gram(corr, d, n, m, 1.0);
  }
}

void doitgen(double* A, const double* C4, long rows, long np, int threads) {
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> sum(static_cast<std::size_t>(np));
#pragma omp for schedule(static)
    for (long r = 0; r < rows; ++r) {
      double* a = A + r * np;
      std::fill(sum.begin(), sum.end(), 0.0);
      for (long s = 0; s < np; ++s) {
        const double v = a[s];
        const double* c = C4 + s * np;
        for (long p = 0; p < np; ++p) sum[static_cast<std::size_t>(p)] += v * c[p];
      }
      std::copy(sum.begin(), sum.end(), a);
    }
  }
}

}  // namespace suite::ref
