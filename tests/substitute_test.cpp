// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The shared IR plumbing of the passes: ir/substitute (variables replaced by expressions, expressions by
// expressions, variables renamed, statements copied with fresh variables), the "what a statement declares"
// queries of ir/analysis, and the statement splicing of passes/statement_lists.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "ir/verifier.hpp"
#include "passes/statement_lists.hpp"
#include "tools/test_support/ir_shorthands.hpp"

namespace kiln {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary
using ir::VarSet;

Expr f64c(double v) { return ir::make_float(DType::F64, v); }

VarSet set_of(const std::vector<Var>& vars) {
  VarSet s;
  for (const Var& v : vars) s.insert(v.get());
  return s;
}

TEST(Substitute, ReplacesReferencesButNotAssignmentsOrDeclarations) {
  const Var x = local("x", DType::F64), y = local("y", DType::F64), n = param("n", DType::F64);
  const Stmt body = block({let(x, f64c(1)), assign(x, val(x) + val(n)), let(y, val(x) * val(x))});
  const Stmt out = ir::substitute(body, {{x.get(), f64c(2)}});
  EXPECT_EQ(ir::to_string(out), "{\n  let x: f64 = 1.0\n  x = (2.0 + n)\n  let y: f64 = (2.0 * 2.0)\n}\n");
  // Nothing to replace: the same node.
  const Var unused = local("unused", DType::F64);
  EXPECT_EQ(ir::substitute(body, {{unused.get(), f64c(2)}}).get(), body.get());
}

TEST(Substitute, TransitiveResolutionAndDroppedLets) {
  // Copy propagation: a -> b, b -> 3; a's and b's lets go.
  const Var a = local("a", DType::F64), b = local("b", DType::F64), c = local("c", DType::F64);
  const Stmt body = block({let(b, f64c(3)), let(a, val(b)), let(c, val(a) + val(b))});
  const ir::Replacements with{{a.get(), val(b)}, {b.get(), f64c(3)}};
  EXPECT_EQ(ir::to_string(ir::substitute(body, with, {.transitive = true, .drop_lets = true})),
            "{\n  let c: f64 = (3.0 + 3.0)\n}\n");
  // Without the options, one step only and the lets stay.
  EXPECT_EQ(ir::to_string(ir::substitute(body, with)), "{\n  let b: f64 = 3.0\n  let a: f64 = 3.0\n  let c: f64 = (b + 3.0)\n}\n");
}

TEST(Substitute, ExpressionForExpression) {
  const Var x = param("x", DType::F64), y = param("y", DType::F64), p = local("p", DType::F64);
  const Expr e = (val(x) + val(y)) * (val(x) + val(y)) - val(x);
  EXPECT_EQ(ir::to_string(ir::substitute(val(x) + val(y), val(p), e)), "((p * p) - x)");
}

TEST(Renamer, RenamesArraysWhereverTheyAreUsed) {
  const Var a = array_param("a", DType::F64), b = array_param("b", DType::F64), i = index("i"), j = index("j");
  const Var t = local_array("t", DType::F64, 1);
  const Stmt into = ir::make_map_into(a, {i}, {dim(a)}, {val(i)}, at(a, {val(i)}) + f64c(1));
  const Stmt allocating = ir::make_map(t, {j}, {dim(a)}, at(a, {val(j)}));
  const Var bound = ir::make_var("bound", a->type, ir::VarKind::Binding);
  const Stmt bind = ir::make_bind(bound, a, true);
  const Stmt stencil = ir::make_stencil(a, false, {i}, {dim(a)}, {val(i)}, at(a, {val(i)}), {a}, {-1}, {1},
                                        Border::nearest, nullptr);
  ir::Renamer rename;
  rename.vars[a.get()] = b;
  rename.vars[t.get()] = a;  // a declaration keeps its variable
  EXPECT_EQ(ir::to_string(rename.mutate(block({into, allocating, bind, stencil}))),
            "{\n  map b[i] over (i in 0 .. dim(b, 0)) = (b[i] + 1.0)\n"
            "  map t: f64[::1] over (j in 0 .. dim(b, 0)) = b[j]\n"
            "  bind bound: f64[:] = b\n"
            "  stencil b[i] over (i in 0 .. dim(b, 0)) windows(b) halo(-1..1) border nearest = b[i]\n}\n");
}

TEST(FreshCopy, DeclaresNewVariablesOfTheSameNamesAndReadsTheSameOuterOnes) {
  const Var a = array_param("a", DType::F64), s = local("s", DType::F64), x = local("x", DType::F64);
  const Var t = local_array("t", DType::F64, 1), i = index("i"), k = index("k");
  const Stmt orig = block({ir::make_allocate(t, {dim(a)}),
                           parfor1(i, dim(a), block({let(x, at(a, {val(i)})), store(t, {val(i)}, val(x)),
                                                     assign(s, val(s) + val(x))}),
                                   {{s, ReduceOp::Add, nullptr}}),
                           for_loop(k, i64c(0), dim(a), block({store(a, {val(k)}, at(t, {val(k)}))}))});
  const Stmt copy = ir::fresh_copy(orig);
  EXPECT_EQ(ir::to_string(copy), ir::to_string(orig));
  const VarSet declared = ir::declared_in(orig), copied = ir::declared_in(copy);
  EXPECT_EQ(declared, (VarSet{t.get(), i.get(), x.get(), k.get()}));
  ASSERT_EQ(copied.size(), declared.size());
  for (const ir::VarNode* v : copied) EXPECT_FALSE(declared.count(v)) << v->name;
  EXPECT_EQ(set_of(ir::free_vars(copy)), set_of(ir::free_vars(orig)));  // a and s, shared
  // Both in one function: no variable is defined twice.
  const ir::Function f = function("twice", {a}, {let(s, f64c(0)), orig, copy}, val(s));
  EXPECT_TRUE(ir::verify(f).empty()) << ir::to_string(f);
}

TEST(Declares, WhatEachStatementDeclaresForTheStatementsAfterIt) {
  const Var a = array_param("a", DType::F64), x = local("x", DType::F64), r = local("r", DType::F64);
  const Var t = local_array("t", DType::F64, 1), u = local_array("u", DType::F64, 1), i = index("i");
  const Var bound = ir::make_var("bound", a->type, ir::VarKind::Binding);
  EXPECT_EQ(set_of(ir::declared_by(let(x, f64c(1)))), (VarSet{x.get()}));
  EXPECT_EQ(set_of(ir::declared_by(ir::make_allocate(t, {dim(a)}))), (VarSet{t.get()}));
  EXPECT_EQ(set_of(ir::declared_by(ir::make_map(u, {i}, {dim(a)}, at(a, {val(i)})))), (VarSet{u.get()}));
  EXPECT_TRUE(ir::declared_by(ir::make_map_into(a, {i}, {dim(a)}, {val(i)}, f64c(0))).empty());
  EXPECT_EQ(set_of(ir::declared_by(ir::make_reduce(r, ReduceOp::Add, {i}, {dim(a)}, at(a, {val(i)})))), (VarSet{r.get()}));
  EXPECT_EQ(set_of(ir::declared_by(ir::make_bind(bound, a, true))), (VarSet{bound.get()}));
  EXPECT_TRUE(ir::declared_by(ir::make_bind(bound, a, false)).empty());  // a rebinding
  // A loop's index belongs to its body.
  const Stmt loop = parfor1(i, dim(a), block({let(x, at(a, {val(i)}))}));
  EXPECT_TRUE(ir::declared_by(loop).empty());
  EXPECT_EQ(set_of(ir::indices_of(loop)), (VarSet{i.get()}));
  EXPECT_EQ(ir::declared_in(loop), (VarSet{i.get(), x.get()}));
}

/// Replaces each `let v = e` by `let v = e; let v_twice = 2 * v`, spliced.
class Doubler : public passes::SplicingMutator {
 public:
  std::vector<std::string> seen;

