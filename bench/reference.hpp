// Hand-written C++/OpenMP references, compiled with -O3 -march=native -fopenmp (bench/CMakeLists.txt).
#pragma once

namespace ref {

void saxpy(double a, const double* x, double* y, long n, int threads);
double dot(const double* x, const double* y, long n, int threads);
double pi(long n, int threads);
/// Adds the histogram of x (values in [0, 1), bin = long(x * bins)) to hist: per-thread private histograms,
/// combined at the end.
void histogram(const double* x, long n, long* hist, long bins, int threads);

}  // namespace ref
