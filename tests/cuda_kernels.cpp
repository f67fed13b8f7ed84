// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cuda_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/ops.hpp"

namespace kiln::cudatest {
namespace {

// Sizes around the block and grid boundaries: empty, one, primes, a warp, a block, and large ones.
const std::vector<std::int64_t> kSizes = {0, 1, 2, 3, 7, 31, 32, 33, 257, 1023, 65537, 1000003};

using Cases = std::vector<KernelCase>;

// ---- elementwise ------------------------------------------------------------------------------------------

KernelCase saxpy(DType t, bool unit) {
  Var a = param("a", t), x = array_param("x", t, 1, unit), y = array_param("y", t, 1, unit);
  Var i = index("i");
  ir::Function f = function("saxpy", {a, x, y}, {parfor({i}, {dim(x)}, store(y, {val(i)}, val(a) * at(x, {val(i)}) + at(y, {val(i)})))});
  return {"saxpy_" + std::string(name_of(t)) + (unit ? "_unit" : "_strided"), f, [t, unit] {
            std::vector<Args> in;
            for (std::int64_t n : kSizes) {
              const Layout l = unit ? Layout::RowMajor : (n % 2 ? Layout::Padded : Layout::Reversed);
              in.push_back({t == DType::F32 ? scalar_arg(2.5f) : scalar_arg(-1.25), array_arg(random_array(t, {n}, l)),
                            array_arg(random_array(t, {n}, l))});
            }
            in.push_back({t == DType::F32 ? scalar_arg(0.5f) : scalar_arg(3.0), array_arg(random_array(t, {(1 << 22) + 1})),
                          array_arg(random_array(t, {(1 << 22) + 1}))});
            return in;
          },
          {}};
}

KernelCase strided2d() {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), b = array_param("b", t, 2, true), out = array_param("out", t, 2);
  Var i = index("i"), j = index("j");
  ir::Function f = function(
      "strided2d", {a, b, out},
      {parfor({i, j}, {dim(out, 0), dim(out, 1)},
              store(out, {val(i), val(j)},
                    at(a, {val(i), val(j)}) * at(b, {val(i), val(j)}) + cast(t, val(i) * i64c(10) + val(j)) / cast(t, dim(a, 1) + i64c(1))))});
  return {"strided2d", f, [t] {
            std::vector<Args> in;
            for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5}, {5, 0}, {1, 1}, {3, 7}, {37, 129}, {1000, 1000}, {1, 70000}, {70000, 3}})
              in.push_back({array_arg(random_array(t, {n, m}, Layout::ColumnMajor)), array_arg(random_array(t, {n, m}, Layout::RowGaps)),
                            array_arg(random_array(t, {n, m}, Layout::Reversed))});
            return in;
          },
          {}};
}

KernelCase strided3d() {
  const DType t = DType::F32;
  Var a = array_param("a", t, 3), b = array_param("b", t, 3), out = array_param("out", t, 3);
  Var i = index("i"), j = index("j"), k = index("k");
  ir::Function f = function(
      "strided3d", {a, b, out},
      {parfor({i, j, k}, {dim(out, 0), dim(out, 1), dim(out, 2)},
              store(out, {val(i), val(j), val(k)}, at(a, {val(i), val(j), val(k)}) - num(t, 2) * at(b, {val(k), val(j), val(i)})))});
  return {"strided3d", f, [t] {
            std::vector<Args> in;
            for (std::vector<std::int64_t> s : {std::vector<std::int64_t>{2, 3, 4}, {7, 1, 9}, {31, 17, 63}, {0, 4, 4}, {3, 70000, 2}, {70000, 2, 3}})
              in.push_back({array_arg(random_array(t, s, Layout::Padded)), array_arg(random_array(t, {s[2], s[1], s[0]}, Layout::ColumnMajor)),
                            array_arg(random_array(t, s, Layout::Reversed))});
            return in;
          },
          {}};
}

KernelCase rank4() {
  const DType t = DType::F64;
  Var a = array_param("a", t, 4), out = array_param("out", t, 4, true);
  Var i = index("i"), j = index("j"), k = index("k"), l = index("l");
  ir::Function f = function(
      "rank4", {a, out},
      {parfor({i, j, k, l}, {dim(out, 0), dim(out, 1), dim(out, 2), dim(out, 3)},
              store(out, {val(i), val(j), val(k), val(l)},
                    at(a, {val(i), val(j), val(k), val(l)}) * num(t, 2) +
                        cast(t, val(i) * i64c(1000) + val(j) * i64c(100) + val(k) * i64c(10) + val(l))))});
  return {"rank4", f, [t] {
            std::vector<Args> in;
            for (std::vector<std::int64_t> s : {std::vector<std::int64_t>{2, 3, 4, 5}, {1, 1, 1, 1}, {5, 7, 3, 33}, {3, 0, 2, 2}})
              in.push_back({array_arg(random_array(t, s, Layout::Padded)), array_arg(random_array(t, s))});
            return in;
          },
          {}};
}

KernelCase matmul() {
  // out[i, j] = sum_r sum_k (a[i, k] + r) * b[k, j]: sequential loops inside a parfor, exact order.
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), b = array_param("b", t, 2, true), out = array_param("out", t, 2, true);
  Var i = index("i"), j = index("j"), k = index("k"), r = index("r"), acc = local("acc", t);
  ir::Function f = function(
      "matmul", {a, b, out},
      {parfor({i, j}, {dim(out, 0), dim(out, 1)},
              block({let(acc, num(t, 0)),
                     for_loop(r, i64c(0), i64c(3),
                              for_loop(k, i64c(0), dim(a, 1),
                                       assign(acc, val(acc) + (at(a, {val(i), val(k)}) + cast(t, val(r))) * at(b, {val(k), val(j)})))),
                     store(out, {val(i), val(j)}, val(acc))}))});
  return {"matmul", f, [t] {
            std::vector<Args> in;
            for (auto [n, m, p] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{{1, 1, 1}, {3, 7, 2}, {64, 33, 65}, {5, 0, 3}})
              in.push_back({array_arg(random_array(t, {n, m}, Layout::ColumnMajor)), array_arg(random_array(t, {m, p})),
                            array_arg(random_array(t, {n, p}))});
            return in;
          },
          {}};
}

KernelCase nested() {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), out = array_param("out", t, 2), rows = array_param("rows", t, 1);
  Var i = index("i"), j = index("j"), j2 = index("j2"), s = local("s", t), total = local("total", t);
  Var i3 = index("i3"), j3 = index("j3");
  ir::Function f = function(
      "nested", {a, out, rows},
      {parfor({i}, {dim(a, 0)},
              block({parfor({j}, {dim(a, 1)}, store(out, {val(i), val(j)}, at(a, {val(i), val(j)}) * cast(t, val(i) + val(j)))),
                     let(s, num(t, 0)),
                     parfor({j2}, {dim(a, 1)}, assign(s, val(s) + at(a, {val(i), val(j2)})), {{s, ReduceOp::Add}}),
                     store(rows, {val(i)}, val(s))})),
       let(total, num(t, 0)),
       parfor({i3}, {dim(a, 0)}, parfor({j3}, {dim(a, 1)}, assign(total, val(total) + at(a, {val(i3), val(j3)})), {{total, ReduceOp::Add}}),
              {{total, ReduceOp::Add}})},
      val(total));
  return {"nested", f, [t] {
            std::vector<Args> in;
            for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {3, 5}, {40, 3000}, {3000, 3}}) {
              TestArray x(t, {n, m}, Layout::Padded);
              for (std::int64_t e = 0; e < n * m; ++e) x.set<double>(e, static_cast<double>(uniform_int(-100, 100)));  // exact sums
              in.push_back({array_arg(x), array_arg(random_array(t, {n, m})), array_arg(random_array(t, {n}))});
            }
            return in;
          },
          {}};
}

