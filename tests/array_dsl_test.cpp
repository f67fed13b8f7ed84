// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The array-level DSL (kiln/array_ops.hpp, creation.hpp, reduce.hpp, views.hpp): every operation against
// plain C++ on random inputs (sizes 0, 1, primes, large; NaN and infinities where they matter), on the
// interpreter (exact) and on the CPU backend; broadcasting and its errors; empty reductions; views, slice
// assignment with NumPy's overlap semantics, in-place updates; value semantics of array handles.
#include <algorithm>
#include <numeric>
#include <optional>
#include <type_traits>

#include "tests/array_test_util.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;

const std::int64_t kSizes[] = {0, 1, 2, 7, 13, 101, 10007};

// =========================================================================================================
// Elementwise operations
// =========================================================================================================

template <class A, class B>
using add_t = decltype(std::declval<A>() + std::declval<B>());
template <class X, class Axis>
concept MinAlong = requires(const X& a, Axis axis) { kiln::min(a, axis); };

TEST(ArrayTypes, ResultTypesFollowTheScalarRules) {
  static_assert(std::is_same_v<add_t<Array<float, 1>, double>, Array<float, 1>>);  // a literal adopts the type
  static_assert(std::is_same_v<add_t<Array<float, 1>, Double>, Array<double, 1>>);  // traced values promote
  static_assert(std::is_same_v<add_t<Array<std::int32_t, 2>, Array<std::int64_t, 1>>, Array<std::int64_t, 2>>);
  static_assert(std::is_same_v<add_t<Array<std::int32_t, 1>, double>, Array<double, 1>>);
  static_assert(std::is_same_v<add_t<Int, Array<double, 3>>, Array<double, 3>>);
  static_assert(std::is_same_v<add_t<Array<double>, Array<double, 2>>, Array<double>>);  // any rank stays any
  static_assert(std::is_same_v<decltype(std::declval<Array<double, 1>>() < 1.0), Array<bool, 1>>);
  static_assert(std::is_same_v<decltype(kiln::exp(std::declval<Array<std::int32_t, 1>>())), Array<double, 1>>);
  static_assert(std::is_same_v<decltype(kiln::sqrt(std::declval<Array<float, 2>>())), Array<float, 2>>);
  static_assert(std::is_same_v<decltype(kiln::sum(std::declval<Array<std::int32_t, 1>>())), Int>);
  static_assert(std::is_same_v<decltype(kiln::mean(std::declval<Array<float, 1>>())), Float>);
  static_assert(std::is_same_v<decltype(kiln::sum(std::declval<Array<double, 3>>(), 1)), Array<double, 2>>);
  static_assert(std::is_same_v<decltype(kiln::max(std::declval<Array<double, 3>>(), 1, keepdims)), Array<double, 3>>);
  static_assert(std::is_same_v<decltype(kiln::argmax(std::declval<Array<float, 2>>(), 0)), Array<std::int64_t, 1>>);
  static_assert(std::is_same_v<decltype(std::declval<Array<double, 3>>()(0, kiln::all, 1)), Array<double, 1>>);
  static_assert(std::is_same_v<decltype(std::declval<Array<double, 2>>()(kiln::range(1, 3))), Array<double, 2>>);
  // An axis must be an integer: `min(a, 0.0)` is no reduction along axis 0 (minimum(a, 0.0) is elementwise).
  static_assert(!MinAlong<Array<double, 2>, double>);
  static_assert(MinAlong<Array<double, 2>, int>);
  static_assert(std::is_same_v<decltype(kiln::minimum(std::declval<Array<double, 2>>(), 0.0)), Array<double, 2>>);
}

TEST(Elementwise, ArithmeticMatchesCxx) {
  auto k = jit("arith", [](Array<double, 1> a, Array<double, 1> b, Double s) {
    auto out = empty<double>(a.shape(0), 8);
    out(all, 0) = a + b;
    out(all, 1) = a - b;
    out(all, 2) = a * b;
    out(all, 3) = a / b;
    out(all, 4) = a % b;
    out(all, 5) = 2.0 * a - s;  // literals and traced scalars on either side
    out(all, 6) = -a + b[0];     // an element as a scalar operand
    out(all, 7) = s / (a * a + 1.0);
    return out;
  }, interp());
  for (std::int64_t n : kSizes) {
    if (n == 0) continue;  // b[0] must exist
    const auto a = random_values(static_cast<size_t>(n), 1, -4, 4, true);
    const auto bb = random_values(static_cast<size_t>(n), 2, -4, 4, true);
    NDArray<double> r = k(a, bb, 1.5);
    ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{n, 8}));
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = a[static_cast<size_t>(i)], y = bb[static_cast<size_t>(i)];
      const double want[] = {x + y, x - y, x * y, x / y, std::fmod(x, y), 2.0 * x - 1.5, -x + bb[0], 1.5 / (x * x + 1.0)};
      for (int c = 0; c < 8; ++c) EXPECT_TRUE(same(r(i, c), want[c])) << n << " " << i << " " << c << ": " << r(i, c) << " vs " << want[c];
    }
  }
}

TEST(Elementwise, IntegerArithmeticWrapsAndDividesTotally) {
  auto k = jit("int_arith", [](Array<std::int32_t, 1> a, Array<std::int32_t, 1> b) {
    auto out = empty<std::int32_t>(a.shape(0), 6);
    out(all, 0) = a + b;
    out(all, 1) = a * b;
    out(all, 2) = a / b;
    out(all, 3) = a % b;
    out(all, 4) = (a & b) ^ (a | 3);
    out(all, 5) = a << 3;
    return out;
  }, interp());
  std::vector<std::int32_t> a = {7, -7, INT32_MAX, INT32_MIN, 5, 0}, b = {2, 2, 1, -1, 0, 3};
  NDArray<std::int32_t> r = k(a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::int64_t x = a[i], y = b[i];
    EXPECT_EQ(r(i, 0), static_cast<std::int32_t>(static_cast<std::uint32_t>(x + y)));
    EXPECT_EQ(r(i, 1), static_cast<std::int32_t>(static_cast<std::uint32_t>(x * y)));
    EXPECT_EQ(r(i, 2), y == 0 ? 0 : y == -1 ? static_cast<std::int32_t>(static_cast<std::uint32_t>(-x)) : x / y);
    EXPECT_EQ(r(i, 3), y == 0 ? x : y == -1 ? 0 : x % y);
    EXPECT_EQ(r(i, 4), (a[i] & b[i]) ^ (a[i] | 3));
    EXPECT_EQ(r(i, 5), static_cast<std::int32_t>(static_cast<std::uint32_t>(a[i]) << 3));
  }
}

TEST(Elementwise, ComparisonsLogicAndWhere) {
  auto k = jit("cmp", [](Array<double, 1> a, Array<double, 1> b) {
    auto lt = a < b;
    auto both = (a >= 0.0) & (b != 1.0);
    auto either = (!(a == b)) | (a <= -1.0);
    return where(lt, a, where(both | either, b, 0.0));
  }, interp());
  for (std::int64_t n : kSizes) {
    const auto a = random_values(static_cast<size_t>(n), 3, -2, 2, true);
    auto b = random_values(static_cast<size_t>(n), 4, -2, 2, true);
    if (n > 3) b[1] = 1.0, b[2] = a[2];
    NDArray<double> r = k(a, b);
    std::vector<double> want;
    for (size_t i = 0; i < a.size(); ++i) {
      const bool both = (a[i] >= 0.0) && (b[i] != 1.0), either = !(a[i] == b[i]) || (a[i] <= -1.0);
      want.push_back(a[i] < b[i] ? a[i] : (both || either) ? b[i] : 0.0);
    }
    expect_values(r.to_vector(), want, 0, "n=" + std::to_string(n));
  }
}

