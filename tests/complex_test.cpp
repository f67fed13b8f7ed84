// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// complex64 and complex128 (kiln/complex.hpp): the promotion table (compile time); every arithmetic operation
// on the CPU and the interpreter against kiln/complex_math.hpp's host definition, bit for bit, with NaN, ±inf,
// ±0, tiny and huge parts (sizes 0, 1, primes, large); the quotient against NumPy's values and a long double
// reference; the functions against std::complex; reductions in their defined order; complex scalar arguments
// and results; arrays passed without a copy (std::vector, std::span, kiln::ArrayRef of rank 2, the parts
// views); and the TypeErrors for what complex numbers do not have.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <kiln/kiln.hpp>

#include "tests/complex_kernels.hpp"
#include "tests/error_test_util.hpp"

namespace {

using namespace kiln;
using cxtest::same;
namespace cm = kiln::complex_math;

// ---- promotion (docs/element_types.md, "Complex numbers") -----------------------------------------------------

template <class A, class B>
using plus_t = decltype(std::declval<A>() + std::declval<B>());

static_assert(std::is_same_v<plus_t<Complex64, Complex64>, Complex64>);
static_assert(std::is_same_v<plus_t<Complex64, Complex128>, Complex128>);
static_assert(std::is_same_v<plus_t<Complex64, Double>, Complex128>);  // NumPy: c64 + f64 is c128
static_assert(std::is_same_v<plus_t<Double, Complex64>, Complex128>);
static_assert(std::is_same_v<plus_t<Complex64, Float>, Complex64>);
static_assert(std::is_same_v<plus_t<Complex64, Half>, Complex64>);
static_assert(std::is_same_v<plus_t<Complex64, Int64>, Complex64>);  // an integer keeps the precision
static_assert(std::is_same_v<plus_t<Complex128, UInt8>, Complex128>);
static_assert(std::is_same_v<plus_t<Complex64, double>, Complex64>);  // literals are weak
static_assert(std::is_same_v<plus_t<Float, std::complex<double>>, Complex64>);
static_assert(std::is_same_v<plus_t<Int, std::complex<double>>, Complex128>);
static_assert(std::is_same_v<decltype(kiln::abs(std::declval<Complex64>())), Float>);
static_assert(std::is_same_v<decltype(kiln::real(std::declval<Complex128>())), Double>);
static_assert(std::is_same_v<decltype(kiln::complex(std::declval<Float>(), 1)), Complex64>);
static_assert(std::is_same_v<decltype(kiln::complex(std::declval<Float>(), std::declval<Double>())), Complex128>);
// Implicit conversions only where nothing is lost.
static_assert(std::is_convertible_v<Complex64, Complex128> && !std::is_convertible_v<Complex128, Complex64>);
static_assert(std::is_convertible_v<Float, Complex64> && !std::is_convertible_v<Double, Complex64>);
// Comparisons: == and != are Bool; < exists only to say why not (a TypeError when traced, below).
static_assert(std::is_same_v<decltype(std::declval<Complex64>() == std::declval<Complex64>()), Bool>);

const std::int64_t kSizes[] = {0, 1, 2, 13, 1009, 100003};

Options on(Target t) { return Options().on(t); }

// ---- arithmetic -----------------------------------------------------------------------------------------------

/// The host definition of each row of cxtest::arith.
template <class R>
std::complex<R> arith_ref(int row, std::complex<R> a, std::complex<R> b, R s) {
  using O = cm::HostOps<R>;
  switch (row) {
    case 0: return {a.real() + b.real(), a.imag() + b.imag()};
    case 1: return {a.real() - b.real(), a.imag() - b.imag()};
    case 2: { const auto p = cm::mul<O>(a.real(), a.imag(), b.real(), b.imag()); return {p.re, p.im}; }
    case 3: { const auto p = cm::div<O>(a.real(), a.imag(), b.real(), b.imag()); return {p.re, p.im}; }
    case 4: return {-a.real(), -a.imag()};
    case 5: return {a.real() * s, a.imag() * s};
    case 6: return {s * a.real(), s * a.imag()};
    case 7: return {a.real() / s, a.imag() / s};
    case 8: { const auto p = cm::div<O>(s, R(0), a.real(), a.imag()); return {p.re, p.im}; }
    case 9: return {a.real() + s, a.imag()};
    case 10: return {s - a.real(), -a.imag()};
    default: return {a.real(), -a.imag()};
  }
}

template <class R>
void check_arith() {
  auto cpu = jit("arith", cxtest::arith<R>, on(Target::cpu));
  auto ref = jit("arith", cxtest::arith<R>, on(Target::interpreter));
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << sizeof(R) * 16 << "-bit complex, n=" << n);
    const auto x = cxtest::operands<R>(static_cast<std::size_t>(n), 1);
    const auto y = cxtest::operands<R>(static_cast<std::size_t>(n), 2);
    std::vector<R> r(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = y[i].real();
    std::vector<std::complex<R>> o1(static_cast<std::size_t>(cxtest::kArithRows * n)), o2(o1.size());
    cpu(x, y, r, ArrayRef<std::complex<R>>(o1.data(), {cxtest::kArithRows, n}));
    ref(x, y, r, ArrayRef<std::complex<R>>(o2.data(), {cxtest::kArithRows, n}));
    for (int row = 0; row < cxtest::kArithRows; ++row) {
      for (std::int64_t i = 0; i < n; ++i) {
        const std::size_t k = static_cast<std::size_t>(row * n + i), j = static_cast<std::size_t>(i);
        const std::complex<R> want = arith_ref<R>(row, x[j], y[j], r[j]);
        ASSERT_TRUE(same(o1[k], want)) << "cpu row " << row << " at " << i << ": " << x[j] << ", " << y[j]
                                       << " gave " << o1[k] << ", want " << want;
        ASSERT_TRUE(same(o2[k], want)) << "interpreter row " << row << " at " << i << " gave " << o2[k];
      }
    }
  }
}

