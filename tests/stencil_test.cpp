// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencils (kiln/stencil.hpp): tracing, every border mode against plain C++ on 1-d, 2-d and 3-d arrays,
// several inputs, weights, traced offsets, stand-alone and in-kernel use, time loops with kiln::swap, and
// each kind of bad input. Every computation runs three ways: the traced IR on the interpreter (no passes),
// through the whole pipeline on the interpreter, and compiled for the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "array_test_util.hpp"
#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using testing::error_of;
using testing::interp;

std::vector<Target> targets() {
#ifdef KILN_TEST_HAVE_LLVM
  return {Target::interpreter, Target::cpu};
#else
  return {Target::interpreter};
#endif
}

// ---- the reference: plain C++ ----------------------------------------------------------------------------

/// scipy.ndimage's modes, written from the pictures in docs/stencils.md (nullopt: the constant border value).
std::optional<std::int64_t> ref_index(Border b, std::int64_t q, std::int64_t n) {
  if (q >= 0 && q < n) return q;
  switch (b) {
    case Border::constant: return std::nullopt;
    case Border::nearest: return q < 0 ? 0 : n - 1;
    case Border::wrap: return ((q % n) + n) % n;
    case Border::reflect: return q < 0 ? -q - 1 : 2 * n - 1 - q;  // d c b a | a b c d | d c b a
    case Border::mirror: return q < 0 ? -q : 2 * n - 2 - q;       // d c b | a b c d | c b a
    case Border::skip: return std::nullopt;
  }
  return std::nullopt;
}

/// A dense row-major n-d grid of doubles.
struct Grid {
  std::vector<std::int64_t> shape;
  std::vector<double> v;
  std::int64_t size() const {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
  NDArray<double> nd() const {
    NDArray<double> a(shape);
    std::copy(v.begin(), v.end(), a.data());
    return a;
  }
};

Grid random_grid(std::vector<std::int64_t> shape, std::uint64_t seed) {
  Grid g{std::move(shape), {}};
  g.v = testing::random_values(static_cast<size_t>(g.size()), seed);
  return g;
}

/// The element of `g` at `idx + off` as the border answers it (nullopt: outside, constant border).
std::optional<double> ref_read(const Grid& g, const std::vector<std::int64_t>& idx, const std::vector<std::int64_t>& off,
                               Border b) {
  std::int64_t flat = 0;
  for (size_t d = 0; d < g.shape.size(); ++d) {
    const auto q = ref_index(b, idx[d] + off[d], g.shape[d]);
    if (!q) return std::nullopt;
    flat = flat * g.shape[d] + *q;
  }
  return g.v[static_cast<size_t>(flat)];
}

/// out[idx] = f(read) for every index; with skip, indices whose neighbourhood [lo, hi] leaves the grid keep
/// `skipped(idx)`.
Grid ref_stencil(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& lo,
                 const std::vector<std::int64_t>& hi, Border b,
                 const std::function<double(const std::vector<std::int64_t>&)>& f,
                 const std::function<double(std::int64_t flat)>& skipped) {
  Grid out{shape, {}};
  out.v.resize(static_cast<size_t>(out.size()));
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t n = 0; n < out.size(); ++n) {
    std::int64_t r = n;
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = r % shape[d];
      r /= shape[d];
    }
    bool inside = true;
    for (size_t d = 0; d < shape.size(); ++d) inside &= idx[d] + lo[d] >= 0 && idx[d] + hi[d] < shape[d];
    out.v[static_cast<size_t>(n)] = b == Border::skip && !inside ? skipped(n) : f(idx);
  }
  return out;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what,
                  double rel = 1e-12) {
  testing::expect_values(got, want, rel, what);
}

std::vector<double> values(const NDArray<double>& a) { return {a.data(), a.data() + a.size()}; }

/// The stencil applied inside a kernel, its traced IR run on the interpreter without any pass.
template <int N, class S>
std::vector<double> traced_run(const S& st, const Grid& in) {
  const auto f = testing::trace_ir("traced", {"x"}, [&](Array<double, N> x) { return st(x); }, in.nd());
  const testing::Outcome out = testing::interpret(f, in.nd());
  EXPECT_EQ(out.error, "");
  std::vector<double> v(out.result.size() / sizeof(double));
  if (!v.empty()) std::memcpy(v.data(), out.result.data(), out.result.size());
  return v;
}

const Border kBorders[] = {Border::constant, Border::nearest, Border::wrap, Border::reflect, Border::mirror,
                           Border::skip};

std::string name_of_border(Border b) {
  switch (b) {
    case Border::constant: return "constant";
    case Border::nearest: return "nearest";
    case Border::wrap: return "wrap";
    case Border::reflect: return "reflect";
    case Border::mirror: return "mirror";
    case Border::skip: return "skip";
  }
  return "?";
}

StencilOptions border_options(Border b) { return b == Border::constant ? constant(-7.5) : border(b); }

// =========================================================================================================
// The meaning of each border, from the pictures: reads two elements left and right of `1 2 3 4`
// =========================================================================================================