KernelCase offsets() {
  // A stencil over [1, n-1) x [|lo|, m + |lo|), and a reduction over [lo, hi) inside a host loop whose
  // total feeds the result.
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), out = array_param("out", t, 2), lo = param("lo", DType::I64), hi = param("hi", DType::I64);
  Var x = array_param("x", t, 1, true), s = local("s", t), acc = local("acc", t);
  Var i = index("i"), j = index("j"), k = index("k"), r = index("r");
  ir::Function f = function(
      "offsets", {a, out, lo, hi, x},
      {ir::make_parfor({i, j}, {i64c(1), call(Intrinsic::Abs, {val(lo)})}, {dim(a, 0) - i64c(1), dim(a, 1)},
                       store(out, {val(i), val(j)},
                             at(a, {val(i) - i64c(1), val(j)}) + at(a, {val(i) + i64c(1), val(j) - call(Intrinsic::Abs, {val(lo)})}) * cast(t, val(j))),
                       {}, "stencil"),
       let(acc, num(t, 0)),
       for_loop(r, i64c(0), i64c(3),
                block({let(s, num(t, 0)),
                       ir::make_parfor({k}, {val(lo)}, {val(hi)}, assign(s, val(s) + (at(x, {val(k) - val(lo)}) * cast(t, val(r)))),
                                       {{s, ReduceOp::Add}}, "sum"),
                       assign(acc, val(acc) + val(s))}))},
      val(acc));
  return {"offsets", f, [t] {
            std::vector<Args> in;
            for (auto [n, m, l, h] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>>{
                     {5, 6, 2, 9}, {1, 3, 0, 0}, {40, 50, 3, -4}, {300, 20, -5, 5000}, {3, 3, 1, 4100}}) {
              TestArray xs(t, {std::max<std::int64_t>(h - l, 0)});
              for (std::int64_t e = 0; e < xs.size(); ++e) xs.set<double>(e, static_cast<double>(uniform_int(-50, 50)));
              in.push_back({array_arg(random_array(t, {n, m + std::abs(l)}, Layout::RowGaps)),
                            array_arg(random_array(t, {n, m + std::abs(l)}, Layout::Padded)), scalar_arg(l), scalar_arg(h), array_arg(xs)});
            }
            return in;
          },
          {}};
}

// ---- stencils (emit_stencil.cpp: windows in registers, neighbours from other lanes) ----------------------

KernelCase stencil_smooth1d() {
  // A 3-point average with the ends copied in a branch: the windows are loaded for every lane, the branch
  // picks what it reads.
  const DType t = DType::F32;
  Var x = array_param("x", t, 1, true), out = array_param("out", t, 1, true);
  Var i = index("i");
  Expr n = dim(x);
  Expr end = bin(BinaryOp::Or, bin(BinaryOp::Eq, val(i), i64c(0)), bin(BinaryOp::Eq, val(i), n - i64c(1)));
  ir::Function f = function(
      "stencil_smooth1d", {x, out},
      {parfor({i}, {n},
              ir::make_if(end, store(out, {val(i)}, at(x, {val(i)})),
                          store(out, {val(i)}, (at(x, {val(i) - i64c(1)}) + at(x, {val(i)}) + at(x, {val(i) + i64c(1)})) * num(t, 1.0 / 3.0))))});
  return {"stencil_smooth1d", f, [t] {
            std::vector<Args> in;
            for (std::int64_t n : {1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 130, 1000, 65537, (1 << 22) + 3})
              in.push_back({array_arg(random_array(t, {n})), array_arg(random_array(t, {n}))});
            return in;
          },
          {}};
}

KernelCase stencil_wide1d() {
  // Offsets up to the limit (8) on both sides over [8, n - 8) (the strips start mid-warp), one beyond it
  // (9: a plain load), a load at a fixed index (not a window) and integer wrap-around.
  const DType t = DType::I32;
  Var x = array_param("x", t, 1, true), out = array_param("out", t, 1, true), k = param("k", t);
  Var i = index("i"), l = local("l", DType::I64);
  Expr n = dim(x);
  ir::Function f = function(
      "stencil_wide1d", {x, out, k},
      {ir::make_parfor({i}, {i64c(8)}, {n - i64c(9)},
                       block({let(l, val(i) + i64c(5)),
                              store(out, {val(i)},
                                    at(x, {val(i) - i64c(8)}) * val(k) + at(x, {val(i) + i64c(8)}) - at(x, {val(i) - i64c(3)}) +
                                        at(x, {val(l)}) * num(t, 7) + at(x, {val(i) + i64c(9)}) + at(x, {i64c(0)}) + at(x, {val(i)}))}),
                       {}, "wide")});
  return {"stencil_wide1d", f, [t] {
            std::vector<Args> in;
            for (std::int64_t n : {17, 18, 40, 41, 100, 257, 4099, 1000003}) {
              TestArray a(t, {n});
              for (std::int64_t e = 0; e < n; ++e)
                a.set<std::int32_t>(e, e % 97 == 0 ? 2147483647 - static_cast<std::int32_t>(e % 5) : static_cast<std::int32_t>(uniform_int(-1000000, 1000000)));
              in.push_back({array_arg(a), array_arg(random_array(t, {n})), scalar_arg(std::int32_t{-3})});
            }
            return in;
          },
          {}};
}

KernelCase stencil_bool() {
  // Bool windows (exchanged as int: __shfl_sync has no bool) and f64 ones in one parfor.
  Var b = array_param("b", DType::Bool, 1, true), x = array_param("x", DType::F64, 1, true), out = array_param("out", DType::F64, 1, true);
  Var i = index("i");
  Expr n = dim(b);
  Expr differs = bin(BinaryOp::Ne, at(b, {val(i) - i64c(1)}), at(b, {val(i) + i64c(2)}));
  ir::Function f = function(
      "stencil_bool", {b, x, out},
      {ir::make_parfor({i}, {i64c(1)}, {n - i64c(2)},
                       store(out, {val(i)}, ir::make_select(differs, at(x, {val(i) + i64c(2)}) - at(x, {val(i) - i64c(1)}), at(x, {val(i)}))),
                       {}, "edges")});
  return {"stencil_bool", f, [] {
            std::vector<Args> in;
            for (std::int64_t n : {3, 4, 35, 200, 100003})
              in.push_back({array_arg(random_array(DType::Bool, {n})), array_arg(random_array(DType::F64, {n})), array_arg(random_array(DType::F64, {n}))});
            return in;
          },
          {}};
}

