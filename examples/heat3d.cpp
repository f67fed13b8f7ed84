// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 100 explicit time steps of the 3-d heat equation in ONE kernel: a 7-point stencil writes the next state
// into a second buffer and kiln::swap exchanges the buffers at the end of each step (the loop body is traced
// once; the swap rebinds the arrays at run time). Insulated walls: Border::nearest.
#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "example.hpp"

namespace {
constexpr double c = 1.0 / 8;  // the diffusion number; stable for c <= 1/6
}  // namespace

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 128LL * 128 * 128);
  kiln::Options opts;
  opts.target = args.target;
  constexpr int steps = 100;
  const auto step = kiln::stencil("heat_step", [](kiln::Window<double, 3> u) {
    return u(0, 0, 0) + c * (u(-1, 0, 0) + u(1, 0, 0) + u(0, -1, 0) + u(0, 1, 0) + u(0, 0, -1) + u(0, 0, 1) -
                             6.0 * u(0, 0, 0));
  }, kiln::border(kiln::Border::nearest));
  auto heat = kiln::jit("heat3d", [&](kiln::Array<double, 3> u0, kiln::Int nsteps) {
    kiln::Array<double, 3> u = kiln::empty_like(u0), v = kiln::empty_like(u0);
    u(kiln::all) = u0;  // the caller's array is only read
    kiln::range(nsteps, [&](kiln::Int) {
      step.into(v, u);
      kiln::swap(u, v);
    });
    return u;
  }, opts);

  const long n = std::max(3L, std::lround(std::cbrt(static_cast<double>(args.n))));
  const long total = n * n * n;
  kiln::NDArray<double> u0({n, n, n});
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> dist(0.0, 100.0);
  for (long k = 0; k < total; ++k) u0.data()[k] = dist(rng);

  kiln::NDArray<double> got;
  const double first_s = example::seconds([&] { got = heat(u0, steps); });
  const double warm_s = example::seconds([&] { got = heat(u0, steps); });

  std::vector<double> u(u0.data(), u0.data() + total), v(static_cast<size_t>(total));
  const double ref_s = example::seconds([&] {
    auto at = [&](long i, long j, long k) {
      i = std::clamp(i, 0L, n - 1), j = std::clamp(j, 0L, n - 1), k = std::clamp(k, 0L, n - 1);
      return u[static_cast<size_t>((i * n + j) * n + k)];
    };
    for (int s = 0; s < steps; ++s) {
      for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j)
          for (long k = 0; k < n; ++k)
            v[static_cast<size_t>((i * n + j) * n + k)] =
                at(i, j, k) + c * (at(i - 1, j, k) + at(i + 1, j, k) + at(i, j - 1, k) + at(i, j + 1, k) +
                                   at(i, j, k - 1) + at(i, j, k + 1) - 6.0 * at(i, j, k));
      std::swap(u, v);
    }
  });

  double max_err = 0, sum = 0, ref_sum = 0;
  for (long k = 0; k < total; ++k) {
    max_err = std::fmax(max_err, std::fabs(got.data()[k] - u[static_cast<size_t>(k)]));
    sum += got.data()[k];
    ref_sum += u[static_cast<size_t>(k)];
  }
  std::printf("heat3d   %ld^3, %d steps, max |kiln - reference| = %.3g (total heat %.6g, conserved by the walls)\n",
              n, steps, max_err, sum);
  int rc = example::verdict("heat3d", sum, ref_sum, 1e-10, first_s, warm_s, ref_s);
  if (!(max_err <= 1e-9)) rc = 1;
  return rc;
}
