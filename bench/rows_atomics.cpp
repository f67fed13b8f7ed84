// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Atomics rows (issue 19): a histogram with data-dependent bins by kiln::atomic_add against the same by hand with
// `#pragma omp atomic`, at 256 bins (contended) and 65536 bins (spread out), over the histogram row's 10^7 values.
// Each row also times kiln's own histogram (`hist[bin] += 1`, an array reduction on per-thread copies) on the same
// data, as `reduction_ms` in the row's extra output: what a user gives up by asking for atomics where a
// reduction would do.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference_atomics.hpp"

namespace {

auto make_atomic_histogram() {
  return kiln::jit("atomic_histogram", [](kiln::Array<double> x, kiln::Array<std::int64_t> hist) {
    const auto bins = kiln::to_double(hist.shape(0));
    kiln::prange(x.shape(0), [&](kiln::Int i) { kiln::atomic_add(hist[kiln::to_int(x[i] * bins)], 1); });
  }, bench::kernel_options());
}

auto make_reduction_histogram() {
  return kiln::jit("reduction_histogram", [](kiln::Array<double> x, kiln::Array<std::int64_t> hist) {
    const auto bins = kiln::to_double(hist.shape(0));
    kiln::prange(x.shape(0), [&](kiln::Int i) { hist[kiln::to_int(x[i] * bins)] += 1; });
  }, bench::kernel_options());
}

bench::Case histogram_case(long bins) {
  struct State {
    bench::Vector x;
    std::vector<std::int64_t> hist, hist_ref, hist_red;
    decltype(make_atomic_histogram()) k = make_atomic_histogram();
    decltype(make_reduction_histogram()) red = make_reduction_histogram();
    std::vector<double> empty;
    std::vector<std::int64_t> empty_hist = std::vector<std::int64_t>(4, 0);
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size() / 2;  // 10^7 at the default size, as the histogram row
  bench::Case c;
  c.name = "hist_atomic_" + std::to_string(bins);
  c.bytes = 8.0 * static_cast<double>(n);
  c.setup = [s, n, bins] {
    s->x = bench::random_vector(static_cast<std::size_t>(n), 5, 0.0, 1.0);
    s->hist.assign(static_cast<std::size_t>(bins), 0);
    s->hist_ref.assign(static_cast<std::size_t>(bins), 0);
    s->hist_red.assign(static_cast<std::size_t>(bins), 0);
  };
  c.kiln = [s] { s->k(s->x, s->hist); };
  c.ref = [s, n, bins] { ref::histogram_atomic(s->x.data(), static_cast<long>(n), s->hist_ref.data(), bins, kiln::num_threads()); };
  c.check = [s] {
    // Both ran the same number of times from zero: integer atomics are exact.
    for (std::size_t b = 0; b < s->hist.size(); ++b)
      if (s->hist[b] != s->hist_ref[b])
        return "bin " + std::to_string(b) + ": " + std::to_string(s->hist[b]) + " vs " + std::to_string(s->hist_ref[b]);
    return std::string();
  };
  c.extra = [s] {
    // kiln's reproducible histogram on the same data: median of 9 calls.
    std::vector<double> t;
    for (int r = 0; r < 10; ++r) {
      const double t0 = bench::now_s();
      s->red(s->x, s->hist_red);
      if (r > 0) t.push_back(bench::now_s() - t0);
    }
    return "\"reduction_ms\":" + std::to_string(bench::median(t) * 1e3);
  };
  c.teardown = [s] { s->x = {}; };
  c.cold_compile = [] {
    auto k = make_atomic_histogram();
    std::vector<double> x(1, 0.5);
    std::vector<std::int64_t> h(4, 0);
    k(x, h);
  };
  c.empty_call = [s] { s->k(s->empty, s->empty_hist); };
  return c;
}

}  // namespace

KILN_BENCH(hist_atomic_256_case) { return histogram_case(256); }
KILN_BENCH(hist_atomic_65536_case) { return histogram_case(65536); }
