// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The NumPy helpers of the array DSL (issue #15): clip, square, sign, outer, transposes and new axes as views,
// and the reductions any / alltrue / count_nonzero / ptp / nansum / nanmean. Each against plain C++ loops on
// sizes 0, 1 and primes with NaN, infinities and -0, on the interpreter and on the CPU backend; the fusion
// of the new operations with their neighbours as kernel.diagnostics() reports it.
#include <algorithm>
#include <type_traits>

#include "tests/array_test_util.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;

const std::int64_t kSizes[] = {0, 1, 2, 7, 13, 101};

std::vector<Options> targets() {
  std::vector<Options> t = {interp()};
  if (has_cpu_backend()) t.push_back(cpu());
  return t;
}
const char* name_of(const Options& o) { return o.target == Target::cpu ? "cpu" : "interpreter"; }

// kiln's minimum/maximum (ir/semantics.hpp): NaN propagates, -0 orders before +0.
double ref_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
double ref_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double ref_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x; }

/// How many arrays the kernel's IR after the passes still allocates.
int allocations_after_passes(const std::string& diagnostics) {
  const size_t from = diagnostics.find("IR after passes:");
  if (from == std::string::npos) {
    ADD_FAILURE() << "no IR in the diagnostics:\n" << diagnostics;
    return -1;
  }
  int n = 0;
  for (size_t at = diagnostics.find("alloc ", from); at != std::string::npos; at = diagnostics.find("alloc ", at + 1)) ++n;
  return n;
}

template <class T>
using elem_of_t = typename std::remove_cvref_t<T>::value_type;

TEST(NumpyHelperTypes, ResultTypesFollowTheArithmeticRules) {
  using A1 = Array<double, 1>;
  using F1 = Array<float, 1>;
  using I1 = Array<std::int32_t, 1>;
  static_assert(std::is_same_v<decltype(kiln::clip(std::declval<F1>(), 0.0, 1.0)), F1>);  // literals adopt float
  static_assert(std::is_same_v<decltype(kiln::clip(std::declval<I1>(), 0, 10)), I1>);
  static_assert(std::is_same_v<decltype(kiln::clip(std::declval<I1>(), 0, 1.5)), A1>);   // as np.clip: float64
  static_assert(std::is_same_v<decltype(kiln::clip(std::declval<F1>(), std::declval<A1>(), 1.0)), A1>);
  static_assert(std::is_same_v<decltype(kiln::clip(std::declval<Array<float, 2>>(), std::declval<F1>(), 1.0)),
                               Array<float, 2>>);
  static_assert(std::is_same_v<decltype(kiln::square(std::declval<Array<bool, 1>>())), I1>);
  static_assert(std::is_same_v<decltype(kiln::sign(std::declval<I1>())), I1>);
  static_assert(std::is_same_v<decltype(kiln::outer(std::declval<F1>(), std::declval<I1>())), Array<float, 2>>);
  static_assert(std::is_same_v<decltype(std::declval<A1>()(kiln::all, kiln::newaxis)), Array<double, 2>>);
  static_assert(std::is_same_v<decltype(std::declval<A1>()(kiln::newaxis)), Array<double, 2>>);
  static_assert(std::is_same_v<decltype(std::declval<Array<double, 2>>()(0, kiln::newaxis)), Array<double, 2>>);
  static_assert(std::is_same_v<decltype(std::declval<Array<double, 3>>().T()), Array<double, 3>>);
  static_assert(std::is_same_v<decltype(kiln::any(std::declval<A1>())), Bool>);
  static_assert(std::is_same_v<decltype(kiln::alltrue(std::declval<Array<double, 2>>(), 1)), Array<bool, 1>>);
  static_assert(std::is_same_v<decltype(kiln::count_nonzero(std::declval<F1>())), Int>);
  static_assert(std::is_same_v<decltype(kiln::ptp(std::declval<I1>())), Int32>);
  static_assert(std::is_same_v<decltype(kiln::nansum(std::declval<I1>())), Int>);
  static_assert(std::is_same_v<decltype(kiln::nanmean(std::declval<F1>())), Float>);
  static_assert(std::is_same_v<decltype(kiln::nanmean(std::declval<Array<std::int64_t, 2>>(), 0, keepdims)),
                               Array<double, 2>>);
}