TEST(Complex, ArithmeticIsTheDefinitionOnCpuAndInterpreter64) { check_arith<float>(); }
TEST(Complex, ArithmeticIsTheDefinitionOnCpuAndInterpreter128) { check_arith<double>(); }

/// Quotients where a naive (ac + bd)/(c² + d²) over- or underflows, and where NumPy's Smith loop does too
/// (parts near the largest double, a subnormal divisor); a zero divisor as NumPy.
TEST(Complex, DivisionOfLargeAndSmallMagnitudes) {
  auto div = jit("div", [](Complex128 a, Complex128 b) { return a / b; }, on(Target::cpu));
  auto idiv = jit("div", [](Complex128 a, Complex128 b) { return a / b; }, on(Target::interpreter));
  using C = std::complex<double>;
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    C a, b, want;
  } cases[] = {
      {{1e300, 1e300}, {1e300, 1e300}, {1, 0}},
      {{1e-300, 1e-300}, {1e-300, 1e-300}, {1, 0}},
      {{1e-310, 3e-310}, {2e-310, 0}, {0.5, 1.5}},
      {{1e308, 1e308}, {1e308, 1e308}, {1, 0}},
      {{2, 0}, {0, 0}, {inf, std::nan("")}},
      {{-3, 4}, {0, 0}, {-inf, inf}},
      {{1, 2}, {3, 4}, {0.44, 0.08}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.a << " / " << c.b);
    const C got = div(c.a, c.b), igot = idiv(c.a, c.b);
    EXPECT_TRUE(same(got, igot)) << got << " vs interpreter " << igot;
    const auto p = cm::div<cm::HostOps<double>>(c.a.real(), c.a.imag(), c.b.real(), c.b.imag());
    EXPECT_TRUE(same(got, C(p.re, p.im)));
    if (std::isnan(c.want.imag()) || std::isinf(c.want.real()) || std::isinf(c.want.imag())) {
      EXPECT_EQ(std::isnan(got.real()), std::isnan(c.want.real()));
      EXPECT_EQ(std::isnan(got.imag()), std::isnan(c.want.imag()));
      if (std::isinf(c.want.real())) {
        EXPECT_EQ(got.real(), c.want.real());
      }
      if (std::isinf(c.want.imag())) {
        EXPECT_EQ(got.imag(), c.want.imag());
      }
    } else {
      EXPECT_NEAR(got.real(), c.want.real(), 4e-16 * std::abs(c.want.real()) + 1e-300);
      EXPECT_NEAR(got.imag(), c.want.imag(), 4e-16 * std::abs(c.want.imag()) + 1e-300);
    }
  }
  // Random finite quotients over 80 binary orders of magnitude, and with parts scaled to the edges of the
  // double range: within 4 ulps (normwise) of a long double reference.
  const auto x = cxtest::operands<double>(3000, 5), y = cxtest::operands<double>(3000, 6);
  for (std::size_t i = 0; i < x.size(); i += 3) {  // the random ones (every third is special)
    for (const double sx : {1.0, 0x1p900, 0x1p-1000}) {
      for (const double sy : {1.0, 0x1p1000, 0x1p-900}) {
        const C a = x[i] * sx, b = y[i] * sy;
        const std::complex<long double> w = std::complex<long double>(a) / std::complex<long double>(b);
        if (std::abs(w) > 1e300L || std::abs(w) < 1e-300L) continue;  // the quotient itself is out of range
        const C got = div(a, b);
        const long double err = std::abs(std::complex<long double>(got) - w);
        EXPECT_LE(err, 4 * std::numeric_limits<double>::epsilon() * std::abs(w)) << a << " / " << b << " = " << got;
      }
    }
  }
}