KernelCase stencil_jacobi2d() {
  // Jacobi's 5 points on the interior of arrays whose rows have gaps: windows across rows (each thread
  // several rows), row counts that are no multiple of the rows per thread, one-column and empty interiors.
  const DType t = DType::F32;
  Var a = array_param("a", t, 2, true), out = array_param("out", t, 2, true);
  Var i = index("i"), j = index("j");
  ir::Function f = function(
      "stencil_jacobi2d", {a, out},
      {ir::make_parfor({i, j}, {i64c(1), i64c(1)}, {dim(a, 0) - i64c(1), dim(a, 1) - i64c(1)},
                       store(out, {val(i), val(j)},
                             num(t, 0.25) * (at(a, {val(i) - i64c(1), val(j)}) + at(a, {val(i) + i64c(1), val(j)}) +
                                             at(a, {val(i), val(j) - i64c(1)}) + at(a, {val(i), val(j) + i64c(1)}))),
                       {}, "sweep")});
  return {"stencil_jacobi2d", f, [t] {
            std::vector<Args> in;
            for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                     {3, 3}, {2, 50}, {4, 34}, {5, 5}, {6, 3}, {37, 129}, {130, 33}, {9, 300}, {70000, 3}, {3, 70000}, {1000, 1000}})
              in.push_back({array_arg(random_array(t, {n, m}, Layout::RowGaps)), array_arg(random_array(t, {n, m}))});
            return in;
          },
          {}};
}

KernelCase stencil_rows() {
  // A 2-d parfor reading a 1-d window (no row offset) and a 2-d one reaching 2 rows up and down and
  // 3 columns right, over a space that starts at row 2 and column 1.
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), w = array_param("w", t, 1, true), out = array_param("out", t, 2, true);
  Var i = index("i"), j = index("j");
  ir::Function f = function(
      "stencil_rows", {a, w, out},
      {ir::make_parfor({i, j}, {i64c(2), i64c(1)}, {dim(a, 0) - i64c(2), dim(a, 1) - i64c(3)},
                       store(out, {val(i), val(j)},
                             at(w, {val(j) - i64c(1)}) * at(a, {val(i) - i64c(2), val(j)}) + at(w, {val(j) + i64c(1)}) -
                                 at(a, {val(i) + i64c(2), val(j) + i64c(3)}) * num(t, 0.5) + at(a, {val(i), val(j) - i64c(1)})),
                       {}, "rows")});
  return {"stencil_rows", f, [t] {
            std::vector<Args> in;
            for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{5, 5}, {7, 40}, {11, 36}, {64, 130}, {333, 77}, {5, 70001}})
              in.push_back({array_arg(random_array(t, {n, m}, Layout::RowGaps)), array_arg(random_array(t, {m})), array_arg(random_array(t, {n, m}))});
            return in;
          },
          {}};
}

KernelCase stencil_3d() {
  // 7 points in 3-d: the windows of the planes above and below are separate (their leading index is
  // k +- 1, invariant in a row), the plane's own reaches across rows and columns.
  const DType t = DType::F64;
  Var a = array_param("a", t, 3, true), out = array_param("out", t, 3, true);
  Var k = index("k"), i = index("i"), j = index("j");
  auto A = [&](std::int64_t dk, std::int64_t di, std::int64_t dj) { return at(a, {val(k) + i64c(dk), val(i) + i64c(di), val(j) + i64c(dj)}); };
  ir::Function f = function(
      "stencil_3d", {a, out},
      {ir::make_parfor({k, i, j}, {i64c(1), i64c(1), i64c(1)}, {dim(a, 0) - i64c(1), dim(a, 1) - i64c(1), dim(a, 2) - i64c(1)},
                       store(out, {val(k), val(i), val(j)},
                             A(-1, 0, 0) + A(1, 0, 0) + A(0, -1, 0) + A(0, 1, 0) + A(0, 0, -1) + A(0, 0, 1) - num(t, 6) * A(0, 0, 0)),
                       {}, "laplace")});
  return {"stencil_3d", f, [t] {
            std::vector<Args> in;
            for (auto s : std::vector<std::vector<std::int64_t>>{{3, 3, 3}, {5, 9, 40}, {17, 33, 65}, {4, 100, 3}, {3, 6, 1000}})
              in.push_back({array_arg(random_array(t, s, Layout::RowGaps)), array_arg(random_array(t, s))});
            return in;
          },
          {}};
}

// ---- array bindings -----------------------------------------------------------------------------------------

KernelCase bindings() {
  // A host time loop swapping two buffers through bindings (a temporary binding declared in the loop): each
  // step's kernel takes the arrays the bindings name at its launch, and both buffers are written through
  // `nxt` (both come back). A binding inside a parfor picks one of two arrays per iteration. The result reads
  // an element through a binding on the host.
  const DType t = DType::F64;
  auto binding = [t](const std::string& name) { return ir::make_var(name, ir::Type::array(t, 1, true), ir::VarKind::Binding); };
  Var a = array_param("a", t, 1, true), b = array_param("b", t, 1, true), picked = array_param("picked", t, 1, true);
  Var steps = param("steps", DType::I64);
  Var cur = binding("cur"), nxt = binding("nxt"), tmp = binding("tmp"), src = binding("src");
  Var s = index("s"), i = index("i"), j = index("j");
  Expr n = dim(a);
  ir::Function f = function(
      "bindings", {a, b, picked, steps},
      {ir::make_bind(cur, a, true), ir::make_bind(nxt, b, true),
       for_loop(s, i64c(0), val(steps),
                block({ir::make_parfor({i}, {i64c(1)}, {n - i64c(1)},
                                       store(nxt, {val(i)}, num(t, 0.5) * at(cur, {val(i)}) + num(t, 0.25) * (at(cur, {val(i) - i64c(1)}) + at(cur, {val(i) + i64c(1)}))),
                                       {}, "step"),
                       ir::make_bind(tmp, cur, true), ir::make_bind(cur, nxt, false), ir::make_bind(nxt, tmp, false)})),
       ir::make_parfor({j}, {i64c(0)}, {dim(picked)},
                       block({ir::make_bind(src, a, true),
                              ir::make_if(bin(BinaryOp::Eq, bin(BinaryOp::Mod, val(j), i64c(3)), i64c(1)), ir::make_bind(src, cur, false)),
                              store(picked, {val(j)}, at(src, {val(j)}) * num(t, 2))}),
                       {}, "pick")},
      at(cur, {n / i64c(2)}));
  return {"bindings", f, [t] {
            std::vector<Args> in;
            for (auto [n, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 0}, {2, 3}, {3, 1}, {100, 4}, {100, 5}, {10007, 7}}) {
              // Multiples of 1/64 stay exact through a few steps.
              TestArray x(t, {n}), y(t, {n});
              for (std::int64_t e = 0; e < n; ++e) {
                x.set<double>(e, static_cast<double>(uniform_int(-64, 64)) / 64);
                y.set<double>(e, static_cast<double>(uniform_int(-64, 64)) / 64);
              }
              in.push_back({array_arg(x), array_arg(y), array_arg(random_array(t, {n})), scalar_arg(k)});
            }
            return in;
          },
          {}};
}

