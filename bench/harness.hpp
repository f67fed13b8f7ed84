// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench: a plain harness that times kiln and a hand-written C++/OpenMP reference of the same work in
// the same process, interleaved, and reports medians.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include <kiln/ndarray.hpp>
#include <kiln/options.hpp>
#include <kiln/stencil.hpp>

#include "measure.hpp"

namespace bench {

/// One row of the table. `setup` allocates and fills inputs (and warms up: first calls compile);
/// `kiln` and `ref` each run the workload once; `bytes` is the minimum memory traffic of one run.
struct Case {
  std::string name;
  double bytes = 0;
  std::function<void()> setup;
  std::function<void()> kiln;
  std::function<void()> ref;
  std::function<void()> teardown;
  /// Builds a fresh kernel and calls it once on a tiny input: measures a cold compile.
  std::function<void()> cold_compile;
  /// Calls an already compiled kernel on an empty input: measures dispatch overhead.
  std::function<void()> empty_call;
  /// Compares the last kiln and reference results; returns "" or a message.
  std::function<std::string()> check;
  /// Optional: runs kiln and the reference once more, each into its own output, for `check`. Rows whose
  /// timed `kiln` and `ref` write into one shared output set it, so that where each side writes is not part
  /// of the comparison: timed against itself (`kiln-bench --aa`), the reference writing into two equally
  /// made 134 MB buffers differed by up to 16 % on the shared 2-core VM (heat3d: median 1.11 over nine runs).
  std::function<void()> verify;
  /// Optional measurements of the row's own, run after the timings: JSON members without braces
  /// (`"peak_extra_bytes":123`), printed with the row.
  std::function<std::string()> extra;
};

/// Registers the maker of a case; bench files call it from a static initializer (see KILN_BENCH). Makers
/// run when cases() is first called, after the command line is read, so that they see --n.
void add(Case (*make)());
std::vector<Case>& cases();
/// Every row made afresh, its kernels with Options::boundscheck set to `on` (kiln-bench --boundscheck).
std::vector<Case> cases_with_boundscheck(bool on);

/// The options every row compiles its kernels with: kiln's defaults, except that `kiln-bench --boundscheck`
/// builds each row twice, once with Options::boundscheck off and once on, to time the mode's cost.
kiln::Options kernel_options();
/// kernel_options() for a stencil's stand-alone calls.
inline kiln::StencilOptions stencil_kernel_options() {
  kiln::StencilOptions o;
  o.kernel = kernel_options();
  return o;
}

/// The default problem size for streaming rows (overridable with --n).
long long problem_size();

/// Where the streaming rows' arrays start (--offset B): B bytes past a 64-byte boundary (default 0).
/// Loops over data that is not 64-byte aligned split some vector loads and stores across cache lines.
int data_offset();

/// Memory for the streaming rows' arrays: allocated as kiln allocates arrays (64-byte aligned, and from
/// 4 MiB up with transparent-huge-page advice, as NumPy does for the arrays Numba's side of the peers table
/// works on: on the 2-core VM, whose THP mode is `madvise`, Numba's triad ran 15 % faster than kiln's and
/// the reference's on plain std::vector memory), then offset by data_offset() bytes when --offset is given.
template <class T>
struct OffsetAllocator {
  using value_type = T;
  OffsetAllocator() = default;
  template <class U>
  OffsetAllocator(const OffsetAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t off = static_cast<std::size_t>(std::max(0, data_offset()));
    char* block = static_cast<char*>(kiln::detail::allocate_array_memory(n * sizeof(T) + off));
    if (!block) throw std::bad_alloc();
    return reinterpret_cast<T*>(block + off);
  }
  void deallocate(T* p, std::size_t) { std::free(reinterpret_cast<char*>(p) - std::max(0, data_offset())); }
  template <class U>
  bool operator==(const OffsetAllocator<U>&) const { return true; }
};

/// The streaming rows' arrays.
using Vector = std::vector<double, OffsetAllocator<double>>;

/// n values uniform in [lo, hi) from `seed`.
Vector random_vector(std::size_t n, unsigned seed, double lo = -1, double hi = 1);

}  // namespace bench

#define KILN_BENCH_CONCAT2(a, b) a##b
#define KILN_BENCH_CONCAT(a, b) KILN_BENCH_CONCAT2(a, b)
/// Registers the following function body, which returns a Case, at static-initialization time.
#define KILN_BENCH(fn)                                                  \
  static bench::Case fn();                                              \
  static const bool KILN_BENCH_CONCAT(registered_, fn) = [] {           \
    bench::add(&fn);                                                    \
    return true;                                                        \
  }();                                                                  \
  static bench::Case fn()
