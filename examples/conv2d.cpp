// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A 5x5 convolution (correlation) with weights given at run time: the seed's Ramba "general stencil". The
// body loops over the offsets with kiln::range, so the offsets are traced values and the neighbourhood is
// declared; kiln unrolls the loops while tracing (the weights stay run-time values). Zero padding outside
// the image: kiln::constant(0.0).
#include <cmath>
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 4096LL * 4096);
  kiln::Options opts;
  opts.target = args.target;
  const auto conv = kiln::stencil("conv5x5", [](kiln::Window<double, 2> a, kiln::Array<double, 2> w) {
    kiln::Double acc = 0.0;
    kiln::range(-2, 3, [&](kiln::Int di) {
      kiln::range(-2, 3, [&](kiln::Int dj) { acc += w(di + 2, dj + 2) * a(di, dj); });
    });
    return acc;
  }, kiln::neighborhood({-2, 2}, {-2, 2}) | kiln::constant(0.0) | kiln::kernel_options(opts));

  const long n = std::max(5L, std::lround(std::sqrt(static_cast<double>(args.n))));
  kiln::NDArray<double> img({n, n}), w({5, 5});
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  for (long k = 0; k < n * n; ++k) img.data()[k] = dist(rng);
  double wsum = 0;
  for (long k = 0; k < 25; ++k) wsum += w.data()[k] = dist(rng);
  for (long k = 0; k < 25; ++k) w.data()[k] /= wsum;  // a normalized blur

  kiln::NDArray<double> got({n, n});
  const double first_s = example::seconds([&] { conv.into(got, img, w); });
  const double warm_s = example::seconds([&] { conv.into(got, img, w); });
  std::vector<double> want(static_cast<size_t>(n * n));
  const double ref_s = example::seconds([&] {
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        double acc = 0.0;
        for (long p = -2; p <= 2; ++p)
          for (long q = -2; q <= 2; ++q) {
            const long r = i + p, s = j + q;
            const double x = r < 0 || r >= n || s < 0 || s >= n ? 0.0 : img.data()[r * n + s];
            acc += w.data()[(p + 2) * 5 + q + 2] * x;
          }
        want[static_cast<size_t>(i * n + j)] = acc;
      }
  });

  double max_err = 0, sum = 0, ref_sum = 0;
  for (long k = 0; k < n * n; ++k) {
    max_err = std::fmax(max_err, std::fabs(got.data()[k] - want[static_cast<size_t>(k)]));
    sum += got.data()[k];
    ref_sum += want[static_cast<size_t>(k)];
  }
  std::printf("conv2d   %ld x %ld, 5x5 weights, max |kiln - reference| = %.3g\n", n, n, max_err);
  int rc = example::verdict("conv2d", sum, ref_sum, 1e-12, first_s, warm_s, ref_s);
  if (!(max_err <= 1e-12)) rc = 1;
  return rc;
}