/// Every unary function of math.hpp on arrays, against the scalar function of <cmath>.
TEST(Elementwise, EveryMathFunction) {
  auto k = jit("math", [](Array<double, 1> a) {
    auto out = empty<double>(24, a.shape(0));
    out(0, all) = kiln::sqrt(a);
    out(1, all) = kiln::exp(a);
    out(2, all) = kiln::exp2(a);
    out(3, all) = kiln::expm1(a);
    out(4, all) = kiln::log(a);
    out(5, all) = kiln::log2(a);
    out(6, all) = kiln::log10(a);
    out(7, all) = kiln::log1p(a);
    out(8, all) = kiln::cbrt(a);
    out(9, all) = kiln::sin(a);
    out(10, all) = kiln::cos(a);
    out(11, all) = kiln::tan(a);
    out(12, all) = kiln::asin(a);
    out(13, all) = kiln::acos(a);
    out(14, all) = kiln::atan(a);
    out(15, all) = kiln::sinh(a);
    out(16, all) = kiln::cosh(a);
    out(17, all) = kiln::tanh(a);
    out(18, all) = kiln::erf(a);
    out(19, all) = kiln::floor(a);
    out(20, all) = kiln::ceil(a);
    out(21, all) = kiln::round(a);
    out(22, all) = kiln::trunc(a);
    out(23, all) = kiln::abs(a);
    return out;
  }, interp());
  double (*const fns[])(double) = {std::sqrt, std::exp,  std::exp2, std::expm1, std::log,  std::log2,
                                   std::log10, std::log1p, std::cbrt, std::sin,   std::cos,  std::tan,
                                   std::asin, std::acos, std::atan, std::sinh,  std::cosh, std::tanh,
                                   std::erf,  std::floor, std::ceil, std::round, std::trunc, std::fabs};
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{13}, std::int64_t{1009}}) {
    const auto a = random_values(static_cast<size_t>(n), 5, -3, 3, true);
    NDArray<double> r = k(a);
    for (int f = 0; f < 24; ++f)
      for (std::int64_t i = 0; i < n; ++i) {
        const double want = fns[f](a[static_cast<size_t>(i)]);
        EXPECT_TRUE(close(r(f, i), want, 1e-15)) << "function " << f << " of " << a[static_cast<size_t>(i)] << ": " << r(f, i) << " vs " << want;
      }
  }
}

TEST(Elementwise, BinaryMathPredicatesMinMaxAndCasts) {
  auto k = jit("math2", [](Array<double, 1> a, Array<double, 1> b) {
    auto out = empty<double>(10, a.shape(0));
    out(0, all) = kiln::pow(a, b);
    out(1, all) = kiln::atan2(a, b);
    out(2, all) = kiln::copysign(a, b);
    out(3, all) = kiln::fma(a, b, 1.0);
    out(4, all) = kiln::minimum(a, b);
    out(5, all) = kiln::max(a, b);
    out(6, all) = to_double(kiln::isnan(a)) + 2.0 * to_double(kiln::isinf(a)) + 4.0 * to_double(kiln::isfinite(b));
    out(7, all) = to_double(to_int(a));
    out(8, all) = to_double(cast<bool>(a));
    out(9, all) = kiln::maximum(a, 0.5);
    return out;
  }, interp());
  const auto a = random_values(101, 6, -3, 3, true), b = random_values(101, 7, -3, 3, true);
  NDArray<double> r = k(a, b);
  auto fmin_ieee = [](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return kNaN;
    if (x == y) return std::signbit(x) ? x : y;
    return x < y ? x : y;
  };
  auto fmax_ieee = [](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return kNaN;
    if (x == y) return std::signbit(x) ? y : x;
    return x > y ? x : y;
  };
  auto saturate = [](double x) -> std::int64_t {
    if (std::isnan(x)) return 0;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    if (x >= 9223372036854775807.0) return INT64_MAX;
    return static_cast<std::int64_t>(x);
  };
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    const double want[] = {std::pow(x, y), std::atan2(x, y), std::copysign(x, y), std::fma(x, y, 1.0),
                           fmin_ieee(x, y), fmax_ieee(x, y),
                           (std::isnan(x) ? 1.0 : 0.0) + 2.0 * (std::isinf(x) ? 1 : 0) + 4.0 * (std::isfinite(y) ? 1 : 0),
                           static_cast<double>(saturate(x)), (x != 0) ? 1.0 : 0.0, fmax_ieee(x, 0.5)};
    for (int f = 0; f < 10; ++f)
      EXPECT_TRUE(same(r(f, static_cast<std::int64_t>(i)), want[f], f == 4 || f == 5))
          << f << " of " << x << ", " << y << ": " << r(f, static_cast<std::int64_t>(i)) << " vs " << want[f];
  }
}

TEST(Elementwise, FloatArraysStayFloatAndIntegersGoToDouble) {
  auto k = jit("types", [](Array<float, 1> a, Array<std::int32_t, 1> b) {
    auto x = a * 2.0 + 0.5;          // float: literals adopt the array's type
    auto y = kiln::sqrt(b);          // double, as NumPy does for integers
    return to_double(x) + y;
  }, interp());
  std::vector<float> a = {1.1f, 2.5f};
  std::vector<std::int32_t> b = {4, 9};
  NDArray<double> r = k(a, b);
  EXPECT_EQ(r[0], static_cast<double>(1.1f * 2.0f + 0.5f) + 2.0);
  EXPECT_EQ(r[1], static_cast<double>(2.5f * 2.0f + 0.5f) + 3.0);
}

// =========================================================================================================
// Broadcasting
// =========================================================================================================

TEST(Broadcasting, RowVectorAcrossMatrixAndRank3) {
  auto k = jit("bc", [](Array<double, 2> m, Array<double, 1> v) { return m * v + v; }, interp());
  const NDArray<double> m = random_matrix(7, 13, 8);
  const auto v = random_values(13, 9);
  NDArray<double> r = k(m, v);
  ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{7, 13}));
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 13; ++j) EXPECT_EQ(r(i, j), m(i, j) * v[static_cast<size_t>(j)] + v[static_cast<size_t>(j)]);

  auto k3 = jit("bc3", [](Array<double, 3> t, Array<double, 1> v, Array<double, 2> w) { return t - v * w; }, interp());
  NDArray<double> t({2, 3, 4});
  for (int q = 0; q < 24; ++q) t[q] = q;
  NDArray<double> w({3, 4});
  for (int q = 0; q < 12; ++q) w[q] = 0.5 * q;
  std::vector<double> vv = {1, 2, 3, 4};
  NDArray<double> r3 = k3(t, vv, w);
  ASSERT_EQ(r3.shape(), (std::vector<std::int64_t>{2, 3, 4}));
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(r3(a, b, c), t(a, b, c) - vv[static_cast<size_t>(c)] * w(b, c));
}

TEST(Broadcasting, UnitExtentsOfParametersBroadcast) {
  // The kernel is specialized per call on which extents are 1: (m, 1) * (1, n) is an outer product.
  auto k = jit("outer", [](Array<double, 2> col, Array<double, 2> row) { return col * row; }, interp());
  NDArray<double> col({3, 1}), row({1, 4});
  for (int i = 0; i < 3; ++i) col[i] = i + 1;
  for (int j = 0; j < 4; ++j) row[j] = 10 * (j + 1);
  NDArray<double> r = k(col, row);
  ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{3, 4}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(r(i, j), (i + 1) * 10.0 * (j + 1));
  // The same kernel with full shapes is another signature and multiplies elementwise.
  NDArray<double> p = random_matrix(3, 4, 10), q = random_matrix(3, 4, 11);
  NDArray<double> e = k(p, q);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(e[i], p[i] * q[i]);
  EXPECT_EQ(k.compiled_variants(), 2u);
  // A keepdims reduction has a constant extent 1 and broadcasts too.
  auto centered = jit("centered", [](Array<double, 2> x) { return x - kiln::mean(x, 0, keepdims); }, interp());
  NDArray<double> c = centered(p);
  for (int j = 0; j < 4; ++j) {
    const double m = (p(0, j) + p(1, j) + p(2, j)) / 3.0;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(c(i, j), p(i, j) - m);
  }
}

TEST(Broadcasting, MismatchIsAShapeErrorNamingTheExpressionAndShapes) {
  auto k = jit("mismatch", [](Array<double, 2> a, Array<double, 1> b) { return a + b; }, interp());
  NDArray<double> a({2, 3});
  std::vector<double> b = {1, 2};
  const std::string msg = error_of<ShapeError>([&] { k(a, b); });
  EXPECT_CONTAINS(msg, "kernel 'mismatch'");
  EXPECT_CONTAINS(msg, "operands could not be broadcast together in `a + b`");
  EXPECT_CONTAINS(msg, "shapes (2, 3) and (2)");
  // A function names its source line.
  auto f = jit("mismatch_fn", [](Array<double, 1> a, Array<double, 1> b) { return kiln::pow(a, b); }, interp());
  const int line = __LINE__ - 1;
  std::vector<double> c = {1, 2, 3};
  const std::string m2 = error_of<ShapeError>([&] { f(c, b); });
  EXPECT_CONTAINS(m2, "`pow(a, b)` (at array_dsl_test.cpp:" + std::to_string(line) + "): shapes (3) and (2)");
  // Shapes known to differ while tracing fail the trace.
  auto t = jit("mismatch_const", [](Int n) { return kiln::sum(zeros<double>(3) + ones<double>(4)) + to_double(n); }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { t(std::int64_t{1}); }), "shapes (3) and (4)");
  // Assigning a value of another shape into a slice.
  auto s = jit("mismatch_assign", [](Array<double, 1> a, Array<double, 1> b) { a(kiln::range(1, none)) = b; }, interp());
  std::vector<double> x(5), y(5);
  EXPECT_CONTAINS(error_of<ShapeError>([&] { s(x, y); }), "shapes (5) and (4)");
}

