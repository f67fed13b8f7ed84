// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The benchmark's kernels written in kiln with prange (the array-expression and stencil APIs come later).
// Plain lambdas, so that the benchmark jit-compiles them and the CUDA codegen test traces and compiles them
// without a GPU.
#pragma once

#include <kiln/kiln.hpp>

#include "bench/suite/kernels.hpp"

#include <cstdlib>
#include <limits>

namespace benchgpu {

/// out = a * b + c, one pass.
inline const auto fused_abc = [](kiln::Array<float> a, kiln::Array<float> b, kiln::Array<float> c, kiln::Array<float> out) {
  kiln::prange(a.shape(0), [&](kiln::Int i) { out[i] = a[i] * b[i] + c[i]; });
};

/// sum of x * y.
inline const auto dot = [](kiln::Array<float> x, kiln::Array<float> y) {
  kiln::Float s = 0.0f;
  kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
  return s;
};

/// pi by the midpoint rule, n terms (compute only: no memory traffic).
inline const auto pi = [](kiln::Int n) {
  kiln::Double sum = 0.0, step = 1.0 / kiln::to_double(n);
  kiln::prange(n, [&](kiln::Int i) {
    auto x = (kiln::to_double(i) + 0.5) * step;
    sum += 4.0 / (1.0 + x * x);
  });
  return sum * step;
};

/// out = exp(x - max x) / sum exp(x - max x): a max pass, a sum pass and a write pass.
inline const auto softmax = [](kiln::Array<float> x, kiln::Array<float> out) {
  kiln::Float m = -std::numeric_limits<float>::infinity();
  kiln::prange(x.shape(0), [&](kiln::Int i) { m = kiln::max(m, x[i]); });
  kiln::Float s = 0.0f;
  kiln::prange(x.shape(0), [&](kiln::Int i) { s += kiln::exp(x[i] - m); });
  kiln::Float inv = 1.0f / s;
  kiln::prange(x.shape(0), [&](kiln::Int i) { out[i] = kiln::exp(x[i] - m) * inv; });
};

/// A 3-point average (the two ends copied).
inline const auto smooth1d = [](kiln::Array<float> x, kiln::Array<float> out) {
  kiln::Int n = x.shape(0);
  kiln::prange(n, [&](kiln::Int i) {
    kiln::if_(i == 0 || i == n - 1, [&] { out[i] = x[i]; }).else_([&] {
      out[i] = (x[i - 1] + x[i] + x[i + 1]) * (1.0f / 3.0f);
    });
  });
};

/// One Jacobi sweep of the 2-d Laplace equation on the interior.
inline const auto jacobi2d = [](kiln::Array<float, 2> a, kiln::Array<float, 2> out) {
  kiln::prange(kiln::shape(a.shape(0) - 2, a.shape(1) - 2), [&](kiln::Int i0, kiln::Int j0) {
    kiln::Int i = i0 + 1, j = j0 + 1;
    out(i, j) = 0.25f * (a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1));
  });
};

/// The 2-d wave equation, leapfrog in time: `steps` steps in one kernel, each a 5-point stencil on the interior
/// writing the next state, then the three buffers rotate by kiln::swap (the bindings are swapped at run time; the
/// borders stay as the buffers hold them). After a multiple of 3 steps `cur` holds the state again.
inline const auto wave2d = [](kiln::Array<float, 2> prev, kiln::Array<float, 2> cur, kiln::Array<float, 2> next, kiln::Int steps) {
  kiln::range(steps, [&](kiln::Int) {
    kiln::prange(kiln::shape(cur.shape(0) - 2, cur.shape(1) - 2), [&](kiln::Int i0, kiln::Int j0) {
      kiln::Int i = i0 + 1, j = j0 + 1;
      next(i, j) = 2.0f * cur(i, j) - prev(i, j) + 0.2f * (cur(i - 1, j) + cur(i + 1, j) + cur(i, j - 1) + cur(i, j + 1) - 4.0f * cur(i, j));
    });
    kiln::swap(prev, cur);  // prev: the state just left; cur: the oldest, about to become the scratch
    kiln::swap(cur, next);  // cur: the new state; next: the scratch
  });
};

