// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Logistic regression by gradient descent, the classic ParallelAccelerator example:
//   w -= dot(((1 / (1 + exp(-Y * dot(X, w)))) - 1) * Y, X)
// over N samples of 10 features, 20 iterations inside one kernel.
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 1'000'000);
  kiln::Options opts;
  opts.target = args.target;
  auto train = kiln::jit("logistic_regression", [](kiln::Array<double, 2> X, kiln::Array<double, 1> Y,
                                                   kiln::Array<double, 1> w, kiln::Int iterations) {
    kiln::range(iterations, [&](kiln::Int) {
      w -= kiln::dot(((1.0 / (1.0 + kiln::exp(-Y * kiln::dot(X, w)))) - 1.0) * Y, X);
    });
  }, opts);

  const std::int64_t n = std::max<long long>(1, args.n), d = 10, iterations = 20;
  kiln::NDArray<double> X({n, d});
  std::vector<double> Y(static_cast<std::size_t>(n)), w0(static_cast<std::size_t>(d));
  std::mt19937_64 rng(17);
  std::normal_distribution<double> feature(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (std::int64_t k = 0; k < n * d; ++k) X[k] = feature(rng) * 1e-3;
  for (auto& y : Y) y = uniform(rng) > 0 ? 1.0 : -1.0;
  for (auto& v : w0) v = uniform(rng);

  std::vector<double> w = w0;
  const double first_s = example::seconds([&] { train(X, Y, w, iterations); });
  std::vector<double> warm = w0;
  const double warm_s = example::seconds([&] { train(X, Y, warm, iterations); });
  std::vector<double> want = w0, z(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(d));
  const double ref_s = example::seconds([&] {
    for (std::int64_t it = 0; it < iterations; ++it) {
      for (std::int64_t i = 0; i < n; ++i) {
        double s = 0;
        for (std::int64_t j = 0; j < d; ++j) s += X(i, j) * want[static_cast<std::size_t>(j)];
        const double y = Y[static_cast<std::size_t>(i)];
        z[static_cast<std::size_t>(i)] = (1.0 / (1.0 + std::exp(-y * s)) - 1.0) * y;
      }
      std::fill(g.begin(), g.end(), 0.0);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < d; ++j) g[static_cast<std::size_t>(j)] += z[static_cast<std::size_t>(i)] * X(i, j);
      for (std::int64_t j = 0; j < d; ++j) want[static_cast<std::size_t>(j)] -= g[static_cast<std::size_t>(j)];
    }
  });

  double max_err = 0, norm = 0, ref_norm = 0;
  for (std::int64_t j = 0; j < d; ++j) {
    const auto k = static_cast<std::size_t>(j);
    max_err = std::fmax(max_err, std::fabs(w[k] - want[k]) / std::fmax(1.0, std::fabs(want[k])));
    norm += w[k] * w[k];
    ref_norm += want[k] * want[k];
  }
  std::printf("logistic_regression max relative error of w %.3g (%lld samples, %lld features, %lld iterations)\n",
              max_err, static_cast<long long>(n), static_cast<long long>(d), static_cast<long long>(iterations));
  int rc = example::verdict("logistic_regression", norm, ref_norm, 1e-9, first_s, warm_s, ref_s);
  // On the CPU kiln's reductions combine in a fixed order, so two calls agree bit for bit. The GPU promises
  // that only for scalar reductions: the gradient (an array reduction) is summed with atomics there, whose
  // order varies from run to run, so two calls agree to rounding.
  double run_to_run = 0;
  for (std::size_t k = 0; k < w.size(); ++k)
    run_to_run = std::fmax(run_to_run, std::fabs(w[k] - warm[k]) / std::fmax(1.0, std::fabs(w[k])));
  const double run_tol = args.target == kiln::Target::cuda ? 1e-12 : 0.0;
  if (max_err > 1e-9 || run_to_run > run_tol) rc = 1;
  return rc;
}
