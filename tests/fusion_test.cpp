// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The loop passes: fuse_parfors (legality cases with their recorded reasons), eliminate_temporaries,
// reuse_buffers, hoist_invariants, hoist_allocations and collapse_parfors, each checked on hand-built IR
// by golden text and differentially (interpreter before vs after, sizes 0, 1, primes and large); the
// pipeline on softmax, a / max(a) and Black-Scholes (golden IR, regions, allocations), the diagnostics
// report and the Graphviz dump; and random parfor programs through the whole pipeline.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <regex>

#include "kiln/kiln.hpp"
#include "loop_test_util.hpp"
#include "passes/collapse_parfors.hpp"
#include "passes/eliminate_temporaries.hpp"
#include "passes/recompute_temporaries.hpp"
#include "passes/fuse_parfors.hpp"
#include "passes/hoist_allocations.hpp"
#include "passes/hoist_invariants.hpp"
#include "passes/pipeline.hpp"
#include "passes/report.hpp"
#include "passes/reuse_buffers.hpp"

namespace kiln::looptest {
namespace {

using passes::PassContext;
using looptest::apply;  // the 3-argument form (loop_test_util.hpp) next to the 2-argument one below

ir::Function apply(ir::Function (*pass)(const ir::Function&, PassContext&), const ir::Function& f) {
  PassContext ctx;
  return apply(pass, f, ctx);
}

/// Parfors not nested in another parfor: the parallel regions a kernel runs.
int regions(const Stmt& s) {
  if (!s) return 0;
  switch (s->kind) {
    case ir::StmtKind::Parfor: return 1;
    case ir::StmtKind::Block: {
      int n = 0;
      for (const auto& x : s->as<ir::BlockStmt>().stmts) n += regions(x);
      return n;
    }
    case ir::StmtKind::For: return regions(s->as<ir::ForStmt>().body);
    case ir::StmtKind::If: return regions(s->as<ir::IfStmt>().then_body) + regions(s->as<ir::IfStmt>().else_body);
    default: return 0;
  }
}

int allocations(const ir::Function& f) {
  struct Count : ir::IRVisitor {
    int n = 0;
    void visit(const ir::AllocateStmt&) override { ++n; }
  } c;
  c.walk(f.body);
  return c.n;
}

std::string notes(const PassContext& ctx) {
  std::vector<std::string> texts;
  for (const auto& n : ctx.notes) texts.push_back(n.text);
  return joined(texts);
}

/// The body of a printed function (between the header line and the closing brace).
std::string body_text(const ir::Function& f) {
  const std::string s = ir::to_string(f);
  const size_t open = s.find("{\n");
  return s.substr(open + 2, s.size() - open - 2 - 3);  // without "\n}\n"
}

// =========================================================================================================
// fuse_parfors: legality
// =========================================================================================================

TEST(Fuse, ConsumerReadingAtTheSameIndexFuses) {
  ArrayProgram p("same");
  const Var a = p.input("a");
  const Var b = p.map("b", "multiply", [&](const Expr& i) { return mul(load(a, {i}), f64c(2)); });
  const Var c = p.map("c", "add", [&](const Expr& i) { return add(load(b, {i}), load(a, {i})); });
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, p.returning(c), ctx);
  EXPECT_EQ(regions(g.body), 1);
  EXPECT_EQ(body_text(g),
            "  alloc b: f64[::1] (dim(a, 0))\n"
            "  alloc c: f64[::1] (dim(a, 0))\n"
            "  parfor (i in 0 .. dim(a, 0)) {  # multiply at same:1 | add at same:2\n"
            "    b[i] = (a[i] * 2.0)\n"
            "    c[i] = (b[i] + a[i])\n"
            "  }\n"
            "  return c");
  EXPECT_EQ(notes(ctx), "#1 + #2: fused (moved above: alloc c: f64[::1] (dim(a, 0)))\n");
  ASSERT_EQ(ctx.parfors.after.size(), 1u);
  EXPECT_EQ(ctx.parfors.after[0].ids, (std::vector<int>{1, 2}));
  EXPECT_EQ(ctx.parfors.after[0].parent, -1);
}

TEST(Fuse, ElementwiseProducerFusesWithAReduction) {
  ArrayProgram p("expsum");
  const Var a = p.input("a");
  const Var e = p.map("e", "exp", [&](const Expr& i) { return call(Intrinsic::Exp, load(a, {i})); });
  const Var s = p.reduce("s", "sum", ReduceOp::Add, [&](const Expr& i) { return load(e, {i}); });
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, p.returning(val(s)), ctx);
  EXPECT_EQ(body_text(g),
            "  alloc e: f64[::1] (dim(a, 0))\n"
            "  let s: f64 = -0.0\n"
            "  parfor (i in 0 .. dim(a, 0)) reduce(add s) {  # exp at expsum:1 | sum at expsum:2\n"
            "    e[i] = exp(a[i])\n"
            "    s = (s + e[i])\n"
            "  }\n"
            "  return s");
  EXPECT_EQ(notes(ctx), "#1 + #2: fused (moved above: let s: f64 = -0.0)\n");
}

TEST(Fuse, ReductionsOfTheProducerAreKept) {
  ArrayProgram p("keep");
  const Var a = p.input("a");
  const Var t = local("t"), u = local("u"), b = local_array("b");
  const Var i = index("i"), j = index("j");
  p.add_stmt(let(t, f64c(0)));
  p.add_stmt(alloc(b, {p.extent()}));
  p.add_stmt(parfor(i, p.extent(), {store(b, {val(i)}, call(Intrinsic::Sqrt, load(a, {val(i)}))), assign(t, add(val(t), load(a, {val(i)})))},
                    {{t, ReduceOp::Add}}));
  p.add_stmt(let(u, ir::identity_of(ReduceOp::Max, DType::F64)));
  p.add_stmt(parfor(j, p.extent(), {assign(u, bin(BinaryOp::Max, val(u), load(b, {val(j)})))}, {{u, ReduceOp::Max}}));
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, p.returning(add(val(t), val(u))), ctx);
  EXPECT_EQ(regions(g.body), 1);
  EXPECT_CONTAINS(ir::to_string(g), "reduce(add t, max u)");
}

TEST(Fuse, ShiftedReadIsACrossIterationDependence) {
  // b[i] = a[i] for i < n and b[n] = 0, then c[i] = b[i + 1] - b[i]: c's iteration i needs b[i + 1],
  // written by the producer's iteration i + 1.
  const Var a = array_param("a"), b = local_array("b"), c = local_array("c"), i = index("i"), j = index("j");
  const Expr n = dim(a);
  const ir::Function f = function(
      "shifted", {a},
      {alloc(b, {add(n, i64c(1))}), store(b, {n}, f64c(0)), parfor(i, n, {store(b, {val(i)}, load(a, {val(i)}))}),
       alloc(c, {n}), parfor(j, n, {store(c, {val(j)}, sub(load(b, {add(val(j), i64c(1))}), load(b, {val(j)})))})},
      nullptr, c);
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(regions(g.body), 2);
  EXPECT_EQ(notes(ctx), "#1 + #2: refused: cross-iteration dependence: #2 reads b[(i + 1)] but #1 writes b[i]\n");
  ASSERT_EQ(ctx.parfors.after.size(), 2u);
}

TEST(Fuse, UseOfTheProducersReductionResultRefuses) {
  // a / max(a): the divide needs the finished max (Numba bug #9139 fused them).
  ArrayProgram p("normmax");
  const Var a = p.input("a");
  const Var m = p.reduce("m", "max", ReduceOp::Max, [&](const Expr& i) { return load(a, {i}); });
  const Var out = p.map("out", "divide", [&](const Expr& i) { return div(load(a, {i}), val(m)); });
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, p.returning(out), ctx);
  EXPECT_EQ(regions(g.body), 2);
  EXPECT_EQ(notes(ctx),
            "#1 + #2: refused: #2 uses m, the max reduction of #1, which is known only after all of #1 has run "
            "(as in a / max(a); Numba bug #9139)\n");
}

TEST(Fuse, MismatchedSpacesRefuse) {
  const Var a = array_param("a"), b = local_array("b"), c = local_array("c"), i = index("i"), j = index("j");
  const Expr n = dim(a), m = bin(BinaryOp::Max, sub(dim(a), i64c(1)), i64c(0));
  const ir::Function f = function("spaces", {a},
                                  {alloc(b, {n}), parfor(i, n, {store(b, {val(i)}, load(a, {val(i)}))}), alloc(c, {m}),
                                   parfor(j, m, {store(c, {val(j)}, load(b, {val(j)}))})},
                                  nullptr, c);
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(regions(g.body), 2);
  EXPECT_EQ(notes(ctx), "#1 + #2: refused: different index spaces (i in 0 .. dim(a, 0)) and (j in 0 .. max((dim(a, 0) - 1), 0))\n");
}

TEST(Fuse, StoreToAnArrayTheProducerReadsElsewhereRefuses) {
  // b = x[i + 1] * 2, then x[i] = b[i]: an in-place update of an input the producer reads shifted.
  const Var x = array_param("x"), b = local_array("b"), i = index("i"), j = index("j");
  const Expr m = sub(dim(x), i64c(1));
  const ir::Function f = function("inplace", {x},
                                  {alloc(b, {dim(x)}), parfor(i, m, {store(b, {val(i)}, mul(load(x, {add(val(i), i64c(1))}), f64c(2)))}),
                                   parfor(j, m, {store(x, {val(j)}, load(b, {val(j)}))})});
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(regions(g.body), 2);
  EXPECT_EQ(notes(ctx), "#1 + #2: refused: #2 stores to x[i], which #1 reads as x[(i + 1)]: another iteration of #1 "
                        "could see the new value\n");
}

TEST(Fuse, StoreToAnInputAtTheSameIndexFuses) {
  // b = x * 2; x[:] = b + 1: every element is read, then written, by the same iteration.
  const Var x = array_param("x"), b = local_array("b"), i = index("i"), j = index("j");
  const ir::Function f = function("inplace_same", {x},
                                  {alloc(b, {dim(x)}), parfor(i, dim(x), {store(b, {val(i)}, mul(load(x, {val(i)}), f64c(2)))}),
                                   parfor(j, dim(x), {store(x, {val(j)}, add(load(b, {val(j)}), f64c(1)))})});
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(regions(g.body), 1);
  EXPECT_EQ(notes(ctx), "#1 + #2: fused\n");
}

TEST(Fuse, ParametersAreDistinctArrays) {
  // x and y are distinct by the calling convention (the call copies y when it overlaps x: aliasing_test's
  // FusionAcrossParametersKeepsTheDistinctArrayAnswer): a shifted read of y and a store to x fuse.
  const Var x = array_param("x"), y = array_param("y"), b = local_array("b"), i = index("i"), j = index("j");
  const Expr m = sub(dim(x), i64c(1));
  const ir::Function f = function("aliases", {x, y},
                                  {alloc(b, {dim(x)}), parfor(i, m, {store(b, {val(i)}, load(y, {add(val(i), i64c(1))}))}),
                                   parfor(j, m, {store(x, {val(j)}, load(b, {val(j)}))})});
  PassContext ctx;
  apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(notes(ctx), "#1 + #2: fused\n");
  // A binding may name either array a swap bound it to: still refused.
  const Var z = ir::make_var("z", x->type, ir::VarKind::Binding);
  const ir::Function g = function(
      "bound", {x, y},
      {ir::make_bind(z, y, true), alloc(b, {dim(x)}), parfor(i, m, {store(b, {val(i)}, load(z, {add(val(i), i64c(1))}))}),
       parfor(j, m, {store(x, {val(j)}, load(b, {val(j)}))})});
  PassContext ctx2;
  apply(passes::fuse_parfors, g, ctx2);
  EXPECT_EQ(notes(ctx2), "#1 + #2: refused: #2 stores to x[i], which #1 reads as z[(i + 1)] (x may be the same array "
                         "as z): another iteration of #1 could see the new value\n");
}

TEST(Fuse, ProducerReadingTheConsumersReductionVariableRefuses) {
  const Var a = array_param("a"), b = local_array("b"), s = local("s"), i = index("i"), j = index("j");
  const ir::Function f = function(
      "readsacc", {a},
      {let(s, f64c(1)), alloc(b, {dim(a)}), parfor(i, dim(a), {store(b, {val(i)}, mul(load(a, {val(i)}), val(s)))}),
       parfor(j, dim(a), {assign(s, add(val(s), load(b, {val(j)})))}, {{s, ReduceOp::Add}})},
      val(s));
  PassContext ctx;
  apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(notes(ctx), "#1 + #2: refused: #1 reads s, which #2 reduces into\n");
}

