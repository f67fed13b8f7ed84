// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP references, compiled with -O3 -march=native -fopenmp (bench/CMakeLists.txt).
#pragma once

namespace ref {

void saxpy(double a, const double* x, double* y, long n, int threads);
double dot(const double* x, const double* y, long n, int threads);
double pi(long n, int threads);
/// Adds the histogram of x (values in [0, 1), bin = long(x * bins)) to hist: per-thread private histograms,
/// combined at the end.
void histogram(const double* x, long n, long* hist, long bins, int threads);

/// softmax(a) into out: the max, exp stored and summed, then out /= sum.
void softmax(const double* a, double* out, long n, int threads);
/// `iterations` steps of w -= dot(((1 / (1 + exp(-Y * dot(X, w)))) - 1) * Y, X), X row-major n x d.
void logistic_regression(const double* X, const double* Y, double* w, long n, long d, long iterations, int threads);
/// Black-Scholes call prices with erf.
void black_scholes(const double* S, const double* K, const double* T, double r, double v, double* out, long n,
                   int threads);
/// (x - mean(x, axis=1)) / std(x, axis=1) of a row-major rows x cols matrix, into out.
void normalize(const double* x, double* out, long rows, long cols, int threads);

}  // namespace ref