TEST(StencilBorders, PicturesOfEachMode) {
  struct Case {
    Border b;
    std::vector<double> left, right;  // a(-2) and a(+2) at each position
  };
  const double v = -7.5;
  const Case cases[] = {
      {Border::constant, {v, v, 1, 2}, {3, 4, v, v}},  // v v | 1 2 3 4 | v v
      {Border::nearest, {1, 1, 1, 2}, {3, 4, 4, 4}},   // 1 1 | 1 2 3 4 | 4 4
      {Border::wrap, {3, 4, 1, 2}, {3, 4, 1, 2}},      // 3 4 | 1 2 3 4 | 1 2
      {Border::reflect, {2, 1, 1, 2}, {3, 4, 4, 3}},   // 2 1 | 1 2 3 4 | 4 3
      {Border::mirror, {3, 2, 1, 2}, {3, 4, 3, 2}},    // 3 2 | 1 2 3 4 | 3 2
      {Border::skip, {1, 2, 1, 2}, {3, 4, 3, 4}},      // not computed: a new output takes the input there
  };
  const std::vector<double> a = {1, 2, 3, 4};
  for (const Case& c : cases) {
    for (Target t : targets()) {
      auto left = stencil("left", [](Window<double, 1> w) { return w(-2); }, border_options(c.b));
      auto right = stencil("right", [](Window<double, 1> w) { return w(2); }, border_options(c.b));
      const std::string what = name_of_border(c.b) + " on " + std::string(name_of(t));
      expect_close(values(left.on(t)(a)), c.left, what + " left");
      expect_close(values(right.on(t)(a)), c.right, what + " right");
    }
  }
}

// =========================================================================================================
// Random arrays, every border, 1-d to 3-d, down to arrays exactly as large as the neighbourhood
// =========================================================================================================

TEST(StencilBorders, Random1D) {
  for (Border b : kBorders) {
    // offsets -2..1: an asymmetric neighbourhood of width 4
    auto st = stencil("s1", [](Window<double, 1> a) { return a(-2) + 3.0 * a(1) + 0.5 * a(0); }, border_options(b));
    for (std::int64_t n : {4, 5, 17}) {
      const Grid in = random_grid({n}, static_cast<std::uint64_t>(n) * 7 + static_cast<std::uint64_t>(b));
      auto rd = [&](const std::vector<std::int64_t>& i, std::int64_t o) {
        return ref_read(in, i, {o}, b).value_or(-7.5);
      };
      const Grid want = ref_stencil(
          {n}, {-2}, {1}, b, [&](const auto& i) { return rd(i, -2) + 3.0 * rd(i, 1) + 0.5 * rd(i, 0); },
          [&](std::int64_t f) { return in.v[static_cast<size_t>(f)]; });
      for (Target t : targets())
        expect_close(values(st.on(t)(in.nd())), want.v,
                     name_of_border(b) + " n=" + std::to_string(n) + " on " + std::string(name_of(t)));
      expect_close(traced_run<1>(st, in), want.v, name_of_border(b) + " traced IR");
    }
  }
}

TEST(StencilBorders, Random2D) {
  for (Border b : kBorders) {
    auto st = stencil("s2", [](Window<double, 2> a) { return a(-1, 0) + 2.0 * a(0, 2) + 3.0 * a(1, -1) - a(0, 0); },
                      border_options(b));
    for (auto shape : {std::vector<std::int64_t>{3, 4}, {4, 4}, {9, 13}, {3, 40}}) {
      const Grid in = random_grid(shape, static_cast<std::uint64_t>(shape[0] * 100 + shape[1]));
      auto rd = [&](const std::vector<std::int64_t>& i, std::int64_t p, std::int64_t q) {
        return ref_read(in, i, {p, q}, b).value_or(-7.5);
      };
      const Grid want = ref_stencil(
          shape, {-1, -1}, {1, 2}, b,
          [&](const auto& i) { return rd(i, -1, 0) + 2.0 * rd(i, 0, 2) + 3.0 * rd(i, 1, -1) - rd(i, 0, 0); },
          [&](std::int64_t f) { return in.v[static_cast<size_t>(f)]; });
      for (Target t : targets())
        expect_close(values(st.on(t)(in.nd())), want.v,
                     name_of_border(b) + " " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " on " +
                         std::string(name_of(t)));
      expect_close(traced_run<2>(st, in), want.v, name_of_border(b) + " traced IR");
    }
  }
}

TEST(StencilBorders, Random3D) {
  for (Border b : kBorders) {
    auto st = stencil("s3", [](Window<double, 3> a) {
      return a(0, 0, 0) * -6.0 + a(-1, 0, 0) + a(1, 0, 0) + 2.0 * a(0, -1, 0) + a(0, 1, 0) + 3.0 * a(0, 0, -1) + a(0, 0, 1);
    }, border_options(b));
    for (auto shape : {std::vector<std::int64_t>{3, 3, 3}, {4, 5, 6}, {7, 3, 10}}) {
      const Grid in = random_grid(shape, static_cast<std::uint64_t>(shape[0] * 100 + shape[1] * 10 + shape[2]));
      auto rd = [&](const std::vector<std::int64_t>& i, std::int64_t p, std::int64_t q, std::int64_t r) {
        return ref_read(in, i, {p, q, r}, b).value_or(-7.5);
      };
      const Grid want = ref_stencil(
          shape, {-1, -1, -1}, {1, 1, 1}, b,
          [&](const auto& i) {
            return rd(i, 0, 0, 0) * -6.0 + rd(i, -1, 0, 0) + rd(i, 1, 0, 0) + 2.0 * rd(i, 0, -1, 0) + rd(i, 0, 1, 0) +
                   3.0 * rd(i, 0, 0, -1) + rd(i, 0, 0, 1);
          },
          [&](std::int64_t f) { return in.v[static_cast<size_t>(f)]; });
      for (Target t : targets())
        expect_close(values(st.on(t)(in.nd())), want.v, name_of_border(b) + " 3-d on " + std::string(name_of(t)));
      expect_close(traced_run<3>(st, in), want.v, name_of_border(b) + " 3-d traced IR");
    }
  }
}

