// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernels that return several values: a std::tuple or std::pair of traced scalars and arrays, unpacked with
// structured bindings. Each on the interpreter and the CPU against plain C++; empty inputs as the single
// results behave; results read after the body stay alive through the passes; the disk cache describes them.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ir/builder.hpp"
#include "ir/verifier.hpp"
#include "tests/array_test_util.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;

std::vector<double> sample(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + 0.1) * 3.0 + 0.25 * static_cast<double>(i % 7);
  return v;
}

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

std::vector<Options> targets() { return {interp(), cpu()}; }

/// The example: mean and variance of one input, unpacked with a structured binding.
TEST(MultiResult, TwoScalarsMeanAndVariance) {
  const std::vector<double> v = sample(1001);
  const double m = mean_of(v);
  double sq = 0;
  for (double x : v) sq += x * x;
  const double var = sq / static_cast<double>(v.size()) - m * m;
  for (const Options& o : targets()) {
    auto stats = jit("stats", [](Array<double> x) {
      auto m = kiln::mean(x);
      return std::tuple{m, kiln::sum(x * x) / x.size() - m * m};
    }, o);
    auto [mean, variance] = stats(v);
    static_assert(std::is_same_v<decltype(stats(v)), std::tuple<double, double>>);
    EXPECT_NEAR(mean, m, 1e-12) << name_of(o.target);
    EXPECT_NEAR(variance, var, 1e-9) << name_of(o.target);
  }
}

/// Members of different types (double, int64, float, int32) keep their own types and values.
TEST(MultiResult, ScalarsOfDifferentTypes) {
  const std::vector<double> v = sample(257);
  std::vector<float> f(100);
  std::vector<std::int32_t> c(300);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = 0.5f * static_cast<float>(i % 9);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<std::int32_t>(i % 11) - 3;
  const auto expect_argmax = static_cast<std::int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
  float fsum = 0;
  for (float x : f) fsum += x;
  const std::int32_t cmax = *std::max_element(c.begin(), c.end());
  for (const Options& o : targets()) {
    auto two = jit("two_types", [](Array<double, 1> x, Array<std::int32_t, 1> k) {
      return std::tuple{kiln::mean(x), kiln::max(k)};
    }, o);
    auto [m, mx] = two(v, c);
    static_assert(std::is_same_v<decltype(mx), std::int32_t>);
    EXPECT_NEAR(m, mean_of(v), 1e-12);
    EXPECT_EQ(mx, cmax);

    auto three = jit("three_types", [](Array<double, 1> x, Array<float, 1> y) {
      return std::tuple{kiln::max(x), kiln::argmax(x), kiln::sum(y)};
    }, o);
    auto [best, at, total] = three(v, f);
    static_assert(std::is_same_v<decltype(three(v, f)), std::tuple<double, std::int64_t, float>>);
    EXPECT_EQ(best, *std::max_element(v.begin(), v.end())) << name_of(o.target);
    EXPECT_EQ(at, expect_argmax) << name_of(o.target);
    EXPECT_NEAR(total, fsum, 1e-3) << name_of(o.target);
  }
}

/// A scalar and an array: the mean and the centred input (an NDArray member, owned by the caller).
TEST(MultiResult, ScalarAndArray) {
  const std::vector<double> v = sample(333);
  const double m = mean_of(v);
  for (const Options& o : targets()) {
    auto centre = jit("centre", [](Array<double, 1> x) {
      auto m = kiln::mean(x);
      return std::tuple{m, x - m};
    }, o);
    auto [mean, centred] = centre(v);
    static_assert(std::is_same_v<decltype(centred), NDArray<double>>);
    EXPECT_NEAR(mean, m, 1e-12);
    ASSERT_EQ(centred.rank(), 1);
    ASSERT_EQ(centred.size(), static_cast<std::int64_t>(v.size()));
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(centred.data()[i], v[i] - m, 1e-12) << i;
  }
}

