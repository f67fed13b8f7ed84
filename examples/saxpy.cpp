// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// y = a*x + y on float arrays: the canonical streaming kernel, vectorized and run on all cores.
#include <random>
#include <vector>

#include "example.hpp"

int main(int argc, char** argv) {
  const auto args = example::parse(argc, argv, 20'000'000);
  kiln::Options opts;
  opts.target = args.target;
  auto saxpy = kiln::jit("saxpy", [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  }, opts);
  // The same update written by hand: serially, and with an OpenMP loop on kiln's thread count.
  auto serial = [](float a, const std::vector<float>& x, std::vector<float>& y) {
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i] + y[i];
  };
  auto openmp = [](float a, const std::vector<float>& x, std::vector<float>& y) {
    const long long n = static_cast<long long>(x.size());
#pragma omp parallel for num_threads(kiln::num_threads())
    for (long long i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
  };

  const std::size_t n = static_cast<std::size_t>(args.n);
  std::vector<float> x(n), y(n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);
  const std::vector<float> y0 = y;
  const float a = 2.5f;

  {
    const std::size_t m = std::min<std::size_t>(n, example::first_call_n);
    std::vector<float> xs(x.begin(), x.begin() + m), ys(y.begin(), y.begin() + m);
    example::first_call("saxpy", static_cast<long long>(m), [&] { saxpy(a, xs, ys); });
  }
  saxpy(a, x, y);
  const std::vector<float> got = y;
  std::vector<float> ref = y0;
  serial(a, x, ref);

  // Elementwise: the same float operations in the same order, so results match to the last bit unless
  // the compiler contracts a*x+y into an fma (allowed to differ by one rounding).
  double max_err = 0;
  for (std::size_t i = 0; i < n; ++i) max_err = std::fmax(max_err, std::fabs(double(got[i]) - double(ref[i])));
  const double checksum = [&] {
    double s = 0;
    for (float v : got) s += v;
    return s;
  }();
  const double ref_sum = [&] {
    double s = 0;
    for (float v : ref) s += v;
    return s;
  }();
  std::printf("saxpy    max |kiln - reference| = %.3g over %zu elements\n", max_err, n);
  int rc = example::check("saxpy", checksum, ref_sum, 1e-6) ? 0 : 1;
  if (max_err > 1e-6) rc = 1;
  y = y0;
  saxpy(a, x, y);
  if (y != got) {
    std::printf("saxpy: MISMATCH between two calls\n");
    rc = 1;
  }

  // Each contender updates its own copy in place, call after call, as an iterative solver would.
  std::vector<float> y_kiln = y0, y_serial = y0, y_openmp = y0;
  example::compare("saxpy", args.reps, [&] { saxpy(a, x, y_kiln); }, [&] { serial(a, x, y_serial); },
                   [&] { openmp(a, x, y_openmp); });
  if (y_openmp != y_serial) {
    std::printf("saxpy: the hand-written serial and OpenMP loops disagree\n");
    rc = 1;
  }
  example::print_cache_stats("saxpy");
  return rc;
}