// ---- functions ------------------------------------------------------------------------------------------------

/// abs and sqrt are + - * / and sqrt only: the definition's bits on both targets. exp, log, arg and pow call
/// the targets' real functions: within a few ulps of each other and of std::complex for finite operands.
template <class R>
void check_functions() {
  auto cpu = jit("functions", cxtest::functions<R>, on(Target::cpu));
  auto ref = jit("functions", cxtest::functions<R>, on(Target::interpreter));
  using O = cm::HostOps<R>;
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1009}}) {
    const auto x = cxtest::operands<R>(static_cast<std::size_t>(n), 3), y = cxtest::operands<R>(static_cast<std::size_t>(n), 4);
    std::vector<std::complex<R>> o1(static_cast<std::size_t>(cxtest::kFunctionRows * n)), o2(o1.size());
    cpu(x, y, ArrayRef<std::complex<R>>(o1.data(), {cxtest::kFunctionRows, n}));
    ref(x, y, ArrayRef<std::complex<R>>(o2.data(), {cxtest::kFunctionRows, n}));
    auto at = [&](const std::vector<std::complex<R>>& o, int row, std::int64_t i) { return o[static_cast<std::size_t>(row * n + i)]; };
    for (std::int64_t i = 0; i < n; ++i) {
      const std::complex<R> a = x[static_cast<std::size_t>(i)], b = y[static_cast<std::size_t>(i)];
      SCOPED_TRACE(::testing::Message() << "a=" << a << " b=" << b);
      const R want_abs = cm::abs<O>(a.real(), a.imag());
      const auto want_sqrt = cm::sqrt<O>(a.real(), a.imag());
      ASSERT_TRUE(same(at(o1, 0, i), std::complex<R>(want_abs, 0)));
      ASSERT_TRUE(same(at(o2, 0, i), std::complex<R>(want_abs, 0)));
      ASSERT_TRUE(same(at(o1, 4, i), std::complex<R>(want_sqrt.re, want_sqrt.im)));
      ASSERT_TRUE(same(at(o2, 4, i), std::complex<R>(want_sqrt.re, want_sqrt.im)));
      const bool eq = a.real() == b.real() && a.imag() == b.imag();
      ASSERT_TRUE(same(at(o1, 6, i), std::complex<R>(eq ? 1 : 0, eq ? 0 : 1)));
      // |z| is std::abs's (hypot) within an ulp or two, with the same infinities and NaNs.
      const R lib = std::abs(a);
      if (std::isfinite(lib)) ASSERT_NEAR(want_abs, lib, 2 * std::numeric_limits<R>::epsilon() * lib);
      else ASSERT_TRUE(same(want_abs, lib) || (std::isnan(want_abs) && std::isnan(lib)));
      if (std::isfinite(a.real()) && std::isfinite(a.imag()) && std::abs(a) < R(30) && std::abs(a) > R(1e-3)) {
        const std::complex<R> ws = std::sqrt(a), we = std::exp(a), wl = std::log(a);
        const R tol = 8 * std::numeric_limits<R>::epsilon();
        EXPECT_NEAR(want_sqrt.re, ws.real(), tol * std::abs(ws));
        EXPECT_NEAR(want_sqrt.im, ws.imag(), tol * std::abs(ws));
        for (int row : {2, 3}) {
          const std::complex<R> w = row == 2 ? we : wl;
          EXPECT_NEAR(at(o1, row, i).real(), w.real(), tol * (std::abs(w) + 1)) << "row " << row;
          EXPECT_NEAR(at(o1, row, i).imag(), w.imag(), tol * (std::abs(w) + 1)) << "row " << row;
          EXPECT_NEAR(at(o2, row, i).real(), w.real(), tol * (std::abs(w) + 1)) << "interpreter row " << row;
        }
        EXPECT_NEAR(at(o1, 1, i).real(), std::arg(a), tol * 4);
      }
    }
  }
}

