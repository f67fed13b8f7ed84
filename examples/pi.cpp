// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// pi by the midpoint rule on 4/(1+x^2): a prange whose `sum +=` becomes a deterministic parallel reduction.
#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 200'000'000);
  kiln::Options opts;
  opts.target = args.target;
  auto pi = kiln::jit("pi", [](kiln::Int n) {
    kiln::Double sum = 0.0, step = 1.0 / kiln::to_double(n);
    kiln::prange(n, [&](kiln::Int i) {
      auto x = (kiln::to_double(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    });
    return sum * step;
  }, opts);
  // The same sum written by hand: serially, and with an OpenMP reduction on kiln's thread count.
  auto serial = [](long long n) {
    const double step = 1.0 / static_cast<double>(n);
    double sum = 0;
    for (long long i = 0; i < n; ++i) {
      const double x = (static_cast<double>(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    }
    return sum * step;
  };
  auto openmp = [](long long n) {
    const double step = 1.0 / static_cast<double>(n);
    double sum = 0;
#pragma omp parallel for reduction(+ : sum) num_threads(kiln::num_threads())
    for (long long i = 0; i < n; ++i) {
      const double x = (static_cast<double>(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    }
    return sum * step;
  };

  const long long m = std::min(args.n, example::first_call_n);
  example::first_call("pi", m, [&] { pi(m); });
  const double got = pi(args.n);
  const double want = serial(args.n);
  // The blocked parallel sum rounds differently from the sequential loop; the sequential sum of n
  // positive terms can drift by up to ~n*eps relative (2e-8 for n = 2e8), so allow 1e-9 (observed ~1e-12).
  int rc = example::check("pi", got, want, 1e-9) ? 0 : 1;

  double warm = 0, serial_v = 0, openmp_v = 0;
  example::compare("pi", args.reps, [&] { warm = pi(args.n); }, [&] { serial_v = serial(args.n); },
                   [&] { openmp_v = openmp(args.n); });
  // Repeated calls must agree bit for bit; the hand-written loops must compute what kiln computes.
  if (got != warm) {
    std::printf("pi: MISMATCH between two calls (%.17g vs %.17g)\n", got, warm);
    rc = 1;
  }
  if (serial_v != want || std::fabs(openmp_v - want) > 1e-9 * want) {
    std::printf("pi: the hand-written loops disagree (serial %.17g, OpenMP %.17g)\n", serial_v, openmp_v);
    rc = 1;
  }
  example::print_cache_stats("pi");
  return rc;
}