 protected:
  using passes::SplicingMutator::visit;
  Stmt visit(const ir::LetStmt& l, const Stmt& self) override {
    const Var twice = local(l.var->name + "_twice", DType::F64);
    return splice({self, let(twice, f64c(2) * val(l.var))});
  }
  void mutated(const Stmt& original) override { seen.push_back(ir::to_string(original)); }
};

TEST(SplicingMutator, SplicesIntoTheEnclosingBlockAndKeepsUnchangedBlocks) {
  const Var a = array_param("a", DType::F64), x = local("x", DType::F64), i = index("i");
  const Stmt body = block({parfor1(i, dim(a), block({let(x, at(a, {val(i)})), store(a, {val(i)}, val(x))}))});
  Doubler d;
  const Stmt out = d.mutate(body);
  EXPECT_EQ(ir::to_string(out),
            "{\n  parfor (i in 0 .. dim(a, 0)) {  # test\n    let x: f64 = a[i]\n    let x_twice: f64 = (2.0 * x)\n"
            "    a[i] = x\n  }\n}\n");
  // Each statement of each block, as it was, innermost blocks first.
  ASSERT_EQ(d.seen.size(), 3u);
  EXPECT_EQ(d.seen[0], "let x: f64 = a[i]\n");
  // Nothing to splice: the same nodes.
  const Stmt plain = block({store(a, {i64c(0)}, f64c(1))});
  EXPECT_EQ(d.mutate(plain).get(), plain.get());
}

}  // namespace
}  // namespace kiln
