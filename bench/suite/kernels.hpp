// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The suite's kernels in kiln, one lambda each, as a user would first write them from the kernels' mathematical
// descriptions: the PolyBench/C 4.2 kernels with slices for the stencils' time loops, kiln::dot for the
// products, reductions with an axis for the statistics, a prange where the mathematics has no array form in kiln
// (outer products, triangular and transposed products); and the kernels users commonly write (an all-pairs
// n-body, statistics by rows and columns, a multi-stage normalization, a 27-point stencil with clamped indices,
// a 2-d histogram). One definition for every target: the CPU suite (kernels_polybench.cpp, kernels_user.cpp)
// jits them for the host, kiln-bench-gpu's suite rows (bench/gpu/suite_rows.cpp) for CUDA, and the tests trace
// them for both.
#pragma once

#include <cstdint>
#include <tuple>

#include <kiln/kiln.hpp>

namespace suite::kiln_kernels {

using kiln::Array;
using kiln::Double;
using kiln::Int;
using kiln::slice;

// --- PolyBench/C 4.2 ---

inline const auto jacobi_1d = [](Array<double, 1> A, Array<double, 1> B, Int tsteps) {
  kiln::range(tsteps, [&](Int) {
    B[slice(1, -1)] = 0.33333 * (A[slice(0, -2)] + A[slice(1, -1)] + A[slice(2, kiln::none)]);
    A[slice(1, -1)] = 0.33333 * (B[slice(0, -2)] + B[slice(1, -1)] + B[slice(2, kiln::none)]);
  });
};

inline const auto jacobi_2d = [](Array<double, 2> A, Array<double, 2> B, Int tsteps) {
  const auto in = slice(1, -1), lo = slice(0, -2), hi = slice(2, kiln::none);
  kiln::range(tsteps, [&](Int) {
    B(in, in) = 0.2 * (A(in, in) + A(in, lo) + A(in, hi) + A(hi, in) + A(lo, in));
    A(in, in) = 0.2 * (B(in, in) + B(in, lo) + B(in, hi) + B(hi, in) + B(lo, in));
  });
};

inline const auto heat_3d = [](Array<double, 3> A, Array<double, 3> B, Int tsteps) {
  const auto in = slice(1, -1), lo = slice(0, -2), hi = slice(2, kiln::none);
  auto step = [&](const Array<double, 3>& a, const Array<double, 3>& b) {
    b(in, in, in) = 0.125 * (a(hi, in, in) - 2.0 * a(in, in, in) + a(lo, in, in)) +
                    0.125 * (a(in, hi, in) - 2.0 * a(in, in, in) + a(in, lo, in)) +
                    0.125 * (a(in, in, hi) - 2.0 * a(in, in, in) + a(in, in, lo)) + a(in, in, in);
  };
  kiln::range(tsteps, [&](Int) {
    step(A, B);
    step(B, A);
  });
};

inline const auto fdtd_2d = [](Array<double, 2> ex, Array<double, 2> ey, Array<double, 2> hz, Array<double, 1> fict,
                               Int tmax) {
  const auto all = kiln::all;
  const auto tail = slice(1, kiln::none), head = slice(0, -1);
  kiln::range(tmax, [&](Int t) {
    ey(0, all) = fict[t];
    ey(tail, all) -= 0.5 * (hz(tail, all) - hz(head, all));
    ex(all, tail) -= 0.5 * (hz(all, tail) - hz(all, head));
    hz(head, head) -= 0.7 * (ex(head, tail) - ex(head, head) + ey(tail, head) - ey(head, head));
  });
};

inline const auto gemm = [](Array<double, 2> C, Array<double, 2> A, Array<double, 2> B, Double alpha, Double beta) {
  C(kiln::all, kiln::all) = alpha * kiln::dot(A, B) + beta * C;
};

inline const auto two_mm = [](Array<double, 2> D, Array<double, 2> A, Array<double, 2> B, Array<double, 2> C,
                              Double alpha, Double beta) {
  D(kiln::all, kiln::all) = kiln::dot(alpha * kiln::dot(A, B), C) + beta * D;
};

inline const auto atax = [](Array<double, 2> A, Array<double, 1> x) { return kiln::dot(kiln::dot(A, x), A); };

inline const auto bicg = [](Array<double, 2> A, Array<double, 1> r, Array<double, 1> p) {
  return std::tuple{kiln::dot(r, A), kiln::dot(A, p)};
};

inline const auto mvt = [](Array<double, 1> x1, Array<double, 1> x2, Array<double, 2> A, Array<double, 1> y1,
                           Array<double, 1> y2) {
  x1 += kiln::dot(A, y1);
  x2 += kiln::dot(y2, A);
};

inline const auto gemver = [](Array<double, 2> A, Array<double, 1> x, Array<double, 1> w, Array<double, 1> u1,
                              Array<double, 1> v1, Array<double, 1> u2, Array<double, 1> v2, Array<double, 1> y,
                              Array<double, 1> z, Double alpha, Double beta) {
  // A += outer(u1, v1) + outer(u2, v2): kiln has no outer product or new axis, so as a prange.
  kiln::prange(kiln::shape(A.shape(0), A.shape(1)),
               [&](Int i, Int j) { A(i, j) = A(i, j) + u1[i] * v1[j] + u2[i] * v2[j]; });
  x += beta * kiln::dot(y, A) + z;
  w += alpha * kiln::dot(A, x);
};

inline const auto gesummv = [](Array<double, 2> A, Array<double, 2> B, Array<double, 1> x, Double alpha,
                               Double beta) { return alpha * kiln::dot(A, x) + beta * kiln::dot(B, x); };

/// Only C's lower triangle: kiln has no transpose (A A^T), so rows i and j are multiplied directly.
inline const auto syrk = [](Array<double, 2> C, Array<double, 2> A, Double alpha, Double beta) {
  const Int m = A.shape(1);
  kiln::prange(C.shape(0), [&](Int i) {
    kiln::range(i + 1, [&](Int j) {
      Double s = 0.0;
      kiln::range(m, [&](Int k) { s += A(i, k) * A(j, k); });
      C(i, j) = beta * C(i, j) + alpha * s;
    });
  });
};

/// D^T D / divisor for D (n x m) in i-k-j order (kiln has no transpose to write dot(D.T, D)).
inline Array<double, 2> gram(const Array<double, 2>& d, const Double& divisor) {
  const Int n = d.shape(0), m = d.shape(1);
  auto out = kiln::zeros<double>(m, m);
  kiln::prange(m, [&](Int i) {
    kiln::range(n, [&](Int k) {
      const Double dki = d(k, i);
      kiln::range(m, [&](Int j) { out(i, j) += dki * d(k, j); });
    });
  });
  return out / divisor;
}

inline const auto covariance = [](Array<double, 2> data) {
  auto d = data - kiln::mean(data, 0, kiln::keepdims);
  return gram(d, kiln::to_double(data.shape(0) - 1));
};

inline const auto correlation = [](Array<double, 2> data) {
  auto sd = kiln::std(data, 0, kiln::keepdims);
  auto d = (data - kiln::mean(data, 0, kiln::keepdims)) /
           (kiln::sqrt(kiln::to_double(data.shape(0))) * kiln::where(sd <= 0.1, 1.0, sd));
  return gram(d, Double(1.0));
};

/// A (nr, nq, np) seen as (nr * nq, np): NumPy's A[...] = A @ C4.
inline const auto doitgen = [](Array<double, 2> A, Array<double, 2> C4) { A(kiln::all, kiln::all) = kiln::dot(A, C4); };

// --- kernels users commonly write ---

/// All-pairs accelerations with softening eps2: a prange over bodies, a sequential inner loop accumulating in order
/// of j, body i's coordinates read once before it. One kernel for every element type: the suite runs it in f64 (its
/// CPU and GPU rows), kiln-bench-gpu's nbody row in f32 (benchgpu::nbody), so that each has one hand version to
/// match (bench/suite/reference_user.cpp and bench/gpu/suite_reference.cpp's s_nbody; bench/gpu/reference.cpp's
/// ref_nbody).
template <class T>
inline const auto nbody_of = [](Array<T, 1> ax, Array<T, 1> ay, Array<T, 1> az, Array<T, 1> x, Array<T, 1> y,
                                Array<T, 1> z, Array<T, 1> m, kiln::Scalar<T> eps2) {
  const Int n = x.shape(0);
  kiln::prange(n, [&](Int i) {
    kiln::Scalar<T> sx = T(0), sy = T(0), sz = T(0);
    const kiln::Scalar<T> xi = x[i], yi = y[i], zi = z[i];
    kiln::range(n, [&](Int j) {
      const kiln::Scalar<T> dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
      const kiln::Scalar<T> r2 = dx * dx + dy * dy + dz * dz + eps2;
      const kiln::Scalar<T> f = m[j] / (r2 * kiln::sqrt(r2));
      sx += f * dx;
      sy += f * dy;
      sz += f * dz;
    });
    ax[i] = sx;
    ay[i] = sy;
    az[i] = sz;
  });
};
inline const auto& nbody = nbody_of<double>;

/// Per-row mean, var, std, per-column std and row z-scores, with kiln::mean/var/std and an axis.
inline const auto row_stats = [](Array<double, 2> x) {
  return std::tuple{kiln::mean(x, 1), kiln::var(x, 1), kiln::std(x, 1), kiln::std(x, 0),
                    (x - kiln::mean(x, 1, kiln::keepdims)) / kiln::std(x, 1, kiln::keepdims)};
};

/// sum(clip((x - mean(x)) / std(x), -c, c)) as array expressions.
inline const auto normalize_clip_sum = [](Array<double, 1> x, Double c) {
  auto z = (x - kiln::mean(x)) / kiln::std(x);
  return kiln::sum(kiln::minimum(kiln::maximum(z, -c), c));
};

/// The 27-point mean of an n^3 cube as a prange with clamped indices.
inline const auto stencil27 = [](Array<double, 3> out, Array<double, 3> in) {
  const Int n = in.shape(0);
  kiln::prange(kiln::shape(n, n, n), [&](Int i, Int j, Int k) {
    Double s = 0.0;
    for (int di = -1; di <= 1; ++di) {
      const Int ii = kiln::min(kiln::max(i + di, 0), n - 1);
      for (int dj = -1; dj <= 1; ++dj) {
        const Int jj = kiln::min(kiln::max(j + dj, 0), n - 1);
        for (int dk = -1; dk <= 1; ++dk) s += in(ii, jj, kiln::min(kiln::max(k + dk, 0), n - 1));
      }
    }
    out(i, j, k) = s * (1.0 / 27.0);
  });
};

/// hist[bin(x)][bin(y)] += 1 for points in [0, 1)^2, in a prange.
inline const auto hist2d = [](Array<std::int64_t, 2> hist, Array<double, 1> x, Array<double, 1> y) {
  const Double bins = kiln::to_double(hist.shape(0));
  kiln::prange(x.shape(0), [&](Int i) { hist(kiln::to_int(x[i] * bins), kiln::to_int(y[i] * bins)) += 1; });
};

}  // namespace suite::kiln_kernels