/// An in-place update whose stores are under an if (a clip in place): the unrolled rounds load every iteration's
/// element first and store where each iteration's branch stored, a flag per store and iteration (emit_kernel.cpp,
/// deferred_round). NaN compares false: the else arm.
KernelCase clip_in_place(DType t) {
  Var y = array_param("y", t, 1, true), lim = param("lim", t), v = local("v", t);
  Var i = index("i");
  ir::Function f = function("clip_in_place", {y, lim},
                            {parfor({i}, {dim(y)},
                                    block({let(v, at(y, {val(i)})),
                                           ir::make_if(bin(BinaryOp::Gt, val(v), val(lim)), store(y, {val(i)}, val(lim)), store(y, {val(i)}, val(v) * num(t, 3)))}))});
  return {"clip_in_place_" + std::string(name_of(t)), f, [t] {
            std::vector<Args> in;
            for (std::int64_t n : kSizes) {
              TestArray a = random_array(t, {n});
              if (n >= 3 && t == DType::F64) {
                a.set<double>(0, std::numeric_limits<double>::quiet_NaN());
                a.set<double>(1, std::numeric_limits<double>::infinity());
                a.set<double>(2, -std::numeric_limits<double>::infinity());
              }
              in.push_back({array_arg(a), t == DType::F32 ? scalar_arg(1.5f) : scalar_arg(-0.5)});
            }
            return in;
          },
          {}};
}

KernelCase ifelse() {
  const DType t = DType::I32;
  Var x = array_param("x", t), out = array_param("out", t), lim = param("lim", t);
  Var i = index("i");
  ir::Function f = function(
      "ifelse", {x, out, lim},
      {parfor({i}, {dim(x)},
              ir::make_if(bin(BinaryOp::Lt, at(x, {val(i)}), val(lim)), store(out, {val(i)}, at(x, {val(i)}) * num(t, 3)),
                          ir::make_if(bin(BinaryOp::Eq, bin(BinaryOp::Mod, at(x, {val(i)}), num(t, 2)), num(t, 0)),
                                      store(out, {val(i)}, ir::make_select(bin(BinaryOp::Gt, at(x, {val(i)}), num(t, 50)), num(t, -1),
                                                                           at(x, {val(i)}) - val(lim))))))});
  return {"ifelse", f, [t] {
            std::vector<Args> in;
            for (std::int64_t n : {0, 1, 7, 1023, 100000})
              in.push_back({array_arg(random_array(t, {n}, Layout::RowMajor, -100, 100)), array_arg(random_array(t, {n})), scalar_arg(std::int32_t{10})});
            return in;
          },
          {}};
}

KernelCase guards() {
  // For i >= 1 the index i * 10^9 is far outside x: the loads may only run when the guard allows.
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), out_and = array_param("out_and", DType::Bool), out_or = array_param("out_or", DType::Bool),
      out_sel = array_param("out_sel", t);
  Var i = index("i");
  Expr far = at(x, {val(i) * i64c(1000000000)});
  Expr first = bin(BinaryOp::Eq, val(i), i64c(0));
  ir::Function f = function(
      "guards", {x, out_and, out_or, out_sel},
      {parfor({i}, {dim(out_and)},
              block({store(out_and, {val(i)}, bin(BinaryOp::And, first, bin(BinaryOp::Gt, far, num(t, 0)))),
                     store(out_or, {val(i)}, bin(BinaryOp::Or, bin(BinaryOp::Ne, val(i), i64c(0)), bin(BinaryOp::Lt, far, num(t, 0)))),
                     store(out_sel, {val(i)}, ir::make_select(first, far, num(t, -1)))}))});
  return {"guards", f, [t] {
            std::vector<Args> in;
            for (std::int64_t n : {1, 2, 1023, 100000})
              for (double x0 : {1.0, -1.0})
                in.push_back({array_arg(array_of<double>({x0})), array_arg(random_array(DType::Bool, {n})),
                              array_arg(random_array(DType::Bool, {n})), array_arg(random_array(t, {n}))});
            return in;
          },
          {}};
}

KernelCase bools() {
  Var a = array_param("a", DType::Bool), b = array_param("b", DType::Bool, 1, true), out = array_param("out", DType::Bool);
  Var lt = array_param("lt", DType::Bool), count = local("count", DType::I64);
  Var i = index("i");
  Expr ai = at(a, {val(i)}), bi = at(b, {val(i)});
  ir::Function f = function(
      "bools", {a, b, out, lt},
      {let(count, i64c(0)),
       parfor({i}, {dim(a)},
              block({store(out, {val(i)}, bin(BinaryOp::Or, bin(BinaryOp::And, ai, ir::make_unary(UnaryOp::Not, bi)),
                                              bin(BinaryOp::BitXor, ai, bin(BinaryOp::BitAnd, bi, ai)))),
                     store(lt, {val(i)}, bin(BinaryOp::BitOr, bin(BinaryOp::Lt, ai, bi), bin(BinaryOp::Ge, bi, ai))),
                     assign(count, val(count) + cast(DType::I64, ai))}),
              {{count, ReduceOp::Add}})},
      val(count));
  return {"bools", f, [] {
            std::vector<Args> in;
            for (std::int64_t n : {0, 1, 3, 1023, 100000})
              in.push_back({array_arg(random_array(DType::Bool, {n}, Layout::Padded)), array_arg(random_array(DType::Bool, {n})),
                            array_arg(random_array(DType::Bool, {n})), array_arg(random_array(DType::Bool, {n}, Layout::Reversed))});
            return in;
          },
          {}};
}

// ---- arithmetic on edge values ------------------------------------------------------------------------------

template <class T>
KernelCase operators() {
  constexpr DType t = dtype_of<T>();
  std::vector<BinaryOp> ops;
  if constexpr (std::is_same_v<T, bool>)
    ops = {BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::And, BinaryOp::Or};
  else if constexpr (std::is_integral_v<T>)
    ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod, BinaryOp::Min, BinaryOp::Max,
           BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::Shl, BinaryOp::Shr};
  else
    ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod, BinaryOp::Min, BinaryOp::Max};
  for (BinaryOp c : {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge}) ops.push_back(c);
  std::vector<UnaryOp> unary;
  if constexpr (std::is_same_v<T, bool>) unary = {UnaryOp::Not};
  else if constexpr (std::is_integral_v<T>) unary = {UnaryOp::Neg, UnaryOp::BitNot};
  else unary = {UnaryOp::Neg};

  Var a = array_param("a", t), b = array_param("b", t, 1, true);
  Var i = index("i");
  std::vector<Var> params = {a, b};
  std::vector<Stmt> body;
  for (BinaryOp op : ops) {
    Var out = array_param("out_" + std::to_string(static_cast<int>(op)), ir::is_comparison(op) ? DType::Bool : t);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, bin(op, at(a, {val(i)}), at(b, {val(i)}))));
  }
  for (UnaryOp op : unary) {
    Var out = array_param("out_u" + std::to_string(static_cast<int>(op)), t);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, ir::make_unary(op, at(a, {val(i)}))));
  }
  if constexpr (!std::is_same_v<T, bool>) {
    Var out = array_param("out_abs", t);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, call(Intrinsic::Abs, {at(a, {val(i)})})));
  }
  ir::Function f = function("operators", params, {parfor({i}, {dim(a)}, block(body))});
  return {"operators_" + std::string(name_of(t)), f, [params] {
            std::vector<T> xs, ys;
            if constexpr (std::is_same_v<T, bool>) {
              for (bool x : {false, true})
                for (bool y : {false, true}) xs.push_back(x), ys.push_back(y);
            } else {
              for (T x : edge_values<T>())
                for (T y : edge_values<T>()) xs.push_back(x), ys.push_back(y);
              for (int k = 0; k < 700; ++k) {
                if constexpr (std::is_integral_v<T>) {
                  xs.push_back(static_cast<T>(uniform_int(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())));
                  ys.push_back(static_cast<T>(k % 3 == 0 ? uniform_int(-70, 70) : uniform_int(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())));
                } else {
                  xs.push_back(static_cast<T>(uniform(-1e3, 1e3)));
                  ys.push_back(static_cast<T>(uniform(-10, 10)));
                }
              }
            }
            Args in = {array_arg(array_of(xs)), array_arg(array_of(ys))};
            for (std::size_t k = 2; k < params.size(); ++k)
              in.push_back(array_arg(random_array(params[k]->type.elem, {static_cast<std::int64_t>(xs.size())})));
            return std::vector<Args>{in};
          },
          {}};
}

