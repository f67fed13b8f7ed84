// Array reductions and argmin through the whole pipeline: kernels written with kiln's C++ API, traced,
// optimized (detect_reductions finds the histogram and the argmin pair), compiled for the CPU and run at
// several thread counts, against the same kernels on the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

class Threads {
 public:
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(std::max(1, default_threads_)); }

 private:
  int default_threads_ = num_threads();
};

auto make_histogram() {
  return jit("histogram", [](Array<double> x, Array<std::int64_t> hist) {
    const auto bins = to_double(hist.shape(0));
    prange(x.shape(0), [&](Int i) {
      auto b = to_int(x[i] * bins);
      hist[b] += 1;
    });
  });
}

auto make_argmin() {
  return jit("argmin", [](Array<double> a) {
    Double best = std::numeric_limits<double>::infinity();
    Int bi = -1;
    prange(a.shape(0), [&](Int i) {
      if_(a[i] < best, [&] {
        best = a[i];
        bi = i;
      });
    });
    return bi;
  });
}

std::vector<double> uniform_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(JitReductions, HistogramMatchesTheInterpreter) {
  const auto k = make_histogram();
  for (std::size_t n : {0, 1, 1009, 1000003}) {
    const std::vector<double> x = uniform_values(n, 7);
    for (std::size_t bins : {1, 256, 4096}) {
      std::vector<std::int64_t> want(bins, 5);
      k.on(Target::interpreter)(x, want);
      std::int64_t total = 0;
      for (auto c : want) total += c;
      EXPECT_EQ(total, static_cast<std::int64_t>(5 * bins + n));
      for (int threads : {1, 2, 3, 8}) {
        Threads t(threads);
        std::vector<std::int64_t> got(bins, 5);
        k.on(Target::cpu)(x, got);
        EXPECT_EQ(got, want) << "n " << n << " bins " << bins << " threads " << threads;
      }
    }
  }
}

TEST(JitReductions, ArgminMatchesTheInterpreter) {
  const auto k = make_argmin();
  for (std::size_t n : {0, 1, 2, 1009, 1000003}) {
    std::vector<double> a = uniform_values(n, 11);
    for (auto& v : a) v = std::floor(v * 50);  // ties: the first index of the minimum wins
    for (int variant = 0; variant < 3; ++variant) {
      if (variant == 1 && n > 2) a[n / 2] = -std::numeric_limits<double>::infinity();
      if (variant == 2 && n > 2) a[n / 3] = std::numeric_limits<double>::quiet_NaN();  // `<` never picks NaN
      const std::int64_t want = k.on(Target::interpreter)(a);
      if (variant < 2) {  // without NaN, plain C++ agrees: the first index of the minimum (-1 when empty)
        const auto first = std::min_element(a.begin(), a.end());
        EXPECT_EQ(want, first == a.end() ? -1 : first - a.begin());
      }
      for (int threads : {1, 2, 3, 8}) {
        Threads t(threads);
        EXPECT_EQ(k.on(Target::cpu)(a), want) << "n " << n << " variant " << variant << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace kiln