TEST(Fuse, ArrayReductionResultIsNotFused) {
  // hist[k] += 1 over a, then out[i] = hist[i]: the histogram is complete only after the first loop.
  const Var a = array_param("a"), hist = array_param("hist"), out = array_param("out"), i = index("i"), j = index("j");
  const Expr k = bin(BinaryOp::Min, ir::make_cast(DType::I64, mul(call(Intrinsic::Abs, load(a, {val(i)})), f64c(2))), sub(dim(a), i64c(1)));  // hist has as many bins as a has elements
  Stmt hp = ir::make_parfor({i}, {i64c(0)}, {dim(a)}, block({store(hist, {k}, add(load(hist, {k}), f64c(1)))}), {},
                            {{hist, ReduceOp::Add}}, "histogram");
  const ir::Function f = function("histo", {a, hist, out},
                                  {hp, parfor(j, bin(BinaryOp::Min, dim(a), i64c(3)), {store(out, {val(j)}, load(hist, {val(j)}))})});
  PassContext ctx;
  apply(passes::fuse_parfors, f, ctx);
  EXPECT_CONTAINS(notes(ctx), "refused: different index spaces");
  // With equal spaces the reason is the array reduction.
  const ir::Function f2 = function("histo2", {a, hist, out}, {hp, parfor(j, dim(a), {store(out, {val(j)}, load(hist, {i64c(0)}))})});
  PassContext ctx2;
  apply(passes::fuse_parfors, f2, ctx2);
  EXPECT_EQ(notes(ctx2), "#1 + #2: refused: #2 uses hist, an array reduction of #1, complete only after #1\n");
}

TEST(Fuse, OneElementShouldBeWrittenPerIteration) {
  const Var a = array_param("a"), b = local_array("b"), c = local_array("c"), i = index("i"), j = index("j");
  const ir::Function f = function("scratch", {a},
                                  {alloc(b, {i64c(1)}), alloc(c, {dim(a)}), store(b, {i64c(0)}, f64c(0)),
                                   parfor(i, dim(a), {store(b, {i64c(0)}, load(a, {val(i)}))}),
                                   parfor(j, dim(a), {store(c, {val(j)}, load(b, {i64c(0)}))})},
                                  nullptr, c);
  PassContext ctx;
  apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(notes(ctx), "#1 + #2: refused: #1 and #2 access b[0], which is not one element per iteration\n");
}

TEST(Fuse, StatementsBetweenMoveAboveOrBelow) {
  // Between the parfors: an allocation (moves above), a store reading the producer's output that the
  // consumer does not need (moves below), and a let the consumer needs that does not read b (above).
  const Var a = array_param("a"), out = array_param("out"), b = local_array("b"), c = local_array("c"), k = local("k");
  const Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "moves", {a, out},
      {alloc(b, {dim(a)}), parfor(i, dim(a), {store(b, {val(i)}, mul(load(a, {val(i)}), f64c(3)))}),
       ir::make_if(bin(BinaryOp::Gt, dim(a), i64c(0)), block({store(out, {i64c(0)}, load(b, {i64c(0)}))})),
       alloc(c, {dim(a)}), let(k, f64c(0.5)), parfor(j, dim(a), {store(c, {val(j)}, mul(load(b, {val(j)}), val(k)))})},
      nullptr, c);
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(body_text(g),
            "  alloc b: f64[::1] (dim(a, 0))\n"
            "  alloc c: f64[::1] (dim(a, 0))\n"
            "  let k: f64 = 0.5\n"
            "  parfor (i in 0 .. dim(a, 0)) {  # test\n"
            "    b[i] = (a[i] * 3.0)\n"
            "    c[i] = (b[i] * k)\n"
            "  }\n"
            "  if (dim(a, 0) > 0) {\n"
            "    out[0] = b[0]\n"
            "  }\n"
            "  return c");
  EXPECT_EQ(notes(ctx), "#1 + #2: fused (moved below: if (dim(a, 0) > 0); moved above: alloc c: f64[::1] (dim(a, 0)); "
                        "moved above: let k: f64 = 0.5)\n");
}

TEST(Fuse, AStatementBetweenThatBothDependOnRefuses) {
  const Var a = array_param("a"), b = local_array("b"), c = local_array("c"), first = local("first");
  const Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "between", {a},
      {alloc(b, {add(dim(a), i64c(1))}), store(b, {dim(a)}, f64c(1)),
       parfor(i, dim(a), {store(b, {val(i)}, load(a, {val(i)}))}), let(first, load(b, {dim(a)})), alloc(c, {dim(a)}),
       parfor(j, dim(a), {store(c, {val(j)}, mul(load(b, {val(j)}), val(first)))})},
      nullptr, c);
  PassContext ctx;
  apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(notes(ctx), "#1 + #2: refused: `let first: f64 = b[dim(a, 0)]` between them depends on #1 and #2 depends on it\n");
}

TEST(Fuse, AChecksStaysBeforeTheCodeItGuards) {
  // The check reads what the first parfor writes, so it cannot move above it; it must not move below the
  // second either, whose loads it may be keeping in bounds.
  const Var a = array_param("a"), b = local_array("b"), c = local_array("c"), i = index("i"), j = index("j");
  const ir::Function f = function(
      "guarded", {a},
      {alloc(b, {dim(a)}), parfor(i, dim(a), {store(b, {val(i)}, load(a, {val(i)}))}),
       ir::make_if(bin(BinaryOp::Gt, dim(a), i64c(0)),
                   block({ir::make_check(bin(BinaryOp::Lt, load(b, {i64c(0)}), f64c(10)), kValueError, "too large")})),
       alloc(c, {dim(a)}), parfor(j, dim(a), {store(c, {val(j)}, mul(load(b, {val(j)}), f64c(2)))})},
      nullptr, c);
  PassContext ctx;
  apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(notes(ctx), "#1 + #2: refused: `if (dim(a, 0) > 0)` between them depends on #1 and is a check, which #2 "
                        "must not run before\n");
}

TEST(Fuse, ChainsOfParforsAndNestedBlocks) {
  // Three same-index maps inside a sequential loop fuse into one parfor per iteration.
  const Var a = array_param("a"), out = array_param("out"), acc = local("acc");
  const Var r = index("r");
  std::vector<Stmt> body;
  Var prev = a;
  for (const char* name : {"t0", "t1", "t2"}) {
    const Var t = local_array(name), i = index("i");
    body.push_back(alloc(t, {dim(a)}));
    body.push_back(parfor(i, dim(a), {store(t, {val(i)}, add(load(prev, {val(i)}), ir::make_cast(DType::F64, val(r))))}));
    prev = t;
  }
  const Var i = index("i");
  body.push_back(parfor(i, dim(a), {store(out, {val(i)}, load(prev, {val(i)}))}));
  const ir::Function f = function("chain", {a, out}, {let(acc, f64c(0)), for_loop(r, i64c(0), i64c(2), body)}, val(acc));
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(regions(g.body), 1);
  EXPECT_EQ(notes(ctx), "#1 + #2: fused (moved above: alloc t1: f64[::1] (dim(a, 0)))\n"
                        "#1+#2 + #3: fused (moved above: alloc t2: f64[::1] (dim(a, 0)))\n"
                        "#1+#2+#3 + #4: fused\n");
}

TEST(Fuse, TwoDimensionalSpaces) {
  const Var a = array_param("a", 2), b = local_array("b", 2), s = local("s");
  const Var i = index("i"), j = index("j"), k = index("k"), l = index("l");
  const ir::Function f = function(
      "two_d", {a},
      {alloc(b, {dim(a, 0), dim(a, 1)}),
       ir::make_parfor({i, j}, {i64c(0), i64c(0)}, {dim(a, 0), dim(a, 1)},
                       block({store(b, {val(i), val(j)}, mul(load(a, {val(i), val(j)}), load(a, {val(i), val(j)})))}), {}, "square"),
       let(s, f64c(0)),
       ir::make_parfor({k, l}, {i64c(0), i64c(0)}, {dim(a, 0), dim(a, 1)}, block({assign(s, add(val(s), load(b, {val(k), val(l)})))}),
                       {{s, ReduceOp::Add}}, "sum")},
      val(s));
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(regions(g.body), 1);
  // Transposed access is not the same element in the same iteration.
  const ir::Function t = function(
      "transposed", {a},
      {alloc(b, {dim(a, 0), dim(a, 1)}),
       ir::make_parfor({i, j}, {i64c(0), i64c(0)}, {dim(a, 0), dim(a, 0)},
                       block({store(b, {val(i), val(j)}, load(a, {val(i), val(j)}))}), {}, "copy"),
       let(s, f64c(0)),
       ir::make_parfor({k, l}, {i64c(0), i64c(0)}, {dim(a, 0), dim(a, 0)}, block({assign(s, add(val(s), load(b, {val(l), val(k)})))}),
                       {{s, ReduceOp::Add}}, "sum")},
      val(s));
  PassContext ctx2;
  passes::fuse_parfors(t, ctx2);
  EXPECT_CONTAINS(notes(ctx2), "refused: cross-iteration dependence: #2 reads b[j, i] but #1 writes b[i, j]");
}

/// A parfor over the rows of `a` storing each row's maximum into m[i] (a nested max reduction), then
/// out = a - m over (rows, columns) with m read as `m_at(i)`, as lower_array_ops produces for
/// `a - max(a, axis=1, keepdims)`; `with_sum` adds a scalar sum over the 2-d space to the second parfor.
ir::Function row_statistic_then_map(const std::function<Expr(const Expr&)>& m_at, bool with_sum = false) {
  const Var a = array_param("a", 2), m = local_array("m"), out = local_array("out", 2), acc = local("acc"), s = local("s");
  const Var i = index("i"), k = index("k"), i2 = index("i2"), j = index("j");
  const Stmt row_max = ir::make_parfor(
      {i}, {i64c(0)}, {dim(a, 0)},
      block({let(acc, ir::identity_of(ReduceOp::Max, DType::F64)),
             ir::make_parfor({k}, {i64c(0)}, {dim(a, 1)},
                             block({assign(acc, bin(BinaryOp::Max, val(acc), load(a, {val(i), val(k)})))}),
                             {{acc, ReduceOp::Max}}, "rowmax"),
             store(m, {val(i)}, val(acc))}),
      {}, "rowmax");
  std::vector<Stmt> map_body{store(out, {val(i2), val(j)}, sub(load(a, {val(i2), val(j)}), load(m, {m_at(val(i2))})))};
  std::vector<ir::Reduction> reds;
  if (with_sum) {
    map_body.push_back(assign(s, add(val(s), load(a, {val(i2), val(j)}))));
    reds.push_back({s, ReduceOp::Add});
  }
  const Stmt map = ir::make_parfor({i2, j}, {i64c(0), i64c(0)}, {dim(a, 0), dim(a, 1)}, block(std::move(map_body)),
                                   std::move(reds), "subtract");
  return function("rowstat", {a},
                  {let(s, f64c(0)), alloc(m, {dim(a, 0)}), row_max, alloc(out, {dim(a, 0), dim(a, 1)}), map,
                   store(out, {i64c(0), i64c(0)}, add(load(out, {i64c(0), i64c(0)}), val(s)))},
                  nullptr, out);
}

TEST(Fuse, TheRowsOfTwoAxisReductionsShareOnePass) {
  // min(a, 1) and max(a, 1): once their parfors over rows fuse, the two loops over a row meet in one body
  // and fuse too, so each row is read once for both reductions.
  const Var a = array_param("a", 2), lo = array_param("lo"), hi = array_param("hi");
  const Var mn = local("mn"), mx = local("mx"), i = index("i"), j = index("j"), i2 = index("i2"), j2 = index("j2");
  auto row = [&](const Var& r, const Var& c, const Var& acc, ReduceOp op, BinaryOp fn, double init, const Var& out) {
    return parfor(r, dim(a, 0),
                  {let(acc, f64c(init)),
                   parfor(c, dim(a, 1), {assign(acc, bin(fn, val(acc), load(a, {val(r), val(c)})))}, {{acc, op}}),
                   store(out, {val(r)}, val(acc))});
  };
  const double inf = std::numeric_limits<double>::infinity();
  const ir::Function f = function("minmax", {a, lo, hi},
                                  {row(i, j, mn, ReduceOp::Min, BinaryOp::Min, inf, lo),
                                   row(i2, j2, mx, ReduceOp::Max, BinaryOp::Max, -inf, hi)});
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_EQ(body_text(g),
            "  parfor (i in 0 .. dim(a, 0)) {  # test\n"
            "    let mn: f64 = inf\n"
            "    let mx: f64 = -inf\n"
            "    parfor (j in 0 .. dim(a, 1)) reduce(min mn, max mx) {  # test\n"
            "      mn = min(mn, a[i, j])\n"
            "      mx = max(mx, a[i, j])\n"
            "    }\n"
            "    lo[i] = mn\n"
            "    hi[i] = mx\n"
            "  }");
  EXPECT_EQ(notes(ctx), "#2 + #4: fused (moved below: lo[i] = mn; moved above: let mx: f64 = -inf)\n#1 + #3: fused\n");
}

