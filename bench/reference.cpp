// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a careful C++ programmer writes with OpenMP for the same work (parallel + simd, static schedule).
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ref {

void saxpy(double a, const double* x, double* y, long n, int threads) {
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

double dot(const double* x, const double* y, long n, int threads) {
  double s = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : s) num_threads(threads)
  for (long i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

double pi(long n, int threads) {
  const double step = 1.0 / static_cast<double>(n);
  double sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    const double x = (static_cast<double>(i) + 0.5) * step;
    sum += 4.0 / (1.0 + x * x);
  }
  return sum * step;
}

void histogram(const double* x, long n, long* hist, long bins, int threads) {
#pragma omp parallel num_threads(threads)
  {
    std::vector<long> local(static_cast<std::size_t>(bins), 0);
#pragma omp for schedule(static) nowait
    for (long i = 0; i < n; ++i) ++local[static_cast<std::size_t>(static_cast<long>(x[i] * static_cast<double>(bins)))];
#pragma omp critical
    for (long b = 0; b < bins; ++b) hist[b] += local[static_cast<std::size_t>(b)];
  }
}

// Each element's exp is stored while it is summed, then scaled: three passes, as few as the max's data
// dependence allows. The scaling divides (as e / sum(e) does) rather than multiplying by 1/sum, which would
// round differently.
void softmax(const double* a, double* out, long n, int threads) {
  double m = -std::numeric_limits<double>::infinity();
#pragma omp parallel for simd schedule(static) reduction(max : m) num_threads(threads)
  for (long i = 0; i < n; ++i) m = a[i] > m ? a[i] : m;
  double s = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : s) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    const double e = std::exp(a[i] - m);
    out[i] = e;
    s += e;
  }
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) out[i] /= s;
}

// One pass over X per iteration: each row's prediction and its gradient contribution together, the
// gradient reduced over threads as an OpenMP array section.
void logistic_regression(const double* X, const double* Y, double* w, long n, long d, long iterations, int threads) {
  std::vector<double> grad(static_cast<std::size_t>(d));
  double* g = grad.data();
  for (long it = 0; it < iterations; ++it) {
    std::fill(grad.begin(), grad.end(), 0.0);
#pragma omp parallel for schedule(static) reduction(+ : g[:d]) num_threads(threads)
    for (long i = 0; i < n; ++i) {
      const double* row = X + i * d;
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (long j = 0; j < d; ++j) s += row[j] * w[j];
      const double z = (1.0 / (1.0 + std::exp(-Y[i] * s)) - 1.0) * Y[i];
#pragma omp simd
      for (long j = 0; j < d; ++j) g[j] += z * row[j];
    }
    for (long j = 0; j < d; ++j) w[j] -= g[j];
  }
}

void black_scholes(const double* S, const double* K, const double* T, double r, double v, double* out, long n,
                   int threads) {
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    const double sqrtT = std::sqrt(T[i]);
    const double d1 = (std::log(S[i] / K[i]) + (r + 0.5 * v * v) * T[i]) / (v * sqrtT);
    const double d2 = d1 - v * sqrtT;
    const double cnd1 = 0.5 * (1.0 + std::erf(d1 * 0.7071067811865476));
    const double cnd2 = 0.5 * (1.0 + std::erf(d2 * 0.7071067811865476));
    out[i] = S[i] * cnd1 - K[i] * std::exp(-r * T[i]) * cnd2;
  }
}

// Row by row, so that a row is still in cache for its second and third pass: the mean, the mean square
// deviation (two-pass, as NumPy's std), then the normalized row.
void normalize(const double* x, double* out, long rows, long cols, int threads) {
  const double inv = static_cast<double>(cols);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < rows; ++i) {
    const double* row = x + i * cols;
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (long j = 0; j < cols; ++j) s += row[j];
    const double mean = s / inv;
    double ss = 0;
#pragma omp simd reduction(+ : ss)
    for (long j = 0; j < cols; ++j) ss += (row[j] - mean) * (row[j] - mean);
    const double sd = std::sqrt(ss / inv);
    double* o = out + i * cols;
#pragma omp simd
    for (long j = 0; j < cols; ++j) o[j] = (row[j] - mean) / sd;
  }
}

}  // namespace ref
