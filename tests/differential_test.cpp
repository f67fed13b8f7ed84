// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernels traced through kiln::jit run on the CPU backend and on the interpreter (the definition of their
// meaning) with the same random inputs, over sizes 0, 1, 2, 3, 7, 1023 and 10^6 and 1..8 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

const std::int64_t kSizes[] = {0, 1, 2, 3, 7, 1023, 1000000};

kiln::Options on(kiln::Target t) {
  kiln::Options o;
  o.target = t;
  return o;
}

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed, bool specials = false) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> d(-10, 10);
    for (auto& x : v) x = d(rng);
    if (specials && n >= 8) {
      v[1] = std::numeric_limits<T>::quiet_NaN();
      v[3] = std::numeric_limits<T>::infinity();
      v[5] = -std::numeric_limits<T>::infinity();
      v[7] = T(-0.0);
    }
  } else {
    std::uniform_int_distribution<std::int64_t> d(-1000, 1000);
    for (auto& x : v) x = static_cast<T>(d(rng));
    if (specials && n >= 4) {
      v[0] = std::numeric_limits<T>::min();
      v[1] = -1;
      v[2] = 0;
      v[3] = std::numeric_limits<T>::max();
    }
  }
  return v;
}

/// Floats: equal, or both NaN, or within `rel` of each other (relative to max(1, |want|)).
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, double rel, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
      } else if (std::isinf(want[i])) {
        EXPECT_EQ(got[i], want[i]) << what << " at " << i;
      } else {
        EXPECT_LE(std::fabs(double(got[i]) - double(want[i])), rel * std::fmax(1.0, std::fabs(double(want[i]))))
            << what << " at " << i << ": " << got[i] << " vs " << want[i];
      }
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    }
    if (::testing::Test::HasFailure()) return;
  }
}

class Differential : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { kiln::set_num_threads(GetParam()); }
  void TearDown() override { kiln::set_num_threads(0); }
};

INSTANTIATE_TEST_SUITE_P(Threads, Differential, ::testing::Values(1, 2, 3, 4, 8));

template <class F>
auto both(const char* name, F f) {
  return std::pair{kiln::jit(name, f, on(kiln::Target::cpu)), kiln::jit(name, f, on(kiln::Target::interpreter))};
}

TEST_P(Differential, ElementwiseMathAndBranches) {
  auto [cpu, ref] = both("elementwise", [](kiln::Array<double> x, kiln::Array<double> y, kiln::Double a) {
    kiln::prange(x.shape(0), [&](kiln::Int i) {
      kiln::Double v = x[i];
      kiln::if_(v > 0.0, [&] { v = kiln::sqrt(v) + kiln::log1p(v); })
          .elif_(v < -5.0, [&] { v = kiln::exp(v * 0.1) * a; })
          .else_([&] { v = kiln::tanh(v) - kiln::erf(v * 0.5); });
      y[i] = kiln::fma(v, a, kiln::min(v, a)) + kiln::max(kiln::abs(v), 1.0) / kiln::pow(2.0, kiln::floor(v));
    });
  });
  for (std::int64_t n : kSizes) {
    auto x = random_values<double>(static_cast<std::size_t>(n), 11, true);
    std::vector<double> y1(x.size(), 0), y2(x.size(), 0);
    cpu(x, y1, 1.5);
    ref(x, y2, 1.5);
    expect_close(y1, y2, 1e-13, "elementwise");  // libm vs libmvec: a few ulp
  }
}

TEST_P(Differential, FloatReductionsEveryOperator) {
  auto [cpu, ref] = both("reductions", [](kiln::Array<float> x) {
    kiln::Float s = 0.0f, p = 1.0f, lo = INFINITY, hi = -INFINITY;
    kiln::prange(x.shape(0), [&](kiln::Int i) {
      s += x[i];
      p *= 1.0f + x[i] * 1e-4f;
      lo = kiln::min(lo, x[i]);
      hi = kiln::max(hi, x[i]);
    });
    return s + p + lo * 3.0f + hi * 5.0f;
  });
  for (std::int64_t n : kSizes) {
    auto x = random_values<float>(static_cast<std::size_t>(n), 12);
    const float a = cpu(x), b = ref(x);
    if (n == 0) {  // inf * 3 + -inf * 5: NaN on both
      EXPECT_TRUE(std::isnan(a) && std::isnan(b));
      continue;
    }
    // A blocked f32 sum of n values in [-10, 10] differs from the sequential one by ~eps sqrt(n) max|partial
    // sum| (~0.4 at n = 10^6); min, max and the product of factors near 1 are (nearly) exact.
    EXPECT_NEAR(a, b, 1e-4 * std::sqrt(double(n) + 1) * 10) << "n=" << n;
  }
}

