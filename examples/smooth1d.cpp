// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A 3-point smoothing of N values, 0.25 a[i-1] + 0.5 a[i] + 0.25 a[i+1] (the seed's Ramba `smooth`), as a
// stand-alone stencil: `smooth(x)` on a host array compiles it like a kernel and returns a new array. The
// ends repeat the edge value (Border::nearest), so the output has N values.
#include <cmath>
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 20'000'000);
  kiln::Options opts;
  opts.target = args.target;
  const auto smooth = kiln::stencil("smooth", [](kiln::Window<double, 1> a) {
    return 0.25 * a(-1) + 0.5 * a(0) + 0.25 * a(1);
  }, kiln::border(kiln::Border::nearest) | kiln::kernel_options(opts));

  const long n = std::max(3LL, args.n);
  std::vector<double> x(static_cast<size_t>(n));
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& v : x) v = dist(rng);

  kiln::NDArray<double> got;
  const double first_s = example::seconds([&] { got = smooth(x); });
  const double warm_s = example::seconds([&] { got = smooth(x); });
  std::vector<double> want;
  const double ref_s = example::seconds([&] {
    want = std::vector<double>(x.size());  // a new array, as kiln returns one
    for (long i = 0; i < n; ++i) {
      const double l = x[static_cast<size_t>(i == 0 ? 0 : i - 1)], r = x[static_cast<size_t>(i == n - 1 ? i : i + 1)];
      want[static_cast<size_t>(i)] = 0.25 * l + 0.5 * x[static_cast<size_t>(i)] + 0.25 * r;
    }
  });

  double max_err = 0, sum = 0, ref_sum = 0;
  for (long i = 0; i < n; ++i) {
    max_err = std::fmax(max_err, std::fabs(got.data()[i] - want[static_cast<size_t>(i)]));
    sum += got.data()[i];
    ref_sum += want[static_cast<size_t>(i)];
  }
  std::printf("smooth1d %ld values, max |kiln - reference| = %.3g\n", n, max_err);
  int rc = example::verdict("smooth1d", sum, ref_sum, 1e-12, first_s, warm_s, ref_s);
  if (!(max_err <= 1e-14)) rc = 1;
  return rc;
}
