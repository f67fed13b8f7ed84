// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A histogram of N values into 256 bins: `hist[k] += 1` at data-dependent bins inside a prange, an array
// reduction that kiln makes race-free (per-thread copies of the bins, or atomics for large histograms).
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 10'000'000);
  kiln::Options opts;
  opts.target = args.target;
  auto histogram = kiln::jit("histogram", [](kiln::Array<double, 1> x, kiln::Array<std::int64_t, 1> hist) {
    const auto bins = kiln::to_double(hist.shape(0));
    kiln::prange(x.shape(0), [&](kiln::Int i) { hist[kiln::to_int(x[i] * bins)] += 1; });
  }, opts);

  const std::size_t n = static_cast<std::size_t>(args.n);
  constexpr std::size_t kBins = 256;
  std::vector<double> x(n);
  std::mt19937_64 rng(23);
  std::normal_distribution<double> dist(0.5, 0.15);
  for (auto& v : x) {
    do v = dist(rng);
    while (v < 0.0 || v >= 1.0);
  }

  std::vector<std::int64_t> got(kBins, 0), warm(kBins, 0), want(kBins, 0);
  const double first_s = example::seconds([&] { histogram(x, got); });
  const double warm_s = example::seconds([&] { histogram(x, warm); });
  const double ref_s = example::seconds([&] {
    for (double v : x) ++want[static_cast<std::size_t>(v * static_cast<double>(kBins))];
  });

  std::int64_t total = 0, wrong = 0;
  for (std::size_t b = 0; b < kBins; ++b) {
    total += got[b];
    wrong += got[b] != want[b] || warm[b] != want[b];
  }
  std::printf("histogram %lld of %zu bins differ from the reference\n", static_cast<long long>(wrong), kBins);
  int rc = example::verdict("histogram", static_cast<double>(total), static_cast<double>(n), 0, first_s, warm_s, ref_s);
  if (wrong) rc = 1;
  return rc;
}
