// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Row normalization (x - mean(x, axis=1)) / std(x, axis=1) of an N-element matrix with 256 columns, with
// NumPy's keepdims broadcasting; the statistics are two-pass, as NumPy's.
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 16'000'000);
  kiln::Options opts;
  opts.target = args.target;
  auto normalize = kiln::jit("normalize", [](kiln::Array<double, 2> x) {
    return (x - kiln::mean(x, 1, kiln::keepdims)) / kiln::std(x, 1, kiln::keepdims);
  }, opts);

  const std::int64_t cols = 256, rows = std::max<std::int64_t>(1, args.n / cols);
  kiln::NDArray<double> x({rows, cols});
  std::mt19937_64 rng(5);
  std::normal_distribution<double> dist(3.0, 2.0);
  for (std::int64_t k = 0; k < rows * cols; ++k) x[k] = dist(rng) + static_cast<double>(k / cols % 7);

  kiln::NDArray<double> got;
  const double first_s = example::seconds([&] { got = normalize(x); });
  const double warm_s = example::seconds([&] { got = normalize(x); });
  std::vector<double> want(static_cast<std::size_t>(rows * cols));
  const double ref_s = example::seconds([&] {
    for (std::int64_t i = 0; i < rows; ++i) {
      double s = 0;
      for (std::int64_t j = 0; j < cols; ++j) s += x(i, j);
      const double mean = s / static_cast<double>(cols);
      double ss = 0;
      for (std::int64_t j = 0; j < cols; ++j) ss += (x(i, j) - mean) * (x(i, j) - mean);
      const double sd = std::sqrt(ss / static_cast<double>(cols));
      for (std::int64_t j = 0; j < cols; ++j) want[static_cast<std::size_t>(i * cols + j)] = (x(i, j) - mean) / sd;
    }
  });

  double max_err = 0, sq = 0;
  for (std::int64_t k = 0; k < rows * cols; ++k) {
    max_err = std::fmax(max_err, std::fabs(got[k] - want[static_cast<std::size_t>(k)]));
    sq += got[k] * got[k];
  }
  std::printf("normalize max |kiln - reference| = %.3g over %lld x %lld\n", max_err, static_cast<long long>(rows),
              static_cast<long long>(cols));
  // Every row has mean 0 and variance 1 afterwards, so the squares sum to the element count.
  int rc = example::verdict("normalize", sq, static_cast<double>(rows * cols), 1e-9, first_s, warm_s, ref_s);
  if (max_err > 1e-12) rc = 1;
  return rc;
}