// =========================================================================================================
// Creation
// =========================================================================================================

TEST(Creation, ZerosOnesFullAndLikes) {
  auto k = jit("fills", [](Array<float, 2> like, Int n) {
    auto z = zeros<double>(n);
    auto o = ones<std::int32_t>(n, 2);
    auto f = full<float>(shape(n, 2, 2), 2.5);
    auto g = full<double>(n, -1.0);
    auto zl = zeros_like(like);
    auto ol = ones_like<double>(like);
    auto fl = full_like(like, 7);
    auto out = empty<double>(shape(n, 7));
    prange(n, [&](Int i) {
      out(i, 0) = z[i];
      out(i, 1) = to_double(o(i, 1));
      out(i, 2) = to_double(f(i, 1, 1));
      out(i, 3) = g[i];
    });
    out(all, 4) = kiln::sum(zl) + 0.0 * to_double(n);
    out(all, 5) = kiln::sum(ol);
    out(all, 6) = kiln::sum(fl);
    return out;
  }, interp());
  NDArray<float> like({2, 3});
  NDArray<double> r = k(like, std::int64_t{3});
  auto four = jit("fills4", [](Int n) {
    return kiln::sum(ones<float>(n, 2, 3, 4)) + to_float(empty<float>(shape(n, 1, 5, 1)).size());
  }, interp());
  EXPECT_EQ(four(std::int64_t{2}), 48.0f + 10.0f);
  ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{3, 7}));
  for (int i = 0; i < 3; ++i) {
    const double want[] = {0, 1, 2.5, -1, 0, 6, 42};
    for (int c = 0; c < 7; ++c) EXPECT_EQ(r(i, c), want[c]) << i << " " << c;
  }
  NDArray<double> e = k(like, std::int64_t{0});
  EXPECT_EQ(e.size(), 0);
}

TEST(Creation, ArraysAreNamedAfterTheirVariables) {
  auto k = jit("names", [](Int n) {
    auto weights = zeros<double>(n);
    auto grid = arange(n);
    return weights + to_double(grid);
  }, interp());
  k(std::int64_t{2});
  const std::string d = k.diagnostics();
  EXPECT_CONTAINS(d, "weights");
  EXPECT_CONTAINS(d, "grid");
}

TEST(Creation, ArangeMatchesNumPy) {
  auto k = jit("arange3", [](Double lo, Double hi, Double step) { return arange(lo, hi, step); }, interp());
  auto ki = jit("arange_int", [](Int lo, Int hi, Int step) { return arange(lo, hi, step); }, interp());
  auto k1 = jit("arange1", [](Int n) { return arange<float>(n); }, interp());
  struct Case {
    double lo, hi, step;
  };
  for (const Case c : {Case{0, 10, 1}, Case{0, 1, 0.1}, Case{5, -5, -1.5}, Case{3, 3, 1}, Case{1, 0, 1}, Case{-2.5, 7, 0.75}}) {
    NDArray<double> r = k(c.lo, c.hi, c.step);
    const std::int64_t n = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil((c.hi - c.lo) / c.step)));
    ASSERT_EQ(r.size(), n) << c.lo << " " << c.hi << " " << c.step;
    for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(r[i], c.lo + static_cast<double>(i) * c.step);
  }
  for (const auto& c : std::vector<std::array<std::int64_t, 3>>{{0, 10, 3}, {10, 0, -3}, {0, 0, 1}, {5, 1, 1}, {-7, 8, 5}}) {
    NDArray<std::int64_t> r = ki(c[0], c[1], c[2]);
    std::vector<std::int64_t> want;
    for (std::int64_t v = c[0]; c[2] > 0 ? v < c[1] : v > c[1]; v += c[2]) want.push_back(v);
    EXPECT_EQ(r.to_vector(), want) << c[0] << " " << c[1] << " " << c[2];
  }
  EXPECT_EQ(k1(std::int64_t{4}).to_vector(), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(k1(std::int64_t{-2}).size(), 0);
  EXPECT_CONTAINS(error_of<ValueError>([&] { ki(std::int64_t{0}, std::int64_t{5}, std::int64_t{0}); }), "arange step is zero");
}

TEST(Creation, LinspaceMatchesNumPy) {
  auto k = jit("linspace", [](Double lo, Double hi, Int n) { return linspace(lo, hi, n); }, interp());
  auto open = jit("linspace_open", [](Double lo, Double hi, Int n) { return linspace(lo, hi, n, false); }, interp());
  auto reference = [](double lo, double hi, std::int64_t num, bool endpoint) {
    std::vector<double> y;
    const std::int64_t div = endpoint ? num - 1 : num;
    const double delta = hi - lo;
    for (std::int64_t i = 0; i < num; ++i) {
      double v;
      if (div > 0) {
        const double step = delta / static_cast<double>(div);
        v = step == 0 ? lo + static_cast<double>(i) / static_cast<double>(div) * delta : lo + static_cast<double>(i) * step;
      } else {
        v = lo + static_cast<double>(i) * delta;
      }
      y.push_back(v);
    }
    if (endpoint && num > 1) y.back() = hi;
    return y;
  };
  for (std::int64_t n : {0, 1, 2, 7, 50}) {
    for (auto [lo, hi] : {std::pair{0.0, 1.0}, std::pair{-3.0, 7.5}, std::pair{2.0, 2.0}, std::pair{1.0, -1.0}}) {
      expect_values(k(lo, hi, n).to_vector(), reference(lo, hi, n, true), 0, "endpoint");
      expect_values(open(lo, hi, n).to_vector(), reference(lo, hi, n, false), 0, "open");
    }
  }
  EXPECT_CONTAINS(error_of<ValueError>([&] { k(0.0, 1.0, std::int64_t{-1}); }), "negative number of samples");
}

// =========================================================================================================
// Reductions
// =========================================================================================================

struct Whole {
  double sum, prod, min, max, mean, var, std;
  std::int64_t argmin, argmax;
};

/// NumPy's answers, computed the way the interpreter does (sequentially, two-pass variance).
Whole reference(const std::vector<double>& a) {
  Whole w{-0.0, 1.0, kInf, -kInf, 0, 0, 0, -1, -1};
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    w.sum += x;
    w.prod *= x;
    if (std::isnan(w.min) || std::isnan(x)) w.min = kNaN;
    else w.min = std::min(w.min, x);
    if (std::isnan(w.max) || std::isnan(x)) w.max = kNaN;
    else w.max = std::max(w.max, x);
    auto better = [&](std::int64_t best, bool lower) {
      if (best < 0) return true;
      const double b = a[static_cast<size_t>(best)];
      if (std::isnan(b)) return false;
      if (std::isnan(x)) return true;
      return lower ? x < b : x > b;
    };
    if (better(w.argmin, true)) w.argmin = static_cast<std::int64_t>(i);
    if (better(w.argmax, false)) w.argmax = static_cast<std::int64_t>(i);
  }
  const double n = static_cast<double>(a.size());
  w.mean = w.sum / n;
  double ss = -0.0;
  for (double x : a) ss += (x - w.mean) * (x - w.mean);
  w.var = ss / n;
  w.std = std::sqrt(w.var);
  return w;
}