TEST(Complex, FunctionsOnCpuAndInterpreter64) { check_functions<float>(); }
TEST(Complex, FunctionsOnCpuAndInterpreter128) { check_functions<double>(); }

/// C99 Annex G values the definitions keep (docs/element_types.md lists them).
TEST(Complex, SpecialValuesOfTheFunctions) {
  using C = std::complex<double>;
  auto f = jit("special", [](Complex128 z) {
    return std::make_tuple(kiln::real(kiln::exp(z)), kiln::imag(kiln::exp(z)), kiln::real(kiln::sqrt(z)),
                           kiln::imag(kiln::sqrt(z)), kiln::abs(z), kiln::real(kiln::log(z)));
  }, on(Target::cpu));
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  {
    const auto [er, ei, sr, si, ab, lr] = f(C(inf, 0.0));
    EXPECT_EQ(er, inf); EXPECT_EQ(ei, 0.0); EXPECT_EQ(sr, inf); EXPECT_EQ(si, 0.0); EXPECT_EQ(ab, inf);
    EXPECT_EQ(lr, inf);
  }
  {
    const auto [er, ei, sr, si, ab, lr] = f(C(-0.0, -0.0));
    EXPECT_EQ(er, 1.0); EXPECT_TRUE(std::signbit(ei)); EXPECT_EQ(sr, 0.0); EXPECT_FALSE(std::signbit(sr));
    EXPECT_TRUE(std::signbit(si)); EXPECT_EQ(ab, 0.0); EXPECT_EQ(lr, -inf);
  }
  {
    const auto [er, ei, sr, si, ab, lr] = f(C(nan, inf));
    (void)er; (void)ei; (void)lr;
    EXPECT_EQ(sr, inf); EXPECT_EQ(si, inf); EXPECT_EQ(ab, inf);  // an infinite part wins over NaN
  }
  {
    const auto [er, ei, sr, si, ab, lr] = f(C(-inf, nan));
    (void)er; (void)ei; (void)lr;
    EXPECT_TRUE(std::isnan(sr)); EXPECT_EQ(std::abs(si), inf); EXPECT_EQ(ab, inf);
  }
  {
    const auto [er, ei, sr, si, ab, lr] = f(C(-4.0, 0.0));
    (void)er; (void)ei; (void)lr; (void)ab;
    EXPECT_EQ(sr, 0.0); EXPECT_EQ(si, 2.0);
  }
  // Parts near the largest double: no overflow in |z| or sqrt.
  const auto [er, ei, sr, si, ab, lr] = f(C(1e308, 1e308));
  (void)er; (void)ei; (void)lr;
  EXPECT_NEAR(ab, 1.4142135623730951e308, 1e293);
  EXPECT_TRUE(std::isfinite(sr) && std::isfinite(si));
  auto p = jit("pow", [](Complex128 z, Complex128 w) { return kiln::pow(z, w); }, on(Target::cpu));
  EXPECT_EQ(p(C(0, 0), C(2, 0)), C(0, 0));
  EXPECT_EQ(p(C(3, 4), C(0, 0)), C(1, 0));
  EXPECT_TRUE(std::isnan(p(C(0, 0), C(-1, 0)).real()));
  const C sq = p(C(1, 1), C(2, 0));
  EXPECT_NEAR(sq.real(), 0.0, 1e-15);
  EXPECT_NEAR(sq.imag(), 2.0, 1e-15);
}