// =========================================================================================================
// Elementwise: clip, square, sign
// =========================================================================================================

TEST(NumpyHelpers, ClipMatchesMinimumOfMaximum) {
  for (const Options& o : targets()) {
    auto k = jit("clip", [](Array<double, 1> x, Array<double, 1> lo, Double hi) {
      auto out = empty<double>(x.shape(0), 4);
      out(all, 0) = kiln::clip(x, -1.0, hi);
      out(all, 1) = kiln::clip(x, lo, hi);       // an array bound
      out(all, 2) = kiln::clip(x, 2.0, -2.0);    // lo > hi: hi everywhere (NaN stays)
      out(all, 3) = kiln::clip(x, 0.0, 0.0);     // -0 and +0 decided by maximum, then minimum
      return out;
    }, o);
    for (std::int64_t n : kSizes) {
      const auto x = random_values(static_cast<size_t>(n), 3, -4, 4, true);
      const auto lo = random_values(static_cast<size_t>(n), 4, -3, 1, true);
      for (double hi : {1.5, kInf, kNaN}) {
        NDArray<double> r = k(x, lo, hi);
        ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{n, 4}));
        for (std::int64_t i = 0; i < n; ++i) {
          const double v = x[static_cast<size_t>(i)];
          const double want[] = {ref_min(ref_max(v, -1.0), hi), ref_min(ref_max(v, lo[static_cast<size_t>(i)]), hi),
                                 ref_min(ref_max(v, 2.0), -2.0), ref_min(ref_max(v, 0.0), 0.0)};
          for (int c = 0; c < 4; ++c)
            EXPECT_TRUE(same(r(i, c), want[c], true)) << name_of(o) << " n=" << n << " i=" << i << " c=" << c << ": "
                                                      << r(i, c) << " vs " << want[c];
        }
      }
    }
  }
}

TEST(NumpyHelpers, ClipBroadcastsItsBoundsAndKeepsIntegerTypes) {
  for (const Options& o : targets()) {
    // Per-column bounds against a matrix, and an int32 array clipped to int bounds.
    auto k = jit("clip_cols", [](Array<double, 2> m, Array<double, 1> lo, Array<double, 1> hi) {
      return kiln::clip(m, lo, hi);
    }, o);
    auto ki = jit("clip_int", [](Array<std::int32_t, 1> x, Int32 lo, Int32 hi) { return kiln::clip(x, lo, hi); }, o);
    for (std::int64_t rows : {0, 1, 7})
      for (std::int64_t cols : {1, 13}) {
        const NDArray<double> m = random_matrix(rows, cols, 11, true);
        const auto lo = random_values(static_cast<size_t>(cols), 12, -2, 0);
        const auto hi = random_values(static_cast<size_t>(cols), 13, 0, 2);
        NDArray<double> r = k(m, lo, hi);
        ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{rows, cols}));
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j) {
            const double want = ref_min(ref_max(m(i, j), lo[static_cast<size_t>(j)]), hi[static_cast<size_t>(j)]);
            EXPECT_TRUE(same(r(i, j), want, true)) << name_of(o) << " " << i << " " << j;
          }
      }
    const std::vector<std::int32_t> x = {std::numeric_limits<std::int32_t>::min(), -5, 0, 3, 9,
                                         std::numeric_limits<std::int32_t>::max()};
    NDArray<std::int32_t> r = ki(x, std::int32_t{-4}, std::int32_t{4});
    EXPECT_EQ(r.to_vector(), (std::vector<std::int32_t>{-4, -4, 0, 3, 4, 4})) << name_of(o);
  }
  // Bounds that cannot broadcast are the ShapeError of any elementwise operation, naming clip.
  auto bad = jit("clip_shape", [](Array<double, 1> x, Array<double, 1> lo) { return kiln::clip(x, lo, 1.0); }, interp());
  EXPECT_CONTAINS(error_of<ShapeError>([&] { bad(std::vector<double>(5), std::vector<double>(3)); }), "clip(x, lo, ");
}

