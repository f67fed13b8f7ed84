// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "reference_sort.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace ref {
namespace {

bool less(double a, double b) { return a < b || (std::isnan(b) && !std::isnan(a)); }
bool less(std::int32_t a, std::int32_t b) { return a < b; }

/// A parallel stable merge sort of x[0..n) with `cmp`: chunks sorted by the threads, merged pairwise in rounds
/// through a buffer of n elements.
template <class T, class Cmp>
void merge_sort(T* x, long n, int threads, Cmp cmp) {
  const int parts = std::max(1, std::min<int>(threads, static_cast<int>(n / 4096) + 1));
  std::vector<long> bound(static_cast<size_t>(parts) + 1);
  for (int p = 0; p <= parts; ++p) bound[static_cast<size_t>(p)] = n * p / parts;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) std::stable_sort(x + bound[static_cast<size_t>(p)], x + bound[static_cast<size_t>(p) + 1], cmp);
  if (parts == 1) return;
  std::vector<T> buffer(static_cast<size_t>(n));
  T* from = x;
  T* to = buffer.data();
  for (int width = 1; width < parts; width *= 2) {
    const int pairs = (parts + 2 * width - 1) / (2 * width);
#pragma omp parallel for num_threads(std::min(threads, pairs)) schedule(static, 1)
    for (int q = 0; q < pairs; ++q) {
      const long lo = bound[static_cast<size_t>(std::min(parts, 2 * width * q))];
      const long mid = bound[static_cast<size_t>(std::min(parts, 2 * width * q + width))];
      const long hi = bound[static_cast<size_t>(std::min(parts, 2 * width * q + 2 * width))];
      std::merge(from + lo, from + mid, from + mid, from + hi, to + lo, cmp);
    }
    std::swap(from, to);
  }
  if (from != x) std::copy(from, from + n, x);
}

}  // namespace

void sort(double* x, long n, int threads) { merge_sort(x, n, threads, [](double a, double b) { return less(a, b); }); }
void sort(std::int32_t* x, long n, int threads) {
  merge_sort(x, n, threads, [](std::int32_t a, std::int32_t b) { return less(a, b); });
}

void argsort(const double* x, std::int64_t* out, long n, int threads) {
  std::vector<std::pair<double, std::int64_t>> pairs(static_cast<size_t>(n));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < n; ++i) pairs[static_cast<size_t>(i)] = {x[i], i};
  merge_sort(pairs.data(), n, threads, [](const auto& a, const auto& b) { return less(a.first, b.first); });
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < n; ++i) out[i] = pairs[static_cast<size_t>(i)].second;
}

void stable_sort_serial(double* x, long n) { std::stable_sort(x, x + n, [](double a, double b) { return less(a, b); }); }
void stable_sort_serial(std::int32_t* x, long n) { std::stable_sort(x, x + n); }

}  // namespace ref