TEST(Reductions, WholeArrayMatchesNumPy) {
  auto k = jit("whole", [](Array<double, 1> a, Array<double, 1> out, Array<std::int64_t, 1> pos) {
    out[0] = kiln::sum(a);
    out[1] = kiln::prod(a);
    out[2] = kiln::mean(a);
    out[3] = kiln::var(a);
    out[4] = kiln::std(a);
    if_(a.size() > 0, [&] {
      out[5] = kiln::min(a);
      out[6] = kiln::max(a);
      pos[0] = kiln::argmin(a);
      pos[1] = kiln::argmax(a);
    });
  }, interp());
  for (std::int64_t n : kSizes) {
    for (bool specials : {false, true}) {
      const auto a = random_values(static_cast<size_t>(n), 12 + static_cast<std::uint64_t>(n), 0.5, 1.5, specials);
      std::vector<double> out(7, 0);
      std::vector<std::int64_t> pos(2, -7);
      k(a, out, pos);
      const Whole w = reference(a);
      const std::string what = "n=" + std::to_string(n) + (specials ? " with NaN/inf" : "");
      EXPECT_TRUE(same(out[0], w.sum)) << what << ": " << out[0] << " vs " << w.sum;
      EXPECT_TRUE(same(out[1], w.prod)) << what;
      EXPECT_TRUE(same(out[2], w.mean)) << what;
      EXPECT_TRUE(same(out[3], w.var)) << what;
      EXPECT_TRUE(same(out[4], w.std)) << what;
      if (n > 0) {
        EXPECT_TRUE(same(out[5], w.min)) << what;
        EXPECT_TRUE(same(out[6], w.max)) << what;
        EXPECT_EQ(pos[0], w.argmin) << what;
        EXPECT_EQ(pos[1], w.argmax) << what;
      }
    }
  }
}

TEST(Reductions, EmptyArrays) {
  auto sums = jit("empty_sums", [](Array<double, 1> a) { return kiln::sum(a) + 10.0 * kiln::prod(a); }, interp());
  EXPECT_EQ(sums(std::vector<double>{}), 10.0);  // identities: sum 0, product 1
  auto mean = jit("empty_mean", [](Array<double, 1> a) { return kiln::mean(a); }, interp());
  EXPECT_TRUE(std::isnan(mean(std::vector<double>{})));
  auto mn = jit("empty_min", [](Array<double, 1> a) { return kiln::min(a); }, interp());
  EXPECT_CONTAINS(error_of<ValueError>([&] { mn(std::vector<double>{}); }), "min of an empty array in `min(a)`");
  auto am = jit("empty_argmin", [](Array<double, 2> a) { return kiln::argmin(a); }, interp());
  const std::string msg = error_of<ValueError>([&] { am(NDArray<double>({3, 0})); });
  EXPECT_CONTAINS(msg, "argmin of an empty array in `argmin(a)` (at array_dsl_test.cpp:");
  EXPECT_CONTAINS(msg, "shape (3, 0)");
  auto ax = jit("empty_axis", [](Array<double, 2> a) { return kiln::max(a, 1); }, interp());
  EXPECT_CONTAINS(error_of<ValueError>([&] { ax(NDArray<double>({2, 0})); }), "max of an empty array");
  // Along an axis, nothing is wrong when no output element reduces nothing.
  EXPECT_EQ(ax(NDArray<double>({0, 3})).size(), 0);
  auto sa = jit("empty_sum_axis", [](Array<double, 2> a) { return kiln::sum(a, 1); }, interp());
  EXPECT_EQ(sa(NDArray<double>({2, 0})).to_vector(), (std::vector<double>{0, 0}));
}

TEST(Reductions, IntegerAndBoolArrays) {
  auto k = jit("int_red", [](Array<std::int32_t, 1> a, Array<bool, 1> m) {
    return kiln::sum(a) * 1000 + kiln::argmax(a) * 100 + kiln::sum(m) * 10 + to_int(kiln::max(m)) +
           to_int(kiln::min(a));
  }, interp());
  std::vector<std::int32_t> a = {INT32_MAX, INT32_MAX, -3, 7};
  NDArray<bool> m({3});
  m[0] = true, m[1] = false, m[2] = true;
  const std::int64_t sum = 2 * static_cast<std::int64_t>(INT32_MAX) + 4;  // int64 accumulation: no overflow
  EXPECT_EQ(k(a, m), sum * 1000 + 0 * 100 + 2 * 10 + 1 - 3);
}

/// sum/prod/min/max/argmin/argmax/mean/var/std along each axis of 2-d and 3-d arrays, with and without
/// keepdims, against nested loops.
TEST(Reductions, AlongAxesMatchLoops) {
  auto k2 = jit("axes2", [](Array<double, 2> a, Int axis) {
    // One kernel per axis value would need a template; trace both and pick at run time.
    auto s0 = kiln::sum(a, 0);
    auto s1 = kiln::sum(a, -1);
    auto out = empty<double>(9, kiln::max(a.shape(0), a.shape(1)));
    out(all) = 0.0;
    if_(axis == 0, [&] {
      out(0, kiln::range(a.shape(1))) = s0;
      out(1, kiln::range(a.shape(1))) = kiln::prod(a, 0);
      out(2, kiln::range(a.shape(1))) = kiln::min(a, 0);
      out(3, kiln::range(a.shape(1))) = kiln::max(a, 0, keepdims)(0, all);
      out(4, kiln::range(a.shape(1))) = to_double(kiln::argmin(a, 0));
      out(5, kiln::range(a.shape(1))) = to_double(kiln::argmax(a, 0));
      out(6, kiln::range(a.shape(1))) = kiln::mean(a, 0);
      out(7, kiln::range(a.shape(1))) = kiln::var(a, 0);
      out(8, kiln::range(a.shape(1))) = kiln::std(a, 0, keepdims)(0, all);
    }).else_([&] {
      out(0, kiln::range(a.shape(0))) = s1;
      out(1, kiln::range(a.shape(0))) = kiln::prod(a, 1);
      out(2, kiln::range(a.shape(0))) = kiln::min(a, 1, keepdims)(all, 0);
      out(3, kiln::range(a.shape(0))) = kiln::max(a, 1);
      out(4, kiln::range(a.shape(0))) = to_double(kiln::argmin(a, 1));
      out(5, kiln::range(a.shape(0))) = to_double(kiln::argmax(a, 1, keepdims)(all, 0));
      out(6, kiln::range(a.shape(0))) = kiln::mean(a, 1);
      out(7, kiln::range(a.shape(0))) = kiln::var(a, 1);
      out(8, kiln::range(a.shape(0))) = kiln::std(a, 1);
    });
    return out;
  }, interp());
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 13}, {13, 7}, {300, 3}, {3, 300}}) {
    const NDArray<double> a = random_matrix(m, n, static_cast<std::uint64_t>(m * 31 + n), true);
    for (int axis : {0, 1}) {
      NDArray<double> r = k2(a, static_cast<std::int64_t>(axis));
      const std::int64_t outer = axis == 0 ? n : m, len = axis == 0 ? m : n;
      for (std::int64_t o = 0; o < outer; ++o) {
        std::vector<double> line;
        for (std::int64_t t = 0; t < len; ++t) line.push_back(axis == 0 ? a(t, o) : a(o, t));
        const Whole w = reference(line);
        const double want[] = {w.sum, w.prod, w.min, w.max, static_cast<double>(w.argmin), static_cast<double>(w.argmax),
                               w.mean, w.var, w.std};
        for (int f = 0; f < 9; ++f)
          EXPECT_TRUE(same(r(f, o), want[f])) << m << "x" << n << " axis " << axis << " f" << f << " at " << o << ": "
                                               << r(f, o) << " vs " << want[f];
      }
    }
  }
}

TEST(Reductions, ThreeDimensionalAxesAndKeepdimsShapes) {
  auto k = jit("axes3", [](Array<double, 3> a) {
    auto s = kiln::sum(a, 1, keepdims);  // (p, 1, r)
    return a - s + kiln::sum(a, 0) + kiln::max(a, 2, keepdims);
  }, interp());
  NDArray<double> a({3, 4, 5});
  const auto v = random_values(60, 44);
  std::copy(v.begin(), v.end(), a.data());
  NDArray<double> r = k(a);
  ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{3, 4, 5}));
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 4; ++q)
      for (int t = 0; t < 5; ++t) {
        double s1 = -0.0, s0 = -0.0, mx = -kInf;
        for (int x = 0; x < 4; ++x) s1 += a(p, x, t);
        for (int x = 0; x < 3; ++x) s0 += a(x, q, t);
        for (int x = 0; x < 5; ++x) mx = std::max(mx, a(p, q, x));
        EXPECT_EQ(r(p, q, t), a(p, q, t) - s1 + s0 + mx);
      }
}