TEST(NumpyHelpers, SquareAndSignMatchNumPy) {
  for (const Options& o : targets()) {
    auto k = jit("square_sign", [](Array<double, 1> x) {
      auto out = empty<double>(x.shape(0), 2);
      out(all, 0) = kiln::square(x);
      out(all, 1) = kiln::sign(x);
      return out;
    }, o);
    auto ki = jit("sign_int", [](Array<std::int64_t, 1> x) { return kiln::sign(x) * 10 + kiln::square(x); }, o);
    auto kf = jit("sign_float", [](Array<float, 1> x) { return kiln::sign(x); }, o);
    for (std::int64_t n : kSizes) {
      auto x = random_values(static_cast<size_t>(n), 21, -4, 4, true);
      if (n >= 2) x[0] = -0.0, x[1] = kNaN;
      NDArray<double> r = k(x);
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = x[static_cast<size_t>(i)];
        EXPECT_TRUE(same(r(i, 0), v * v, true)) << name_of(o) << " " << v;
        EXPECT_TRUE(same(r(i, 1), ref_sign(v), true)) << name_of(o) << " sign(" << v << ") = " << r(i, 1);
      }
    }
    const std::vector<std::int64_t> xi = {std::numeric_limits<std::int64_t>::min(), -3, 0, 5};
    NDArray<std::int64_t> ri = ki(xi);
    const std::int64_t m = std::numeric_limits<std::int64_t>::min();
    EXPECT_EQ(ri.to_vector(), (std::vector<std::int64_t>{-10 + static_cast<std::int64_t>(static_cast<std::uint64_t>(m) *
                                                                                          static_cast<std::uint64_t>(m)),
                                                         -10 + 9, 0, 10 + 25}))
        << name_of(o);
    NDArray<float> rf = kf(std::vector<float>{-0.0f, 2.5f, -std::numeric_limits<float>::infinity()});
    EXPECT_FALSE(std::signbit(rf.to_vector()[0])) << name_of(o);  // sign(-0) is +0
    EXPECT_EQ(rf.to_vector()[1], 1.0f);
    EXPECT_EQ(rf.to_vector()[2], -1.0f);
  }
}

// =========================================================================================================
// Views: transposes and new axes; outer
// =========================================================================================================

TEST(NumpyHelpers, TransposeIsAViewWithTheDimensionsReversed) {
  for (const Options& o : targets()) {
    // A.T() read elementwise and written into.
    auto k = jit("transpose", [](Array<double, 2> a, Array<double, 2> b) {
      auto s = a.T() + b;  // (n, m) + (n, m)
      b.T() += a;          // b[j, i] += a[i, j]
      return s;
    }, o);
    for (std::int64_t m : {0, 1, 7})
      for (std::int64_t n : {1, 5, 13}) {
        const NDArray<double> a = random_matrix(m, n, 31, true);
        NDArray<double> b = random_matrix(n, m, 32);
        const NDArray<double> b0 = b.clone();
        NDArray<double> s = k(a, b);
        ASSERT_EQ(s.shape(), (std::vector<std::int64_t>{n, m}));
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < m; ++j) {
            EXPECT_TRUE(same(s(i, j), a(j, i) + b0(i, j))) << name_of(o);
            EXPECT_TRUE(same(b(i, j), b0(i, j) + a(j, i))) << name_of(o);
          }
      }
  }
  // A transposed view of the array being assigned reads other elements: NumPy's semantics, evaluated first.
  auto sym = jit("transpose_self", [](Array<double, 2> a) { a += a.T(); }, interp());
  NDArray<double> a = random_matrix(3, 3, 34);
  const NDArray<double> a0 = a.clone();
  sym(a);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(a(i, j), a0(i, j) + a0(j, i));
}