// =========================================================================================================
// Several inputs, weights and scalars, traced offsets
// =========================================================================================================

TEST(StencilInputs, TwoWindowsAWeightArrayAndAScalar) {
  auto st = stencil("mix", [](Window<double, 2> a, Window<double, 2> b, Array<double, 1> w, Double s) {
    return w[0] * a(0, 1) * b(-1, 0) + w[1] * a(1, 1) + s * b(0, 0);
  }, border(Border::wrap));
  const Grid a = random_grid({5, 6}, 1), b = random_grid({5, 6}, 2);
  const std::vector<double> w = {0.5, -2.0};
  const double s = 3.25;
  auto ra = [&](const auto& i, std::int64_t p, std::int64_t q) { return *ref_read(a, i, {p, q}, Border::wrap); };
  auto rb = [&](const auto& i, std::int64_t p, std::int64_t q) { return *ref_read(b, i, {p, q}, Border::wrap); };
  const Grid want = ref_stencil({5, 6}, {-1, 0}, {1, 1}, Border::wrap, [&](const auto& i) {
    return w[0] * ra(i, 0, 1) * rb(i, -1, 0) + w[1] * ra(i, 1, 1) + s * rb(i, 0, 0);
  }, nullptr);
  for (Target t : targets()) expect_close(values(st.on(t)(a.nd(), b.nd(), w, s)), want.v, std::string(name_of(t)));
}

/// The seed's Ramba "general stencil": a 5x5 convolution with run-time weights, the offsets the indices of
/// kiln::range loops (unrolled into constants while tracing).
TEST(StencilInputs, ConvolutionWithTracedOffsetsFromLoops) {
  auto conv = stencil("conv5", [](Window<double, 2> a, Array<double, 2> w) {
    Double acc = 0.0;
    range(-2, 3, [&](Int di) {
      range(-2, 3, [&](Int dj) { acc += w(di + 2, dj + 2) * a(di, dj); });
    });
    return acc;
  }, neighborhood({-2, 2}, {-2, 2}) | border(Border::nearest));
  const Grid a = random_grid({9, 7}, 3);
  const Grid w = random_grid({5, 5}, 4);
  const Grid want = ref_stencil({9, 7}, {-2, -2}, {2, 2}, Border::nearest, [&](const auto& i) {
    double acc = 0;
    for (int p = -2; p <= 2; ++p)
      for (int q = -2; q <= 2; ++q) acc += w.v[static_cast<size_t>((p + 2) * 5 + q + 2)] * *ref_read(a, i, {p, q}, Border::nearest);
    return acc;
  }, nullptr);
  for (Target t : targets()) expect_close(values(conv.on(t)(a.nd(), w.nd())), want.v, std::string(name_of(t)));
}

/// Branches on traced offsets fold while unrolling (Conway's neighbour count skips the centre).
TEST(StencilInputs, BranchesInsideTheBody) {
  auto life = stencil("life", [](Window<std::int32_t, 2> c) {
    Int32 n = 0;
    range(-1, 2, [&](Int di) {
      range(-1, 2, [&](Int dj) { if_(di != 0 || dj != 0, [&] { n += c(di, dj); }); });
    });
    Int32 next = 0;
    if_(n == 3 || (n == 2 && c(0, 0) == 1), [&] { next = 1; });
    return next;
  }, neighborhood({-1, 1}, {-1, 1}) | border(Border::wrap));
  const std::int64_t R = 6, C = 7;
  std::vector<std::int32_t> g(static_cast<size_t>(R * C));
  std::mt19937 rng(5);
  for (auto& x : g) x = static_cast<std::int32_t>(rng() % 2);
  std::vector<std::int32_t> want(g.size());
  for (std::int64_t i = 0; i < R; ++i)
    for (std::int64_t j = 0; j < C; ++j) {
      int n = 0;
      for (int p = -1; p <= 1; ++p)
        for (int q = -1; q <= 1; ++q)
          if (p || q) n += g[static_cast<size_t>(((i + p + R) % R) * C + (j + q + C) % C)];
      const int c = g[static_cast<size_t>(i * C + j)];
      want[static_cast<size_t>(i * C + j)] = n == 3 || (n == 2 && c == 1);
    }
  NDArray<std::int32_t> in({R, C});
  std::copy(g.begin(), g.end(), in.data());
  for (Target t : targets()) {
    const NDArray<std::int32_t> out = life.on(t)(in);
    EXPECT_EQ(std::vector<std::int32_t>(out.data(), out.data() + out.size()), want) << name_of(t);
  }
}