/// Two arrays of different ranks and types; a parameter and one array returned twice come back as copies,
/// so the caller owns every member once and the argument is left alone.
TEST(MultiResult, TwoArraysAndCopies) {
  NDArray<double> a({3, 4});
  for (std::int64_t i = 0; i < a.size(); ++i) a.data()[i] = 0.5 * static_cast<double>(i) - 2.0;
  for (const Options& o : targets()) {
    auto rows = jit("row_sums_and_mask", [](Array<double, 2> x) {
      return std::tuple{kiln::sum(x, 1), x > 0.0};
    }, o);
    auto [sums, positive] = rows(a);
    static_assert(std::is_same_v<decltype(positive), NDArray<bool>>);
    ASSERT_EQ(sums.rank(), 1);
    ASSERT_EQ(positive.rank(), 2);
    for (int r = 0; r < 3; ++r) {
      double s = 0;
      for (int c = 0; c < 4; ++c) {
        s += a.data()[r * 4 + c];
        EXPECT_EQ(positive.data()[r * 4 + c], a.data()[r * 4 + c] > 0.0);
      }
      EXPECT_DOUBLE_EQ(sums.data()[r], s);
    }

    auto same = jit("same_array_twice", [](Array<double, 2> x) {
      auto t = x * 2.0;
      return std::tuple{x, t, t};
    }, o);
    auto [copy, t1, t2] = same(a);
    EXPECT_NE(copy.data(), a.data());
    EXPECT_NE(t1.data(), t2.data());
    for (std::int64_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(copy.data()[i], a.data()[i]);
      EXPECT_EQ(t1.data()[i], 2.0 * a.data()[i]);
      EXPECT_EQ(t2.data()[i], 2.0 * a.data()[i]);
    }
  }
}

TEST(MultiResult, Pair) {
  const std::vector<double> v = sample(77);
  for (const Options& o : targets()) {
    auto range = jit("range", [](Array<double, 1> x) { return std::pair{kiln::min(x), kiln::max(x)}; }, o);
    static_assert(std::is_same_v<decltype(range(v)), std::pair<double, double>>);
    auto [lo, hi] = range(v);
    EXPECT_EQ(lo, *std::min_element(v.begin(), v.end()));
    EXPECT_EQ(hi, *std::max_element(v.begin(), v.end()));
  }
}

/// Scalars read after the body from arrays the body made (an element of one, the sum of another) keep those
/// arrays alive through dead-code elimination, temporary elimination and buffer reuse.
TEST(MultiResult, ResultsReadAfterTheBodyStayAlive) {
  const std::vector<double> v = sample(64);
  double doubled = 0;
  for (double x : v) doubled += 2.0 * x;
  for (const Options& o : targets()) {
    auto k = jit("alive", [](Array<double, 1> x) {
      auto t = x * 2.0;
      auto u = x + 1.0;
      auto w = x - 3.0;
      return std::tuple{u[0], kiln::sum(t), w};
    }, o);
    auto [first, total, shifted] = k(v);
    EXPECT_EQ(first, v[0] + 1.0);
    EXPECT_NEAR(total, doubled, 1e-12);
    ASSERT_EQ(shifted.size(), static_cast<std::int64_t>(v.size()));
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(shifted.data()[i], v[i] - 3.0);
    EXPECT_CONTAINS(k.lowered_ir(), "return (");
  }
}

/// An array a scalar result reads after the body keeps its buffer: a later array of the same extents may
/// not take it over (reuse_buffers), in a single result as in a tuple.
TEST(MultiResult, AnArrayTheResultReadsKeepsItsBuffer) {
  const std::vector<double> v = sample(50);
  const double total = std::accumulate(v.begin(), v.end(), 0.0) + static_cast<double>(v.size());
  for (const Options& o : targets()) {
    auto single = jit("keeps_single", [](Array<double, 1> x) {
      auto u = x + 1.0;
      kiln::Double s = kiln::sum(u);
      auto w = x * s;  // after the sum: a second loop, whose array could take u's buffer
      kiln::Double t = kiln::sum(w);
      return u[1] + 0.0 * t;
    }, o);
    EXPECT_EQ(single(v), v[1] + 1.0) << name_of(o.target);
    auto tuple = jit("keeps_tuple", [](Array<double, 1> x) {
      auto u = x + 1.0;
      auto s = kiln::sum(u);
      auto w = x * s;
      return std::tuple{u[1], s, w};
    }, o);
    auto [first, sum, scaled] = tuple(v);
    EXPECT_EQ(first, v[1] + 1.0) << name_of(o.target) << "\n" << tuple.lowered_ir();
    EXPECT_NEAR(sum, total, 1e-9);
    EXPECT_NEAR(scaled.data()[1], sum * v[1], 1e-9);
  }
}