TEST(Reductions, AxisOutOfRangeIsATraceError) {
  auto k = jit("bad_axis", [](Array<double, 2> a) { return kiln::sum(a, 2); }, interp());
  const std::string msg = error_of<TraceError>([&] { k(NDArray<double>({2, 2})); });
  EXPECT_CONTAINS(msg, "axis 2 is out of range in `sum(a, 2)` of an array of rank 2");
  auto neg = jit("bad_axis_neg", [](Array<double, 2> a) { return kiln::mean(a, -3, keepdims); }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { neg(NDArray<double>({2, 2})); }), "axis -3 is out of range");
  auto one = jit("only_axis", [](Array<double> a) { return kiln::sum(a, 0); }, interp());  // rank known when traced
  EXPECT_CONTAINS(error_of<TraceError>([&] { one(std::vector<double>{1, 2}); }), "only axis of a 1-d array");
}

TEST(Reductions, VarianceDdofAndStability) {
  auto k = jit("ddof", [](Array<double, 1> a) { return kiln::var(a, ddof(1)) + 1000.0 * kiln::std(a, ddof(1)); }, interp());
  // Large offset, small spread: the two-pass formula keeps the digits the one-pass one loses.
  std::vector<double> a;
  for (int i = 0; i < 1000; ++i) a.push_back(1e9 + (i % 10) * 0.1);
  double mean = -0.0;
  for (double x : a) mean += x;
  mean /= 1000.0;
  double ss = -0.0;
  for (double x : a) ss += (x - mean) * (x - mean);
  const double var = ss / 999.0;
  EXPECT_EQ(k(a), var + 1000.0 * std::sqrt(var));
  EXPECT_NEAR(var, 0.0825825825825826, 1e-6);
}

TEST(Reductions, RepeatedReductionsReadTheArrayOnceButNeverAlias) {
  auto k = jit("reuse", [](Array<double, 2> x) {
    auto out = empty<double>(5, x.shape(1));
    out(0, all) = (x - kiln::mean(x, 0, keepdims))(0, all) / kiln::std(x, 0, keepdims)(0, all);  // one sum of x
    auto s1 = kiln::sum(x, 0);
    auto s2 = kiln::sum(x, 0);
    s1 += 1.0;                     // s2 is another array
    out(1, all) = s2;
    out(2, all) = s1;
    out(3, all) = kiln::mean(x) + kiln::std(x);
    x += 1.0;                      // the sums of x before this are stale now
    out(4, all) = kiln::mean(x);
    return out;
  }, interp());
  const NDArray<double> x0 = random_matrix(6, 3, 49);
  NDArray<double> x = x0.clone();
  NDArray<double> r = k(x);
  double total = -0.0;
  for (int q = 0; q < 18; ++q) total += x0[q];
  double ss = -0.0;
  for (int q = 0; q < 18; ++q) ss += (x0[q] - total / 18.0) * (x0[q] - total / 18.0);
  double total1 = -0.0;
  for (int q = 0; q < 18; ++q) total1 += x0[q] + 1.0;
  for (int j = 0; j < 3; ++j) {
    double s = -0.0, sq = -0.0;
    for (int i = 0; i < 6; ++i) s += x0(i, j);
    for (int i = 0; i < 6; ++i) sq += (x0(i, j) - s / 6.0) * (x0(i, j) - s / 6.0);
    EXPECT_EQ(r(0, j), (x0(0, j) - s / 6.0) / std::sqrt(sq / 6.0));
    EXPECT_EQ(r(1, j), s);
    EXPECT_EQ(r(2, j), s + 1.0);
    EXPECT_EQ(r(3, j), total / 18.0 + std::sqrt(ss / 18.0));
    EXPECT_EQ(r(4, j), total1 / 18.0);
  }
  // mean and std of x share one pass over x: three whole or axis sums of x are traced, not five.
  const std::string ir = k.lowered_ir();
  size_t sums = 0;
  for (size_t p = ir.find("_acc = (") ; p != std::string::npos; p = ir.find("_acc = (", p + 1)) ++sums;
  EXPECT_LE(sums, 4u) << ir;
}

TEST(Reductions, Dot) {
  auto vv = jit("dot_vv", [](Array<double, 1> a, Array<double, 1> b) { return dot(a, b); }, interp());
  auto mv = jit("dot_mv", [](Array<double, 2> m, Array<double, 1> v) { return dot(m, v); }, interp());
  auto vm = jit("dot_vm", [](Array<double, 1> v, Array<double, 2> m) { return dot(v, m); }, interp());
  auto mm = jit("dot_mm", [](Array<double, 2> a, Array<float, 2> b) { return dot(a, b); }, interp());
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 13}, {0, 3}, {64, 9}}) {
    const NDArray<double> a = random_matrix(m, n, 21);
    const auto x = random_values(static_cast<size_t>(n), 22), y = random_values(static_cast<size_t>(m), 23);
    double want = -0.0;
    for (std::int64_t j = 0; j < n; ++j) want += x[static_cast<size_t>(j)] * x[static_cast<size_t>(j)];
    EXPECT_EQ(vv(x, x), want);
    NDArray<double> r = mv(a, x);
    ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{m}));
    for (std::int64_t i = 0; i < m; ++i) {
      double s = -0.0;
      for (std::int64_t j = 0; j < n; ++j) s += a(i, j) * x[static_cast<size_t>(j)];
      EXPECT_EQ(r[i], s);
    }
    NDArray<double> t = vm(y, a);
    ASSERT_EQ(t.shape(), (std::vector<std::int64_t>{n}));
    for (std::int64_t j = 0; j < n; ++j) {
      double s = -0.0;
      for (std::int64_t i = 0; i < m; ++i) s += y[static_cast<size_t>(i)] * a(i, j);
      EXPECT_EQ(t[j], s);
    }
    NDArray<float> b({n, 5});
    for (std::int64_t q = 0; q < n * 5; ++q) b[q] = static_cast<float>(q % 7) - 3.0f;
    NDArray<double> p = mm(a, b);
    ASSERT_EQ(p.shape(), (std::vector<std::int64_t>{m, 5}));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < 5; ++j) {
        double s = -0.0;
        for (std::int64_t l = 0; l < n; ++l) s += a(i, l) * static_cast<double>(b(l, j));
        EXPECT_EQ(p(i, j), s);
      }
  }
  const std::string msg = error_of<ShapeError>([&] { mv(random_matrix(2, 3, 1), std::vector<double>{1, 2}); });
  EXPECT_CONTAINS(msg, "shapes (2, 3) and (2) not aligned in `dot(m, v)`");
  EXPECT_CONTAINS(msg, "3 (dim 1) != 2 (dim 0)");
}

// =========================================================================================================
// Views
// =========================================================================================================

/// Python's slice(lo, hi, step).indices(n) and the elements it selects.
std::vector<std::int64_t> python_slice(std::int64_t n, std::optional<std::int64_t> lo, std::optional<std::int64_t> hi,
                                       std::int64_t step) {
  auto norm = [&](std::optional<std::int64_t> b, bool is_lo) {
    if (!b) return is_lo ? (step < 0 ? n - 1 : 0) : (step < 0 ? -1 : n);
    std::int64_t v = *b;
    if (v < 0) v = std::max<std::int64_t>(v + n, step < 0 ? -1 : 0);
    else v = std::min<std::int64_t>(v, step < 0 ? n - 1 : n);
    return v;
  };
  const std::int64_t start = norm(lo, true), stop = norm(hi, false);
  std::vector<std::int64_t> out;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}

TEST(Views, ConstantBoundsMatchPython) {
  // Each case is its own kernel (the bounds are constants in the trace).
  using Bound = std::optional<std::int64_t>;
  struct Case {
    Bound lo, hi;
    std::int64_t step;
  };
  const Case cases[] = {{1, -1, 1}, {Bound{}, -2, 1}, {2, Bound{}, 1}, {-3, Bound{}, 1}, {-5, -2, 1}, {2, 6, 1},
                        {6, 2, 1},  {1, 100, 3},      {Bound{}, Bound{}, -1}, {-1, 0, -2}, {8, 1, -3}, {-100, 100, 2},
                        {-2, 3, 1}};
  for (const Case& c : cases) {
    auto k = jit("slice_const", [c](Array<double, 1> a) {
      SliceSpec s = c.lo && c.hi ? slice(*c.lo, *c.hi, c.step)
                  : c.lo       ? slice(*c.lo, none, c.step)
                  : c.hi       ? slice(none, *c.hi, c.step)
                               : slice(none, none, c.step);
      auto v = a[s];
      auto out = empty<double>(v.shape(0) + 1);
      out[0] = to_double(v.shape(0));
      out(kiln::range(1, none)) = v;
      return out;
    }, interp());
    for (std::int64_t n : {0, 1, 2, 3, 5, 8, 12}) {
      std::vector<double> a(static_cast<size_t>(n));
      std::iota(a.begin(), a.end(), 0.0);
      const auto want = python_slice(n, c.lo, c.hi, c.step);
      NDArray<double> r = k(a);
      ASSERT_EQ(r[0], static_cast<double>(want.size())) << "n=" << n;
      for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(r[static_cast<std::int64_t>(i) + 1], static_cast<double>(want[i]));
    }
  }
}