template <class From>
KernelCase casts() {
  constexpr DType from = dtype_of<From>();
  Var in = array_param("in", from);
  Var i = index("i");
  std::vector<Var> params = {in};
  std::vector<Stmt> body;
  for (DType to : {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64}) {
    if (to == from) continue;
    Var out = array_param(std::string("to_") + std::string(name_of(to)), to);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, cast(to, at(in, {val(i)}))));
  }
  ir::Function f = function("casts", params, {parfor({i}, {dim(in)}, block(body))});
  return {"casts_from_" + std::string(name_of(from)), f, [params] {
            std::vector<From> values;
            if constexpr (std::is_same_v<From, bool>) {
              values = {false, true, true, false};
            } else if constexpr (std::is_floating_point_v<From>) {
              const double two31 = 2147483648.0, two63 = 9223372036854775808.0;
              for (double v : {kNaN, -kNaN, kInf, -kInf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, two31, -two31, two31 - 1,
                               two31 - 0.5, two31 + 0.5, -two31 - 1, -two31 + 0.5, 3e9, -3e9, two63, -two63, 9.3e18, -9.3e18, 1e300,
                               -1e300, 4294967296.0 + 7, 1e-310, 16777217.0, 9007199254740993.0})
                values.push_back(static_cast<From>(v));
            } else {
              for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{2147483647}, std::int64_t{-2147483647 - 1},
                                     std::int64_t{2147483648}, std::int64_t{4294967296 + 5}, std::int64_t{-4294967296 - 7},
                                     std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
                                     std::int64_t{16777217}, std::int64_t{9007199254740993}, std::int64_t{-9007199254740993}})
                values.push_back(static_cast<From>(v));
            }
            for (int k = 0; k < 300; ++k) {
              if constexpr (std::is_same_v<From, bool>) values.push_back(k % 3 == 0);
              else if constexpr (std::is_floating_point_v<From>) values.push_back(static_cast<From>(uniform(-1e10, 1e10) * std::pow(10.0, uniform(-12, 10))));
              else values.push_back(static_cast<From>(uniform_int(std::numeric_limits<From>::min(), std::numeric_limits<From>::max())));
            }
            Args in = {array_arg(array_of(values))};
            for (std::size_t k = 1; k < params.size(); ++k)
              in.push_back(array_arg(random_array(params[k]->type.elem, {static_cast<std::int64_t>(values.size())})));
            return std::vector<Args>{in};
          },
          {}};
}

/// One kernel per group of intrinsics: the correctly rounded ones must match bit for bit; CUDA's
/// transcendental functions are within 1-4 ulps of the true value (CUDA math documentation), glibc's
/// within 1, hence 8.
template <class T>
KernelCase intrinsics(bool exact) {
  constexpr DType t = dtype_of<T>();
  const std::vector<Intrinsic> exact_fns = {Intrinsic::Sqrt, Intrinsic::Abs, Intrinsic::Floor, Intrinsic::Ceil, Intrinsic::Round,
                                            Intrinsic::Trunc, Intrinsic::Fma, Intrinsic::Copysign, Intrinsic::IsNan, Intrinsic::IsInf,
                                            Intrinsic::IsFinite};
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), z = array_param("z", t, 1, true);
  Var i = index("i");
  std::vector<Var> params = {x, y, z};
  std::vector<Stmt> body;
  for (int code = 0; code <= static_cast<int>(Intrinsic::IsFinite); ++code) {
    const auto fn = static_cast<Intrinsic>(code);
    const bool is_exact = std::find(exact_fns.begin(), exact_fns.end(), fn) != exact_fns.end();
    if (is_exact != exact) continue;
    Var out = array_param("out_" + std::string(ir::name_of(fn)), ir::returns_bool(fn) ? DType::Bool : t, 1, true);
    params.push_back(out);
    std::vector<Expr> args = {at(x, {val(i)}), at(y, {val(i)}), at(z, {val(i)})};
    args.resize(static_cast<std::size_t>(ir::arity(fn)));
    body.push_back(store(out, {val(i)}, call(fn, args)));
  }
  ir::Function f = function(exact ? "exact_intrinsics" : "math_intrinsics", params, {parfor({i}, {dim(x)}, block(body))});
  return {std::string(exact ? "exact_intrinsics_" : "math_intrinsics_") + std::string(name_of(t)), f, [params] {
            std::vector<T> xs, ys, zs;
            for (T a : edge_values<T>())
              for (T b : edge_values<T>()) xs.push_back(a), ys.push_back(b), zs.push_back(b == b ? T(-1.5) : b);
            for (int k = 0; k < 1500; ++k) {
              const double mag = std::pow(10.0, uniform(-8, 3));
              xs.push_back(static_cast<T>(uniform(-1, 1) * (k % 2 ? mag : 4)));
              ys.push_back(static_cast<T>(uniform(-4, 4)));
              zs.push_back(static_cast<T>(uniform(-100, 100)));
            }
            const auto n = static_cast<std::int64_t>(xs.size());
            Args in = {array_arg(array_of(xs)), array_arg(array_of(ys)), array_arg(array_of(zs))};
            for (std::size_t k = 3; k < params.size(); ++k) in.push_back(array_arg(random_array(params[k]->type.elem, {n})));
            return std::vector<Args>{in};
          },
          Tolerance{exact ? 0.0 : 8.0, 0}};
}

// ---- reductions ----------------------------------------------------------------------------------------------

/// s = init; parfor i: s = s (update) x[i]; return s.
KernelCase reduction(ReduceOp op, DType t, bool from_identity) {
  Var x = array_param("x", t, 1, true), s = local("s", t);
  Var i = index("i");
  const Expr init = from_identity ? ir::identity_of(op, t) : num(t, 3);
  ir::Function f = function("reduce", {x},
                            {let(s, init), parfor({i}, {dim(x)}, assign(s, bin(ir::combiner(op), val(s), at(x, {val(i)}))), {{s, op}})}, val(s));
  const std::string name = "reduce_" + std::string(ir::name_of(op)) + "_" + std::string(name_of(t)) + (from_identity ? "" : "_from3");
  Tolerance tol;
  if (op == ReduceOp::Mul && is_float(t)) tol.abs = t == DType::F32 ? 0.5 : 1e-9;  // products of ~1e6 factors near 1
  return {name, f, [op, t] {
            std::vector<Args> in;
            for (std::int64_t n : kSizes) {
              for (int variant = 0; variant < (is_float(t) && op != ReduceOp::Add ? 3 : 1); ++variant) {
                TestArray x(t, {n});
                for (std::int64_t k = 0; k < n; ++k) {
                  // Sums of small integers are exact in any order (below 2^24 for f32); products of odd
                  // factors wrap exactly; float products stay near 1.
                  if (op == ReduceOp::Add) x.set_number(k, static_cast<double>(uniform_int(-8, 8)));
                  else if (op == ReduceOp::Mul && is_int(t)) x.set_number(k, static_cast<double>(uniform_int(-1000000, 1000000) * 2 + 1));
                  else if (op == ReduceOp::Mul) x.set_number(k, uniform(0.9999, 1.0001));
                  else if (is_int(t)) x.set_number(k, static_cast<double>(uniform_int(-2000000000, 2000000000)));
                  else x.set_number(k, uniform(-1e3, 1e3));
                }
                if (op != ReduceOp::Mul && op != ReduceOp::Add && is_float(t) && n > 2) x.set_number(0, 0.0), x.set_number(n - 1, -0.0);
                if (variant == 1 && n > 0) x.set_number(n / 2, kNaN);
                if (variant == 2 && op != ReduceOp::Mul)
                  for (std::int64_t k = 0; k < n; ++k) x.set_number(k, k % 2 ? -0.0 : 0.0);
                in.push_back({array_arg(x)});
              }
            }
            return in;
          },
          tol};
}