TEST(Fuse, RowStatisticsFuseWithTheRowsOfATwoDimensionalParfor) {
  // Prefix fusion: the (i2, j) parfor becomes rows (i2) of columns (j) and fuses with the (i) parfor, so m[i]
  // is used in the iteration that computes it, and then is a scalar.
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, row_statistic_then_map([](const Expr& i) { return i; }), ctx);
  EXPECT_EQ(regions(g.body), 1) << ir::to_string(g);
  EXPECT_EQ(body_text(g),
            "  let s: f64 = 0.0\n"
            "  alloc m: f64[::1] (dim(a, 0))\n"
            "  alloc out: f64[:, ::1] (dim(a, 0), dim(a, 1))\n"
            "  parfor (i in 0 .. dim(a, 0)) {  # rowmax | subtract\n"
            "    let acc: f64 = -inf\n"
            "    parfor (k in 0 .. dim(a, 1)) reduce(max acc) {  # rowmax\n"
            "      acc = max(acc, a[i, k])\n"
            "    }\n"
            "    m[i] = acc\n"
            "    parfor (j in 0 .. dim(a, 1)) {  # subtract\n"
            "      out[i, j] = (a[i, j] - m[i])\n"
            "    }\n"
            "  }\n"
            "  out[0, 0] = (out[0, 0] + s)\n"
            "  return out");
  // The row's two loops meet in the fused body; the subtraction needs the finished maximum.
  EXPECT_EQ(notes(ctx), "#2 + #3: refused: `m[i] = acc` between them depends on #2 and #3 depends on it\n"
                        "#1 + #3: fused (moved above: alloc out: f64[:, ::1] (dim(a, 0), dim(a, 1)))\n");
  PassContext tctx;
  const ir::Function h = apply(passes::eliminate_temporaries, g, tctx);
  EXPECT_EQ(allocations(h), 1) << ir::to_string(h);
  EXPECT_CONTAINS(notes(tctx), "removed m: a temporary of rowmax | subtract written and read at one index per iteration");
}

TEST(Fuse, ARowsArrayReductionSharesItsPassWithTheRowsDotProduct) {
  // bicg: q[i] = a[i, :] . p, then s[j] += r[i] a[i, j] over (i, j) as an array reduction. Prefix fusion makes
  // the (i, j) space rows of an inner loop over j; each of its iterations updates an element of its own (s[j]),
  // so the inner loop stays a parfor and fuses with the dot product's loop over the same row: one pass over
  // each row of a for both products.
  const Var a = array_param("a", 2), r = array_param("r"), p = array_param("p", 2), q = array_param("q"),
            s = array_param("s", 2), bins = array_param("bins", 2);
  const Var i = index("i"), k = index("k"), i2 = index("i2"), j = index("j");
  const Var acc = local("acc");
  auto program = [&](const Expr& element) {
    Stmt dot = ir::make_parfor({k}, {i64c(0)}, {dim(a, 1)}, block({assign(acc, add(val(acc), mul(load(a, {val(i), val(k)}), load(p, {i64c(0), val(k)}))))}),
                               {ir::Reduction{acc, ReduceOp::Add}}, {}, "dot");
    Stmt rows = parfor(i, dim(a), {let(acc, f64c(0)), dot, store(q, {val(i)}, val(acc))}, {}, "rows");
    // Row 0 of p and s (their default test shape is (n, 3), like a's).
    Stmt update = store(s, {i64c(0), element}, add(load(s, {i64c(0), element}), mul(load(r, {val(i2)}), load(a, {val(i2), val(j)}))));
    Stmt columns = ir::make_parfor({i2, j}, {i64c(0), i64c(0)}, {dim(a), dim(a, 1)}, block({update}), {},
                                   {{s, ReduceOp::Add}}, "columns");
    return function("bicg", {a, r, p, q, s, bins}, {rows, columns});
  };
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, program(val(j)), ctx);
  EXPECT_EQ(regions(g.body), 1) << ir::to_string(g);
  EXPECT_CONTAINS(body_text(g),
                  "    parfor (k in 0 .. dim(a, 1)) reduce(add acc) {  # dot | columns\n"
                  "      acc = (acc + (a[i, k] * p[0, k]))\n"
                  "      s[0, k] = (s[0, k] + (r[i] * a[i, k]))\n"
                  "    }\n");
  EXPECT_CONTAINS(notes(ctx), "#2 + #3: fused");
  // s[0, bins(i2, j)]: two iterations of a row may update one element, so the row is a sequential loop.
  PassContext ctx2;
  const ir::Function h = apply(passes::fuse_parfors, program(bin(BinaryOp::Min, ir::make_cast(DType::I64, mul(call(Intrinsic::Abs, load(bins, {val(i2), val(j)})), f64c(2))), i64c(2))), ctx2);
  EXPECT_CONTAINS(body_text(h), "    for j in 0 .. dim(a, 1) {\n");
  // s[0, j] and s[0, j + 1]: each picks one element per iteration, but together they reach s[0, j + 1] from
  // iterations j and j + 1.
  const Expr next = bin(BinaryOp::Min, add(val(j), i64c(1)), i64c(2));
  const ir::Function twice = function(
      "twice", {a, r, p, q, s, bins},
      {ir::make_parfor({i}, {i64c(0)}, {dim(a)}, block({store(q, {val(i)}, load(a, {val(i), i64c(0)}))}), {}, {}, "rows"),
       ir::make_parfor({i2, j}, {i64c(0), i64c(0)}, {dim(a), dim(a, 1)},
                       block({store(s, {i64c(0), val(j)}, add(load(s, {i64c(0), val(j)}), load(a, {val(i2), val(j)}))),
                              store(s, {i64c(0), next}, add(load(s, {i64c(0), next}), load(r, {val(i2)})))}),
                       {}, {{s, ReduceOp::Add}}, "columns")});
  PassContext ctx3;
  const ir::Function t = apply(passes::fuse_parfors, twice, ctx3);
  EXPECT_CONTAINS(body_text(t), "    for j in 0 .. dim(a, 1) {\n");
}

TEST(Fuse, RowStatisticsReadAtAnotherRowOrUnderAReductionStaySeparate) {
  {
    // out[i2, j] = a[i2, j] - m[0]: row 0's maximum is needed by every row.
    PassContext ctx;
    const ir::Function g = apply(passes::fuse_parfors, row_statistic_then_map([](const Expr&) { return i64c(0); }), ctx);
    EXPECT_EQ(regions(g.body), 2);
    EXPECT_EQ(notes(ctx), "#1 + #3: refused: cross-iteration dependence: #3 reads m[0] but #1 writes m[i]\n");
  }
  {
    // A scalar reduction over the whole 2-d space is not split into rows.
    PassContext ctx;
    const ir::Function g =
        apply(passes::fuse_parfors, row_statistic_then_map([](const Expr& i) { return i; }, true), ctx);
    EXPECT_EQ(regions(g.body), 2);
    EXPECT_CONTAINS(notes(ctx), "#1 + #3: refused: different index spaces (i in 0 .. dim(a, 0)) and (i2 in 0 .. dim(a, 0), j in 0 .. dim(a, 1))");
  }
}

TEST(Fuse, AProducerMovesIntoTheBranchesOfAScheduleChoice) {
  // t = 2a, then `if (n > 3) { out = t + 1 } else { out = t - 1; out[0] = t[0] }`: t's parfor runs inside
  // each branch, fused with the branch's parfor, and t becomes a scalar there.
  const Var a = array_param("a"), out = array_param("out"), t = local_array("t");
  const Var i = index("i"), j = index("j"), k = index("k");
  const Stmt branches = ir::make_if(
      bin(BinaryOp::Gt, dim(a), i64c(3)),
      block({parfor(j, dim(a), {store(out, {val(j)}, add(load(t, {val(j)}), f64c(1)))}, {}, "plus")}),
      block({parfor(k, dim(a), {store(out, {val(k)}, sub(load(t, {val(k)}), f64c(1)))}, {}, "minus")}));
  const ir::Function f = function("branches", {a, out},
                                  {alloc(t, {dim(a)}), parfor(i, dim(a), {store(t, {val(i)}, mul(load(a, {val(i)}), f64c(2)))}, {}, "double"),
                                   branches});
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_TRUE(ir::verify(g).empty()) << joined(ir::verify(g));
  EXPECT_EQ(regions(g.body), 2);  // one per branch; one of them runs
  EXPECT_CONTAINS(notes(ctx), "#1: moved into both branches of `if (dim(a, 0) > 3)` (it fuses in the first)");
  EXPECT_EQ(body_text(g),
            "  alloc t: f64[::1] (dim(a, 0))\n"
            "  if (dim(a, 0) > 3) {\n"
            "    parfor (i in 0 .. dim(a, 0)) {  # double | plus\n"
            "      t[i] = (a[i] * 2.0)\n"
            "      out[i] = (t[i] + 1.0)\n"
            "    }\n"
            "  } else {\n"
            "    parfor (i.1 in 0 .. dim(a, 0)) {  # double | minus\n"
            "      t[i.1] = (a[i.1] * 2.0)\n"
            "      out[i.1] = (t[i.1] - 1.0)\n"
            "    }\n"
            "  }");
  PassContext tctx;
  const ir::Function h = apply(passes::eliminate_temporaries, g, tctx);
  EXPECT_EQ(allocations(h), 0) << ir::to_string(h);
  EXPECT_CONTAINS(notes(tctx), "removed t in a branch of `if (dim(a, 0) > 3)`");
}

TEST(Fuse, AParforAfterAScheduleChoiceMovesIntoItsBranches) {
  // `if (n > 3) { s = a + 1 } else { s = a - 1 }; q = 2a` (bicg's A p after the schedule choice of r^T A): q's
  // parfor, with the allocation before it, commutes with the if, so it moves into both branches and fuses with
  // the branches' parfors, reading a once. Not when it reads what the if writes.
  const Var a = array_param("a"), s = array_param("s"), q = local_array("q"), r = array_param("r");
  const Var i = index("i"), j = index("j"), k = index("k"), m = index("m");
  auto program = [&](const Var& read) {
    const Stmt branches = ir::make_if(
        bin(BinaryOp::Gt, dim(a), i64c(3)),
        block({parfor(j, dim(a), {store(s, {val(j)}, add(load(a, {val(j)}), f64c(1)))}, {}, "plus")}),
        block({parfor(k, dim(a), {store(s, {val(k)}, sub(load(a, {val(k)}), f64c(1)))}, {}, "minus")}));
    return function("after", {a, s, r},
                    {branches, alloc(q, {dim(a)}),
                     parfor(i, dim(a), {store(q, {val(i)}, mul(load(read, {val(i)}), f64c(2)))}, {}, "double"),
                     parfor(m, dim(a), {store(r, {val(m)}, load(q, {val(m)}))}, {}, "copy")});
  };
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, program(a), ctx);
  EXPECT_CONTAINS(notes(ctx), "moved into both branches of `if (dim(a, 0) > 3)` (it fuses in the first)");
  EXPECT_CONTAINS(body_text(g), "  alloc q: f64[::1] (dim(a, 0))\n  if (dim(a, 0) > 3) {\n");
  PassContext ctx2;
  apply(passes::fuse_parfors, program(s), ctx2);
  EXPECT_EQ(notes(ctx2).find("moved into both branches"), std::string::npos) << notes(ctx2);
}

TEST(Fuse, AProducerMovedIntoBranchesIsCopiedWhereItDoesNotFuse) {
  // The else branch has no parfor to fuse with: it gets a copy of the producer with variables of its own
  // (a variable is defined once in a function), and keeps t as an array.
  const Var a = array_param("a"), out = array_param("out"), t = local_array("t");
  const Var i = index("i"), j = index("j");
  const Stmt branches = ir::make_if(bin(BinaryOp::Gt, dim(a), i64c(3)),
                                    block({parfor(j, dim(a), {store(out, {val(j)}, add(load(t, {val(j)}), f64c(1)))}, {}, "plus")}),
                                    block({store(out, {i64c(0)}, load(t, {i64c(0)}))}));
  const ir::Function f = function("copied", {a, out},
                                  {alloc(t, {dim(a)}), parfor(i, dim(a), {store(t, {val(i)}, mul(load(a, {val(i)}), f64c(2)))}, {}, "double"),
                                   branches});
  PassContext ctx;
  const ir::Function g = apply(passes::fuse_parfors, f, ctx);
  EXPECT_TRUE(ir::verify(g).empty()) << joined(ir::verify(g));
  EXPECT_CONTAINS(notes(ctx), "(it fuses in the first)");
  const std::string text = body_text(g);
  EXPECT_CONTAINS(text, "  } else {\n    parfor (i.1 in 0 .. dim(a, 0)) {  # double\n      t[i.1] = (a[i.1] * 2.0)\n    }\n"
                        "    out[0] = t[0]\n  }");
  // Where the condition depends on the producer nothing moves.
  const Stmt on_t = ir::make_if(bin(BinaryOp::Gt, load(t, {i64c(0)}), f64c(0)),
                                block({parfor(j, dim(a), {store(out, {val(j)}, load(t, {val(j)}))}, {}, "copy")}));
  const ir::Function f2 = function("cond_on_t", {a, out},
                                   {alloc(t, {dim(a)}), parfor(i, dim(a), {store(t, {val(i)}, load(a, {val(i)}))}, {}, "fill"), on_t});
  PassContext ctx2;
  const ir::Function g2 = apply(passes::fuse_parfors, f2, ctx2);
  EXPECT_EQ(body_text(g2).find("if ((t[0] > 0.0))"), std::string::npos);
  EXPECT_EQ(notes(ctx2).find("moved into both branches"), std::string::npos) << notes(ctx2);
}

