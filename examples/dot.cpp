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

  const std::size_t n = static_cast<std::size_t>(args.n);
  std::vector<double> x(n), y(n);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);

  double got = 0, warm = 0, want = 0;
  const double first_s = example::seconds([&] { got = dot(x, y); });
  const double warm_s = example::seconds([&] { warm = dot(x, y); });
  long double exact = 0;  // extended precision reference, sequential
  const double ref_s = example::seconds([&] {
    for (std::size_t i = 0; i < n; ++i) exact += static_cast<long double>(x[i]) * y[i];
    want = static_cast<double>(exact);
  });
  // Error bound of a blocked float sum: ~ n * eps * sum|x*y| with a small constant; tol relative to n.
  double abs_sum = 0;
  for (std::size_t i = 0; i < n; ++i) abs_sum += std::fabs(x[i] * y[i]);
  const double tol = 4e-16 * std::sqrt(static_cast<double>(n)) * abs_sum / std::fmax(1.0, std::fabs(want)) + 1e-15;
  int rc = example::verdict("dot", got, want, tol, first_s, warm_s, ref_s);

  // Determinism: the same bits with 1, 2 and 3 threads.
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
  if (got != warm) rc = 1;
  return rc;
}