TEST(Views, SymbolicBoundsAndStepsMatchPython) {
  auto k = jit("slice_sym", [](Array<double, 1> a, Int lo, Int hi, Int step) {
    auto v = a[slice(lo, hi, step)];
    auto out = full<double>(v.shape(0) + 1, 0.0);
    out[0] = to_double(v.shape(0));
    out(kiln::range(1, none)) = v;
    return out;
  }, interp());
  for (std::int64_t n : {0, 1, 4, 9})
    for (std::int64_t lo = -11; lo <= 11; lo += 2)
      for (std::int64_t hi : {-12, -3, -1, 0, 2, 5, 12})
        for (std::int64_t step : {-3, -1, 1, 2}) {
          std::vector<double> a(static_cast<size_t>(n));
          std::iota(a.begin(), a.end(), 0.0);
          const auto want = python_slice(n, lo, hi, step);
          NDArray<double> r = k(a, lo, hi, step);
          ASSERT_EQ(r[0], static_cast<double>(want.size())) << n << " " << lo << ":" << hi << ":" << step;
          for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(r[static_cast<std::int64_t>(i) + 1], static_cast<double>(want[i]));
        }
  EXPECT_CONTAINS(error_of<ValueError>([&] { k(std::vector<double>{1}, std::int64_t{0}, std::int64_t{1}, std::int64_t{0}); }),
                  "slice step cannot be zero");
  auto z = jit("slice_zero", [](Array<double, 1> a) { return kiln::sum(a[slice(0, 2, 0)]); }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { z(std::vector<double>{1}); }), "slice step cannot be zero");
}

TEST(Views, RangeWithoutABodyIsASliceAndIndicesDropDimensions) {
  auto k = jit("view2", [](Array<double, 2> m, Int r) {
    auto inner = m(kiln::range(1, m.shape(0) - 1), kiln::range(1, -1));  // interior
    auto row = m(r, all);                                                // rank 1
    auto col = m(all, 0);
    auto out = zeros<double>(3, m.shape(1));
    out(0, kiln::range(1, -1)) = kiln::sum(inner, 0);
    out(1, all) = row;
    out(2, kiln::range(col.shape(0))) = col * 2.0;
    kiln::range(Int(2), [&](Int i) { out(2, i) += inner(0, i); });  // element access through a view
    return out;
  }, interp());
  const NDArray<double> m = random_matrix(4, 6, 31);
  NDArray<double> r = k(m, std::int64_t{2});
  for (int j = 1; j < 5; ++j) EXPECT_EQ(r(0, j), m(1, j) + m(2, j));
  for (int j = 0; j < 6; ++j) EXPECT_EQ(r(1, j), m(2, j));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r(2, i), m(i, 0) * 2.0 + (i < 2 ? m(1, i + 1) : 0.0));
}

TEST(Views, ElementWritesThroughViewsReachTheBaseArray) {
  auto k = jit("view_writes", [](Array<double, 2> m, Int j) {
    auto col = m(all, j);             // a column
    auto back = col[slice(none, none, -1)];
    back[0] = -1.0;                   // the last row of column j
    col[1] += 100.0;
    m(0, kiln::range(1, none))[0] = 7.0;  // m[0, 1]
  }, interp());
  NDArray<double> m = random_matrix(4, 3, 45);
  NDArray<double> want = m.clone();
  k(m, std::int64_t{2});
  want(3, 2) = -1.0;
  want(1, 2) += 100.0;
  want(0, 1) = 7.0;
  EXPECT_EQ(m.to_vector(), want.to_vector());
}

TEST(Views, ViewOfAViewAndShapes) {
  auto k = jit("view_of_view", [](Array<double, 1> a) {
    auto v = a[slice(1, none)];       // a[1:]
    auto w = v[slice(none, none, -2)];  // a[1:][::-2]
    auto out = empty<double>(w.size() + 2);
    out[0] = to_double(v.size());
    out[1] = to_double(w.shape(0));
    out(kiln::range(2, none)) = w;
    return out;
  }, interp());
  for (std::int64_t n : {0, 1, 2, 6, 7}) {
    std::vector<double> a(static_cast<size_t>(n));
    std::iota(a.begin(), a.end(), 10.0);
    std::vector<double> want = {static_cast<double>(std::max<std::int64_t>(n - 1, 0))};
    std::vector<double> w;
    for (std::int64_t i = n - 1; i >= 1; i -= 2) w.push_back(a[static_cast<size_t>(i)]);
    want.push_back(static_cast<double>(w.size()));
    want.insert(want.end(), w.begin(), w.end());
    EXPECT_EQ(k(a).to_vector(), want) << n;
  }
}

TEST(Views, ReturningAViewReturnsACopy) {
  auto k = jit("return_view", [](Array<double, 2> m) { return m(all, kiln::range(1, 3)); }, interp());
  NDArray<double> m = random_matrix(3, 4, 41);
  NDArray<double> r = k(m);
  ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{3, 2}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(r(i, j), m(i, j + 1));
  r(0, 0) = 99;
  EXPECT_NE(m(0, 1), 99);
  auto local = jit("return_local_view", [](Int n) { return arange<double>(n)[slice(none, none, -1)]; }, interp());
  EXPECT_EQ(local(std::int64_t{3}).to_vector(), (std::vector<double>{2, 1, 0}));
}

// Slices are immutable (as Python's): bounds written as C++ integers stay constants where the slice is used in a
// loop traced once, so the views' extents are the closed forms the passes compare, and a time loop of slice
// stencils fuses into one loop per sweep.
static_assert(!std::is_copy_assignable_v<SliceSpec> && std::is_copy_constructible_v<SliceSpec>);

TEST(Views, SlicesMadeBeforeATimeLoopKeepConstantBounds) {
  auto k = jit("jacobi_slices", [](Array<double, 2> a, Array<double, 2> b, Int steps) {
    const auto in = slice(1, -1), lo = slice(0, -2), hi = slice(2, none);
    kiln::range(steps, [&](Int) {
      b(in, in) = 0.25 * (a(in, lo) + a(in, hi) + a(lo, in) + a(hi, in));
      a(in, in) = 0.25 * (b(in, lo) + b(in, hi) + b(lo, in) + b(hi, in));
    });
  }, interp());
  for (std::int64_t n : {0, 1, 2, 3, 9}) {
    NDArray<double> a = random_matrix(n, n, 7), b = random_matrix(n, n, 8);
    std::vector<double> ra = a.to_vector(), rb = b.to_vector();
    const auto at = [n](std::vector<double>& v, std::int64_t i, std::int64_t j) -> double& { return v[static_cast<std::size_t>(i * n + j)]; };
    for (int s = 0; s < 3; ++s) {
      for (std::int64_t i = 1; i + 1 < n; ++i)
        for (std::int64_t j = 1; j + 1 < n; ++j)
          at(rb, i, j) = 0.25 * (at(ra, i, j - 1) + at(ra, i, j + 1) + at(ra, i - 1, j) + at(ra, i + 1, j));
      for (std::int64_t i = 1; i + 1 < n; ++i)
        for (std::int64_t j = 1; j + 1 < n; ++j)
          at(ra, i, j) = 0.25 * (at(rb, i, j - 1) + at(rb, i, j + 1) + at(rb, i - 1, j) + at(rb, i + 1, j));
    }
    k(a, b, std::int64_t{3});
    EXPECT_EQ(a.to_vector(), ra) << n;
    EXPECT_EQ(b.to_vector(), rb) << n;
  }
  const std::string d = k.diagnostics();
  EXPECT_CONTAINS(d, "parfors after fusion: 2");  // one per sweep: every view has the extents max((n - 2), 0)
  EXPECT_EQ(d.find("different index spaces"), std::string::npos) << d;
}