KernelCase reduction_forms() {
  // v = v - e for Add, v = v / e for Mul, v = e op v, several reductions in one 2-d parfor, an update under an if.
  const DType t = DType::F64;
  Var x = array_param("x", t, 2), s = local("s", t), p = local("p", t), lo = local("lo", t), cnt = local("cnt", DType::I64);
  Var hi = local("hi", DType::I32);
  Var i = index("i"), j = index("j");
  Expr xij = at(x, {val(i), val(j)});
  ir::Function f = function(
      "forms", {x},
      {let(s, num(t, -0.0)), let(p, num(t, 1)), let(lo, num(t, kInf)), let(cnt, i64c(0)), let(hi, num(DType::I32, -5)),
       parfor({i, j}, {dim(x, 0), dim(x, 1)},
              block({assign(s, val(s) - xij), assign(p, val(p) / (num(t, 1) + xij * num(t, 1e-3))),
                     assign(lo, bin(BinaryOp::Min, xij, val(lo))),
                     ir::make_if(bin(BinaryOp::Gt, xij, num(t, 0)), assign(cnt, i64c(1) + val(cnt))),
                     assign(hi, bin(BinaryOp::Max, val(hi), cast(DType::I32, xij)))}),
              {{s, ReduceOp::Add}, {p, ReduceOp::Mul}, {lo, ReduceOp::Min}, {cnt, ReduceOp::Add}, {hi, ReduceOp::Max}})},
      val(s) + val(p) * num(t, 1000) + val(lo) * num(t, 1e6) + cast(t, val(cnt)) * num(t, 1e9) + cast(t, val(hi)) * num(t, 1e12));
  return {"reduction_forms", f, [t] {
            std::vector<Args> in;
            for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5}, {1, 1}, {3, 1000}, {1000, 3}, {300, 300}, {2, 70000}}) {
              TestArray a(t, {n, m}, Layout::ColumnMajor);
              for (std::int64_t k = 0; k < n * m; ++k) a.set<double>(k, static_cast<double>(uniform_int(-500, 500)) / 4);
              in.push_back({array_arg(a)});
            }
            return in;
          },
          Tolerance{1e5, 1e-3}};  // the product of 90000 factors, reassociated, decides the result's last digits
}

/// best = init; k = -1; parfor over x: if (x < best [|| isnan(x) && !isnan(best)] [|| k < 0]) { best = x; k = i }.
KernelCase arg_reduction(ReduceOp op, DType t, bool nan_wins, bool empty_loses, int rank) {
  Var x = array_param("x", t, rank, true), best = local("best", t), at_ = local("at", DType::I64);
  Var i = index("i"), j = index("j");
  std::vector<Var> idx = rank == 1 ? std::vector<Var>{i} : std::vector<Var>{i, j};
  std::vector<Expr> refs, ends;
  for (int d = 0; d < rank; ++d) refs.push_back(val(idx[static_cast<std::size_t>(d)])), ends.push_back(dim(x, d));
  Expr xv = at(x, refs);
  Expr flat = rank == 1 ? val(i) : val(i) * dim(x, 1) + val(j);
  Expr cond = bin(op == ReduceOp::ArgMin ? BinaryOp::Lt : BinaryOp::Gt, xv, val(best));
  if (nan_wins && is_float(t))
    cond = bin(BinaryOp::Or, cond, bin(BinaryOp::And, call(Intrinsic::IsNan, {xv}), ir::make_unary(UnaryOp::Not, call(Intrinsic::IsNan, {val(best)}))));
  if (empty_loses) cond = bin(BinaryOp::Or, cond, bin(BinaryOp::Lt, val(at_), i64c(0)));
  ir::Function f = function(
      "argbest", {x},
      {let(best, ir::identity_of(op, t)), let(at_, i64c(-1)),
       parfor(idx, ends, ir::make_if(cond, block({assign(best, xv), assign(at_, flat)})), {ir::Reduction{best, op, at_}})},
      val(at_) * i64c(1000) + cast(DType::I64, call(Intrinsic::IsNan, {cast(DType::F64, val(best))})));
  const std::string name = std::string(ir::name_of(op)) + "_" + std::string(name_of(t)) + (nan_wins ? "_nan" : "") +
                           (empty_loses ? "_empty" : "") + "_" + std::to_string(rank) + "d";
  nan_wins = nan_wins && is_float(t);
  return {name, f, [t, rank, nan_wins] {
            std::vector<Args> in;
            for (std::int64_t n : {0, 1, 2, 7, 33, 1023, 100003, 1000000}) {
              for (int variant = 0; variant < 4; ++variant) {
                std::vector<std::int64_t> shape = rank == 1 ? std::vector<std::int64_t>{n} : std::vector<std::int64_t>{n, 7};
                TestArray a(t, shape);
                const std::int64_t total = a.size();
                for (std::int64_t k = 0; k < total; ++k) a.set_number(k, static_cast<double>(uniform_int(-20, 20)));  // many ties
                // NaNs only where the update condition says how they compare: without its NaN clause the
                // result depends on where blocks start (a block's first element is taken even if NaN).
                if (variant == 1 && nan_wins && total > 3) a.set_number(total / 3, kNaN), a.set_number(total / 2, kNaN);
                if (variant == 2 && is_float(t))
                  for (std::int64_t k = 0; k < total; ++k) a.set_number(k, k % 5 ? kInf : -kInf);
                if (variant == 3 && nan_wins && total > 0) a.set_number(0, kNaN);
                in.push_back({array_arg(a)});
              }
            }
            return in;
          },
          {}};
}

