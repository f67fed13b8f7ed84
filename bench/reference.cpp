// What a careful C++ programmer writes with OpenMP for the same work (parallel + simd, static schedule).
#include "reference.hpp"

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

}  // namespace ref
