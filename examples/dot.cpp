// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dot(x, y) over double arrays: a parallel sum reduction, bitwise identical for any thread count.
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 20'000'000);
  kiln::Options opts;
  opts.target = args.target;
  auto dot = kiln::jit("dot", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  }, opts);
  // The same sum written by hand: serially, and with an OpenMP reduction on kiln's thread count.
  auto serial = [](const std::vector<double>& x, const std::vector<double>& y) {
    double s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
    return s;
  };
  auto openmp = [](const std::vector<double>& x, const std::vector<double>& y) {
    const long long n = static_cast<long long>(x.size());
    double s = 0;
#pragma omp parallel for reduction(+ : s) num_threads(kiln::num_threads())
    for (long long i = 0; i < n; ++i) s += x[i] * y[i];
    return s;
  };

  const std::size_t n = static_cast<std::size_t>(args.n);
  std::vector<double> x(n), y(n);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);

  {
    const std::size_t m = std::min<std::size_t>(n, example::first_call_n);
    const std::vector<double> xs(x.begin(), x.begin() + m), ys(y.begin(), y.begin() + m);
    example::first_call("dot", static_cast<long long>(m), [&] { dot(xs, ys); });
  }
  const double got = dot(x, y);
  long double exact = 0;  // extended precision reference, sequential
  for (std::size_t i = 0; i < n; ++i) exact += static_cast<long double>(x[i]) * y[i];
  const double want = static_cast<double>(exact);
  // Error bound of a blocked float sum: ~ n * eps * sum|x*y| with a small constant; tol relative to n.
  double abs_sum = 0;
  for (std::size_t i = 0; i < n; ++i) abs_sum += std::fabs(x[i] * y[i]);
  const double tol = 4e-16 * std::sqrt(static_cast<double>(n)) * abs_sum / std::fmax(1.0, std::fabs(want)) + 1e-15;
  int rc = example::check("dot", got, want, tol) ? 0 : 1;

  double warm = 0, serial_v = 0, openmp_v = 0;
  example::compare("dot", args.reps, [&] { warm = dot(x, y); }, [&] { serial_v = serial(x, y); },
                   [&] { openmp_v = openmp(x, y); });
  // The hand-written loops sum in other orders (a running sum, OpenMP's per-thread sums): within n * eps.
  const double loop_tol = 4e-16 * static_cast<double>(n) * abs_sum + 1e-15;
  if (std::fabs(serial_v - want) > loop_tol || std::fabs(openmp_v - want) > loop_tol) {
    std::printf("dot: the hand-written loops disagree (serial %.17g, OpenMP %.17g, exact %.17g)\n", serial_v,
                openmp_v, want);
    rc = 1;
  }

  // Determinism: the same bits with 1, 2 and 3 threads, and from call to call.
  const int threads = kiln::num_threads();
  for (int t : {1, 2, 3}) {
    kiln::set_num_threads(t);
    const double v = dot(x, y);
    if (v != got) {
      std::printf("dot: MISMATCH with %d threads: %.17g vs %.17g\n", t, v, got);
      rc = 1;
    }
  }
  kiln::set_num_threads(threads);
  if (got != warm) {
    std::printf("dot: MISMATCH between two calls (%.17g vs %.17g)\n", got, warm);
    rc = 1;
  }
  example::print_cache_stats("dot");
  return rc;
}