// ---- reductions -----------------------------------------------------------------------------------------------

template <class R>
void check_reductions() {
  auto fn = [](Array<std::complex<R>, 1> x) {
    const Complex<R> s = kiln::sum(x), p = kiln::prod(x), m = kiln::mean(x);
    return std::make_tuple(kiln::real(s), kiln::imag(s), kiln::real(p), kiln::imag(p), kiln::real(m), kiln::imag(m));
  };
  auto cpu = jit("reductions", fn, on(Target::cpu));
  auto ref = jit("reductions", fn, on(Target::interpreter));
  using O = cm::HostOps<R>;
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    std::vector<std::complex<R>> x(static_cast<std::size_t>(n));
    std::mt19937 rng(7);
    std::uniform_real_distribution<R> u(R(0.9), R(1.1));
    // Parts on a grid of 1/64, so that every partial sum is exact in either precision (below 2^17 in magnitude):
    // then the sums are the same bits whatever the order, and are compared exactly.
    for (auto& v : x) v = {std::round(u(rng) * 64) / 64, std::round((u(rng) - R(1)) * 64) / 64};
    const auto [sr1, si1, pr1, pi1, mr1, mi1] = cpu(x);
    const auto [sr2, si2, pr2, pi2, mr2, mi2] = ref(x);
    const std::complex<R> s1(sr1, si1), p1(pr1, pi1), m1(mr1, mi1), s2(sr2, si2), p2(pr2, pi2), m2(mr2, mi2);
    EXPECT_TRUE(same(s1, s2)) << s1 << " vs " << s2;
    EXPECT_TRUE(same(p1, p2)) << p1 << " vs " << p2;
    EXPECT_TRUE(same(m1, m2)) << m1 << " vs " << m2;
    // The product in its defined order: from the first element, the definition's multiplication.
    std::complex<R> p(1, 0);
    long double sr = 0, si = 0;
    for (const auto& v : x) {
      const auto q = cm::mul<O>(p.real(), p.imag(), v.real(), v.imag());
      p = {q.re, q.im};
      sr += v.real();
      si += v.imag();
    }
    EXPECT_TRUE(same(p1, p)) << p1 << " vs " << p;
    EXPECT_EQ(s1, std::complex<R>(static_cast<R>(sr), static_cast<R>(si)));
    if (n == 0) {
      EXPECT_EQ(s1, std::complex<R>(0, 0));
      EXPECT_EQ(p1, std::complex<R>(1, 0));
      EXPECT_TRUE(std::isnan(m1.real()) && std::isnan(m1.imag()));
    } else {
      EXPECT_TRUE(same(m1, std::complex<R>(s1.real() / static_cast<R>(n), s1.imag() / static_cast<R>(n))));
    }
  }
}

TEST(Complex, SumProdMean64) { check_reductions<float>(); }
TEST(Complex, SumProdMean128) { check_reductions<double>(); }