TEST(NumpyHelpers, TransposeFeedsDotAsNumPy) {
  for (const Options& o : targets()) {
    auto vt = jit("dot_vt", [](Array<double, 1> v, Array<double, 2> a) { return kiln::dot(v, a.T()); }, o);
    auto tv = jit("dot_tv", [](Array<double, 2> a, Array<double, 1> v) { return kiln::dot(a.T(), v); }, o);
    for (std::int64_t m : {0, 1, 7, 13})
      for (std::int64_t n : {1, 2, 11}) {
        const NDArray<double> a = random_matrix(m, n, 41);
        const auto vn = random_values(static_cast<size_t>(n), 42);
        const auto vm = random_values(static_cast<size_t>(m), 43);
        // v . A.T = A . v (m); A.T . v = v . A (n).
        std::vector<double> want_m(static_cast<size_t>(m), 0.0), want_n(static_cast<size_t>(n), 0.0);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            want_m[static_cast<size_t>(i)] += vn[static_cast<size_t>(j)] * a(i, j);
            want_n[static_cast<size_t>(j)] += a(i, j) * vm[static_cast<size_t>(i)];
          }
        expect_values(vt(vn, a).to_vector(), want_m, 1e-12, std::string(name_of(o)) + " v.A.T");
        expect_values(tv(a, vm).to_vector(), want_n, 1e-12, std::string(name_of(o)) + " A.T.v");
      }
  }
}

TEST(NumpyHelpers, TransposeWithAxesComposesWithSlices) {
  for (const Options& o : targets()) {
    // np.transpose(x, (1, 2, 0)) of a 3-d array, and the transpose of a strided slice of a matrix.
    auto k = jit("transpose_axes", [](Array<double, 3> x, Array<double, 2> a) {
      auto p = kiln::transpose(x, {1, -1, 0}) * 1.0;
      auto q = a(kiln::range(1, a.shape(0)), kiln::slice(kiln::none, kiln::none, 2)).T() + 0.0;
      return std::pair{p, q};
    }, o);
    NDArray<double> x({3, 4, 5});
    const auto xv = random_values(60, 51, -4, 4, true);
    std::copy(xv.begin(), xv.end(), x.data());
    const NDArray<double> a = random_matrix(5, 7, 52);
    auto [p, q] = k(x, a);
    ASSERT_EQ(p.shape(), (std::vector<std::int64_t>{4, 5, 3}));
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        for (int l = 0; l < 3; ++l) EXPECT_TRUE(same(p(i, j, l), x(l, i, j))) << name_of(o);
    ASSERT_EQ(q.shape(), (std::vector<std::int64_t>{4, 4}));
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) EXPECT_EQ(q(i, j), a(j + 1, 2 * i)) << name_of(o);
  }
  auto bad = jit("transpose_bad", [](Array<double, 2> a) { return kiln::transpose(a, {0, 0}) + 1.0; }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { bad(random_matrix(2, 2, 1)); }), "must name each of the 2 dimensions");
}