// =========================================================================================================
// eliminate_temporaries and reuse_buffers
// =========================================================================================================

TEST(Temporaries, FusedIntermediateBecomesAScalar) {
  ArrayProgram p("temps");
  const Var a = p.input("a");
  const Var b = p.map("b", "exp", [&](const Expr& i) { return call(Intrinsic::Exp, load(a, {i})); });
  const Var c = p.map("c", "add", [&](const Expr& i) { return add(load(b, {i}), load(b, {i})); });
  const ir::Function fused = apply(passes::fuse_parfors, p.returning(c));
  PassContext ctx;
  const ir::Function g = apply(passes::eliminate_temporaries, fused, ctx);
  EXPECT_EQ(body_text(g),
            "  alloc c: f64[::1] (dim(a, 0))\n"
            "  parfor (i in 0 .. dim(a, 0)) {  # exp at temps:1 | add at temps:2\n"
            "    let b: f64 = exp(a[i])\n"
            "    c[i] = (b + b)\n"
            "  }\n"
            "  return c");
  EXPECT_EQ(notes(ctx), "removed b: a temporary of exp at temps:1 | add at temps:2 written and read at one index per "
                        "iteration, now a scalar\n");
  EXPECT_EQ(allocations(g), 1);
}

TEST(Temporaries, CheapPointwiseValuesAreRecomputedWhereRead) {
  // b = a * 2 is stored in the loop that sums a (fusion put it there) and read by a loop that needs the sum:
  // the reader computes a[j] * 2 itself, and the store and the allocation go.
  const Var a = array_param("a"), out = array_param("out"), c = array_param("c"), b = local_array("b");
  const Var s = local("s"), m = local("m"), t = local("t"), i = index("i"), j = index("j"), k = index("k");
  auto program = [&](Stmt between, Expr value, bool second_reader) {
    std::vector<Stmt> body = {alloc(b, {dim(a)}), let(s, f64c(0)),
                              parfor(i, dim(a), {assign(s, add(val(s), load(a, {val(i)}))), store(b, {val(i)}, value)},
                                     {{s, ReduceOp::Add}}),
                              let(m, val(s))};
    if (between) body.push_back(between);
    body.push_back(parfor(j, dim(a), {store(out, {val(j)}, add(load(b, {val(j)}), val(m)))}));
    if (second_reader) body.push_back(parfor(k, dim(a), {store(c, {val(k)}, load(b, {val(k)}))}));
    return function("recompute", {a, out, c}, body);
  };
  PassContext ctx;
  const ir::Function g = apply(passes::recompute_temporaries, program(nullptr, mul(load(a, {val(i)}), f64c(2)), false), ctx);
  EXPECT_EQ(body_text(g),
            "  let s: f64 = 0.0\n"
            "  parfor (i in 0 .. dim(a, 0)) reduce(add s) {  # test\n"
            "    s = (s + a[i])\n"
            "  }\n"
            "  let m: f64 = s\n"
            "  parfor (j in 0 .. dim(a, 0)) {  # test\n"
            "    out[j] = ((a[j] * 2.0) + m)\n"
            "  }");
  EXPECT_EQ(notes(ctx), "recomputed b = (a[i] * 2.0) where test read it instead of storing it in test: loads no more "
                        "elements than writing and reading the temporary\n");
  // Not when a reads what the value reads changes in between, when recomputing would load more than the
  // temporary (two loads for each of two readers), or when the value reads a variable of the producer's body.
  auto kept = [&](const ir::Function& f) {
    PassContext c2;
    apply(passes::recompute_temporaries, f, c2);
    return c2.notes.empty();
  };
  EXPECT_TRUE(kept(program(parfor(k, dim(a), {store(a, {val(k)}, f64c(0))}), mul(load(a, {val(i)}), f64c(2)), false)));
  EXPECT_TRUE(kept(program(nullptr, add(load(a, {val(i)}), load(c, {val(i)})), true)));
  EXPECT_FALSE(kept(program(nullptr, add(load(a, {val(i)}), load(c, {val(i)})), false)));  // 2 loads, 1 reader
  const ir::Function inner = function(
      "inner", {a, out},
      {alloc(b, {dim(a)}), parfor(i, dim(a), {let(t, load(a, {val(i)})), store(b, {val(i)}, mul(val(t), val(t)))}),
       parfor(j, dim(a), {store(out, {val(j)}, load(b, {val(j)}))})});
  EXPECT_TRUE(kept(inner));
  // Nor when the producer does not write every element (its space is not the array's shape).
  const ir::Function part = function(
      "part", {a, out},
      {alloc(b, {dim(a)}), parfor(i, sub(dim(a), i64c(1)), {store(b, {val(i)}, load(a, {val(i)}))}),
       parfor(j, sub(dim(a), i64c(1)), {store(out, {val(j)}, load(b, {val(j)}))})});
  EXPECT_TRUE(kept(part));
  // The producer may write what the value reads when the value sees the element its own iteration wrote
  // (heat-3d's 2 * b of the next sweep, fused into the sweep writing b): b[i + 1] stored, then read, at one
  // subscript. Not when it reads another element of b, which another iteration writes.
  auto settled = [&](Expr read_at) {
    const Var bb = array_param("bb");
    return function("settled", {a, out, bb},
                    {alloc(b, {dim(a)}),
                     parfor(i, dim(a), {store(bb, {add(val(i), i64c(1))}, load(a, {val(i)})),
                                        store(b, {val(i)}, mul(load(bb, {read_at}), f64c(2)))}),
                     parfor(j, dim(a), {store(out, {val(j)}, load(b, {val(j)}))})});
  };
  EXPECT_FALSE(kept(settled(add(val(i), i64c(1)))));
  EXPECT_TRUE(kept(settled(val(i))));
  // A reader may load the temporary anywhere, here row by row in a loop nested in its parfor over rows.
  const Var mat = array_param("mat", 2), c2 = local_array("c2", 2), r = array_param("r");
  const Var acc = local("acc"), q = index("q");
  const ir::Function rows = function(
      "rows", {mat, r},
      {alloc(c2, {dim(mat, 0), dim(mat, 1)}),
       ir::make_parfor({i, j}, {i64c(0), i64c(0)}, {dim(mat, 0), dim(mat, 1)},
                       store(c2, {val(i), val(j)}, mul(load(mat, {val(i), val(j)}), f64c(2))), {}, {}, "test"),
       parfor(k, dim(mat, 0), {let(acc, f64c(0)), for_loop(q, i64c(0), dim(mat, 1), {assign(acc, add(val(acc), load(c2, {val(k), val(q)})))}),
                               store(r, {val(k)}, val(acc))})});
  PassContext c3;
  const ir::Function g3 = apply(passes::recompute_temporaries, rows, c3);
  EXPECT_CONTAINS(body_text(g3), "acc = (acc + (mat[k, q] * 2.0))");
  EXPECT_EQ(allocations(g3), 0);
}

TEST(Temporaries, KeptWhenReadElsewhereReturnedOrReadBeforeWritten) {
  const Var a = array_param("a"), b = local_array("b"), c = local_array("c"), s = local("s");
  const Var i = index("i"), j = index("j");
  // Read by a second loop.
  const ir::Function twice = function(
      "twice", {a},
      {alloc(b, {dim(a)}), parfor(i, dim(a), {store(b, {val(i)}, load(a, {val(i)}))}), let(s, f64c(0)),
       parfor(j, dim(a), {assign(s, add(val(s), load(b, {val(j)})))}, {{s, ReduceOp::Add}})},
      val(s));
  PassContext c1;
  apply(passes::eliminate_temporaries, twice, c1);
  EXPECT_TRUE(c1.notes.empty()) << notes(c1);
  // Returned.
  const ir::Function returned =
      function("returned", {a}, {alloc(b, {dim(a)}), parfor(i, dim(a), {store(b, {val(i)}, load(a, {val(i)}))})}, nullptr, b);
  PassContext c2;
  apply(passes::eliminate_temporaries, returned, c2);
  EXPECT_TRUE(c2.notes.empty()) << notes(c2);
  // Read before written in an iteration, or at another index.
  const ir::Function early = function(
      "early", {a},
      {alloc(b, {dim(a)}), alloc(c, {dim(a)}),
       parfor(i, dim(a), {store(c, {val(i)}, load(b, {val(i)})), store(b, {val(i)}, load(a, {val(i)}))})}, nullptr, c);
  PassContext c3;
  passes::eliminate_temporaries(early, c3);
  EXPECT_TRUE(c3.notes.empty()) << notes(c3);
  const ir::Function other = function(
      "other", {a},
      {alloc(b, {add(dim(a), i64c(1))}), alloc(c, {dim(a)}),
       parfor(i, dim(a), {store(b, {val(i)}, load(a, {val(i)})), store(c, {val(i)}, load(b, {add(val(i), i64c(1))}))})},
      nullptr, c);
  PassContext c4;
  passes::eliminate_temporaries(other, c4);
  EXPECT_TRUE(c4.notes.empty()) << notes(c4);
}

TEST(Temporaries, DimsBecomeExtentsAndLaterStoresAssign) {
  const Var a = array_param("a"), b = local_array("b"), c = local_array("c"), i = index("i"), k = index("k");
  const ir::Function f = function(
      "dims", {a},
      {alloc(b, {dim(a)}), alloc(c, {dim(a)}),
       parfor(i, dim(a),
              {store(b, {val(i)}, load(a, {val(i)})),
               for_loop(k, i64c(0), i64c(3), {store(b, {val(i)}, mul(load(b, {val(i)}), ir::make_cast(DType::F64, dim(b))))}),
               store(c, {val(i)}, load(b, {val(i)}))})},
      nullptr, c);
  const ir::Function g = apply(passes::eliminate_temporaries, f);
  EXPECT_EQ(body_text(g),
            "  alloc c: f64[::1] (dim(a, 0))\n"
            "  parfor (i in 0 .. dim(a, 0)) {  # test\n"
            "    let b: f64 = a[i]\n"
            "    for k in 0 .. 3 {\n"
            "      b = (b * f64(dim(a, 0)))\n"
            "    }\n"
            "    c[i] = b\n"
            "  }\n"
            "  return c");
}

TEST(ReuseBuffers, OutputReusesADeadTemporaryInPlace) {
  // e = exp(a); out = e / 2: out lives in e's buffer.
  ArrayProgram p("inplace");
  const Var a = p.input("a");
  const Var e = p.map("e", "exp", [&](const Expr& i) { return call(Intrinsic::Exp, load(a, {i})); });
  const Var s = p.reduce("s", "sum", ReduceOp::Add, [&](const Expr& i) { return load(e, {i}); });
  const Var out = p.map("out", "divide", [&](const Expr& i) { return div(load(e, {i}), val(s)); });
  PassContext ctx;
  const ir::Function g = apply(passes::reuse_buffers, p.returning(out), ctx);
  EXPECT_EQ(allocations(g), 1);
  EXPECT_EQ(g.result_array, e);
  EXPECT_CONTAINS(ir::to_string(g), "    e[i.2] = (e[i.2] / s)\n");
  EXPECT_EQ(notes(ctx), "reused the buffer of e for out (in place: divide at inplace:3 reads each element of e before "
                        "writing it to out and never again)\n");
}

TEST(ReuseBuffers, TheResultsBufferIsNeverReused) {
  // out takes e's buffer in place; t, allocated after, is the same shape and e is dead by then, but e's
  // buffer now holds the result.
  const Var a = array_param("a"), e = local_array("e"), out = local_array("out"), t = local_array("t"), s = local("s");
  const Var i = index("i"), j = index("j"), k = index("k"), l = index("l");
  const Expr n = dim(a);
  const ir::Function f = function(
      "result", {a},
      {alloc(e, {n}), parfor(i, n, {store(e, {val(i)}, call(Intrinsic::Exp, load(a, {val(i)})))}), alloc(out, {n}),
       parfor(j, n, {store(out, {val(j)}, mul(load(e, {val(j)}), f64c(2)))}), alloc(t, {n}),
       parfor(k, n, {store(t, {val(k)}, add(load(a, {val(k)}), f64c(1)))}), let(s, f64c(0)),
       parfor(l, n, {assign(s, add(val(s), load(t, {val(l)})))}, {{s, ReduceOp::Add}})},
      nullptr, out);
  PassContext ctx;
  const ir::Function g = apply(passes::reuse_buffers, f, ctx);
  EXPECT_EQ(notes(ctx), "reused the buffer of e for out (in place: test reads each element of e before writing it to out "
                        "and never again)\n");
  EXPECT_EQ(allocations(g), 2);
}