/// An offset that is a scalar parameter is the same for every element: checked against the declared
/// neighbourhood before the stencil runs.
TEST(StencilInputs, ScalarOffsetWithinTheDeclaredNeighbourhood) {
  auto shift = stencil("shift", [](Window<double, 1> a, Int k) { return a(k); },
                       neighborhood({-3, 3}) | border(Border::wrap));
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7};
  for (Target t : targets()) {
    for (std::int64_t k : {-3, -1, 0, 2, 3}) {
      std::vector<double> want(a.size());
      for (size_t i = 0; i < a.size(); ++i) want[i] = a[(i + 7 + static_cast<size_t>(k + 7)) % 7];
      expect_close(values(shift.on(t)(a, k)), want, "k=" + std::to_string(k));
    }
    const std::string msg = error_of<IndexError>([&] { shift.on(t)(a, std::int64_t{5}); });
    EXPECT_NE(msg.find("offset 5 along axis 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("declared neighbourhood -3..3"), std::string::npos) << msg;
  }
}

/// An offset read from the data differs per element: it is clamped into the declared neighbourhood.
TEST(StencilInputs, DataDependentOffsetsAreClampedIntoTheNeighbourhood) {
  auto gather = stencil("gather", [](Window<double, 1> a, Window<double, 1> s) { return a(to_int(s(0))); },
                        neighborhood({-1, 1}) | border(Border::nearest));
  const std::vector<double> a = {10, 20, 30, 40, 50}, s = {-4, 1, 0, 5, -1};
  std::vector<double> want(a.size());
  for (std::int64_t i = 0; i < 5; ++i) {
    const std::int64_t o = std::clamp<std::int64_t>(static_cast<std::int64_t>(s[static_cast<size_t>(i)]), -1, 1);
    want[static_cast<size_t>(i)] = a[static_cast<size_t>(std::clamp<std::int64_t>(i + o, 0, 4))];
  }
  for (Target t : targets()) expect_close(values(gather.on(t)(a, s)), want, std::string(name_of(t)));
}

// =========================================================================================================
// Stand-alone and in-kernel use
// =========================================================================================================

auto jacobi() {
  return stencil("jacobi", [](Window<double, 2> a) { return 0.25 * (a(0, 1) + a(0, -1) + a(-1, 0) + a(1, 0)); },
                 border(Border::skip));
}

Grid ref_jacobi(const Grid& in, const Grid& keep) {
  return ref_stencil(in.shape, {-1, -1}, {1, 1}, Border::skip, [&](const auto& i) {
    auto r = [&](std::int64_t p, std::int64_t q) { return *ref_read(in, i, {p, q}, Border::skip); };
    return 0.25 * (r(0, 1) + r(0, -1) + r(-1, 0) + r(1, 0));
  }, [&](std::int64_t f) { return keep.v[static_cast<size_t>(f)]; });
}

TEST(StencilUse, IntoAnExistingOutputLeavesTheSkippedBorderUntouched) {
  const Grid in = random_grid({6, 8}, 11), out0 = random_grid({6, 8}, 12);
  const Grid want = ref_jacobi(in, out0);
  for (Target t : targets()) {
    NDArray<double> out = out0.nd();
    jacobi().on(t).into(out, in.nd());
    expect_close(values(out), want.v, std::string(name_of(t)));
  }
}

TEST(StencilUse, InsideKernelsNestedAndIntoATarget) {
  auto lap = stencil("lap", [](Window<double, 1> a) { return a(-1) - 2.0 * a(0) + a(1); }, border(Border::reflect));
  for (Target t : targets()) {
    Options o;
    o.target = t;
    auto k = jit("lap2", [&](Array<double, 1> x, Array<double, 1> y) {
      lap.into(y, lap(x) * 2.0);  // an array expression as input, a given target
      return lap(lap(x));
    }, o);
    const std::vector<double> x = {1, 4, 9, 16, 25, 36};
    std::vector<double> y(x.size());
    auto ref = [](const std::vector<double>& v) {
      const std::int64_t n = static_cast<std::int64_t>(v.size());
      std::vector<double> r(v.size());
      for (std::int64_t i = 0; i < n; ++i) {
        auto at = [&](std::int64_t q) { return v[static_cast<size_t>(*ref_index(Border::reflect, q, n))]; };
        r[static_cast<size_t>(i)] = at(i - 1) - 2.0 * at(i) + at(i + 1);
      }
      return r;
    };
    std::vector<double> twice = ref(x);
    for (double& v : twice) v *= 2.0;
    const NDArray<double> r = k(x, y);
    expect_close(values(r), ref(ref(x)), "nested on " + std::string(name_of(t)));
    expect_close(y, ref(twice), "into on " + std::string(name_of(t)));
  }
}

TEST(StencilUse, ViewsAndAnyRankArraysAsInputs) {
  auto d = stencil("diff", [](Window<double, 1> a) { return a(1) - a(0); }, border(Border::nearest));
  auto k = jit("views", [&](Array<double> x) { return d(x[slice(1, -1)]); }, interp());
  const std::vector<double> x = {1, 2, 4, 8, 16, 32};
  expect_close(values(k(x)), {2, 4, 8, 0}, "a view is copied into a whole array first");
  const std::string msg = error_of<TraceError>([&] { k(NDArray<double>({3, 3})); });
  EXPECT_NE(msg.find("has rank 2 but window 'a' has rank 1"), std::string::npos) << msg;
}

TEST(StencilUse, FloatElementsStayFloat) {
  auto st = stencil("avg32", [](Window<float, 1> a) { return 0.5 * (a(-1) + a(1)); }, border(Border::mirror));
  const std::vector<float> x = {1.f, 2.f, 4.f, 8.f};
  for (Target t : targets()) {
    const NDArray<float> r = st.on(t)(x);
    const std::vector<float> want = {0.5f * (2.f + 2.f), 0.5f * (1.f + 4.f), 0.5f * (2.f + 8.f), 0.5f * (4.f + 4.f)};
    EXPECT_EQ(std::vector<float>(r.data(), r.data() + r.size()), want) << name_of(t);
  }
}

// =========================================================================================================
// Time loops with kiln::swap
// =========================================================================================================

std::vector<double> ref_heat1d(std::vector<double> u, int steps) {
  std::vector<double> v(u.size());
  const std::int64_t n = static_cast<std::int64_t>(u.size());
  for (int s = 0; s < steps; ++s) {
    for (std::int64_t i = 0; i < n; ++i) {
      auto at = [&](std::int64_t q) { return u[static_cast<size_t>(*ref_index(Border::nearest, q, n))]; };
      v[static_cast<size_t>(i)] = at(i) + 0.25 * (at(i - 1) - 2.0 * at(i) + at(i + 1));
    }
    std::swap(u, v);
  }
  return u;
}

TEST(StencilSwap, TimeLoopWithSwappedBuffers) {
  auto step = stencil("heat", [](Window<double, 1> u) { return u(0) + 0.25 * (u(-1) - 2.0 * u(0) + u(1)); },
                      border(Border::nearest));
  const std::vector<double> u0 = testing::random_values(11, 21);
  for (Target t : targets()) {
    Options o;
    o.target = t;
    auto heat = jit("heat_loop", [&](Array<double, 1> u, Int steps) {
      Array<double, 1> a = u;
      auto b = empty_like(u);
      range(steps, [&](Int) {
        step.into(b, a);
        swap(a, b);
      });
      return a;
    }, o);
    for (int steps : {0, 1, 2, 5}) {
      std::vector<double> u = u0;
      const NDArray<double> r = heat(u, std::int64_t{steps});
      expect_close(values(r), ref_heat1d(u0, steps), "steps=" + std::to_string(steps) + " on " + std::string(name_of(t)));
      // As in NumPy, `a = u` names the caller's array: from the second step on, steps write into it.
      // Even steps write into it: it holds the last even step's result.
      if (steps >= 2) expect_close(u, ref_heat1d(u0, steps - steps % 2), "u after " + std::to_string(steps));
    }
  }
}

TEST(StencilSwap, SwappingParametersInPlaceAndReadingThemBeforeTheSwap) {
  // The loop body reads both arrays before the swap (a norm-like sum of b's first element) and writes the
  // parameters themselves: after an odd number of steps the result is in the second argument.
  auto step = stencil("avg", [](Window<double, 1> u) { return 0.5 * (u(-1) + u(1)); }, border(Border::wrap));
  for (Target t : targets()) {
    Options o;
    o.target = t;
    auto k = jit("swap_params", [&](Array<double, 1> a, Array<double, 1> b, Int steps) {
      Double first = 0.0;
      range(steps, [&](Int) {
        first += a[0];
        step.into(b, a);
        swap(a, b);
      });
      return first + a[0] * 1000.0;
    }, o);
    std::vector<double> a = {1, 2, 3, 4, 5}, b(5, 0.0);
    const double got = k(a, b, std::int64_t{3});
    std::vector<double> ra = {1, 2, 3, 4, 5}, rb(5);
    double first = 0;
    for (int s = 0; s < 3; ++s) {
      first += ra[0];
      for (int i = 0; i < 5; ++i) rb[static_cast<size_t>(i)] = 0.5 * (ra[static_cast<size_t>((i + 4) % 5)] + ra[static_cast<size_t>((i + 1) % 5)]);
      std::swap(ra, rb);
    }
    EXPECT_DOUBLE_EQ(got, first + ra[0] * 1000.0) << name_of(t);
    expect_close(b, ra, "odd steps: the last result is in b, on " + std::string(name_of(t)));
  }
}

TEST(StencilSwap, JacobiIterations2D) {
  // Fixed boundary (Border::skip into the other buffer, which starts as a copy): the caller's two arrays
  // hold the last two iterates.
  for (Target t : targets()) {
    Options o;
    o.target = t;
    auto st = jacobi();
    auto k = jit("jacobi_iters", [&](Array<double, 2> a, Array<double, 2> b, Int iters) {
      range(iters, [&](Int) {
        st.into(b, a);
        swap(a, b);
      });
    }, o);
    const Grid g = random_grid({7, 9}, 31);
    NDArray<double> a = g.nd(), b = g.nd();
    k(a, b, std::int64_t{3});
    Grid x = g, y = g;
    for (int s = 0; s < 3; ++s) {
      y = ref_jacobi(x, y);
      std::swap(x, y);
    }
    // Three iterations: the last was written into b (the caller's second array), the one before into a.
    expect_close(values(b), x.v, "b on " + std::string(name_of(t)));
    expect_close(values(a), y.v, "a on " + std::string(name_of(t)));
  }
}

TEST(StencilSwap, NestedLoops) {
  // The swap in the inner loop: both loops' traced bodies use the bindings, declared before the outer loop.
  auto step = stencil("inc2", [](Window<double, 1> u) { return u(-1) + 2.0 * u(0); }, border(Border::constant));
  for (Target t : targets()) {
    Options o;
    o.target = t;
    auto k = jit("nested", [&](Array<double, 1> a, Array<double, 1> b, Int outer, Int inner) {
      Double trace = 0.0;
      range(outer, [&](Int) {
        trace += a[1];
        range(inner, [&](Int) {
          step.into(b, a);
          swap(a, b);
        });
      });
      return trace;
    }, o);
    std::vector<double> a = {1, -1, 2, 0.5}, b(4, 0.0);
    const double got = k(a, b, std::int64_t{3}, std::int64_t{2});
    std::vector<double> ra = {1, -1, 2, 0.5}, rb(4, 0.0);
    std::vector<double>* x = &ra;
    std::vector<double>* y = &rb;
    double trace = 0;
    for (int s = 0; s < 3; ++s) {
      trace += (*x)[1];
      for (int r = 0; r < 2; ++r) {
        for (size_t i = 0; i < 4; ++i) (*y)[i] = (i == 0 ? 0.0 : (*x)[i - 1]) + 2.0 * (*x)[i];
        std::swap(x, y);
      }
    }
    EXPECT_EQ(got, trace) << name_of(t);
    expect_close(a, ra, "a on " + std::string(name_of(t)));
    expect_close(b, rb, "b on " + std::string(name_of(t)));
  }
}

TEST(StencilSwap, InnerLoopBoundsReadTheSwappedArrays) {
  for (Target t : targets()) {
    Options o;
    o.target = t;
    auto k = jit("bounds", [&](Array<std::int64_t, 1> a, Array<std::int64_t, 1> b, Int n) {
      range(n, [&](Int) {
        range(a[0], [&](Int) {  // the bound is read from whatever `a` names when the inner loop starts
          b[0] = a[0] + 1;
          swap(a, b);
        });
      });
    }, o);
    std::vector<std::int64_t> a = {1}, b = {0};
    k(a, b, std::int64_t{3});
    std::vector<std::int64_t> ra = {1}, rb = {0};
    std::vector<std::int64_t>* x = &ra;
    std::vector<std::int64_t>* y = &rb;
    for (int s = 0; s < 3; ++s) {
      const std::int64_t m = (*x)[0];
      for (std::int64_t r = 0; r < m; ++r) {
        (*y)[0] = (*x)[0] + 1;
        std::swap(x, y);
      }
    }
    EXPECT_EQ(a, ra) << name_of(t);
    EXPECT_EQ(b, rb) << name_of(t);
  }
}

TEST(StencilSwap, ConditionalSwapInsideABranch) {
  // Swap only after even steps: the rebinding is conditional at run time, while the C++ handles stay put.
  auto step = stencil("inc", [](Window<double, 1> u) { return u(0) + u(1); }, border(Border::wrap));
  for (Target t : targets()) {
    Options o;
    o.target = t;
    auto k = jit("cond_swap", [&](Array<double, 1> a, Array<double, 1> b, Int steps) {
      range(steps, [&](Int s) {
        step.into(b, a);
        if_(s % 2 == 0, [&] { swap(a, b); });
      });
    }, o);
    std::vector<double> a = {1, 2, 3, 4}, b(4, 0.0);
    k(a, b, std::int64_t{5});
    std::vector<double> ra = {1, 2, 3, 4}, rb(4, 0.0);
    std::vector<double>* x = &ra;
    std::vector<double>* y = &rb;
    for (int s = 0; s < 5; ++s) {
      for (int i = 0; i < 4; ++i) (*y)[static_cast<size_t>(i)] = (*x)[static_cast<size_t>(i)] + (*x)[static_cast<size_t>((i + 1) % 4)];
      if (s % 2 == 0) std::swap(x, y);
    }
    expect_close(a, ra, "a on " + std::string(name_of(t)));
    expect_close(b, rb, "b on " + std::string(name_of(t)));
  }
}

TEST(StencilSwap, AnArrayMadeInsideTheLoopCannotBeSwappedOut) {
  // `next` is a new array of the loop body; `u`, declared outside, would name it after the loop.
  auto step = stencil("halve", [](Window<double, 1> u) { return 0.5 * (u(-1) + u(0)); }, border(Border::nearest));
  auto k = jit("made_inside", [&](Array<double, 1> u0, Int steps) {
    Array<double, 1> u = u0;
    range(steps, [&](Int) {
      Array<double, 1> next = step(u);
      swap(u, next);
    });
    return u;
  }, interp());
  const std::string msg = error_of<TraceError>([&] { k(std::vector<double>(4), std::int64_t{2}); });
  EXPECT_NE(msg.find("is made inside the loop or branch"), std::string::npos) << msg;
  EXPECT_NE(msg.find("make both buffers before the loop"), std::string::npos) << msg;
}

TEST(StencilSwap, OutsideLoopsTheHandlesAreExchanged) {
  const auto f = testing::trace_ir("plain_swap", {"a", "b"}, [](Array<double, 1> a, Array<double, 1> b) {
    swap(a, b);
    a[0] = 1.0;  // writes the second argument
    (void)b;
  }, std::vector<double>(2), std::vector<double>(2));
  const std::string text = ir::to_string(f);
  EXPECT_EQ(text.find("bind"), std::string::npos) << text;
  EXPECT_NE(text.find("b[0] = 1.0"), std::string::npos) << text;
}

TEST(StencilSwap, InsideALoopTheTracedBodyReadsBindings) {
  const auto f = testing::trace_ir("loop_swap", {"a", "b", "n"}, [](Array<double, 1> a, Array<double, 1> b, Int n) {
    range(n, [&](Int) {
      b[0] = a[0] + 1.0;
      swap(a, b);
    });
  }, std::vector<double>(2), std::vector<double>(2), std::int64_t{3});
  testing::expect_golden("stencil_swap_loop.ir", testing::without_lines(ir::to_string(f)));
  std::vector<double> a = {1, 0}, b = {0, 0};
  const auto out = testing::interpret(f, a, b, std::int64_t{3});
  ASSERT_EQ(out.error, "");
  // a0 = 1 -> b0 = 2 (swap) -> a0 = 3 -> swap -> b0 = 4: after three steps a holds 2, b holds 4... in the
  // callers' arrays: step 1 writes b (2), step 2 writes a (3), step 3 writes b (4).
  double ra = 1, rb = 0;
  double* x = &ra;
  double* y = &rb;
  for (int s = 0; s < 3; ++s) {
    *y = *x + 1.0;
    std::swap(x, y);
  }
  double got_a, got_b;
  std::memcpy(&got_a, out.arrays[0].data(), 8);
  std::memcpy(&got_b, out.arrays[1].data(), 8);
  EXPECT_EQ(got_a, ra);
  EXPECT_EQ(got_b, rb);
}

// =========================================================================================================
// Tracing: the IR of a stencil
// =========================================================================================================

TEST(StencilTrace, GoldenJacobi) {
  auto st = jacobi();
  const auto f = testing::trace_ir("jacobi_kernel", {"x"}, [&](Array<double, 2> x) { return st(x); },
                                   NDArray<double>({4, 4}));
  testing::expect_golden("stencil_jacobi.ir", testing::without_lines(ir::to_string(f)));
}

TEST(StencilTrace, GoldenConvolutionUnrolled) {
  auto conv = stencil("conv3", [](Window<double, 2> a, Array<double, 2> w) {
    Double acc = 0.0;
    range(-1, 2, [&](Int di) { range(-1, 2, [&](Int dj) { acc += w(di + 1, dj + 1) * a(di, dj); }); });
    return acc;
  }, neighborhood({-1, 1}, {-1, 1}) | constant(0.0));
  const auto f = testing::trace_ir("conv_kernel", {"x", "w"}, [&](Array<double, 2> x, Array<double, 2> w) {
    return conv(x, w);
  }, NDArray<double>({4, 4}), NDArray<double>({3, 3}));
  testing::expect_golden("stencil_conv3.ir", testing::without_lines(ir::to_string(f)));
}

TEST(StencilTrace, GoldenScalarOffsetIsCheckedBeforeTheStencil) {
  auto shift = stencil("shift", [](Window<double, 1> a, Int k) { return a(k) + a(-1); }, neighborhood({-3, 3}) | border(Border::wrap));
  const auto f = testing::trace_ir("shift_kernel", {"x", "k"}, [&](Array<double, 1> x, Int k) { return shift(x, k); },
                                   std::vector<double>(8), std::int64_t{1});
  testing::expect_golden("stencil_shift.ir", testing::without_lines(ir::to_string(f)));
}

// =========================================================================================================
// Bad input
// =========================================================================================================

TEST(StencilErrors, ArraySmallerThanTheNeighbourhood) {
  auto st = stencil("wide", [](Window<double, 2> a) { return a(0, -2) + a(0, 2); }, border(Border::wrap));
  for (Target t : targets()) {
    const std::string msg = error_of<ShapeError>([&] { st.on(t)(NDArray<double>({6, 4})); });
    EXPECT_NE(msg.find("stencil 'wide'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("extent 4 along axis 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("need at least 5 elements"), std::string::npos) << msg;
    EXPECT_NO_THROW(st.on(t)(NDArray<double>({1, 5})));  // axis 0 is not read at other offsets
  }
}

TEST(StencilErrors, InputsOfDifferentShapes) {
  auto st = stencil("two", [](Window<double, 2> a, Window<double, 2> b) { return a(0, 1) + b(0, 0); });
  for (Target t : targets()) {
    const std::string msg = error_of<ShapeError>([&] { st.on(t)(NDArray<double>({3, 4}), NDArray<double>({3, 5})); });
    EXPECT_NE(msg.find("input 'b' has shape (3, 5) but input 'a' has shape (3, 4)"), std::string::npos) << msg;
    NDArray<double> out({4, 4});
    const std::string out_msg = error_of<ShapeError>([&] { st.on(t).into(out, NDArray<double>({3, 4}), NDArray<double>({3, 4})); });
    EXPECT_NE(out_msg.find("output 'out' has shape (4, 4)"), std::string::npos) << out_msg;
  }
}

TEST(StencilErrors, TracedOffsetWithoutADeclaredNeighbourhood) {
  auto st = stencil("undeclared", [](Window<double, 1> a, Int k) { return a(k); });
  const std::string msg = error_of<TraceError>([&] { st.on(Target::interpreter)(std::vector<double>(4), std::int64_t{1}); });
  EXPECT_NE(msg.find("traced offset"), std::string::npos) << msg;
  EXPECT_NE(msg.find("kiln::neighborhood"), std::string::npos) << msg;
}

TEST(StencilErrors, OffsetsOutsideTheDeclaredNeighbourhood) {
  auto constant_offset = stencil("c", [](Window<double, 1> a) { return a(2); }, neighborhood({-1, 1}));
  std::string msg = error_of<TraceError>([&] { constant_offset.on(Target::interpreter)(std::vector<double>(4)); });
  EXPECT_NE(msg.find("offset 2 along axis 0, outside the declared neighbourhood -1..1"), std::string::npos) << msg;
  // A loop over offsets is unrolled while tracing: its offsets are known then.
  auto loop = stencil("l", [](Window<double, 1> a) {
    Double s = 0.0;
    range(-2, 3, [&](Int o) { s += a(o); });
    return s;
  }, neighborhood({-1, 1}));
  msg = error_of<TraceError>([&] { loop.on(Target::interpreter)(std::vector<double>(4)); });
  EXPECT_NE(msg.find("offset -2 along axis 0, outside the declared neighbourhood -1..1"), std::string::npos) << msg;
  auto bad_decl = stencil("d", [](Window<double, 1> a) { return a(0); }, neighborhood({1, 2}));
  msg = error_of<TraceError>([&] { bad_decl.on(Target::interpreter)(std::vector<double>(4)); });
  EXPECT_NE(msg.find("must contain offset 0"), std::string::npos) << msg;
}

TEST(StencilErrors, BodiesThatAreNotOneValuePerElement) {
  auto writes = stencil("w", [](Window<double, 1> a, Array<double, 1> log) {
    log[0] = a(0);
    return a(0);
  });
  std::string msg = error_of<TraceError>([&] { writes.on(Target::interpreter)(std::vector<double>(4), std::vector<double>(1)); });
  EXPECT_NE(msg.find("stores into array 'log'"), std::string::npos) << msg;
  auto traced_bounds = stencil("tb", [](Window<double, 1> a, Int r) {
    Double s = 0.0;
    range(-r, r + 1, [&](Int o) { s += a(o); });
    return s;
  }, neighborhood({-2, 2}));
  msg = error_of<TraceError>([&] { traced_bounds.on(Target::interpreter)(std::vector<double>(8), std::int64_t{1}); });
  EXPECT_NE(msg.find("bounds known when the kernel is traced"), std::string::npos) << msg;
}

TEST(StencilErrors, WritingIntoAnInput) {
  auto st = stencil("self", [](Window<double, 1> a) { return a(1); });
  auto k = jit("self_write", [&](Array<double, 1> x) { st.into(x, x); }, interp());
  std::vector<double> x(4);
  const std::string msg = error_of<TraceError>([&] { k(x); });
  EXPECT_NE(msg.find("which it also reads"), std::string::npos) << msg;
}

TEST(StencilErrors, WindowUsedOutsideItsBody) {
  std::optional<Window<double, 1>> escaped;
  auto st = stencil("esc", [&](Window<double, 1> a) {
    escaped.emplace(a);
    return a(0);
  });
  auto k = jit("escape", [&](Array<double, 1> x) {
    Array<double, 1> y = st(x);
    return (*escaped)(0) + y[0];
  }, interp());
  const std::string msg = error_of<TraceError>([&] { k(std::vector<double>(3)); });
  EXPECT_NE(msg.find("outside the body of its stencil"), std::string::npos) << msg;
}

TEST(StencilErrors, SwapMisuse) {
  std::string msg = error_of<TraceError>([] {
    jit("types", [](Array<double, 1> a, Array<float, 1> b) { swap(a, b); }, interp())(std::vector<double>(2), std::vector<float>(2));
  });
  EXPECT_NE(msg.find("different element types (f64 and f32)"), std::string::npos) << msg;
  msg = error_of<TraceError>([] {
    jit("ranks", [](Array<double> a, Array<double> b) { swap(a, b); }, interp())(std::vector<double>(2), NDArray<double>({2, 2}));
  });
  EXPECT_NE(msg.find("different ranks (1 and 2)"), std::string::npos) << msg;
  msg = error_of<TraceError>([] {
    jit("par", [](Array<double, 1> a, Array<double, 1> b) {
      prange(2, [&](Int) { swap(a, b); });
    }, interp())(std::vector<double>(2), std::vector<double>(2));
  });
  EXPECT_NE(msg.find("inside a prange"), std::string::npos) << msg;
  msg = error_of<TraceError>([] {
    auto st = stencil("next", [](Window<double, 1> u) { return u(1); });
    jit("rebind", [&](Array<double, 1> a, Int n) {
      range(n, [&](Int) { a = st(a); });
    }, interp())(std::vector<double>(2), std::int64_t{1});
  });
  EXPECT_NE(msg.find("kiln::swap(a, b)"), std::string::npos) << msg;
  const std::string shape_msg = error_of<ShapeError>([] {
    jit("shapes", [](Array<double, 1> a, Array<double, 1> b) {
      range(2, [&](Int) { swap(a, b); });
    }, interp())(std::vector<double>(2), std::vector<double>(3));
  });
  EXPECT_NE(shape_msg.find("the arrays have shapes (2) and (3)"), std::string::npos) << shape_msg;
}

}  // namespace
}  // namespace kiln