// =========================================================================================================
// Assignment into slices and in-place updates
// =========================================================================================================

TEST(Assignment, IntoSlicesWithBroadcasting) {
  auto k = jit("assign", [](Array<double, 2> m, Array<double, 1> row, Double s) {
    m(kiln::range(0, 2), all) = row;           // a row into two rows
    m(2, kiln::range(1, none)) = s;           // a scalar into part of a row
    m[slice(-1, none)] = m(0, all) * 10.0;    // the last row from the first
  }, interp());
  NDArray<double> m = random_matrix(4, 3, 51);
  const NDArray<double> before = m.clone();
  std::vector<double> row = {1, 2, 3};
  k(m, row, 7.0);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(m(0, j), row[static_cast<size_t>(j)]);
    EXPECT_EQ(m(1, j), row[static_cast<size_t>(j)]);
    EXPECT_EQ(m(2, j), j == 0 ? before(2, 0) : 7.0);
    EXPECT_EQ(m(3, j), row[static_cast<size_t>(j)] * 10.0);
  }
}

TEST(Assignment, OverlappingSelfAssignmentHasNumPySemantics) {
  // a[1:] = a[:-1] shifts right (NumPy evaluates the value completely first; a loop would smear a[0]).
  auto shift = jit("shift", [](Array<double, 1> a) { a(kiln::range(1, none)) = a(kiln::range(0, -1)); }, interp());
  auto reverse = jit("reverse", [](Array<double, 1> a) { a(all) = a[slice(none, none, -1)]; }, interp());
  auto accumulate = jit("accumulate", [](Array<double, 1> a) { a(kiln::range(1, none)) += a(kiln::range(0, -1)); }, interp());
  auto same_place = jit("same_place", [](Array<double, 1> a) { a(all) = a * 2.0 + a; }, interp());
  for (std::int64_t n : {0, 1, 2, 5, 101}) {
    std::vector<double> a(static_cast<size_t>(n));
    std::iota(a.begin(), a.end(), 1.0);
    std::vector<double> s = a, r = a, c = a, q = a;
    shift(s);
    reverse(r);
    accumulate(c);
    same_place(q);
    std::vector<double> ws = a, wr(a.rbegin(), a.rend()), wc = a, wq = a;
    for (std::int64_t i = 1; i < n; ++i) {
      ws[static_cast<size_t>(i)] = a[static_cast<size_t>(i - 1)];
      wc[static_cast<size_t>(i)] = a[static_cast<size_t>(i)] + a[static_cast<size_t>(i - 1)];
    }
    for (auto& x : wq) x = x * 2.0 + x;
    EXPECT_EQ(s, ws) << n;
    EXPECT_EQ(r, wr) << n;
    EXPECT_EQ(c, wc) << n;
    EXPECT_EQ(q, wq) << n;
  }
  // Only the overlapping assignments evaluate into a temporary first.
  EXPECT_CONTAINS(shift.lowered_ir(), "(value)");
  EXPECT_EQ(same_place.lowered_ir().find("(value)"), std::string::npos) << same_place.lowered_ir();
}

TEST(Assignment, InPlaceOperators) {
  auto k = jit("inplace", [](Array<double, 2> m, Array<double, 1> v, Array<std::int32_t, 1> c) {
    m += v;                      // broadcast over rows
    m *= 2.0;
    m(0, all) -= m(1, all);
    m /= kiln::max(m);
    c += 1;
    c *= c;
    c %= 7;
  }, interp());
  NDArray<double> m = random_matrix(3, 4, 61);
  const NDArray<double> m0 = m.clone();
  std::vector<double> v = {1, 2, 3, 4};
  std::vector<std::int32_t> c = {1, 2, 3, 10};
  k(m, v, c);
  std::vector<double> w(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) w[static_cast<size_t>(i * 4 + j)] = (m0(i, j) + v[static_cast<size_t>(j)]) * 2.0;
  for (int j = 0; j < 4; ++j) w[static_cast<size_t>(j)] -= w[static_cast<size_t>(4 + j)];
  const double mx = *std::max_element(w.begin(), w.end());
  for (int q = 0; q < 12; ++q) EXPECT_EQ(m[q], w[static_cast<size_t>(q)] / mx);
  EXPECT_EQ(c, (std::vector<std::int32_t>{4, 2, 2, 2}));
}

// =========================================================================================================
// Value semantics of handles and results
// =========================================================================================================

TEST(ArraySemantics, ResultsAreValuesAndHandlesRebind) {
  auto k = jit("values", [](Array<double, 1> a) {
    auto t = a * 2.0;          // evaluated here
    Double s = kiln::sum(a);   // so is this
    Array<double, 1> c = a + 1.0;
    Array<double, 1> d = c;    // the same array
    c = a - 1.0;               // rebinds c only
    a[0] = 100.0;              // later writes change neither
    auto out = empty<double>(4, a.shape(0));
    out(0, all) = t;
    out(1, all) = c;
    out(2, all) = d;
    out(3, all) = s;
    return out;
  }, interp());
  std::vector<double> a = {1, 2, 3};
  NDArray<double> r = k(a);
  EXPECT_EQ(a[0], 100.0);
  for (int j = 0; j < 3; ++j) {
    const double x = j + 1.0;
    EXPECT_EQ(r(0, j), x * 2.0);
    EXPECT_EQ(r(1, j), x - 1.0);
    EXPECT_EQ(r(2, j), x + 1.0);
    EXPECT_EQ(r(3, j), 6.0);
  }
}

TEST(ArraySemantics, RebindingAHandleInsideALoopIsATraceError) {
  auto k = jit("rebind_loop", [](Array<double, 1> a, Int n) {
    Array<double, 1> acc = a;
    kiln::range(n, [&](Int) { acc = acc * 2.0; });  // traced once: would not double n times
    return acc;
  }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { k(std::vector<double>{1}, std::int64_t{3}); }),
                  "rebound inside it");
  // Writing into the elements is the way, and works.
  auto ok = jit("update_loop", [](Array<double, 1> a, Int n) {
    auto acc = a * 1.0;
    kiln::range(n, [&](Int) { acc *= 2.0; });
    return acc;
  }, interp());
  EXPECT_EQ(ok(std::vector<double>{1, 3}, std::int64_t{3}).to_vector(), (std::vector<double>{8, 24}));
}

TEST(ArraySemantics, RowsAccumulatedInAParallelLoopAreAnArrayReduction) {
  // `acc[:] += row` in a prange: every iteration updates all of acc, which detect_reductions turns into a
  // race-free array reduction.
  auto make = [](Options o) {
    return jit("row_accumulate", [](Array<double, 2> m) {
      auto acc = zeros<double>(m.shape(1));
      prange(m.shape(0), [&](Int i) { acc(all) += m(i, all) * 2.0; });
      return acc;
    }, o);
  };
  const NDArray<double> m = random_matrix(301, 17, 47);
  std::vector<double> want(17, 0.0);
  for (int i = 0; i < 301; ++i)
    for (int j = 0; j < 17; ++j) want[static_cast<size_t>(j)] += m(i, j) * 2.0;
  expect_values(make(interp())(m).to_vector(), want, 0, "interpreter");
  if (has_cpu_backend()) expect_values(make(cpu())(m).to_vector(), want, 1e-12, "cpu");
}

TEST(ArraySemantics, ArrayOperationsInsideParallelLoops) {
  auto k = jit("row_norms", [](Array<double, 2> m) {
    auto out = empty<double>(m.shape(0));
    prange(m.shape(0), [&](Int i) {
      auto row = m(i, all);
      out[i] = kiln::sqrt(kiln::sum(row * row));
    });
    return out;
  }, interp());
  const NDArray<double> m = random_matrix(9, 5, 71);
  NDArray<double> r = k(m);
  for (int i = 0; i < 9; ++i) {
    double s = -0.0;
    for (int j = 0; j < 5; ++j) s += m(i, j) * m(i, j);
    EXPECT_EQ(r[i], std::sqrt(s));
  }
}

// =========================================================================================================
// The CPU backend: the same operations compiled (reductions may round differently: blocks are combined
// in a fixed order, not sequentially)
// =========================================================================================================

