// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One Jacobi sweep on an n x n grid: each interior element becomes the average of its four neighbours (the
// seed's `@stencil def jacobi_kernel(a): return 0.25 * (a[0,1] + a[0,-1] + a[-1,0] + a[1,0])` called from a
// jitted `run_jacobi`). Border::skip leaves the boundary alone: a new output keeps the input's boundary
// values there (Numba would write 0 into it), a fixed-boundary Laplace iteration.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 4096LL * 4096);
  kiln::Options opts;
  opts.target = args.target;
  const auto jacobi = kiln::stencil("jacobi", [](kiln::Window<double, 2> a) {
    return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0));
  }, kiln::border(kiln::Border::skip) | kiln::kernel_options(opts));
  auto run_jacobi = kiln::jit("run_jacobi", [&](kiln::Array<double, 2> a) { return jacobi(a); }, opts);

  const long n = std::max(3L, std::lround(std::sqrt(static_cast<double>(args.n))));
  kiln::NDArray<double> a({n, n});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  for (long k = 0; k < n * n; ++k) a.data()[k] = dist(rng);

  kiln::NDArray<double> got;
  const double first_s = example::seconds([&] { got = run_jacobi(a); });
  const double warm_s = example::seconds([&] { got = run_jacobi(a); });
  const kiln::NDArray<double> standalone = jacobi(a);  // the same stencil called on host arrays directly

  std::vector<double> want;
  const double ref_s = example::seconds([&] {
    want = std::vector<double>(static_cast<size_t>(n * n));  // a new array, as kiln returns one
    const double* x = a.data();
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        const long k = i * n + j;
        const bool border = i == 0 || j == 0 || i == n - 1 || j == n - 1;
        want[static_cast<size_t>(k)] = border ? x[k] : 0.25 * (x[k + 1] + x[k - 1] + x[k - n] + x[k + n]);
      }
  });

  double max_err = 0, sum = 0, ref_sum = 0;
  for (long k = 0; k < n * n; ++k) {
    const double w = want[static_cast<size_t>(k)];
    max_err = std::fmax(max_err, std::fmax(std::fabs(got.data()[k] - w), std::fabs(standalone.data()[k] - w)));
    sum += got.data()[k];
    ref_sum += w;
  }
  std::printf("jacobi2d %ld x %ld, max |kiln - reference| = %.3g (in a kernel and stand-alone)\n", n, n, max_err);
  int rc = example::verdict("jacobi2d", sum, ref_sum, 1e-12, first_s, warm_s, ref_s);
  if (!(max_err <= 1e-12)) rc = 1;
  return rc;
}