KernelCase histogram(DType t, ReduceOp op) {
  // counts[bin[i]] op= w[i]: an array reduction at data-dependent indices.
  Var bins = array_param("bins", DType::I32), w = array_param("w", t), h = array_param("h", t, 1, true);
  Var i = index("i");
  Expr slot = cast(DType::I64, at(bins, {val(i)}));
  Stmt body = store(h, {slot}, bin(ir::combiner(op), at(h, {slot}), at(w, {val(i)})));
  ir::Function f = function("histogram", {bins, w, h},
                            {ir::make_parfor({i}, {i64c(0)}, {dim(bins)}, body, {}, {ir::ArrayReduction{h, op}}, "histogram")});
  return {"histogram_" + std::string(ir::name_of(op)) + "_" + std::string(name_of(t)), f, [t] {
            std::vector<Args> in;
            for (std::int64_t n : {0, 1, 1000, 1000003}) {
              for (std::int64_t nbins : {1, 17, 4096}) {
                TestArray b = random_array(DType::I32, {n}, Layout::RowMajor, 0, static_cast<double>(nbins - 1));
                in.push_back({array_arg(b), array_arg(random_array(t, {n}, Layout::RowMajor, -4, 4)),
                              array_arg(random_array(t, {nbins}, Layout::RowMajor, -3, 3))});
              }
            }
            return in;
          },
          {}};
}

// ---- allocation, results, checks, host code -------------------------------------------------------------

KernelCase array_result() {
  const DType t = DType::F32;
  Var x = array_param("x", t, 2), out = local_array("out", t, 2);
  Var i = index("i"), j = index("j");
  ir::Function f = function(
      "transpose", {x},
      {ir::make_allocate(out, {dim(x, 1), dim(x, 0)}),
       parfor({i, j}, {dim(x, 1), dim(x, 0)}, store(out, {val(i), val(j)}, at(x, {val(j), val(i)}) + num(t, 1)))},
      nullptr, out);
  return {"array_result", f, [t] {
            std::vector<Args> in;
            for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 3}, {1, 1}, {2, 3}, {100, 37}, {513, 1025}})
              in.push_back({array_arg(random_array(t, {n, m}, Layout::Padded))});
            return in;
          },
          {}};
}

KernelCase allocations() {
  // A scratch array per iteration of a host loop (freed when the site runs again) and per parfor iteration
  // (the device heap), feeding a reduction and the output.
  const DType t = DType::I64;
  Var n = param("n", DType::I64), out = array_param("out", t), tmp = local_array("tmp", t, 1), tmp2 = local_array("tmp2", t, 1);
  Var total = local("total", t), part = local("part", t);
  Var r = index("r"), k = index("k"), i = index("i"), k2 = index("k2");
  ir::Function f = function(
      "scratch", {n, out},
      {let(total, i64c(0)),
       for_loop(r, i64c(0), i64c(5),
                block({ir::make_allocate(tmp, {val(n)}), parfor({k}, {val(n)}, store(tmp, {val(k)}, val(k) * val(r))),
                       let(part, i64c(0)), parfor({k2}, {val(n)}, assign(part, val(part) + at(tmp, {val(k2)})), {{part, ReduceOp::Add}}),
                       assign(total, val(total) + val(part))})),
       parfor({i}, {dim(out)},
              block({ir::make_allocate(tmp2, {bin(BinaryOp::Mod, val(i), i64c(7)) + i64c(1)}),
                     store(tmp2, {bin(BinaryOp::Mod, val(i), i64c(7))}, val(i) * val(i)),
                     store(out, {val(i)}, at(tmp2, {bin(BinaryOp::Mod, val(i), i64c(7))}) + val(total))}))},
      val(total));
  return {"allocations", f, [t] {
            return std::vector<Args>{{scalar_arg(std::int64_t{50}), array_arg(random_array(t, {5000}))},
                                     {scalar_arg(std::int64_t{0}), array_arg(random_array(t, {3}))}};
          },
          {}};
}

KernelCase negative_allocation() {
  // Negative extents: on the host (the first allocation) and, for some iterations, inside a parfor (where an
  // empty array is fine as long as nothing is stored to it).
  const DType t = DType::F64;
  Var n = param("n", DType::I64), m = param("m", DType::I64), out = array_param("out", t);
  Var b = local_array("b", t, 2), c = local_array("c", t, 1);
  Var i = index("i");
  ir::Function f = function(
      "negative", {n, m, out},
      {ir::make_allocate(b, {i64c(3), val(n)}),
       parfor({i}, {dim(out)},
              block({ir::make_allocate(c, {val(m) - val(i)}),
                     ir::make_if(bin(BinaryOp::Gt, dim(c), i64c(0)),
                                 block({store(c, {i64c(0)}, num(t, 1)), store(out, {val(i)}, at(c, {i64c(0)}))}),
                                 store(out, {val(i)}, num(t, -1)))}))});
  return {"negative_allocation", f, [t] {
            return std::vector<Args>{{scalar_arg(std::int64_t{-1}), scalar_arg(std::int64_t{100}), array_arg(random_array(t, {10}))},
                                     {scalar_arg(std::int64_t{4}), scalar_arg(std::int64_t{100}), array_arg(random_array(t, {1000}))},
                                     {scalar_arg(std::int64_t{4}), scalar_arg(std::int64_t{200}), array_arg(random_array(t, {100}))}};
          },
          {}};
}

KernelCase checks() {
  // A check on the host (n >= 0) and one inside the parfor (x[i] < limit).
  const DType t = DType::F32;
  Var x = array_param("x", t, 1, true), limit = param("limit", t), n = param("n", DType::I64);
  Var i = index("i");
  ir::Function f = function(
      "checks", {x, limit, n},
      {ir::make_check(bin(BinaryOp::Ge, val(n), i64c(0)), kValueError, "n must not be negative, got {}", {val(n)}),
       parfor({i}, {dim(x)},
              block({ir::make_check(bin(BinaryOp::Lt, at(x, {val(i)}), val(limit)), kIndexOutOfRange, "element {} of x is too large ({} elements)",
                                    {val(i), dim(x)}),
                     store(x, {val(i)}, at(x, {val(i)}) * num(t, 2))}))});
  return {"checks", f, [t] {
            TestArray big = random_array(t, {10000}, Layout::RowMajor, 0, 1);
            big.set_number(7777, 5.0);
            return std::vector<Args>{{array_arg(random_array(t, {10000}, Layout::RowMajor, 0, 1)), scalar_arg(2.0f), scalar_arg(std::int64_t{1})},
                                     {array_arg(random_array(t, {10}, Layout::RowMajor, 0, 1)), scalar_arg(2.0f), scalar_arg(std::int64_t{-3})},
                                     {array_arg(big), scalar_arg(2.0f), scalar_arg(std::int64_t{1})}};
          },
          {}};
}