/// European call and put prices (Black-Scholes), rate r and volatility v.
inline const auto black_scholes = [](kiln::Array<float> s, kiln::Array<float> k, kiln::Array<float> t, kiln::Array<float> call,
                                     kiln::Array<float> put, kiln::Float r, kiln::Float v) {
  kiln::prange(s.shape(0), [&](kiln::Int i) {
    kiln::Float sq = kiln::sqrt(t[i]);
    kiln::Float d1 = (kiln::log(s[i] / k[i]) + (r + 0.5f * v * v) * t[i]) / (v * sq);
    kiln::Float d2 = d1 - v * sq;
    kiln::Float n1 = 0.5f + 0.5f * kiln::erf(d1 * 0.70710678f);
    kiln::Float n2 = 0.5f + 0.5f * kiln::erf(d2 * 0.70710678f);
    kiln::Float disc = k[i] * kiln::exp(-r * t[i]);
    call[i] = s[i] * n1 - disc * n2;
    put[i] = disc * (1.0f - n2) - s[i] * (1.0f - n1);
  });
};

/// All-pairs gravitational accelerations with softening (kNbodyEps2), as users write it: the suite's n-body in f32.
inline const auto& nbody = suite::kiln_kernels::nbody_of<float>;
/// The softening of the f32 row (reference.cpp's ref_nbody adds the same constant).
inline constexpr float kNbodyEps2 = 1e-3f;

/// Per-row mean, variance and standard deviation of a matrix (NumPy's x.mean(1), x.var(1), x.std(1)), for every
/// float type: the row in f32, the CUDA tests (tests/cuda_rows.hpp) in f32 and f64. (The suite's row_stats,
/// bench/suite/kernels.hpp, is another kernel: it also returns the columns' std and the rows' z-scores.)
template <class T>
inline const auto row_stats_of = [](kiln::Array<T, 2> x, kiln::Array<T> mean, kiln::Array<T> var, kiln::Array<T> sd) {
  mean(kiln::all) = kiln::mean(x, 1);
  var(kiln::all) = kiln::var(x, 1);
  sd(kiln::all) = kiln::std(x, 1);
};
inline const auto& row_stats = row_stats_of<float>;

/// The 3-d stencils' weights by the distance class of a neighbour, |dz| + |dy| + |dx|: 7 points use the first
/// two, 27 points all four. Every form below (and the hand kernels, reference.cpp) sums in the same order.
inline constexpr float kStencilWeight[4] = {0.5f, 0.05f, 0.02f, 0.01f};

/// The value of a 7- or 27-point stencil from `read(dz, dy, dx)`.
template <class Read>
kiln::Float stencil3d_value(int points, const Read& read) {
  if (points == 7)
    return kStencilWeight[0] * read(0, 0, 0) +
           kStencilWeight[1] * (read(-1, 0, 0) + read(1, 0, 0) + read(0, -1, 0) + read(0, 1, 0) + read(0, 0, -1) + read(0, 0, 1));
  kiln::Float s = 0.0f;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) s = s + kStencilWeight[std::abs(dz) + std::abs(dy) + std::abs(dx)] * read(dz, dy, dx);
  return s;
}

/// The 3-d stencils with a nearest border as kiln::stencil (into an existing array).
inline const auto& star7_nearest() {
  static const auto s = kiln::stencil("star7", [](kiln::Window<float, 3> a) {
    return stencil3d_value(7, [&](int dz, int dy, int dx) { return a(dz, dy, dx); });
  }, kiln::border(kiln::Border::nearest));
  return s;
}
inline const auto& cube27_nearest() {
  static const auto s = kiln::stencil("cube27", [](kiln::Window<float, 3> a) {
    return stencil3d_value(27, [&](int dz, int dy, int dx) { return a(dz, dy, dx); });
  }, kiln::border(kiln::Border::nearest));
  return s;
}
inline const auto star7_stencil = [](kiln::Array<float, 3> in, kiln::Array<float, 3> out) { star7_nearest().into(out, in); };
inline const auto cube27_stencil = [](kiln::Array<float, 3> in, kiln::Array<float, 3> out) { cube27_nearest().into(out, in); };

/// The same as users write it with prange: every read's indices clamped into the array.
template <int Points>
inline const auto stencil3d_clamped = [](kiln::Array<float, 3> in, kiln::Array<float, 3> out) {
  const kiln::Int nz = in.shape(0), ny = in.shape(1), nx = in.shape(2);
  kiln::prange(kiln::shape(nz, ny, nx), [&](kiln::Int z, kiln::Int y, kiln::Int x) {
    out(z, y, x) = stencil3d_value(Points, [&](int dz, int dy, int dx) {
      return in(kiln::min(kiln::max(z + dz, 0), nz - 1), kiln::min(kiln::max(y + dy, 0), ny - 1), kiln::min(kiln::max(x + dx, 0), nx - 1));
    });
  });
};
inline const auto star7_clamped = stencil3d_clamped<7>;
inline const auto cube27_clamped = stencil3d_clamped<27>;

}  // namespace benchgpu