TEST_P(Differential, IntegerEdgeSemantics) {
  auto [cpu, ref] = both("integers", [](kiln::Array<std::int32_t> x, kiln::Array<std::int32_t> y,
                                        kiln::Array<std::int64_t> out) {
    kiln::prange(x.shape(0), [&](kiln::Int i) {
      kiln::Int32 a = x[i], b = y[i];
      out[i] = kiln::to_int(a / b) + kiln::to_int(a % b) * 3 + kiln::to_int(a << b) + kiln::to_int(a >> (b & 7)) +
               kiln::to_int(-a) + kiln::to_int(kiln::abs(a)) + kiln::to_int(a * b);
    });
  });
  for (std::int64_t n : kSizes) {
    auto x = random_values<std::int32_t>(static_cast<std::size_t>(n), 13, true);
    auto y = random_values<std::int32_t>(static_cast<std::size_t>(n), 14, true);
    std::vector<std::int64_t> o1(x.size()), o2(x.size());
    cpu(x, y, o1);
    ref(x, y, o2);
    expect_close(o1, o2, 0, "integer semantics");
  }
}

TEST_P(Differential, CastsSaturateAndNaNToZero) {
  auto [cpu, ref] = both("casts", [](kiln::Array<double> x, kiln::Array<std::int32_t> i32,
                                     kiln::Array<std::int64_t> i64, kiln::Array<bool> nz) {
    kiln::prange(x.shape(0), [&](kiln::Int i) {
      i32[i] = kiln::to_int32(x[i] * 1e9);
      i64[i] = kiln::to_int(x[i] * 1e18);
      nz[i] = kiln::cast<bool>(x[i]);
    });
  });
  for (std::int64_t n : kSizes) {
    auto x = random_values<double>(static_cast<std::size_t>(n), 15, true);
    std::vector<std::int32_t> a1(x.size()), a2(x.size());
    std::vector<std::int64_t> b1(x.size()), b2(x.size());
    std::unique_ptr<bool[]> c1(new bool[x.size() + 1]), c2(new bool[x.size() + 1]);
    kiln::ArrayRef<bool> r1(c1.get(), {n}), r2(c2.get(), {n});
    cpu(x, a1, b1, r1);
    ref(x, a2, b2, r2);
    expect_close(a1, a2, 0, "to_int32");
    expect_close(b1, b2, 0, "to_int");
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(c1[i], c2[i]) << i;
  }
}

TEST_P(Differential, TwoDimensionalStridedViewsAndNestedLoops) {
  auto [cpu, ref] = both("matrix", [](kiln::Array<double, 2> a, kiln::Array<double, 1> rowsum) {
    kiln::prange(a.shape(0), [&](kiln::Int r) {
      kiln::Double s = 0.0;
      kiln::range(a.shape(1), [&](kiln::Int c) { s += a(r, c) * kiln::to_double(c + 1); });
      rowsum[r] = s;
    });
  });
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{300}}) {
    // A column-major view of a row-major buffer: strides (1, n) - nothing is unit-stride.
    const std::int64_t m = n + 3;
    auto data = random_values<double>(static_cast<std::size_t>(n * m), 16);
    kiln::ArrayRef<double> view(data.data(), {m, n}, {1, m});
    std::vector<double> s1(static_cast<std::size_t>(m)), s2(static_cast<std::size_t>(m));
    cpu(view, s1);
    ref(view, s2);
    expect_close(s1, s2, 1e-12, "strided rows");
  }
}

TEST_P(Differential, NdPrangeWithReduction) {
  auto [cpu, ref] = both("grid", [](kiln::Array<double, 2> a) {
    kiln::Double total = 0.0;
    kiln::Double top = -INFINITY;
    kiln::prange(kiln::shape(a.shape(0), a.shape(1)), [&](kiln::Int i, kiln::Int j) {
      total += a(i, j) * kiln::to_double(i - j);
      top = kiln::max(top, a(i, j));
    });
    return total + top;
  });
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{1023}}) {
    kiln::NDArray<double> a({n, 17});
    auto v = random_values<double>(static_cast<std::size_t>(n * 17), 17);
    std::copy(v.begin(), v.end(), a.data());
    const double x = cpu(a), y = ref(a);
    if (n == 0) EXPECT_EQ(x, y);
    else EXPECT_NEAR(x, y, 1e-9 * std::fabs(y) + 1e-9);
  }
}

TEST(DifferentialDeterminism, SumIsBitwiseIdenticalForEveryThreadCount) {
  auto sum = kiln::jit("sum", [](kiln::Array<double> x) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * x[i] - 0.5; });
    return s;
  });
  auto x = random_values<double>(1000003, 18);
  kiln::set_num_threads(1);
  const double one = sum(x);
  for (int t : {2, 3, 5, 8}) {
    kiln::set_num_threads(t);
    const double v = sum(x);
    EXPECT_EQ(std::memcmp(&v, &one, sizeof v), 0) << t << " threads: " << v << " vs " << one;
  }
  kiln::set_num_threads(0);
}

}  // namespace
