// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Array reductions and argmin through the whole pipeline: kernels written with kiln's C++ API, traced,
// optimized (detect_reductions finds the histogram and the argmin pair), compiled for the CPU and run at
// several thread counts, against the same kernels on the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"
#include "tools/test_support/threads.hpp"

namespace kiln {
namespace {

using test_support::Threads;

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

TEST(JitReductions, RowsAccumulatedInAParallelLoop) {
  // `acc(all) += m(i, all)` in a prange: lower_array_ops makes the row update a parfor nested in the
  // prange, which reduces acc (private copies for few columns, atomics for many). Integer values, so the
  // sums are exact in any order.
  auto k = jit("row_sums", [](Array<double, 2> m, Array<double> acc) {
    prange(m.shape(0), [&](Int i) { acc(all) += m(i, all); });
  });
  for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 3}, {1, 1}, {1000, 17}, {17, 1000}, {16, 400000}}) {
    NDArray<double> m({rows, cols});
    std::mt19937_64 rng(static_cast<std::uint64_t>(rows * 131 + cols));
    for (std::int64_t e = 0; e < rows * cols; ++e) m.data()[e] = static_cast<double>(static_cast<std::int64_t>(rng() % 41) - 20);
    std::vector<double> want(static_cast<std::size_t>(cols), 0.5);
    k.on(Target::interpreter)(m, want);
    for (int threads : {1, 2, 3, 8}) {
      Threads t(threads);
      std::vector<double> got(static_cast<std::size_t>(cols), 0.5);
      k.on(Target::cpu)(m, got);
      EXPECT_EQ(got, want) << rows << "x" << cols << " threads " << threads;
    }
  }
  // A row longer than acc: the run-time shape check inside the prange fails on the CPU as on the
  // interpreter, with the same message.
  NDArray<double> m({50, 4});
  std::fill(m.data(), m.data() + 200, 1.0);
  std::vector<double> short_acc(3, 0.0);
  std::string want;
  try {
    k.on(Target::interpreter)(m, short_acc);
  } catch (const ShapeError& e) {
    want = e.what();
  }
  EXPECT_NE(want.find("could not broadcast"), std::string::npos) << want;
  for (int threads : {1, 8}) {
    Threads t(threads);
    try {
      k.on(Target::cpu)(m, short_acc);
      ADD_FAILURE() << "no ShapeError";
    } catch (const ShapeError& e) {
      EXPECT_EQ(std::string(e.what()), want);
    }
  }
}

}  // namespace
}  // namespace kiln