TEST(NumpyHelpers, OuterAndNewAxisBroadcastAColumnAgainstARow) {
  for (const Options& o : targets()) {
    auto k = jit("outer", [](Array<double, 1> u, Array<float, 1> v) {
      auto p = kiln::outer(u, v);                               // (m, n) in double
      auto q = u(all, newaxis) - u(newaxis);                    // (m, m): u[:, None] - u[None, :]
      return std::pair{p, q};
    }, o);
    for (std::int64_t m : kSizes)
      for (std::int64_t n : {0, 1, 13}) {
        if (m > 13) continue;
        const auto u = random_values(static_cast<size_t>(m), 61, -4, 4, true);
        const auto vd = random_values(static_cast<size_t>(n), 62, -4, 4, true);
        const std::vector<float> v(vd.begin(), vd.end());
        auto [p, q] = k(u, v);
        ASSERT_EQ(p.shape(), (std::vector<std::int64_t>{m, n}));
        ASSERT_EQ(q.shape(), (std::vector<std::int64_t>{m, m}));
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < n; ++j)
            EXPECT_TRUE(same(p(i, j), u[static_cast<size_t>(i)] * static_cast<double>(v[static_cast<size_t>(j)]), true))
                << name_of(o);
          for (std::int64_t j = 0; j < m; ++j)
            EXPECT_TRUE(same(q(i, j), u[static_cast<size_t>(i)] - u[static_cast<size_t>(j)], true)) << name_of(o);
        }
      }
  }
  auto bad = jit("outer_rank", [](Array<double> u, Array<double> v) { return kiln::outer(u, v); }, interp());
  EXPECT_CONTAINS(error_of<TraceError>([&] { bad(random_matrix(2, 2, 1), std::vector<double>(2)); }),
                  "kiln::outer takes two 1-d arrays; 'u' has rank 2");
}

TEST(NumpyHelpers, GemverUpdateIsOnePassWithoutTemporaries) {
  // PolyBench gemver's first step, A += u1 v1^T + u2 v2^T, as NumPy writes it: one parfor over A after
  // fusion, and no array besides A written.
  for (const Options& o : targets()) {
    auto k = jit("gemver_update", [](Array<double, 2> a, Array<double, 1> u1, Array<double, 1> v1,
                                     Array<double, 1> u2, Array<double, 1> v2) {
      a += kiln::outer(u1, v1) + kiln::outer(u2, v2);
    }, o);
    for (std::int64_t n : {0, 1, 7, 31}) {
      NDArray<double> a = random_matrix(n, n, 71);
      const NDArray<double> a0 = a.clone();
      const auto u1 = random_values(static_cast<size_t>(n), 72), v1 = random_values(static_cast<size_t>(n), 73);
      const auto u2 = random_values(static_cast<size_t>(n), 74), v2 = random_values(static_cast<size_t>(n), 75);
      k(a, u1, v1, u2, v2);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          const size_t si = static_cast<size_t>(i), sj = static_cast<size_t>(j);
          EXPECT_EQ(a(i, j), a0(i, j) + (u1[si] * v1[sj] + u2[si] * v2[sj])) << name_of(o);
        }
    }
    const std::string d = k.diagnostics();
    EXPECT_CONTAINS(d, "parfors after fusion: 1");
    EXPECT_EQ(allocations_after_passes(d), 0) << d;
  }
}

// =========================================================================================================
// Reductions
// =========================================================================================================