TEST(ReuseBuffers, DeadArrayIsReusedAndLiveOrShiftedOnesAreNot) {
  const Var a = array_param("a"), out = array_param("out"), b = local_array("b"), c = local_array("c"), d = local_array("d");
  const Var i = index("i"), j = index("j"), k = index("k");
  const Expr n = dim(a);
  // b is dead before c is allocated.
  const ir::Function dead = function(
      "dead", {a, out},
      {alloc(b, {n}), parfor(i, n, {store(b, {val(i)}, load(a, {val(i)}))}), parfor(j, n, {store(out, {val(j)}, load(b, {val(j)}))}),
       alloc(c, {n}), parfor(k, n, {store(c, {val(k)}, mul(load(out, {val(k)}), f64c(2)))})},
      nullptr, c);
  PassContext c1;
  const ir::Function g = apply(passes::reuse_buffers, dead, c1);
  EXPECT_EQ(allocations(g), 1);
  EXPECT_EQ(notes(c1), "reused the buffer of b for c (b is dead)\n");
  // b is read again after c's first loop: not dead.
  const ir::Function live = function(
      "live", {a, out},
      {alloc(b, {n}), parfor(i, n, {store(b, {val(i)}, load(a, {val(i)}))}), alloc(c, {n}),
       parfor(j, n, {store(c, {val(j)}, load(b, {val(j)}))}), parfor(k, n, {store(out, {val(k)}, add(load(b, {val(k)}), load(c, {val(k)})))})},
      nullptr, c);
  PassContext c2;
  apply(passes::reuse_buffers, live, c2);
  EXPECT_TRUE(c2.notes.empty()) << notes(c2);
  // c[i] = b[i + 1]: writing c[i] in b's buffer would clobber what iteration i - 1 reads.
  const Expr m = bin(BinaryOp::Max, sub(n, i64c(1)), i64c(0));
  const ir::Function shifted = function(
      "shifted", {a},
      {alloc(b, {m}), parfor(i, m, {store(b, {val(i)}, load(a, {val(i)}))}), alloc(c, {m}),
       parfor(j, sub(m, i64c(1)), {store(c, {val(j)}, load(b, {add(val(j), i64c(1))}))})},
      nullptr, c);
  PassContext c3;
  apply(passes::reuse_buffers, shifted, c3);
  EXPECT_TRUE(c3.notes.empty()) << notes(c3);
  // Different extents or element types are never shared.
  const Var di = ir::make_var("di", ir::Type::array(DType::I64, 1, true), ir::VarKind::Local);
  const ir::Function types = function(
      "types", {a, out},
      {alloc(b, {n}), parfor(i, n, {store(b, {val(i)}, load(a, {val(i)}))}), parfor(j, n, {store(out, {val(j)}, load(b, {val(j)}))}),
       alloc(di, {n}), alloc(d, {add(n, i64c(1))}),
       parfor(k, n, {store(di, {val(k)}, i64c(1)), store(d, {val(k)}, f64c(1))})},
      nullptr, d);
  PassContext c4;
  apply(passes::reuse_buffers, types, c4);
  EXPECT_TRUE(c4.notes.empty()) << notes(c4);
}

// =========================================================================================================
// hoist_invariants, hoist_allocations, collapse_parfors
// =========================================================================================================

TEST(HoistInvariants, LetsAndPureSubexpressions) {
  const Var a = array_param("a"), out = array_param("out"), c = param("c", DType::F64), k = local("k"), t = local("t");
  const Var i = index("i");
  const ir::Function f = function(
      "licm", {a, out, c},
      {parfor(i, dim(a),
              {let(k, mul(val(c), f64c(2))), let(t, add(load(a, {val(i)}), val(k))),
               store(out, {val(i)}, mul(val(t), call(Intrinsic::Exp, add(val(c), f64c(1)))))})});
  PassContext ctx;
  const ir::Function g = apply(passes::hoist_invariants, f, ctx);
  EXPECT_EQ(body_text(g),
            "  let k: f64 = (c * 2.0)\n"
            "  let inv: f64 = exp((c + 1.0))\n"
            "  parfor (i in 0 .. dim(a, 0)) {  # test\n"
            "    let t: f64 = (a[i] + k)\n"
            "    out[i] = (t * inv)\n"
            "  }");
  EXPECT_EQ(notes(ctx), "hoisted `let k = (c * 2.0)` out of test\nhoisted exp((c + 1.0)) out of test\n");
}

TEST(HoistInvariants, LoadsOnlyWhenNothingInTheLoopCanWriteThem) {
  const Var a = array_param("a"), w = array_param("w"), out = array_param("out"), b = local_array("b");
  const Var k = local("k"), i = index("i");
  // w[0] is invariant and out is written, but out may be the array a binding names: not hoisted.
  const Var bw = ir::make_var("bw", w->type, ir::VarKind::Binding);
  const ir::Function aliased = function(
      "aliased", {a, w, out},
      {ir::make_bind(bw, w, true),
       parfor(i, dim(a), {let(k, load(bw, {i64c(0)})), store(out, {val(i)}, mul(load(a, {val(i)}), val(k)))})});
  PassContext c1;
  apply(passes::hoist_invariants, aliased, c1);
  EXPECT_TRUE(c1.notes.empty()) << notes(c1);
  // Parameters are distinct arrays (docs/aliasing.md): w[0] with out written is hoisted.
  const ir::Function params = function(
      "params", {a, w, out}, {parfor(i, dim(a), {let(k, load(w, {i64c(0)})), store(out, {val(i)}, mul(load(a, {val(i)}), val(k)))})});
  PassContext c0;
  apply(passes::hoist_invariants, params, c0);
  EXPECT_EQ(notes(c0), "hoisted `let k = w[0]` out of test (a load, guarded by the loop being non-empty)\n");
  // A load from an array no store can reach is hoisted, guarded by the loop being non-empty (w[0] would be
  // out of range for an empty w).
  const ir::Function local_store = function(
      "local_store", {a, w},
      {alloc(b, {dim(a)}), parfor(i, dim(a), {let(k, load(w, {i64c(0)})), store(b, {val(i)}, mul(load(a, {val(i)}), val(k)))})},
      nullptr, b);
  PassContext c2;
  const ir::Function g = apply(passes::hoist_invariants, local_store, c2);
  EXPECT_CONTAINS(body_text(g), "  let k: f64 = select((0 < dim(a, 0)), w[0], 0.0)\n");
  EXPECT_EQ(notes(c2), "hoisted `let k = w[0]` out of test (a load, guarded by the loop being non-empty)\n");
  // Not past a check, which may be what keeps it in bounds.
  const ir::Function checked = function(
      "checked", {a, w},
      {alloc(b, {dim(a)}),
       parfor(i, dim(a),
              {ir::make_check(bin(BinaryOp::Gt, dim(w), i64c(0)), kIndexOutOfRange, "w is empty"), let(k, load(w, {i64c(0)})),
               store(b, {val(i)}, mul(load(a, {val(i)}), val(k)))})},
      nullptr, b);
  PassContext c3;
  apply(passes::hoist_invariants, checked, c3);
  EXPECT_EQ(notes(c3), "hoisted (dim(w, 0) > 0) out of test\n");  // the check's pure condition does move
}

TEST(HoistInvariants, VariantValuesStayAndValuesRiseThroughNests) {
  const Var a = array_param("a", 2), out = array_param("out", 2), c = param("c", DType::F64), acc = local("acc");
  const Var i = index("i"), j = index("j"), r = index("r");
  const ir::Function f = function(
      "nest", {a, out, c},
      {parfor(i, dim(a, 0),
              {ir::make_parfor({j}, {i64c(0)}, {dim(a, 1)},
                               block({store(out, {val(i), val(j)},
                                            add(mul(load(a, {val(i), val(j)}), call(Intrinsic::Sqrt, val(c))),
                                                ir::make_cast(DType::F64, mul(val(i), i64c(2)))))}),
                               {}, "inner")}),
       let(acc, f64c(0)),
       for_loop(r, i64c(0), i64c(4), {assign(acc, add(val(acc), mul(val(c), f64c(2)))), assign(acc, mul(val(acc), val(acc)))})},
      val(acc));
  PassContext ctx;
  const ir::Function g = apply(passes::hoist_invariants, f, ctx);
  EXPECT_EQ(body_text(g),
            "  let inv: f64 = sqrt(c)\n"
            "  parfor (i in 0 .. dim(a, 0)) {  # test\n"
            "    let inv.1: f64 = f64((i * 2))\n"
            "    parfor (j in 0 .. dim(a, 1)) {  # inner\n"
            "      out[i, j] = ((a[i, j] * inv) + inv.1)\n"
            "    }\n"
            "  }\n"
            "  let acc: f64 = 0.0\n"
            "  let inv.2: f64 = (c * 2.0)\n"
            "  for r in 0 .. 4 {\n"
            "    acc = (acc + inv.2)\n"
            "    acc = (acc * acc)\n"
            "  }\n"
            "  return acc");
}

TEST(HoistInvariants, ArgReductionUpdatesKeepTheirShape) {
  // argmin of a one-element array: every iteration loads a[0], so the update's `isnan(x)` is invariant;
  // hoisting it would leave an update ir/reductions.hpp no longer recognizes. The let x itself may go.
  const Var a = array_param("a"), v = local("v"), k = local("k", DType::I64), x = local("x"), i = index("i");
  const Expr xv = val(x), vv = val(v);
  const Expr cond = bin(BinaryOp::Or,
                        bin(BinaryOp::Or, bin(BinaryOp::Lt, val(k), i64c(0)), bin(BinaryOp::Lt, xv, vv)),
                        bin(BinaryOp::And, ir::make_call(Intrinsic::IsNan, {xv}),
                            ir::make_unary(UnaryOp::Not, ir::make_call(Intrinsic::IsNan, {vv}))));
  const ir::Function f = function(
      "argmin_one", {a},
      {let(v, ir::identity_of(ReduceOp::ArgMin, DType::F64)), let(k, i64c(-1)),
       parfor(i, dim(a), {let(x, load(a, {i64c(0)})), ir::make_if(cond, block({assign(v, xv), assign(k, val(i))}))},
              {{v, ReduceOp::ArgMin, k}})},
      val(k));
  PassContext ctx;
  const ir::Function g = apply(passes::hoist_invariants, f, ctx);
  EXPECT_EQ(notes(ctx), "hoisted `let x = a[0]` out of test (a load, guarded by the loop being non-empty)\n");
  EXPECT_CONTAINS(ir::to_string(g), "isnan(x)");
}

TEST(HoistAllocations, OutOfSequentialLoops) {
  const Var a = array_param("a"), acc = local("acc"), t = local_array("t"), u = local_array("u"), s = local("s");
  const Var r = index("r"), i = index("i"), j = index("j"), i2 = index("i"), q = param("q", DType::I64);
  const ir::Function f = function(
      "allocs", {a, q},
      {let(acc, f64c(0)),
       for_loop(r, i64c(0), val(q),
                {alloc(t, {dim(a)}), alloc(u, {sub(val(q), i64c(2))}),
                 parfor(i, dim(a), {store(t, {val(i)}, mul(load(a, {val(i)}), ir::make_cast(DType::F64, val(r))))}),
                 parfor(j, sub(val(q), i64c(2)), {store(u, {val(j)}, f64c(1))}), let(s, f64c(0)),
                 parfor(i2, dim(a), {assign(s, add(val(s), load(t, {val(i2)})))}, {{s, ReduceOp::Add}}),
                 assign(acc, add(val(acc), val(s)))})},
      val(acc));
  PassContext ctx;
  const ir::Function g = apply(passes::hoist_allocations, f, ctx);
  EXPECT_CONTAINS(body_text(g), "  alloc t: f64[::1] (dim(a, 0))\n  alloc u: f64[::1] (select((0 < q), (q - 2), 0))\n  for r in 0 .. q {\n");
  EXPECT_EQ(notes(ctx), "hoisted the allocation of t (dim(a, 0)) out of for r: one buffer for all iterations\n"
                        "hoisted the allocation of u ((q - 2)) out of for r: one buffer for all iterations\n");
}

TEST(HoistAllocations, ExtentsThatChangeStayAndParforBodiesKeepTheirs) {
  const Var a = array_param("a"), acc = local("acc"), t = local_array("t"), s = local("s");
  const Var r = index("r"), i = index("i");
  const ir::Function f = function(
      "variant", {a},
      {let(acc, f64c(0)),
       for_loop(r, i64c(0), i64c(3),
                {alloc(t, {add(val(r), i64c(1))}), parfor(i, add(val(r), i64c(1)), {store(t, {val(i)}, ir::make_cast(DType::F64, val(i)))}),
                 let(s, load(t, {val(r)})), assign(acc, add(val(acc), val(s)))})},
      val(acc));
  PassContext ctx;
  apply(passes::hoist_allocations, f, ctx);
  EXPECT_TRUE(ctx.notes.empty()) << notes(ctx);
}