/// A complex accumulator in a prange is two real sums, which kiln parallelizes in fixed blocks: the same bits
/// on 1 and 3 threads, and the interpreter's within rounding.
TEST(Complex, AccumulatorInAPrangeIsAReduction) {
  auto fn = [](Array<std::complex<double>, 1> x) {
    Complex128 s;
    kiln::prange(x.shape(0), [&](Int i) { s += x[i] * x[i]; });
    return s;
  };
  auto cpu = jit("acc", fn, on(Target::cpu));
  auto ref = jit("acc", fn, on(Target::interpreter));
  const auto x = cxtest::operands<double>(100003, 9);
  std::vector<std::complex<double>> finite;
  for (std::size_t i = 0; i < x.size(); i += 3) finite.push_back(x[i] * 1e-20);
  const int before = num_threads();
  const auto a = cpu(finite), b = ref(finite);
  set_num_threads(1);
  const auto c = cpu(finite);
  set_num_threads(3);
  const auto d = cpu(finite);
  set_num_threads(before);
  EXPECT_NEAR(a.real(), b.real(), 1e-9 * std::abs(b));
  EXPECT_NEAR(a.imag(), b.imag(), 1e-9 * std::abs(b));
  EXPECT_TRUE(same(a, c));
  EXPECT_TRUE(same(a, d));
}

// ---- arguments, results, layout ---------------------------------------------------------------------------

TEST(Complex, ScalarArgumentsAndResults) {
  auto k = jit("axpy", [](Complex64 a, Array<std::complex<float>> x, Array<std::complex<float>> y, Float s) {
    kiln::prange(x.shape(0), [&](Int i) { y[i] = a * x[i] + y[i] * s; });
    return a * 2 + kiln::sum(y);
  }, on(Target::cpu));
  std::vector<std::complex<float>> x = {{1, 2}, {3, -4}}, y = {{0.5f, 0}, {0, 1}};
  const std::complex<float> r = k(std::complex<float>(2, 1), x, y, 2.0f);
  // a·x: (0 + 5i), (10 - 5i); + 2y: (1 + 5i), (10 - 3i)
  EXPECT_EQ(y[0], std::complex<float>(1, 5));
  EXPECT_EQ(y[1], std::complex<float>(10, -3));
  EXPECT_EQ(r, std::complex<float>(4 + 11, 2 + 2));
  // A real number passes for a complex parameter as x + 0i.
  auto id = jit("id", [](Complex128 z) { return z; }, on(Target::cpu));
  EXPECT_EQ(id(2.5), std::complex<double>(2.5, 0));
  EXPECT_EQ(id(std::complex<double>(-1, 3)), std::complex<double>(-1, 3));
}

TEST(Complex, ArraysAreTheInterleavedPartsWithoutACopy) {
  // A 3 x 5 complex array through kiln::ArrayRef, a column view, the parts views, and a std::span.
  auto k = jit("layout", [](Array<std::complex<double>, 2> a, Array<double, 2> re_out) {
    re_out(kiln::all, kiln::all) = kiln::real(a) + kiln::imag(a);
    kiln::imag(a)(kiln::all, kiln::all) = 0.0;
    auto row = a(1, kiln::all);
    kiln::prange(row.shape(0), [&](Int j) { row[j] = row[j] * std::complex<double>(0, 1); });
    return a.size() + a.rank();
  }, on(Target::cpu));
  std::vector<std::complex<double>> v(15);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = {double(i), 100.0 + double(i)};
  NDArray<double> re_out({3, 5});
  EXPECT_EQ(k(ArrayRef<std::complex<double>>(v.data(), {3, 5}), re_out), 15 + 2);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      const double x = double(i * 5 + j);
      EXPECT_EQ(re_out(i, j), x + 100 + x);
      // Row 1 was multiplied by i after its imaginary parts were zeroed: (x + 0i)i = 0 + xi.
      EXPECT_EQ(v[static_cast<std::size_t>(i * 5 + j)], i == 1 ? std::complex<double>(0, x) : std::complex<double>(x, 0));
    }
  // A strided ArrayRef (every other element) and a std::span.
  auto scale = jit("scale", [](Array<std::complex<float>> a) {
    kiln::prange(a.shape(0), [&](Int i) { a[i] *= 2; });
  }, on(Target::cpu));
  std::vector<std::complex<float>> w = {{1, 1}, {2, 2}, {3, 3}, {4, 4}};
  scale(ArrayRef<std::complex<float>>(w.data(), {2}, {2}));
  EXPECT_EQ(w[0], std::complex<float>(2, 2));
  EXPECT_EQ(w[1], std::complex<float>(2, 2));
  EXPECT_EQ(w[2], std::complex<float>(6, 6));
  scale(std::span<std::complex<float>>(w));
  EXPECT_EQ(w[3], std::complex<float>(8, 8));
}

