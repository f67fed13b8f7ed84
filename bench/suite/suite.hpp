// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-suite: a public kernel suite. Each kernel is written twice, from its mathematical description: in kiln
// as a user would first write it (array expressions where they are natural) and as a hand-written C++/OpenMP
// reference doing the same arithmetic in the natural loop order (compiled -O3 -march=native, as
// bench/reference.cpp). Both run in one process, interleaved; their results are compared on every run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <kiln/ndarray.hpp>

#include "../measure.hpp"

namespace suite {

/// One kernel of the suite at one size. `kiln` and `ref` each run the workload once; `reset` (optional)
/// restores both sides' inputs for kernels that update their arrays in place, so that the compared results
/// come from one call each on equal inputs; `check` compares the last kiln result with the last reference
/// result and returns "" or where they differ.
struct Case {
  std::function<void()> kiln;
  std::function<void()> ref;
  std::function<void()> reset;
  std::function<std::string()> check;
  /// What one call computes, for the table's header line (sizes).
  std::string shape;
};

/// A kernel of the suite: its name, where it comes from ("polybench" or "user") and the maker of its case at
/// the timed size or, with `smoke`, at a tiny size.
struct Kernel {
  std::string name;
  std::string origin;
  Case (*make)(bool smoke);
};

/// Registers a kernel (from a static initializer: see KILN_SUITE).
bool add(Kernel k);
/// Every registered kernel, in registration order within each file.
std::vector<Kernel>& kernels();

using bench::median;
using bench::now_s;

/// "n=3 m=5": a case's sizes as its row shows them.
std::string dims(std::initializer_list<std::pair<const char*, long long>> items);

/// Memory for the references' arrays, allocated as kiln allocates its arrays (64-byte aligned, transparent
/// huge pages from 4 MiB up), so neither side gets better pages than the other.
struct Buffer {
  std::unique_ptr<double, decltype(&std::free)> p{nullptr, &std::free};
  std::size_t n = 0;
  Buffer() = default;
  explicit Buffer(std::size_t count) { fresh(count); }
  /// Replaces the memory with a new, uninitialized block of `count` doubles (per call, as a kernel's
  /// returned array is allocated per call).
  void fresh(std::size_t count) {
    p.reset(static_cast<double*>(kiln::detail::allocate_array_memory(std::max<std::size_t>(1, count) * sizeof(double))));
    if (!p) throw std::bad_alloc();
    n = count;
  }
  double* get() const { return p.get(); }
  double& operator[](std::size_t i) const { return p.get()[i]; }
};

/// An n-d array of doubles uniform in [lo, hi), from `seed`.
kiln::NDArray<double> random_array(std::vector<std::int64_t> shape, unsigned seed, double lo = -1, double hi = 1);
/// A copy of `a` (its own memory).
kiln::NDArray<double> copy(const kiln::NDArray<double>& a);
/// A copy of `a` into reference memory.
Buffer copy_to_buffer(const kiln::NDArray<double>& a);
/// Copies `from` into `to` (same element count).
void copy_into(const kiln::NDArray<double>& from, kiln::NDArray<double>& to);
void copy_into(const kiln::NDArray<double>& from, Buffer& to);

/// An array a kernel updates in place, twice: kiln's copy and the reference's, both restored from `init` by
/// reset() so that a check compares one call of each on equal inputs.
struct Twin {
  kiln::NDArray<double> init, k;
  Buffer r;
  explicit Twin(kiln::NDArray<double> a);
  void reset();
  std::size_t size() const { return static_cast<std::size_t>(init.size()); }
};

/// "" if every |got - want| <= tol * max(scale, |want|), else the first element that is not, with `what`.
/// `scale` is the magnitude of the values the result is made from: results that cancel to near zero carry an
/// absolute error of the order of the terms, not of themselves.
std::string compare(const char* what, const double* got, const double* want, std::size_t n, double tol,
                    double scale = 1.0);
/// compare() of a twin's two copies.
std::string compare(const char* what, const Twin& t, double tol, double scale = 1.0);
/// The largest |v| of n values (the scale of results that are sums of terms of either sign).
double max_abs(const double* v, std::size_t n);
/// The same for integer counts: exact.
std::string compare_counts(const char* what, const std::int64_t* got, const std::int64_t* want, std::size_t n);

}  // namespace suite

#define KILN_SUITE_CONCAT2(a, b) a##b
#define KILN_SUITE_CONCAT(a, b) KILN_SUITE_CONCAT2(a, b)
/// Registers the following function, `suite::Case fn(bool smoke)`, as kernel `name` from `origin`.
#define KILN_SUITE(fn, name, origin)                                                    \
  static suite::Case fn(bool smoke);                                                    \
  static const bool KILN_SUITE_CONCAT(registered_, fn) = suite::add({name, origin, &fn}); \
  static suite::Case fn(bool smoke)