TEST(Collapse, PerfectNestBecomesOneParfor) {
  const Var a = array_param("a", 2), s = local("s"), i = index("i"), j = index("j");
  const ir::Function f = function(
      "nest", {a},
      {let(s, f64c(0)),
       ir::make_parfor({i}, {i64c(0)}, {dim(a, 0)},
                       block({ir::make_parfor({j}, {i64c(0)}, {dim(a, 1)}, block({assign(s, add(val(s), load(a, {val(i), val(j)})))}),
                                              {{s, ReduceOp::Add}}, "prange at n.cpp:4")}),
                       {{s, ReduceOp::Add}}, "prange at n.cpp:3")},
      val(s));
  PassContext ctx;
  const ir::Function g = apply(passes::collapse_parfors, f, ctx);
  EXPECT_EQ(body_text(g),
            "  let s: f64 = 0.0\n"
            "  parfor (i in 0 .. dim(a, 0), j in 0 .. dim(a, 1)) reduce(add s) {  # prange at n.cpp:3 x prange at n.cpp:4\n"
            "    s = (s + a[i, j])\n"
            "  }\n"
            "  return s");
  EXPECT_EQ(notes(ctx), "collapsed prange at n.cpp:3 and the prange at n.cpp:4 nested in it into one parfor over "
                        "(i in 0 .. dim(a, 0), j in 0 .. dim(a, 1))\n");
}

TEST(Collapse, ThreeDeepAndTheCasesThatStayNested) {
  const Var a = array_param("a", 3), out = array_param("out", 3), i = index("i"), j = index("j"), k = index("k");
  const auto nest = [&](Expr inner_end) {
    return function("deep", {a, out},
                    {parfor(i, dim(a, 0),
                            {parfor(j, dim(a, 1),
                                    {parfor(k, std::move(inner_end), {store(out, {val(i), val(j), val(k)}, load(a, {val(i), val(j), val(k)}))})})})});
  };
  PassContext c1;
  const ir::Function g = apply(passes::collapse_parfors, nest(dim(a, 2)), c1);
  EXPECT_CONTAINS(ir::to_string(g), "parfor (i in 0 .. dim(a, 0), j in 0 .. dim(a, 1), k in 0 .. dim(a, 2)) {");
  EXPECT_EQ(regions(g.body), 1);
  // A triangular nest (inner bound reads the outer index) stays nested, and says why.
  PassContext c2;
  apply(passes::collapse_parfors, nest(bin(BinaryOp::Min, ir::make_ref(j), dim(a, 2))), c2);
  EXPECT_CONTAINS(notes(c2), "kept test and the test nested in it apart: the inner bounds depend on the outer index");
  // As does a bound that loads (evaluating it up front could fault when the outer loop is empty).
  const Var lim = array_param("lim");
  const ir::Function loads = function(
      "loads", {a, lim},
      {parfor(i, dim(a, 0), {parfor(j, ir::make_cast(DType::I64, load(lim, {i64c(0)})), {store(a, {val(i), val(j), i64c(0)}, f64c(1))})})});
  PassContext c3;
  passes::collapse_parfors(loads, c3);
  EXPECT_CONTAINS(notes(c3), "apart: the inner bounds read an array");
}

// =========================================================================================================
// The pipeline on array programs: softmax, a / max(a), Black-Scholes
// =========================================================================================================

ir::Function softmax() {
  // e = exp(a - max(a)); return e / sum(e)
  ArrayProgram p("softmax");
  const Var a = p.input("a");
  const Var m = p.reduce("m", "max", ReduceOp::Max, [&](const Expr& i) { return load(a, {i}); });
  const Var e = p.map("e", "exp", [&](const Expr& i) { return call(Intrinsic::Exp, sub(load(a, {i}), val(m))); });
  const Var s = p.reduce("s", "sum", ReduceOp::Add, [&](const Expr& i) { return load(e, {i}); });
  const Var out = p.map("out", "divide", [&](const Expr& i) { return div(load(e, {i}), val(s)); });
  return p.returning(out);
}

ir::Function divide_by_max() {
  ArrayProgram p("divmax");
  const Var a = p.input("a");
  const Var m = p.reduce("m", "max", ReduceOp::Max, [&](const Expr& i) { return load(a, {i}); });
  return p.returning(p.map("out", "divide", [&](const Expr& i) { return div(load(a, {i}), val(m)); }));
}

ir::Function black_scholes() {
  // d1 = (log(S / K) + (r + v * v / 2) * T) / (v * sqrt(T)); d2 = d1 - v * sqrt(T)
  // call = S * cnd(d1) - K * exp(-r * T) * cnd(d2), cnd(x) = (1 + erf(x / sqrt(2))) / 2
  ArrayProgram p("black_scholes");
  const Var S = p.input("S"), K = p.input("K"), T = p.input("T");
  const Var r = p.scalar("r"), v = p.scalar("v");
  const auto cnd = [](Expr x) {
    return mul(f64c(0.5), add(f64c(1), call(Intrinsic::Erf, mul(std::move(x), f64c(0.7071067811865476)))));
  };
  const Var sqrtT = p.map("sqrtT", "sqrt", [&](const Expr& i) { return call(Intrinsic::Sqrt, load(T, {i})); });
  const Var d1 = p.map("d1", "d1", [&](const Expr& i) {
    return div(add(call(Intrinsic::Log, div(load(S, {i}), load(K, {i}))), mul(add(val(r), mul(mul(val(v), val(v)), f64c(0.5))), load(T, {i}))),
               mul(val(v), load(sqrtT, {i})));
  });
  const Var d2 = p.map("d2", "d2", [&](const Expr& i) { return sub(load(d1, {i}), mul(val(v), load(sqrtT, {i}))); });
  const Var n1 = p.map("cnd1", "cnd", [&](const Expr& i) { return cnd(load(d1, {i})); });
  const Var n2 = p.map("cnd2", "cnd", [&](const Expr& i) { return cnd(load(d2, {i})); });
  const Var call_price = p.map("call", "call", [&](const Expr& i) {
    return sub(mul(load(S, {i}), load(n1, {i})),
               mul(mul(load(K, {i}), call(Intrinsic::Exp, mul(ir::make_unary(UnaryOp::Neg, val(r)), load(T, {i})))), load(n2, {i})));
  });
  return p.returning(call_price);
}

/// Runs the pipeline and checks it against the traced IR on random inputs.
ir::Function piped(const ir::Function& f, passes::PipelineReport* report = nullptr) {
  const ir::Function g = passes::run_pipeline(f, report);
  expect_equivalent(f, g);
  return g;
}

TEST(Pipeline, SoftmaxRunsAsThreeRegionsAndAllocatesOnlyItsOutput) {
  const ir::Function f = softmax();
  EXPECT_EQ(regions(f.body), 4);
  EXPECT_EQ(allocations(f), 2);
  const ir::Function g = piped(f);
  EXPECT_EQ(regions(g.body), 3);  // max; exp + sum; scale
  EXPECT_EQ(allocations(g), 1);   // the output, in e's buffer
  expect_golden("softmax.ir", ir::to_string(g));
}

TEST(Pipeline, DivideByMaxIsNotFused) {
  const ir::Function g = piped(divide_by_max());
  EXPECT_EQ(regions(g.body), 2);
  EXPECT_EQ(allocations(g), 1);
  expect_golden("divide_by_max.ir", ir::to_string(g));
}

TEST(Pipeline, BlackScholesIsOneRegion) {
  const ir::Function f = black_scholes();
  EXPECT_EQ(regions(f.body), 6);
  const ir::Function g = piped(f);
  EXPECT_EQ(regions(g.body), 1);
  EXPECT_EQ(allocations(g), 1);  // the result; every intermediate is a scalar
  expect_golden("black_scholes.ir", ir::to_string(g));
}

TEST(Pipeline, LoopPassesRunBetweenReductionsAndSimplify) {
  std::vector<std::string> names;
  for (const auto& p : passes::pipeline()) names.push_back(p.name);
  const std::vector<std::string> loop_passes = {"collapse_parfors", "fuse_parfors", "recompute_temporaries",
                                                "eliminate_temporaries", "reuse_reductions", "reuse_buffers",
                                                "hoist_invariants", "hoist_allocations"};
  const auto first = std::find(names.begin(), names.end(), loop_passes.front());
  ASSERT_NE(first, names.end());
  EXPECT_TRUE(std::equal(loop_passes.begin(), loop_passes.end(), first));
  EXPECT_LT(std::find(names.begin(), names.end(), "detect_reductions"), first);
  EXPECT_EQ(names.back(), "offload");  // device targets only, after simplify
  EXPECT_EQ(names[names.size() - 2], "spread_loops");  // device targets only
  EXPECT_EQ(names[names.size() - 3], "plan_splits");  // host targets only, reports
  EXPECT_EQ(names[names.size() - 4], "plan_lanes");
  EXPECT_EQ(names[names.size() - 5], "simplify");
}

// =========================================================================================================
// Diagnostics and the Graphviz dump
// =========================================================================================================

/// The report without its first line (pass timings vary from run to run) and without the notes of passes
/// other than detect_reductions and the loop passes (whose wording is theirs to change).
std::string report_sections(passes::PipelineReport r) {
  static const std::vector<std::string> mine = {"detect_reductions", "collapse_parfors", "fuse_parfors", "eliminate_temporaries",
                                                "reuse_buffers", "hoist_invariants", "hoist_allocations"};
  std::erase_if(r.notes, [](const passes::Note& n) { return std::find(mine.begin(), mine.end(), n.pass) == mine.end(); });
  const std::string text = passes::report_text(r);
  return text.substr(text.find('\n') + 1);
}

TEST(Diagnostics, SoftmaxReport) {
  passes::PipelineReport report;
  piped(softmax(), &report);
  const std::string text = passes::report_text(report);
  EXPECT_EQ(text.rfind("passes: detect_reductions ", 0), 0u) << text;
  expect_golden("softmax.diagnostics", report_sections(report));
  ASSERT_EQ(report.parfors.before.size(), 4u);
  EXPECT_EQ(report.parfors.after, (std::vector<passes::ParforGraph::Group>{{{1}, -1}, {{2, 3}, -1}, {{4}, -1}}));
}

TEST(Diagnostics, SectionsAppearOnlyWithContent) {
  // One parfor, nothing to fuse, hoist or allocate: the report lists it and nothing else.
  const Var a = array_param("a"), s = local("s"), i = index("i");
  const ir::Function f = function("single", {a},
                                  {let(s, f64c(0)), parfor(i, dim(a), {assign(s, add(val(s), load(a, {val(i)})))}, {{s, ReduceOp::Add}}, "sum")},
                                  val(s));
  passes::PipelineReport report;
  piped(f, &report);
  EXPECT_EQ(report_sections(report),
            "parfors before fusion: 1\n"
            "  #1 sum  over (i in 0 .. dim(a, 0))  reduces s (add, identity -0.0)\n"
            "parfors after fusion: 1\n"
            "  #1 sum\n");
  // Notes of other passes keep their text and are filed by the pass that made them.
  for (const auto& n : report.notes) {
    const auto& all = passes::pipeline();
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const passes::Pass& p) { return n.pass == p.name; })) << n.pass;
  }
}

TEST(Diagnostics, DotFileOfTheFusedGraph) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kiln-dot-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  passes::PipelineOptions opts;
  opts.dot_dir = dir.string();
  passes::run_pipeline(softmax(), nullptr, opts);
  std::ifstream in(dir / "softmax.dot");
  ASSERT_TRUE(in.good()) << "no " << (dir / "softmax.dot");
  std::stringstream ss;
  ss << in.rdbuf();
  std::filesystem::remove_all(dir);
  expect_golden("softmax.dot", ss.str());
}

// =========================================================================================================
// Traced kernels through kiln::jit (interpreter target): what users see in kernel.diagnostics()
// =========================================================================================================

Options interp() {
  Options o;
  o.target = Target::interpreter;
  return o;
}

TEST(Jit, ATemporaryTheResultReadsIsKept) {
  // eliminate_temporaries turned `t` into a scalar of the fused loop although the scalar result reads
  // t[n - 1] after it: the verifier rejected the pipeline's output.
  auto k = jit("last_of_temporary", [](Array<double> a) {
    auto t = empty<double>(a.shape(0));
    prange(a.shape(0), [&](Int i) { t[i] = 2.0 * a[i]; });
    auto u = empty<double>(a.shape(0));
    prange(a.shape(0), [&](Int i) { u[i] = t[i] + 1.0; });
    return t[a.shape(0) - 1] + u[0];
  }, interp());
  std::vector<double> a = {0.5, -1.0, 2.0};
  EXPECT_EQ(k(a), 4.0 + 2.0);
  EXPECT_CONTAINS(k.diagnostics(), "kept t: the kernel's result reads it");
}