/// `a[i] = a[i] * b[i]` writes the real part first; the imaginary part still uses the old real part.
TEST(Complex, InPlaceUpdateReadsTheOldElement) {
  auto k = jit("inplace", [](Array<std::complex<double>> a, Array<std::complex<double>> b) {
    kiln::prange(a.shape(0), [&](Int i) {
      a[i] = a[i] * b[i];
      a[i] /= b[i] * b[i];
    });
    Complex128 z(std::complex<double>(1, 1));
    kiln::range(3, [&](Int) { z = z * z; });
    return z;
  });
  std::vector<std::complex<double>> a = {{1, 2}, {3, 4}}, b = {{0, 1}, {2, 0}};
  const auto z = k.on(Target::cpu)(a, b);
  EXPECT_EQ(a[0], std::complex<double>(2, -1));  // (1+2i)i = -2 + i; / (i·i = -1) = 2 - i
  EXPECT_EQ(a[1], std::complex<double>(1.5, 2));
  EXPECT_EQ(z, std::complex<double>(16, 0));  // (1+i)^8 = 16
  // New complex arrays inside a kernel, and a complex64 result of complex128 work through kiln::cast.
  auto n = jit("new", [](Array<std::complex<double>> a) {
    auto t = kiln::empty<std::complex<double>>(a.shape(0));
    kiln::prange(a.shape(0), [&](Int i) { t[i] = kiln::conj(a[i]); });
    return kiln::cast<std::complex<float>>(kiln::sum(t));
  }, on(Target::cpu));
  EXPECT_EQ(n(a), std::complex<float>(3.5f, -1));
}

// ---- what complex numbers do not have ---------------------------------------------------------------------------

TEST(Complex, OrderSortAndAtomicsAreTypeErrors) {
  std::vector<std::complex<float>> x(4);
  using kiln_tests::exact_error_of;
  const std::string lt = exact_error_of<TypeError>([&] {
    jit("less", [](Array<std::complex<float>> a) {
      kiln::prange(a.shape(0), [&](Int i) { kiln::if_(a[i] < a[0], [&] { a[i] = 0.0f; }); });
    }, on(Target::cpu))(x);
  });
  EXPECT_CONTAINS(lt, "kernel 'less'");
  EXPECT_CONTAINS(lt, "'<' on complex numbers");
  EXPECT_CONTAINS(lt, "kiln::abs(z)");
  const std::string srt = exact_error_of<TypeError>([&] {
    jit("sorted", [](Array<std::complex<float>> a) { kiln::sort(a); }, on(Target::cpu))(x);
  });
  EXPECT_CONTAINS(srt, "kernel 'sorted': kiln::sort of a complex array");
  const std::string at = exact_error_of<TypeError>([&] {
    jit("atomic", [](Array<std::complex<float>> a) {
      kiln::prange(a.shape(0), [&](Int i) { kiln::atomic_add(a[0], a[i]); });
    }, on(Target::cpu))(x);
  });
  EXPECT_CONTAINS(at, "kernel 'atomic': kiln::atomic_add on an element of a complex array");
  // A complex array of rank 4 would need a fifth dimension for its parts.
  std::vector<std::complex<float>> v(16);
  auto any = jit("any_rank", [](Array<std::complex<float>> a) { return Int(std::int64_t{a.rank()}) + a.size(); }, on(Target::cpu));
  EXPECT_EQ(any(ArrayRef<std::complex<float>>(v.data(), {2, 2, 4})), 3 + 16);
  const std::string r4 = exact_error_of<ShapeError>([&] { any(ArrayRef<std::complex<float>>(v.data(), {2, 2, 2, 2})); });
  EXPECT_CONTAINS(r4, "of complex numbers with more than 3 dimensions");
}

}  // namespace
