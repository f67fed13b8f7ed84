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

  const std::size_t n = static_cast<std::size_t>(args.n);
  std::vector<float> x(n), y(n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);
  std::vector<float> y0 = y, ref = y;
  const float a = 2.5f;

  const double first_s = example::seconds([&] { saxpy(a, x, y); });
  std::vector<float> got = y;
  y = y0;
  const double warm_s = example::seconds([&] { saxpy(a, x, y); });
  const double ref_s = example::seconds([&] {
    for (std::size_t i = 0; i < n; ++i) ref[i] = a * x[i] + ref[i];
  });

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
  int rc = example::verdict("saxpy", checksum, ref_sum, 1e-6, first_s, warm_s, ref_s);
  if (max_err > 1e-6) rc = 1;
  if (y != got) {
    std::printf("saxpy: MISMATCH between two calls\n");
    rc = 1;
  }
  return rc;
}