TEST(Jit, ConsecutivePrangesFuseAndTheTemporaryDisappears) {
  auto k = jit("exp_sum", [](Array<double> a) {
    auto t = empty<double>(a.shape(0));
    prange(a.shape(0), [&](Int i) { t[i] = kiln::exp(a[i]); });
    Double s = 0.0;
    prange(a.shape(0), [&](Int i) { s += t[i] * 0.5; });
    return s;
  }, interp());
  std::vector<double> a = {0.5, -1.0, 2.0, 0.0, 1.5};
  double want = 0;
  for (double x : a) want += std::exp(x) * 0.5;
  EXPECT_EQ(k(a), want);  // the same operations in the same order
  const std::string ir = k.lowered_ir();
  EXPECT_EQ(ir.find("alloc"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("parfor"), ir.rfind("parfor")) << ir;
  const std::string d = k.diagnostics();
  EXPECT_CONTAINS(d, "reductions found:\n  reduction: s (add, identity -0.0) in prange at fusion_test.cpp:");
  EXPECT_CONTAINS(d, "parfors before fusion: 2\n  #1 prange at fusion_test.cpp:");
  EXPECT_CONTAINS(d, "fusion:\n  #1 + #2: fused");
  EXPECT_CONTAINS(d, "parfors after fusion: 1\n  #1+#2 prange at fusion_test.cpp:");
  EXPECT_CONTAINS(d, "allocations:\n  removed ");
  EXPECT_CONTAINS(d, ": a temporary of prange at fusion_test.cpp:");
  EXPECT_CONTAINS(d, "IR after passes:\n" + ir);
}

TEST(Jit, ReductionResultUsedByTheNextPrangeIsNotFused) {
  auto k = jit("scale_by_max", [](Array<double> a, Array<double> out) {
    Double m = -1e300;
    prange(a.shape(0), [&](Int i) { m = kiln::max(m, a[i]); });
    prange(a.shape(0), [&](Int i) { out[i] = a[i] / m; });
  }, interp());
  std::vector<double> a = {1.0, 4.0, -2.0}, out(3);
  k(a, out);
  EXPECT_EQ(out, (std::vector<double>{0.25, 1.0, -0.5}));
  EXPECT_CONTAINS(k.diagnostics(), "#1 + #2: refused: #2 uses m, the max reduction of #1");
}

TEST(Jit, PerfectlyNestedPrangesCollapse) {
  auto k = jit("twice", [](Array<double, 2> a, Array<double, 2> out) {
    prange(a.shape(0), [&](Int i) {
      prange(a.shape(1), [&](Int j) { out(i, j) = a(i, j) * 2.0; });
    });
  }, interp());
  NDArray<double> a({3, 4}), out({3, 4});
  for (int x = 0; x < 12; ++x) a[x] = x;
  k(a, out);
  for (int x = 0; x < 12; ++x) EXPECT_EQ(out[x], 2.0 * x);
  EXPECT_CONTAINS(k.lowered_ir(), "parfor (i in 0 .. dim(a, 0), j in 0 .. dim(a, 1)) {");
  EXPECT_CONTAINS(k.diagnostics(), "nested parfors:\n  collapsed prange at fusion_test.cpp:");
}

TEST(Jit, DiagnosticsEnvironmentVariablePrintsTheSections) {
  auto k = jit("two_maps", [](Array<double> a, Array<double> b, Array<double> c) {
    prange(a.shape(0), [&](Int i) { b[i] = a[i] + 1.0; });
    prange(a.shape(0), [&](Int i) { c[i] = b[i] * a[i]; });
  }, interp());
  std::vector<double> a = {1, 2}, b(2), c(2);
  ::setenv("KILN_DIAGNOSTICS", "1", 1);
  testing::internal::CaptureStderr();
  k(a, b, c);
  const std::string err = testing::internal::GetCapturedStderr();
  ::unsetenv("KILN_DIAGNOSTICS");
  EXPECT_EQ(c, (std::vector<double>{2, 6}));
  EXPECT_CONTAINS(err, "=== kiln diagnostics ===\nkernel two_maps(");
  EXPECT_CONTAINS(err, "fusion:\n  #1 + #2: fused\nparfors after fusion: 1\n");
}

// =========================================================================================================
// Array programs through the array DSL (lower_array_ops and array_analysis feed the loop passes)
// =========================================================================================================

/// Parfors at the top level of a printed function (its parallel regions) and allocations anywhere.
int top_level_parfors(const std::string& ir) {
  int n = 0;
  for (size_t at = ir.find("\n  parfor ("); at != std::string::npos; at = ir.find("\n  parfor (", at + 1)) ++n;
  return n;
}
int allocations(const std::string& ir) {
  int n = 0;
  for (size_t at = ir.find(" alloc "); at != std::string::npos; at = ir.find(" alloc ", at + 1)) ++n;
  return n;
}

std::vector<double> values(size_t n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    ASSERT_NEAR(got[k], want[k], rel * std::max(1.0, std::abs(want[k]))) << "element " << k;
}

TEST(ArrayDsl, SoftmaxRunsAsThreeRegionsWithOneAllocation) {
  auto softmax = jit("softmax", [](Array<double, 1> a) {
    auto e = kiln::exp(a - kiln::max(a));
    return e / kiln::sum(e);
  }, interp());
  for (size_t n : {1u, 7u, 1009u}) {
    const auto a = values(n, n, -3, 3);
    double m = a[0], s = 0;
    for (double x : a) m = std::max(m, x);
    std::vector<double> want(n);
    for (size_t k = 0; k < n; ++k) s += want[k] = std::exp(a[k] - m);
    for (auto& x : want) x /= s;
    expect_close(softmax(a).to_vector(), want, 1e-15);
  }
  const std::string ir = softmax.lowered_ir();
  EXPECT_EQ(top_level_parfors(ir), 3) << ir;  // max; exp + sum; scale
  EXPECT_EQ(allocations(ir), 1) << ir;        // the output, in the buffer of e
  const std::string d = softmax.diagnostics();
  EXPECT_CONTAINS(d, "refused: #2 uses max, the max reduction of #1");
  EXPECT_CONTAINS(d, "reused the buffer of e for ");
}

TEST(ArrayDsl, DivideByMaxIsNotFused) {
  auto k = jit("divmax", [](Array<double, 1> a) { return a / kiln::max(a); }, interp());
  const auto a = values(13, 5, 0.5, 2);
  const double m = *std::max_element(a.begin(), a.end());
  std::vector<double> want;
  for (double x : a) want.push_back(x / m);
  expect_close(k(a).to_vector(), want, 0);
  EXPECT_EQ(top_level_parfors(k.lowered_ir()), 2) << k.lowered_ir();
  EXPECT_CONTAINS(k.diagnostics(), "(as in a / max(a); Numba bug #9139)");
}

TEST(ArrayDsl, BlackScholesIsOneRegion) {
  auto bs = jit("black_scholes", [](Array<double, 1> S, Array<double, 1> K, Array<double, 1> T, Double r, Double v) {
    auto sqrtT = kiln::sqrt(T);
    auto d1 = (kiln::log(S / K) + (r + v * v * 0.5) * T) / (v * sqrtT);
    auto d2 = d1 - v * sqrtT;
    auto n1 = 0.5 * (1.0 + kiln::erf(d1 * 0.7071067811865476));
    auto n2 = 0.5 * (1.0 + kiln::erf(d2 * 0.7071067811865476));
    return S * n1 - K * kiln::exp(-r * T) * n2;
  }, interp());
  const size_t n = 101;
  const auto S = values(n, 1, 50, 150), K = values(n, 2, 50, 150), T = values(n, 3, 0.1, 2);
  const double r = 0.02, v = 0.3;
  std::vector<double> want(n);
  for (size_t k = 0; k < n; ++k) {
    const double d1 = (std::log(S[k] / K[k]) + (r + v * v * 0.5) * T[k]) / (v * std::sqrt(T[k]));
    const double d2 = d1 - v * std::sqrt(T[k]);
    want[k] = S[k] * 0.5 * (1 + std::erf(d1 * 0.7071067811865476)) -
              K[k] * std::exp(-r * T[k]) * 0.5 * (1 + std::erf(d2 * 0.7071067811865476));
  }
  expect_close(bs(S, K, T, r, v).to_vector(), want, 1e-12);
  const std::string ir = bs.lowered_ir();
  EXPECT_EQ(top_level_parfors(ir), 1) << ir;
  EXPECT_EQ(allocations(ir), 1) << ir;  // the result; every intermediate is a scalar
}

TEST(ArrayDsl, RowNormalizationIsOneRegion) {
  auto normalize = jit("normalize", [](Array<double, 2> x) {
    return (x - kiln::mean(x, 1, keepdims)) / kiln::std(x, 1, keepdims);
  }, interp());
  const size_t rows = 5, cols = 7;
  NDArray<double> x({static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols)});
  const auto v = values(rows * cols, 9, -1, 1);
  for (size_t k = 0; k < v.size(); ++k) x[static_cast<std::int64_t>(k)] = v[k];
  std::vector<double> want;
  for (size_t i = 0; i < rows; ++i) {
    double mean = 0, sq = 0;
    for (size_t j = 0; j < cols; ++j) mean += v[i * cols + j];
    mean /= cols;
    for (size_t j = 0; j < cols; ++j) sq += (v[i * cols + j] - mean) * (v[i * cols + j] - mean);
    const double sd = std::sqrt(sq / cols);
    for (size_t j = 0; j < cols; ++j) want.push_back((v[i * cols + j] - mean) / sd);
  }
  expect_close(normalize(x).to_vector(), want, 1e-13);
  const std::string ir = normalize.lowered_ir();
  // Row statistics in one row-parallel region (the (n, 1) keepdims spaces squeezed to (n)), and the
  // elementwise (n, m) region fused into it row by row (prefix fusion): x is read row by row, and every
  // intermediate, mean and std included, is a scalar of its row; only the result is allocated.
  EXPECT_EQ(top_level_parfors(ir), 1) << ir;
  EXPECT_EQ(allocations(ir), 1) << ir;
  EXPECT_CONTAINS(ir, "    parfor (j.2 in 0 .. dim(x, 1)) {");
  EXPECT_CONTAINS(normalize.diagnostics(), "dropped the dimension j of extent 1");
}

TEST(ArrayDsl, BicgReadsEachRowOnceAndMatchesTheInterpreterOnEveryThreadCount) {
  // s = r^T A (an array reduction over the rows, 300 columns being fewer than 32 blocks) and q = A p: each row's
  // column-sum updates fuse with its dot product. Compiled for the CPU, with 1, 2, 3 and 16 threads (16 pieces
  // of private copies), the results are the interpreter's: s bit for bit with one piece, which updates s in
  // row order as the interpreter does, and to rounding otherwise (the copies regroup the sums).
  auto bicg = [](const Options& o) {
    return jit("bicg_one_pass", [](Array<double, 2> A, Array<double, 1> r, Array<double, 1> p) {
      return std::tuple{kiln::dot(r, A), kiln::dot(A, p)};
    }, o);
  };
  Options cpu;
  cpu.target = Target::cpu;
  auto k = bicg(cpu);
  auto want_k = bicg(interp());
  const std::int64_t n = 37, m = 300;
  NDArray<double> A({n, m}), r({n}), p({m});
  const auto av = values(static_cast<size_t>(n * m), 31, -1, 1), rv = values(static_cast<size_t>(n), 32, -1, 1),
             pv = values(static_cast<size_t>(m), 33, -1, 1);
  for (std::int64_t e = 0; e < n * m; ++e) A[e] = av[static_cast<size_t>(e)];
  for (std::int64_t e = 0; e < n; ++e) r[e] = rv[static_cast<size_t>(e)];
  for (std::int64_t e = 0; e < m; ++e) p[e] = pv[static_cast<size_t>(e)];
  const auto [s_want, q_want] = want_k(A, r, p);
  for (int threads : {1, 2, 3, 16}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    set_num_threads(threads);
    const auto [s, q] = k(A, r, p);
    expect_close(s.to_vector(), s_want.to_vector(), threads == 1 ? 0 : 1e-13);
    expect_close(q.to_vector(), q_want.to_vector(), 1e-13);
  }
  set_num_threads(0);
  const std::string ir = k.lowered_ir();
  EXPECT_TRUE(std::regex_search(ir, std::regex(R"(reduce\(add dot_acc[.0-9]*\) \{[^\n]*\n[^\n]*dot_acc[^\n]*\n *dot\[j)"))) << ir;
}