/// An empty input: the mean is NaN as for a single result; a minimum is a ValueError naming the kernel.
TEST(MultiResult, EmptyInput) {
  for (const Options& o : targets()) {
    auto stats = jit("empty_stats", [](Array<double, 1> x) {
      return std::tuple{kiln::mean(x), kiln::sum(x)};
    }, o);
    auto [m, s] = stats(std::vector<double>{});
    EXPECT_TRUE(std::isnan(m));
    EXPECT_EQ(s, 0.0);
    auto range = jit("empty_range", [](Array<double, 1> x) { return std::pair{kiln::sum(x), kiln::min(x)}; }, o);
    const std::string msg = error_of<ValueError>([&] { range(std::vector<double>{}); });
    EXPECT_CONTAINS(msg, "empty_range");
    EXPECT_CONTAINS(msg, "min of an empty array in `min(x)`");
  }
}

/// The traced IR names every member; the verifier rejects a tuple that would hand the caller an array twice.
TEST(MultiResult, IRAndVerifier) {
  auto centre = [](Array<double, 1> x) {
    auto m = kiln::mean(x);
    return std::tuple{m, x - m};
  };
  const ir::Function f = trace_ir("centre_ir", {"x"}, centre, std::vector<double>(5, 1.0));
  const std::string text = ir::to_string(f);
  EXPECT_CONTAINS(text, "-> (f64, f64[");
  EXPECT_CONTAINS(text, "return (");
  EXPECT_TRUE(ir::verify(f).empty());
  ASSERT_EQ(f.tuple.size(), 2u);
  ir::Function twice = f;
  twice.tuple[0] = {nullptr, f.tuple[1].array};
  bool reported = false;
  for (const std::string& p : ir::verify(twice)) reported = reported || p.find("returned twice") != std::string::npos;
  EXPECT_TRUE(reported) << ir::to_string(twice);
}

/// A second kernel object finds the tuple kernel in the disk cache and returns the same values.
TEST(MultiResult, FromTheDiskCache) {
  namespace fs = std::filesystem;
  const CacheSettings saved = cache_settings();
  std::string t = (fs::temp_directory_path() / "kiln-multi-result-XXXXXX").string();
  const std::string root = mkdtemp(t.data());
  set_cache_settings({CacheMode::on, root + "/cache", 1ull << 30});
  const std::vector<double> v = sample(500);
  auto make = [] {
    return jit("cached_stats", [](Array<double, 1> x) {
      auto m = kiln::mean(x);
      return std::tuple{m, x - m, kiln::argmin(x)};
    }, cpu());
  };
  double m1 = 0;
  NDArray<double> c1;
  std::int64_t i1 = -1;
  {
    auto first = make();
    std::tie(m1, c1, i1) = first(v);
    EXPECT_EQ(compile_history().back().cache, CacheSource::miss);
  }
  cache_flush();
  set_cache_settings(cache_settings());  // lets go of the loaded code: the next object reads the disk
  auto second = make();
  auto [m2, c2, i2] = second(v);
  const std::vector<CompileRecord> h = compile_history();
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.back().kernel, "cached_stats");
  EXPECT_EQ(h.back().cache, CacheSource::disk);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(i1, i2);
  ASSERT_EQ(c2.rank(), 1);
  EXPECT_EQ(c1.to_vector(), c2.to_vector());
  cache_flush();
  set_cache_settings(saved);
  fs::remove_all(root);
}

}  // namespace
}  // namespace kiln