KernelCase time_steps() {
  // Jacobi in 1-d: a host loop of steps, two parfors per step (one launch each), and a residual reduction
  // whose value on the host decides a scalar parameter of the next step. Inputs are multiples of 1/64 and
  // w is 1/4 or 1/8, so ten steps stay exact in double and every summation order agrees.
  const DType t = DType::F64;
  Var u = array_param("u", t, 1, true), v = array_param("v", t, 1, true), steps = param("steps", DType::I64);
  Var w = local("w", t), res = local("res", t);
  Var s = index("s"), i = index("i"), j = index("j");
  Expr n = dim(u);
  ir::Function f = function(
      "time_steps", {u, v, steps},
      {let(w, num(t, 0.25)), let(res, num(t, 0)),
       for_loop(s, i64c(0), val(steps),
                block({ir::make_parfor({i}, {i64c(1)}, {n - i64c(1)},
                                       store(v, {val(i)}, at(u, {val(i)}) + val(w) * (at(u, {val(i) - i64c(1)}) + at(u, {val(i) + i64c(1)}) -
                                                                                       num(t, 2) * at(u, {val(i)}))),
                                       {}, "step"),
                       assign(res, num(t, 0)),
                       ir::make_parfor({j}, {i64c(1)}, {n - i64c(1)},
                                       block({assign(res, val(res) + call(Intrinsic::Abs, {at(v, {val(j)}) - at(u, {val(j)})})),
                                              store(u, {val(j)}, at(v, {val(j)}))}),
                                       {{res, ReduceOp::Add}}, "copy back"),
                       ir::make_if(bin(BinaryOp::And, bin(BinaryOp::Lt, val(res), num(t, 1)), bin(BinaryOp::Gt, val(w), num(t, 0.2))),
                                   assign(w, val(w) * num(t, 0.5)))}))},
      val(res) + val(w));
  return {"time_steps", f, [t] {
            std::vector<Args> in;
            for (std::int64_t n : {2, 3, 100, 10007}) {
              TestArray a(t, {n});
              for (std::int64_t k = 0; k < n; ++k) a.set<double>(k, static_cast<double>(uniform_int(-64, 64)) / 64);
              in.push_back({array_arg(a), array_arg(random_array(t, {n})), scalar_arg(std::int64_t{10})});
            }
            return in;
          },
          {}};
}

KernelCase host_elements() {
  // Sequential code outside parfors reads and writes single elements (element copies).
  const DType t = DType::I32;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 2), first = local("first", t), sum = local("sum", DType::I64);
  Var i = index("i");
  ir::Function f = function(
      "host_elements", {x, y},
      {let(first, at(x, {i64c(0)})), let(sum, i64c(0)),
       parfor({i}, {dim(x)}, assign(sum, val(sum) + cast(DType::I64, at(x, {val(i)}))), {{sum, ReduceOp::Add}}),
       store(x, {dim(x) - i64c(1)}, val(first) + cast(t, val(sum))), store(y, {i64c(1), i64c(2)}, at(y, {i64c(0), i64c(0)}) * num(t, 3))},
      val(sum) * i64c(7));
  return {"host_elements", f, [t] {
            return std::vector<Args>{{array_arg(random_array(t, {1})), array_arg(random_array(t, {2, 3}, Layout::ColumnMajor))},
                                     {array_arg(random_array(t, {100000})), array_arg(random_array(t, {4, 5}, Layout::Padded))}};
          },
          {}};
}

KernelCase scalars_only() {
  Var flag = param("flag", DType::Bool), a = param("a", DType::I32), b = param("b", DType::F32), sum = local("sum", DType::I64);
  Var i = index("i");
  ir::Function f = function(
      "scalars", {flag, a, b},
      {let(sum, i64c(0)), for_loop(i, i64c(0), cast(DType::I64, val(a)), assign(sum, val(sum) + val(i) * val(i)))},
      bin(BinaryOp::And, val(flag), bin(BinaryOp::Gt, cast(DType::F32, val(sum)), val(b))));
  return {"scalars_only", f, [] {
            std::vector<Args> in;
            for (bool fl : {false, true})
              for (std::int32_t n : {-5, 0, 10, 1000}) in.push_back({scalar_arg(fl), scalar_arg(n), scalar_arg(1000.0f)});
            return in;
          },
          {}};
}

KernelCase empty_ranges() {
  // Empty spaces launch nothing; every reduction keeps its exact value (also -0.0 and NaN).
  const DType t = DType::F64;
  Var x = array_param("x", t, 2), s = local("s", t), m = local("m", t), lo = param("lo", DType::I64);
  Var i = index("i"), j = index("j"), k = index("k");
  ir::Function f = function(
      "empty", {x, lo},
      {let(s, num(t, -0.0)), let(m, num(t, kNaN)),
       parfor({i, j}, {dim(x, 0), dim(x, 1)}, assign(s, val(s) + at(x, {val(i), val(j)})), {{s, ReduceOp::Add}}),
       ir::make_parfor({k}, {val(lo)}, {i64c(0)}, assign(m, bin(BinaryOp::Min, val(m), cast(t, val(k)))), {{m, ReduceOp::Min}}, "empty unless lo < 0")},
      val(s) + val(m));
  return {"empty_ranges", f, [t] {
            return std::vector<Args>{{array_arg(random_array(t, {0, 5})), scalar_arg(std::int64_t{0})},
                                     {array_arg(random_array(t, {5, 0})), scalar_arg(std::int64_t{3})},
                                     {array_arg(random_array(t, {0, 0})), scalar_arg(std::int64_t{-2})}};
          },
          {}};
}

}  // namespace

std::vector<KernelCase> kernel_catalogue() {
  Cases c;
  for (DType t : {DType::F32, DType::F64})
    for (bool unit : {true, false}) c.push_back(saxpy(t, unit));
  c.push_back(strided2d());
  c.push_back(strided3d());
  c.push_back(rank4());
  c.push_back(matmul());
  c.push_back(nested());
  c.push_back(offsets());
  c.push_back(stencil_smooth1d());
  c.push_back(stencil_wide1d());
  c.push_back(stencil_bool());
  c.push_back(stencil_jacobi2d());
  c.push_back(stencil_rows());
  c.push_back(stencil_3d());
  c.push_back(ifelse());
  for (DType t : {DType::F32, DType::F64}) c.push_back(clip_in_place(t));
  c.push_back(guards());
  c.push_back(bools());
  c.push_back(operators<std::int32_t>());
  c.push_back(operators<std::int64_t>());
  c.push_back(operators<float>());
  c.push_back(operators<double>());
  c.push_back(operators<bool>());
  c.push_back(casts<bool>());
  c.push_back(casts<std::int32_t>());
  c.push_back(casts<std::int64_t>());
  c.push_back(casts<float>());
  c.push_back(casts<double>());
  for (bool exact : {true, false}) {
    c.push_back(intrinsics<float>(exact));
    c.push_back(intrinsics<double>(exact));
  }
  for (DType t : {DType::I32, DType::I64, DType::F32, DType::F64})
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max}) {
      c.push_back(reduction(op, t, true));
      if (op == ReduceOp::Add || op == ReduceOp::Max) c.push_back(reduction(op, t, false));
    }
  c.push_back(reduction_forms());
  for (ReduceOp op : {ReduceOp::ArgMin, ReduceOp::ArgMax}) {
    c.push_back(arg_reduction(op, DType::F64, true, true, 1));
    // (for floats, "nothing yet" needs the NaN rule: see ir::match_arg_update)
    c.push_back(arg_reduction(op, DType::F32, false, false, 1));
    c.push_back(arg_reduction(op, DType::I32, false, true, 2));
    c.push_back(arg_reduction(op, DType::F64, true, false, 2));
  }
  c.push_back(histogram(DType::I32, ReduceOp::Add));
  c.push_back(histogram(DType::I64, ReduceOp::Max));
  c.push_back(histogram(DType::F64, ReduceOp::Min));
  c.push_back(array_result());
  c.push_back(allocations());
  c.push_back(negative_allocation());
  c.push_back(checks());
  c.push_back(time_steps());
  c.push_back(bindings());
  c.push_back(host_elements());
  c.push_back(scalars_only());
  c.push_back(empty_ranges());
  // What the backend receives: the pipeline's last pass for the CUDA target makes the launches.
  for (KernelCase& k : c) k.f = offloaded(k.f);
  return c;
}

}  // namespace kiln::cudatest