struct Stats {
  bool any = false, all = true;
  std::int64_t nonzero = 0, not_nan = 0;
  double nansum = 0, lo = kInf, hi = -kInf;
  bool nan = false;
  void add(double x) {
    const bool nz = x != 0 || std::isnan(x);
    any |= nz;
    all &= nz;
    nonzero += nz;
    if (std::isnan(x)) {
      nan = true;
    } else {
      nansum += x;
      ++not_nan;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  double ptp() const { return nan ? kNaN : hi - lo; }
  double nanmean() const { return nansum / static_cast<double>(not_nan); }
};

TEST(NumpyHelpers, WholeArrayReductionsMatchNumPy) {
  for (const Options& o : targets()) {
    auto k = jit("whole_reductions", [](Array<double, 1> x) {
      auto flags = to_int(kiln::any(x)) * 10 + to_int(kiln::alltrue(x));
      return std::tuple{flags, kiln::count_nonzero(x), kiln::nansum(x), kiln::nanmean(x)};
    }, o);
    auto kp = jit("whole_ptp", [](Array<double, 1> x) { return kiln::ptp(x); }, o);
    for (std::int64_t n : kSizes)
      for (bool specials : {false, true}) {
        auto x = random_values(static_cast<size_t>(n), 81 + static_cast<std::uint64_t>(n), -4, 4, specials);
        if (!specials && n > 3) x[2] = 0.0;
        Stats st;
        for (double v : x) st.add(v);
        auto [flags, nz, ns, nm] = k(x);
        const std::string at = std::string(name_of(o)) + " n=" + std::to_string(n);
        EXPECT_EQ(flags, (st.any ? 10 : 0) + (st.all ? 1 : 0)) << at;
        EXPECT_EQ(nz, st.nonzero) << at;
        EXPECT_TRUE(close(ns, st.nansum, 1e-12)) << at << ": " << ns << " vs " << st.nansum;
        EXPECT_TRUE(close(nm, st.nanmean(), 1e-12)) << at << ": " << nm << " vs " << st.nanmean();
        if (n == 0) {
          EXPECT_EQ(ns, 0.0) << at;
          EXPECT_CONTAINS(error_of<ValueError>([&] { kp(x); }), "ptp of an empty array");
        } else {
          EXPECT_TRUE(same(kp(x), st.ptp())) << at;
        }
      }
    // All NaN: nansum +0 (the NaNs count as +0), nanmean NaN; a lone -0 sums to -0 as np.sum does.
    auto [f, nz, ns, nm] = k(std::vector<double>{kNaN, kNaN});
    EXPECT_EQ(f, 11);
    EXPECT_EQ(nz, 2);
    EXPECT_TRUE(same(ns, 0.0, true));
    EXPECT_TRUE(std::isnan(nm));
    EXPECT_TRUE(same(std::get<2>(k(std::vector<double>{-0.0, kNaN})), 0.0, true));
    EXPECT_TRUE(same(std::get<2>(k(std::vector<double>{-0.0})), -0.0, true));
    EXPECT_TRUE(std::isnan(kp(std::vector<double>{kInf, kInf})));  // inf - inf
  }
}

TEST(NumpyHelpers, AxisReductionsMatchNumPy) {
  for (const Options& o : targets()) {
    auto k = jit("axis_reductions", [](Array<double, 2> m) {
      return std::tuple{to_int(kiln::any(m, 0)) * 10 + to_int(kiln::alltrue(m, -2)), kiln::count_nonzero(m, 1),
                        kiln::nansum(m, 0, keepdims), kiln::nanmean(m, 1), kiln::ptp(m, 1)};
    }, o);
    for (std::int64_t rows : {0, 1, 7, 13})
      for (std::int64_t cols : {1, 2, 11}) {
        if (rows == 0) continue;  // ptp along rows of nothing is checked below
        const NDArray<double> m = random_matrix(rows, cols, 91, true);
        auto [flags, nz, ns, nm, pp] = k(m);
        ASSERT_EQ(ns.shape(), (std::vector<std::int64_t>{1, cols}));
        const std::string at = std::string(name_of(o)) + " " + std::to_string(rows) + "x" + std::to_string(cols);
        for (std::int64_t j = 0; j < cols; ++j) {
          Stats st;
          for (std::int64_t i = 0; i < rows; ++i) st.add(m(i, j));
          EXPECT_EQ(flags(j), (st.any ? 10 : 0) + (st.all ? 1 : 0)) << at;
          EXPECT_TRUE(close(ns(0, j), st.nansum, 1e-12)) << at;
        }
        for (std::int64_t i = 0; i < rows; ++i) {
          Stats st;
          for (std::int64_t j = 0; j < cols; ++j) st.add(m(i, j));
          EXPECT_EQ(nz(i), st.nonzero) << at;
          EXPECT_TRUE(close(nm(i), st.nanmean(), 1e-12)) << at;
          EXPECT_TRUE(same(pp(i), st.ptp())) << at;
        }
      }
    // Empty axes: any of nothing is false, alltrue true, counts 0; ptp along an empty axis is a ValueError,
    // but not when there are no output elements.
    auto e = jit("axis_empty", [](Array<double, 2> m) {
      return std::pair{to_int(kiln::any(m, 1)) * 10 + to_int(kiln::alltrue(m, 1)), kiln::count_nonzero(m, 1)};
    }, o);
    auto [flags, nz] = e(NDArray<double>({3, 0}));
    EXPECT_EQ(flags.to_vector(), (std::vector<std::int64_t>{1, 1, 1})) << name_of(o);
    EXPECT_EQ(nz.to_vector(), (std::vector<std::int64_t>{0, 0, 0})) << name_of(o);
    auto p = jit("axis_ptp", [](Array<double, 2> m) { return kiln::ptp(m, 1); }, o);
    EXPECT_CONTAINS(error_of<ValueError>([&] { p(NDArray<double>({3, 0})); }), "ptp of an empty array");
    EXPECT_EQ(p(NDArray<double>({0, 4})).size(), 0);
  }
}

TEST(NumpyHelpers, IntegerAndBoolReductions) {
  for (const Options& o : targets()) {
    auto k = jit("int_reductions", [](Array<std::int32_t, 1> x, Array<bool, 1> b) {
      return std::tuple{kiln::ptp(x), kiln::nansum(x), kiln::nanmean(x), kiln::count_nonzero(b),
                        to_int(kiln::any(b)) * 10 + to_int(kiln::alltrue(b))};
    }, o);
    const std::vector<std::int32_t> x = {std::numeric_limits<std::int32_t>::max(), -3, 0,
                                         std::numeric_limits<std::int32_t>::min()};
    NDArray<bool> b({3});
    b.data()[0] = true, b.data()[1] = false, b.data()[2] = true;
    auto [pp, ns, nm, nz, flags] = k(x, b);
    EXPECT_EQ(pp, -1) << name_of(o);  // max - min wraps in int32, as NumPy's ptp of int32
    EXPECT_EQ(ns, std::int64_t{std::numeric_limits<std::int32_t>::max()} - 3 + std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(nm, -4.0 / 4.0);
    EXPECT_EQ(nz, 2);
    EXPECT_EQ(flags, 10);
  }
}

// =========================================================================================================
// Fusion with neighbours
// =========================================================================================================

TEST(NumpyHelpers, NewOperationsFuseWithTheirNeighbours) {
  // clip between a map and a sum, and each new reduction's partial reductions (ptp's max and min, nanmean's
  // sum and count) over one pass: one parfor each, and no array allocated.
  auto clipped = jit("fuse_clip", [](Array<double, 1> x) { return kiln::sum(kiln::clip(x * 2.0, -1.0, 1.0)); }, interp());
  auto ptp = jit("fuse_ptp", [](Array<double, 1> x) { return kiln::ptp(x * 2.0); }, interp());
  auto nanmean = jit("fuse_nanmean", [](Array<double, 1> x) { return kiln::nanmean(x + 1.0); }, interp());
  auto flags = jit("fuse_any", [](Array<double, 1> x) { return kiln::any(kiln::sign(x) < 0.0) || kiln::alltrue(x); }, interp());
  const auto x = random_values(29, 101, -2, 2, true);
  EXPECT_TRUE(close(clipped(x), [&] {
    double s = 0;
    for (double v : x) s += ref_min(ref_max(v * 2.0, -1.0), 1.0);
    return s;
  }(), 1e-12));
  (void)ptp(x);
  (void)nanmean(x);
  (void)flags(x);
  for (const std::string& d : {clipped.diagnostics(), ptp.diagnostics(), nanmean.diagnostics(), flags.diagnostics()}) {
    EXPECT_CONTAINS(d, "parfors after fusion: 1");
    EXPECT_EQ(allocations_after_passes(d), 0) << d;
  }
}

}  // namespace
}  // namespace kiln