TEST(ArrayDsl, LogisticRegressionStepFusesIntoTheChosenSchedule) {
  // dot(z, X) picks its schedule at run time (blocks of columns for wide X, else an array reduction over
  // the rows); the parfor computing z over the rows of X moves into both branches, so each schedule is one
  // pass over X where it can be, and z is a scalar in the branch where it fuses.
  auto step = jit("logistic_step", [](Array<double, 2> X, Array<double, 1> Y, Array<double, 1> w) {
    w -= kiln::dot(((1.0 / (1.0 + kiln::exp(-Y * kiln::dot(X, w)))) - 1.0) * Y, X);
  }, interp());
  for (auto [n, d] : std::vector<std::pair<size_t, size_t>>{{1, 1}, {7, 3}, {3, 8000}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(d));
    NDArray<double> X({static_cast<std::int64_t>(n), static_cast<std::int64_t>(d)});
    const auto xv = values(n * d, 21, -1, 1), yv = values(n, 22, -1, 1);
    for (size_t k = 0; k < xv.size(); ++k) X[static_cast<std::int64_t>(k)] = xv[k];
    std::vector<double> Y(yv.begin(), yv.end()), w = values(d, 23, -1, 1);
    std::vector<double> want = w, grad(d, 0.0);
    for (size_t i = 0; i < n; ++i) {
      double s = 0;
      for (size_t j = 0; j < d; ++j) s += xv[i * d + j] * w[j];
      const double z = (1.0 / (1.0 + std::exp(-Y[i] * s)) - 1.0) * Y[i];
      for (size_t j = 0; j < d; ++j) grad[j] += z * xv[i * d + j];
    }
    for (size_t j = 0; j < d; ++j) want[j] -= grad[j];
    step(X, Y, w);
    expect_close(w, want, 1e-13);
  }
  const std::string ir = step.lowered_ir();
  EXPECT_CONTAINS(step.diagnostics(), "moved into both branches of `if ");
  EXPECT_CONTAINS(step.diagnostics(), "(it fuses in the second)");
  // The row parfor appears once per branch, and in the else branch z's array is gone (the gradient is
  // accumulated from a scalar); the then branch still hands z to the column-block parfor.
  EXPECT_CONTAINS(ir, "reduce(add dot[*])");
  EXPECT_EQ(allocations(ir), 2) << ir;  // z for the column-block schedule, and the gradient
}

// =========================================================================================================
// Random parfor programs through the whole pipeline
// =========================================================================================================

/// Random sequences of 1-d parfors over inputs x, y (y is also written in place) and an output
/// parameter out: elementwise maps into new arrays reading earlier arrays at i, i + 1 or 0, reductions
/// (used by later loops or not), and stores to out and y, over spaces of n or n - 1 elements, sometimes
/// repeated in a sequential loop.
class RandomProgram {
 public:
  explicit RandomProgram(std::uint64_t seed) : rng_(seed) {}

  ir::Function build() {
    x_ = array_param("x");
    y_ = array_param("y");
    out_ = array_param("out");
    c_ = param("c", DType::F64);
    n_ = dim(x_);
    m_ = bin(BinaryOp::Max, sub(dim(x_), i64c(1)), i64c(0));
    arrays_ = {{x_, n_, true}, {y_, n_, true}};
    const bool looped = pick(4) == 0;
    std::vector<Stmt> body;
    const int steps = 3 + pick(8);
    for (int k = 0; k < steps; ++k) step(body, k);
    Expr result = f64c(0);
    for (const auto& s : scalars_) result = add(result, val(s));
    if (!looped) {
      // Sometimes the last new array is the result (it may then take over a dead array's buffer).
      if (last_new_ && pick(3) == 0) return function("random", {x_, y_, out_, c_}, body, nullptr, last_new_);
      return function("random", {x_, y_, out_, c_}, body, result);
    }
    const Var acc = local("acc"), rep = index("rep");
    body.push_back(assign(acc, add(val(acc), result)));
    return function("random", {x_, y_, out_, c_}, {let(acc, f64c(0)), for_loop(rep, i64c(0), i64c(2), body)}, val(acc));
  }

 private:
  struct Arr {
    Var var;
    Expr extent;
    bool full;  ///< n elements (else n - 1)
  };
  std::mt19937_64 rng_;
  Var x_, y_, out_, c_;
  Expr n_, m_;
  std::vector<Arr> arrays_;
  std::vector<Var> scalars_;
  Var last_new_;

  int pick(int k) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(k)); }

  /// A value at index i of a space with `full` (n) or n - 1 points.
  Expr value(const Expr& i, bool full, int depth) {
    const int kind = depth >= 2 ? pick(3) : pick(6);
    switch (kind) {
      case 0: {
        // An array element at i, at i + 1 (in bounds when the array has one more element than the space)
        // or at 0 of an input (the space is non-empty whenever this runs).
        // New arrays half of the time, so that temporaries are read by several loops.
        const bool fresh = pick(2) == 0;
        std::vector<const Arr*> ok, all;
        for (const auto& a : arrays_)
          if (a.full || !full) {
            all.push_back(&a);
            if (a.var->kind == ir::VarKind::Local) ok.push_back(&a);
          }
        if (!fresh || ok.empty()) ok = all;
        const Arr& a = *ok[static_cast<size_t>(pick(static_cast<int>(ok.size())))];
        const int where = pick(4);
        if (where == 0 && a.full && !full) return load(a.var, {add(i, i64c(1))});
        if (where == 1 && (a.var == x_ || a.var == y_)) return load(a.var, {i64c(0)});
        return load(a.var, {i});
      }
      case 1:
        if (!scalars_.empty()) return val(scalars_[static_cast<size_t>(pick(static_cast<int>(scalars_.size())))]);
        return val(c_);
      case 2: return pick(2) ? val(c_) : f64c(0.25 * (pick(9) - 4));
      case 3: return add(value(i, full, depth + 1), value(i, full, depth + 1));
      case 4: return mul(value(i, full, depth + 1), value(i, full, depth + 1));
      default: {
        static const BinaryOp ops[] = {BinaryOp::Sub, BinaryOp::Min, BinaryOp::Max, BinaryOp::Div};
        return bin(ops[pick(4)], value(i, full, depth + 1), value(i, full, depth + 1));
      }
    }
  }

  void step(std::vector<Stmt>& body, int k) {
    const bool full = pick(3) != 0;
    const Expr extent = full ? n_ : m_;
    const Var i = index("i");
    const std::string origin = "step " + std::to_string(k);
    switch (pick(5)) {
      case 0:
      case 1: {
        const Var t = local_array("t" + std::to_string(k));
        body.push_back(alloc(t, {extent}));
        body.push_back(parfor(i, extent, {store(t, {val(i)}, value(val(i), full, 0))}, {}, origin));
        arrays_.push_back({t, extent, full});
        last_new_ = t;
        break;
      }
      case 2: {
        static const ReduceOp ops[] = {ReduceOp::Add, ReduceOp::Max, ReduceOp::Min};
        const ReduceOp op = ops[pick(3)];
        const Var s = local("s" + std::to_string(k));
        const Expr v = value(val(i), full, 1);
        const Expr update = op == ReduceOp::Add ? add(val(s), v) : bin(op == ReduceOp::Max ? BinaryOp::Max : BinaryOp::Min, val(s), v);
        body.push_back(let(s, ir::identity_of(op, DType::F64)));
        body.push_back(parfor(i, extent, {assign(s, update)}, {{s, op}}, origin));
        scalars_.push_back(s);
        break;
      }
      case 3:
        body.push_back(parfor(i, extent, {store(out_, {val(i)}, value(val(i), full, 0))}, {}, origin));
        arrays_.push_back({out_, n_, true});  // readable (out has n elements), written from now on
        break;
      default:
        body.push_back(parfor(i, extent, {store(y_, {val(i)}, value(val(i), full, 0))}, {}, origin));
        break;
    }
  }
};

/// Random 2-d programs for collapsing and hoisting: nests of pranges over a (n, 3) array, perfect or with
/// lets (invariant or not) before the inner loop, reductions through both levels, 2-d parfors, and
/// sequential loops that allocate a temporary per iteration.
class RandomNest {
 public:
  explicit RandomNest(std::uint64_t seed) : rng_(seed) {}

  ir::Function build() {
    a_ = array_param("a", 2);
    out_ = array_param("out", 2);
    v_ = array_param("v");
    c_ = param("c", DType::F64);
    std::vector<Stmt> body;
    const int steps = 2 + pick(4);
    for (int k = 0; k < steps; ++k) step(body);
    Expr result = f64c(0);
    for (const auto& s : sums_) result = add(result, val(s));
    return function("nest", {a_, out_, v_, c_}, body, result);
  }

 private:
  std::mt19937_64 rng_;
  Var a_, out_, v_, c_;
  std::vector<Var> sums_;

  int pick(int k) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(k)); }
  Expr constant() { return f64c(0.5 * (pick(7) - 3)); }
  /// c times a constant, or a constant: the same in every iteration.
  Expr invariant() { return pick(2) ? mul(val(c_), constant()) : call(Intrinsic::Exp, mul(val(c_), constant())); }

  void step(std::vector<Stmt>& body) {
    const Var i = index("i"), j = index("j");
    const Expr rows = dim(a_, 0), cols = dim(a_, 1);
    switch (pick(4)) {
      case 0: {  // out[i, j] = f(a[i, j], lets), with lets before the inner prange or not
        std::vector<Stmt> outer;
        Expr x = load(a_, {val(i), val(j)});
        if (pick(2)) {
          const Var k = local("k");
          outer.push_back(let(k, invariant()));
          x = mul(x, val(k));
        }
        if (pick(3) == 0) {
          const Var t = local("t");
          outer.push_back(let(t, add(ir::make_cast(DType::F64, val(i)), load(v_, {val(i)}))));
          x = add(x, val(t));
        }
        x = add(x, mul(invariant(), load(out_, {val(i), val(j)})));
        outer.push_back(parfor(j, cols, {store(out_, {val(i), val(j)}, x)}, {}, "inner"));
        body.push_back(parfor(i, rows, outer, {}, "outer"));
        break;
      }
      case 1: {  // a sum through both levels
        const Var s = local("s");
        body.push_back(let(s, f64c(0)));
        const Stmt inner = parfor(j, cols, {assign(s, add(val(s), mul(load(a_, {val(i), val(j)}), invariant())))},
                                  {{s, ReduceOp::Add}}, "inner");
        body.push_back(parfor(i, rows, {inner}, {{s, ReduceOp::Add}}, "outer"));
        sums_.push_back(s);
        break;
      }
      case 2:  // a 2-d parfor
        body.push_back(ir::make_parfor({i, j}, {i64c(0), i64c(0)}, {rows, cols},
                                       block({store(out_, {val(i), val(j)},
                                                    add(mul(load(out_, {val(i), val(j)}), constant()), load(a_, {val(i), val(j)})))}),
                                       {}, "2-d"));
        break;
      default: {  // for r: t = a[:, 0] + r; v += t * invariant
        const Var r = index("r"), t = local_array("t"), i2 = index("i");
        body.push_back(for_loop(
            r, i64c(0), i64c(1 + pick(3)),
            {alloc(t, {rows}),
             parfor(i, rows, {store(t, {val(i)}, add(load(a_, {val(i), i64c(0)}), ir::make_cast(DType::F64, val(r))))}, {}, "fill"),
             parfor(i2, rows, {store(v_, {val(i2)}, add(load(v_, {val(i2)}), mul(load(t, {val(i2)}), invariant())))}, {}, "update")}));
        break;
      }
    }
  }
};

TEST(RandomPrograms, NestsCollapseAndHoistWithoutChangingResults) {
  int collapsed = 0, hoisted = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    const ir::Function f = RandomNest(seed).build();
    SCOPED_TRACE("random nest, seed " + std::to_string(seed));
    PassContext ctx;
    ir::Function g = f;
    for (const auto& p : passes::pipeline()) {
      g = passes::run_pass(p.name, g, ctx);
      SCOPED_TRACE(std::string("after ") + p.name);
      expect_equivalent(f, g, 1);
      if (testing::Test::HasFatalFailure()) return;
    }
    for (const auto& n : ctx.notes) {
      collapsed += n.text.rfind("collapsed ", 0) == 0;
      hoisted += n.text.rfind("hoisted ", 0) == 0;
    }
  }
  EXPECT_GT(collapsed, 50);
  EXPECT_GT(hoisted, 100);
  std::printf("random nests: %d collapsed, %d hoisted\n", collapsed, hoisted);
}

TEST(RandomPrograms, WholePipelineAndEveryPassPreserveResults) {
  int fused = 0, refused = 0, removed = 0, reused = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const ir::Function f = RandomProgram(seed).build();
    SCOPED_TRACE("random program, seed " + std::to_string(seed));
    // Pass by pass, each compared with the program as traced.
    PassContext ctx;
    ir::Function g = f;
    for (const auto& p : passes::pipeline()) {
      g = passes::run_pass(p.name, g, ctx);
      SCOPED_TRACE(std::string("after ") + p.name);
      expect_equivalent(f, g, 1);
      if (testing::Test::HasFatalFailure()) return;
    }
    for (const auto& n : ctx.notes) {
      fused += n.text.find(": fused") != std::string::npos;
      refused += n.text.find(": refused") != std::string::npos;
      removed += n.text.rfind("removed ", 0) == 0;
      reused += n.text.rfind("reused ", 0) == 0;
    }
  }
  // The generator reaches every kind of decision.
  EXPECT_GT(fused, 50);
  EXPECT_GT(refused, 50);
  EXPECT_GT(removed, 10);
  EXPECT_GT(reused, 5);
  std::printf("random programs: %d fusions, %d refusals, %d temporaries removed, %d buffers reused\n", fused, refused,
              removed, reused);
}

}  // namespace
}  // namespace kiln::looptest
