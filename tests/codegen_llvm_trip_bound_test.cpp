// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Trip-count bounds the CPU backend proves from kiln IR (codegen/llvm/trip_bound.hpp), and the loops it
// therefore keeps from the vectorizer: a stencil's border loops, whose bounds reach a chunk as loaded values.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "codegen/llvm/cpu_backend.hpp"
#include "codegen/llvm/trip_bound.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln {
namespace {

using namespace llvm_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary
using codegen::cpu::detail::LetDefinitions;
using codegen::cpu::detail::max_trip_count;

Expr min_(Expr a, Expr b) { return bin(BinaryOp::Min, std::move(a), std::move(b)); }
Expr max_(Expr a, Expr b) { return bin(BinaryOp::Max, std::move(a), std::move(b)); }

/// The bounds lower_stencils and partition_loops give a halo-2 stencil's axis of extent `n`.
struct BorderBounds {
  Var lo = local("s0_lo1", DType::I64), hi = local("s0_hi1", DType::I64);
  Expr n;
  explicit BorderBounds(Expr extent) : n(std::move(extent)) {}
  std::vector<Stmt> lets() const { return {let(lo, min_(i64c(2), n)), let(hi, max_(val(lo), n - i64c(2)))}; }
  Expr interior_begin() const { return min_(max_(i64c(0), val(lo)), n); }
  Expr interior_end() const { return max_(min_(n, val(hi)), interior_begin()); }
};

TEST(TripBound, StencilBordersRunAtMostTheHalo) {
  Var a = array_param("a", DType::F64, 2, true);
  const BorderBounds b(dim(a, 1));
  const ir::Function f = function("borders", {a}, b.lets());
  const LetDefinitions lets(f);
  EXPECT_EQ(max_trip_count(i64c(0), b.interior_begin(), lets), 2);     // left border
  EXPECT_EQ(max_trip_count(b.interior_end(), b.n, lets), 2);           // right border
  EXPECT_EQ(max_trip_count(b.interior_begin(), b.interior_end(), lets), std::nullopt);  // the interior: unbounded
  EXPECT_EQ(max_trip_count(i64c(0), b.n, lets), std::nullopt);
  EXPECT_EQ(max_trip_count(i64c(3), i64c(11), lets), 8);
  EXPECT_EQ(max_trip_count(i64c(11), i64c(3), lets), 0);  // an empty loop
  EXPECT_EQ(max_trip_count(b.n - i64c(3), b.n + i64c(1), lets), 4);
  EXPECT_EQ(max_trip_count(val(b.lo), val(b.lo) + i64c(5), lets), 5);  // the same variable cancels
}

TEST(TripBound, VariablesThatChangeProveNothing) {
  Var a = array_param("a", DType::F64, 1, true), other = array_param("b", DType::F64, 1, true);
  Var x = local("x", DType::I64), y = local("y", DType::I64), w = local("w", DType::I64);
  Var alias = ir::make_var("alias", a->type, ir::VarKind::Binding);
  const ir::Function f = function(
      "changes", {a, other},
      {let(x, i64c(4)), let(y, val(x)), assign(x, dim(a) + i64c(100)), let(w, i64c(1)),
       ir::make_bind(alias, a, true), ir::make_bind(alias, other, false)});
  const LetDefinitions lets(f);
  // y's definition read x before the assignment: "x - y" is not x's 4 minus y's 4.
  EXPECT_EQ(max_trip_count(val(y), val(x), lets), std::nullopt);
  EXPECT_EQ(max_trip_count(val(x), val(x), lets), std::nullopt);
  EXPECT_EQ(max_trip_count(val(w), val(w) + i64c(3), lets), 3);  // never assigned: a value of its own
  EXPECT_EQ(max_trip_count(dim(alias) - i64c(2), dim(alias), lets), std::nullopt);  // rebound: its extent changes
  EXPECT_EQ(max_trip_count(dim(a) - i64c(2), dim(a), lets), 2);
}

/// out[i, j] = 2 a[i, j] in the interior and a[i, j] + 1 on the halo-2 borders of each row, as three parfors.
ir::Function bordered_rows() {
  Var a = array_param("a", DType::F64, 2, true), out = array_param("out", DType::F64, 2, true);
  Var i = index("i"), j0 = index("j0"), j1 = index("j1"), j2 = index("j2");
  const BorderBounds b(dim(a, 1));
  auto row = [&](const Var& j, Expr begin, Expr end, Expr value) {
    return ir::make_parfor({j}, {std::move(begin)}, {std::move(end)}, store(out, {val(i), val(j)}, std::move(value)),
                           {}, "test");
  };
  auto a_ij = [&](const Var& j) { return at(a, {val(i), val(j)}); };
  std::vector<Stmt> body = b.lets();
  body.push_back(parfor1(
      i, dim(a, 0),
      block({row(j0, i64c(0), b.interior_begin(), a_ij(j0) + num(DType::F64, 1)),
             row(j1, b.interior_begin(), b.interior_end(), a_ij(j1) * num(DType::F64, 2)),
             row(j2, b.interior_end(), b.n, a_ij(j2) + num(DType::F64, 1))})));
  return function("bordered_rows", {a, out}, std::move(body));
}

TEST(TripBound, BorderLoopsAreNotVectorized) {
  const ir::Function f = bordered_rows();
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  // Only the interior has a vector loop (and perhaps its vector remainder, "vec.epilog.vector.body").
  const std::ptrdiff_t loops = count_matches(k.llvm_ir, std::regex("(^|\n)vector\\.body[0-9]*:"));
  EXPECT_EQ(loops, 1) << k.llvm_ir;
  EXPECT_NE(k.llvm_ir.find("llvm.loop.vectorize.enable"), std::string::npos) << k.llvm_ir;
  for (std::int64_t n : {1, 2, 3, 4, 5, 17, 1000})
    check_kernel(k, f, {array_arg(random_array(DType::F64, {3, n})), array_arg(random_array(DType::F64, {3, n}))});
}

/// A stencil's left rim with zero padding: out[i, j] = (j >= 1 ? a[i, j - 1] : 0) + (j >= 2 ? a[i, j - 2] : 0)
/// for j in the halo, the tests guarding loads (so they stay branches) and decided by j's first values.
ir::Function padded_left_rim() {
  Var a = array_param("a", DType::F64, 2, true), out = array_param("out", DType::F64, 2, true);
  Var i = index("i"), j = index("j");
  const BorderBounds b(dim(a, 1));
  auto tap = [&](std::int64_t d) {
    return ir::make_select(bin(BinaryOp::Ge, val(j), i64c(d)), at(a, {val(i), max_(val(j) - i64c(d), i64c(0))}),
                           num(DType::F64, 0));
  };
  std::vector<Stmt> body = b.lets();
  body.push_back(parfor1(i, dim(a, 0),
                         ir::make_parfor({j}, {i64c(0)}, {b.interior_begin()}, store(out, {val(i), val(j)}, tap(1) + tap(2)),
                                         {}, "test")));
  return function("padded_left_rim", {a, out}, std::move(body));
}

// Nor peeled: LLVM would copy the body in front of the loop for the iterations whose tests it can decide
// (j = 0, j = 1), and keep the loop, whose end it cannot see, for the rest: three copies of a rim's body.
TEST(TripBound, BorderLoopsAreNotPeeled) {
  const ir::Function f = padded_left_rim();
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  EXPECT_EQ(k.llvm_ir.find(".peel"), std::string::npos) << k.llvm_ir;
  EXPECT_NE(k.llvm_ir.find("llvm.loop.unroll.disable"), std::string::npos) << k.llvm_ir;
  for (std::int64_t n : {1, 2, 3, 5, 17})
    check_kernel(k, f, {array_arg(random_array(DType::F64, {3, n})), array_arg(random_array(DType::F64, {3, n}))});
}

}  // namespace
}  // namespace kiln