TEST(ArrayCpu, ElementwiseBroadcastAndCreation) {
  if (!has_cpu_backend()) GTEST_SKIP() << "built without the CPU backend";
  auto k = jit("cpu_elem", [](Array<double, 2> m, Array<double, 1> v) {
    auto t = kiln::exp(m - v) * kiln::where(m > 0.0, 1.0, -1.0) + arange<double>(v.shape(0));
    return t + zeros_like(t) + kiln::cast<double>(kiln::cast<float>(m));
  }, cpu());
  const NDArray<double> m = random_matrix(57, 33, 81);
  const auto v = random_values(33, 82);
  NDArray<double> r = k(m, v);
  for (int i = 0; i < 57; ++i)
    for (int j = 0; j < 33; ++j) {
      const double x = m(i, j);
      const double want = std::exp(x - v[static_cast<size_t>(j)]) * (x > 0 ? 1.0 : -1.0) + j + static_cast<double>(static_cast<float>(x));
      EXPECT_TRUE(close(r(i, j), want, 1e-14)) << r(i, j) << " vs " << want;
    }
}

TEST(ArrayCpu, ViewsAndSliceAssignment) {
  if (!has_cpu_backend()) GTEST_SKIP() << "built without the CPU backend";
  auto k = jit("cpu_views", [](Array<double, 1> a, Int lo) {
    auto b = zeros_like(a);
    b(kiln::range(1, -1)) = a[slice(none, -2)] + a[slice(2, none)];
    b[slice(lo, none, 3)] += 1.0;
    a(kiln::range(1, none)) = a(kiln::range(0, -1));  // overlapping: through a temporary
    return b;
  }, cpu());
  for (std::int64_t n : {0, 1, 3, 1000}) {
    std::vector<double> a = random_values(static_cast<size_t>(n), 91);
    const std::vector<double> a0 = a;
    NDArray<double> b = k(a, std::int64_t{-7});
    std::vector<double> wb(static_cast<size_t>(n), 0.0);
    for (std::int64_t i = 1; i + 1 < n; ++i) wb[static_cast<size_t>(i)] = a0[static_cast<size_t>(i - 1)] + a0[static_cast<size_t>(i + 1)];
    for (auto i : python_slice(n, -7, std::nullopt, 3)) wb[static_cast<size_t>(i)] += 1.0;
    EXPECT_EQ(b.to_vector(), wb) << n;
    for (std::int64_t i = 1; i < n; ++i) EXPECT_EQ(a[static_cast<size_t>(i)], a0[static_cast<size_t>(i - 1)]);
  }
}

TEST(ArrayCpu, Reductions) {
  if (!has_cpu_backend()) GTEST_SKIP() << "built without the CPU backend";
  auto k = jit("cpu_red", [](Array<double, 2> m) {
    auto out = empty<double>(6);
    out[0] = kiln::sum(m);
    out[1] = kiln::mean(m);
    out[2] = kiln::std(m);
    out[3] = kiln::sum(kiln::sum(m, 0) * 2.0) + kiln::sum(kiln::max(m, 1));
    out[4] = dot(kiln::sum(m, 1), kiln::sum(m, 1));
    out[5] = kiln::prod(m(0, kiln::range(0, 5)));
    return out;
  }, cpu());
  const NDArray<double> m = random_matrix(301, 517, 101);
  NDArray<double> r = k(m);
  double sum = 0, mx = 0, dd = 0, p = 1;
  std::vector<double> rows(301, 0.0);
  for (int i = 0; i < 301; ++i) {
    double rmax = -kInf;
    for (int j = 0; j < 517; ++j) {
      sum += m(i, j);
      rows[static_cast<size_t>(i)] += m(i, j);
      rmax = std::max(rmax, m(i, j));
    }
    mx += rmax;
  }
  for (double x : rows) dd += x * x;
  for (int j = 0; j < 5; ++j) p *= m(0, j);
  const double mean = sum / (301.0 * 517.0);
  double ss = 0;
  for (int q = 0; q < 301 * 517; ++q) ss += (m[q] - mean) * (m[q] - mean);
  EXPECT_TRUE(close(r[0], sum, 1e-11));
  EXPECT_TRUE(close(r[1], mean, 1e-11));
  EXPECT_TRUE(close(r[2], std::sqrt(ss / (301.0 * 517.0)), 1e-11));
  EXPECT_TRUE(close(r[3], 2.0 * sum + mx, 1e-11));
  EXPECT_TRUE(close(r[4], dd, 1e-11));
  EXPECT_TRUE(close(r[5], p, 1e-14));
}

// CheckStmt and argmin/argmax reductions on the CPU backend: an empty-array check, NaN as the extreme, and
// the (value, index) reduction over many blocks.
TEST(ArrayCpu, ArgReductionsAndChecks) {
  if (!has_cpu_backend()) GTEST_SKIP() << "built without the CPU backend";
  auto k = jit("cpu_arg", [](Array<double, 1> a) { return kiln::argmax(a) * 1000 + kiln::argmin(a); }, cpu());
  auto a = random_values(10007, 111, -1, 1, false);
  a[5000] = 7;
  a[9000] = -7;
  EXPECT_EQ(k(a), 5000 * 1000 + 9000);
  a[3] = kNaN;  // NaN counts as the extreme
  EXPECT_EQ(k(a), 3 * 1000 + 3);
  EXPECT_CONTAINS(error_of<ValueError>([&] { k(std::vector<double>{}); }), " of an empty array in `arg");
  auto sh = jit("cpu_shape", [](Array<double, 1> a, Array<double, 1> b) { return a + b; }, cpu());
  EXPECT_CONTAINS(error_of<ShapeError>([&] { sh(std::vector<double>{1, 2}, std::vector<double>{1, 2, 3}); }),
                  "shapes (2) and (3)");
}

// Equal extremes in different blocks: the first index wins, as in NumPy.
TEST(ArrayCpu, ArgReductionTiesKeepTheFirstIndex) {
  if (!has_cpu_backend()) GTEST_SKIP() << "built without the CPU backend";
  auto k = jit("cpu_arg_ties", [](Array<double, 1> a) { return kiln::argmax(a) * 100000 + kiln::argmin(a); }, cpu());
  auto a = random_values(10007, 111, -1, 1, false);
  a[5000] = a[9001] = 7;
  a[17] = a[9000] = -7;
  EXPECT_EQ(k(a), 5000 * 100000 + 17);
}

TEST(ArrayCpu, AllocationStatisticsSeeWhatAKernelTakesBeyondItsInputs) {
  if (!has_cpu_backend()) GTEST_SKIP() << "built without the CPU backend";
  // Softmax allocates only its result (e is fused away, and the result reuses its buffer): the peak a call
  // adds is the result's bytes plus the allocator's rounding. A returned array leaves the statistics when
  // the kernel hands it over, so in_use_bytes is back where it was.
  auto softmax = jit("cpu_softmax_memory", [](Array<double, 1> a) {
    auto e = kiln::exp(a - kiln::max(a));
    return e / kiln::sum(e);
  }, cpu());
  // Two arrays alive at once: p is read again after each reduction, which needs all of it first, and q is
  // read after its own maximum.
  auto two = jit("cpu_two_temporaries", [](Array<double, 1> a) {
    auto p = a + 1.0;
    auto q = p / kiln::sum(p);
    return q / kiln::max(q) + p;
  }, cpu());
  const std::int64_t n = 100003;
  const auto a = random_values(static_cast<size_t>(n), 5, -5, 5);
  (void)softmax(a);  // compiled before measuring
  (void)two(a);
  const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(double));

  const AllocationStats before = allocation_stats();
  reset_allocation_peak();
  NDArray<double> r = softmax(a);
  const AllocationStats after = allocation_stats();
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  EXPECT_EQ(after.allocations - before.allocations, 1u);
  EXPECT_GE(after.peak_bytes - before.in_use_bytes, bytes);
  EXPECT_LE(after.peak_bytes - before.in_use_bytes, bytes + 4096);
  double total = 0;
  for (std::int64_t k = 0; k < n; ++k) total += r[k];
  EXPECT_NEAR(total, 1.0, 1e-12);

  reset_allocation_peak();
  const AllocationStats before2 = allocation_stats();
  (void)two(a);
  const AllocationStats after2 = allocation_stats();
  EXPECT_EQ(after2.in_use_bytes, before2.in_use_bytes);
  EXPECT_GE(after2.peak_bytes - before2.in_use_bytes, 2 * bytes) << two.lowered_ir();
}

}  // namespace
}  // namespace kiln
