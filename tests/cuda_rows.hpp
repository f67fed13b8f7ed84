// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernels whose rows reduce (cooperative rows on the GPU, ir/cooperative.hpp), shared by the CUDA codegen
// test (emitted form, NVRTC) and the GPU test (against the interpreter, run to run): each traced for the CUDA
// pipeline as kiln::jit would trace it, with arrays of unit innermost stride.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "bench/gpu/kiln_kernels.hpp"
#include "frontend/trace_context.hpp"
#include "kiln/kiln.hpp"
#include "passes/pipeline.hpp"

namespace kiln::cudatest::rows {

/// Traces `fn`, its arrays of `rank` unless their type fixes it, unit stride along the last axis; for a target
/// that runs rows in lock step (CUDA) with `lockstep_rows`, as kiln::jit traces for it.
template <class F>
ir::Function trace_kernel(const std::string& name, const F& fn, std::vector<std::string> names, int rank = 1,
                          bool lockstep_rows = false) {
  std::vector<detail::ParamInstance> inst;
  for (const detail::ParamSpec& s : detail::param_specs<F>()) {
    detail::ParamInstance p;
    p.spec = s;
    if (s.is_array) {
      p.rank = s.rank ? s.rank : rank;
      p.unit_stride = true;
    }
    inst.push_back(p);
  }
  ir::Function traced;
  {
    detail::TraceContext ctx(name, inst, std::move(names));
    ctx.lockstep_rows = lockstep_rows;
    detail::trace_erased<F>(&fn);
    traced = ctx.finish();
  }
  return traced;
}

/// Traces `fn` (as trace_kernel) and runs the CUDA pipeline (offload included).
template <class F>
ir::Function lower_for_cuda(const std::string& name, const F& fn, std::vector<std::string> names, int rank = 1,
                            bool boundscheck = false, passes::PipelineReport* report = nullptr) {
  const ir::Function traced = trace_kernel(name, fn, std::move(names), rank, /*lockstep_rows=*/true);
  passes::PipelineOptions o;
  o.target = Target::cuda;
  o.boundscheck = boundscheck;
  return passes::run_pipeline(traced, report, o);
}

/// out += D^T D for D (n x m), as users write a Gram product without a transpose (i-k-j order, the suite's
/// covariance): spread_loops makes j a dimension, and the contraction form tiles what it leaves.
inline const auto gram = [](Array<double, 2> out, Array<double, 2> d) {
  const Int n = d.shape(0), m = d.shape(1);
  prange(m, [&](Int i) {
    range(n, [&](Int k) {
      const Double dki = d(k, i);
      range(m, [&](Int j) { out(i, j) += dki * d(k, j); });
    });
  });
};

/// Per-row mean, variance and standard deviation (kiln::mean/var/std along axis 1): kiln-bench-gpu's row_stats.
template <class T>
inline const auto& row_stats = benchgpu::row_stats_of<T>;

/// sum(x, axis=1) (int32 rows sum in int64, as NumPy's do).
template <class T>
inline const auto row_sum = [](Array<T, 2> x) { return kiln::sum(x, 1); };

/// Several reductions of one row in one pass, and several results stored per row: sum, sum of squares,
/// minimum, maximum, and a value derived from them.
inline const auto row_moments = [](Array<double, 2> x, Array<double, 2> out) {
  prange(x.shape(0), [&](Int i) {
    Double s = 0.0, q = 0.0, lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    prange(x.shape(1), [&](Int j) {
      Double e = x(i, j);
      s += e;
      q += e * e;
      lo = kiln::min(lo, e);
      hi = kiln::max(hi, e);
    });
    out(i, 0) = s;
    out(i, 1) = q;
    out(i, 2) = lo;
    out(i, 3) = hi;
    out(i, 4) = (hi - lo) * s;
  });
};

/// A softmax of each row: two reductions, then a nested elementwise parfor writing the row, which the group
/// shares too; then the row reads back what it wrote (a sum of the written row).
inline const auto row_softmax = [](Array<float, 2> x, Array<float, 2> y, Array<float, 1> check) {
  prange(x.shape(0), [&](Int i) {
    Float m = -std::numeric_limits<float>::infinity();
    prange(x.shape(1), [&](Int j) { m = kiln::max(m, x(i, j)); });
    Float s = 0.0f;
    prange(x.shape(1), [&](Int j) { s += kiln::exp(x(i, j) - m); });
    prange(x.shape(1), [&](Int j) { y(i, j) = kiln::exp(x(i, j) - m) / s; });
    Float t = 0.0f;
    prange(x.shape(1), [&](Int j) { t += y(i, j); });
    check[i] = t;
  });
};

/// A row that stores into an array it then reads: scaled[i, 0] by one thread, then every thread reads it.
inline const auto row_scaled = [](Array<float, 2> x, Array<float, 2> scaled, Array<float, 1> out) {
  prange(x.shape(0), [&](Int i) {
    Float s = 0.0f;
    prange(x.shape(1), [&](Int j) { s += x(i, j); });
    scaled(i, 0) = s;
    Float t = 0.0f;
    prange(x.shape(1), [&](Int j) { t += x(i, j) * scaled(i, 0); });
    out[i] = t;
  });
};

/// Column sums written as a prange over columns: one thread per column already reads rows contiguously.
inline const auto column_sums = [](Array<float, 2> x, Array<float, 1> out) {
  prange(x.shape(1), [&](Int j) {
    Float s = 0.0f;
    prange(x.shape(0), [&](Int k) { s += x(k, j); });
    out[j] = s;
  });
};

/// A row sum over a range that depends on the row (a triangle): the host cannot size the group at launch.
inline const auto triangle_sums = [](Array<double, 2> x, Array<double, 1> out) {
  prange(x.shape(0), [&](Int i) {
    Double s = 0.0;
    prange(kiln::min(i + 1, x.shape(1)), [&](Int j) { s += x(i, j); });
    out[i] = s;
  });
};

}  // namespace kiln::cudatest::rows
