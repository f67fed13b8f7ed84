// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Row histogram: an array reduction (`hist[bin] += 1` at data-dependent bins in a prange), 10^7 values
// into 256 bins at the default size. kiln gives each thread a private copy of the bins and combines them,
// as the reference does by hand.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference.hpp"

namespace {

auto make_histogram() {
  return kiln::jit("histogram", [](kiln::Array<double> x, kiln::Array<std::int64_t> hist) {
    const auto bins = kiln::to_double(hist.shape(0));
    kiln::prange(x.shape(0), [&](kiln::Int i) { hist[kiln::to_int(x[i] * bins)] += 1; });
  }, bench::kernel_options());
}

}  // namespace

KILN_BENCH(histogram_case) {
  struct State {
    bench::Vector x;
    std::vector<std::int64_t> hist, hist_ref;
    decltype(make_histogram()) k = make_histogram();
    std::vector<double> empty;
    std::vector<std::int64_t> empty_hist = std::vector<std::int64_t>(256, 0);
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size() / 2;  // 10^7 at the default size
  constexpr long kBins = 256;
  bench::Case c;
  c.name = "histogram";
  c.bytes = 8.0 * static_cast<double>(n);
  c.setup = [s, n] {
    s->x = bench::random_vector(static_cast<std::size_t>(n), 5, 0.0, 1.0);
    s->hist.assign(kBins, 0);
    s->hist_ref.assign(kBins, 0);
  };
  c.kiln = [s] { s->k(s->x, s->hist); };
  c.ref = [s, n] {
    static_assert(sizeof(long) == sizeof(std::int64_t));
    ref::histogram(s->x.data(), static_cast<long>(n), reinterpret_cast<long*>(s->hist_ref.data()), kBins, kiln::num_threads());
  };
  c.check = [s] {
    // Both ran the same number of times from zero: the counts are exact.
    for (std::size_t b = 0; b < s->hist.size(); ++b)
      if (s->hist[b] != s->hist_ref[b]) return "bin " + std::to_string(b) + ": " + std::to_string(s->hist[b]) + " vs " + std::to_string(s->hist_ref[b]);
    return std::string();
  };
  c.teardown = [s] { s->x = {}; };
  c.cold_compile = [] {
    auto k = make_histogram();
    std::vector<double> x(1, 0.5);
    std::vector<std::int64_t> h(4, 0);
    k(x, h);
  };
  c.empty_call = [s] { s->k(s->empty, s->empty_hist); };
  return c;
}
