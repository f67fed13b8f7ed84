// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Work two loops would do twice: reuse_reductions (a reduction that repeats one already complete takes its
// value) on hand-built IR, checked by structure, by the notes that say why, and differentially (interpreter
// before vs after, sizes 0, 1, primes and large); then the statistics of a traced kernel through the pipeline.
#include "kiln/kiln.hpp"
#include "loop_test_util.hpp"
#include "passes/pipeline.hpp"
#include "passes/reuse_reductions.hpp"

namespace kiln::looptest {
namespace {

using passes::PassContext;

std::string notes(const PassContext& ctx) {
  std::vector<std::string> texts;
  for (const auto& n : ctx.notes) texts.push_back(n.text);
  return joined(texts);
}

/// The parfors of a function, at any depth.
std::vector<const ir::ParforStmt*> parfors(const ir::Function& f) {
  struct Find : ir::IRVisitor {
    std::vector<const ir::ParforStmt*> found;
    void visit(const ir::ParforStmt& p) override {
      found.push_back(&p);
      ir::IRVisitor::visit(p);
    }
  } find;
  find.walk(f.body);
  return find.found;
}

/// `let acc = -0.0; parfor (i in 0 .. end) reduce(add acc) { acc = acc + value(i) }`
std::vector<Stmt> sum(const Var& acc, const Expr& end, const std::function<Expr(const Expr&)>& value, const std::string& origin) {
  const Var i = index("i_" + acc->name);
  return {let(acc, f64c(-0.0)), parfor(i, end, {assign(acc, add(val(acc), value(val(i))))}, {{acc, ReduceOp::Add}}, origin)};
}

void append(std::vector<Stmt>& to, std::vector<Stmt> more) { to.insert(to.end(), more.begin(), more.end()); }

// =========================================================================================================
// reuse_reductions
// =========================================================================================================

TEST(ReuseReductions, ASumComputedTwiceIsComputedOnce) {
  const Var a = array_param("a"), s1 = local("s1"), s2 = local("s2");
  std::vector<Stmt> body;
  append(body, sum(s1, dim(a), [&](const Expr& i) { return load(a, {i}); }, "mean"));
  append(body, sum(s2, dim(a), [&](const Expr& i) { return load(a, {i}); }, "std"));
  PassContext ctx;
  const ir::Function g = apply(passes::reuse_reductions, function("twice", {a}, body, sub(mul(val(s2), f64c(3)), val(s1))), ctx);
  EXPECT_EQ(parfors(g).size(), 1u) << ir::to_string(g);
  EXPECT_NE(notes(ctx).find("std: s2 (add) repeats s1 of mean over the same space"), std::string::npos) << notes(ctx);
  EXPECT_NE(notes(ctx).find("std (i_s2 in 0 .. dim(a, 0)): removed"), std::string::npos) << notes(ctx);
}

TEST(ReuseReductions, DeviationsFromEqualMeansAreOneSumThroughTheirLets) {
  // var's and std's passes: each computes its mean from its own sum, then sums the squared deviations.
  const Var a = array_param("a"), s1 = local("s1"), s2 = local("s2"), m1 = local("m1"), m2 = local("m2"), q1 = local("q1"),
            q2 = local("q2");
  const Expr n = cast(DType::F64, dim(a));
  auto dev = [&](const Var& m) { return [&a, m](const Expr& i) { return mul(sub(load(a, {i}), val(m)), sub(load(a, {i}), val(m))); }; };
  std::vector<Stmt> body;
  append(body, sum(s1, dim(a), [&](const Expr& i) { return load(a, {i}); }, "var"));
  body.push_back(let(m1, div(val(s1), n)));
  append(body, sum(q1, dim(a), dev(m1), "var"));
  append(body, sum(s2, dim(a), [&](const Expr& i) { return load(a, {i}); }, "std"));
  body.push_back(let(m2, div(val(s2), n)));
  append(body, sum(q2, dim(a), dev(m2), "std"));
  PassContext ctx;
  const ir::Function g = apply(passes::reuse_reductions, function("stats", {a}, body, add(val(q1), mul(val(q2), f64c(0.5)))), ctx);
  EXPECT_EQ(parfors(g).size(), 2u) << ir::to_string(g);
  EXPECT_NE(notes(ctx).find("q2 (add) repeats q1"), std::string::npos) << notes(ctx);
}

TEST(ReuseReductions, ALetReadBeforeItsTotalIsCompleteStandsForItself) {
  // m0 reads s before s's loop (its start, -0.0), m1 after: equal expressions, different values.
  const Var a = array_param("a"), s = local("s"), m0 = local("m0"), m1 = local("m1"), q0 = local("q0"), q1 = local("q1");
  const Expr n = cast(DType::F64, dim(a));
  auto dev = [&](const Var& m) { return [&a, m](const Expr& i) { return mul(sub(load(a, {i}), val(m)), sub(load(a, {i}), val(m))); }; };
  std::vector<Stmt> body{let(s, f64c(-0.0)), let(m0, div(val(s), n))};
  const Var i = index("i");
  body.push_back(parfor(i, dim(a), {assign(s, add(val(s), load(a, {val(i)})))}, {{s, ReduceOp::Add}}, "sum"));
  body.push_back(let(m1, div(val(s), n)));
  append(body, sum(q0, dim(a), dev(m0), "from the start"));
  append(body, sum(q1, dim(a), dev(m1), "from the mean"));
  PassContext ctx;
  const ir::Function g = apply(passes::reuse_reductions, function("early", {a}, body, sub(val(q1), val(q0))), ctx);
  EXPECT_EQ(parfors(g).size(), 3u) << ir::to_string(g);
  EXPECT_EQ(notes(ctx), "");
}

TEST(ReuseReductions, TwoEqualReductionsOfOneLoopAreOne) {
  const Var a = array_param("a"), s1 = local("s1"), s2 = local("s2"), i = index("i");
  const Expr x = mul(load(a, {val(i)}), load(a, {val(i)}));
  const ir::Function f = function("pair", {a},
                                  {let(s1, f64c(-0.0)), let(s2, f64c(-0.0)),
                                   parfor(i, dim(a), {assign(s1, add(val(s1), x)), assign(s2, add(val(s2), x))},
                                          {{s1, ReduceOp::Add}, {s2, ReduceOp::Add}}, "both")},
                                  sub(val(s1), mul(val(s2), f64c(2))));
  PassContext ctx;
  const ir::Function g = apply(passes::reuse_reductions, f, ctx);
  ASSERT_EQ(parfors(g).size(), 1u);
  EXPECT_EQ(parfors(g)[0]->reductions.size(), 1u) << ir::to_string(g);
  EXPECT_NE(notes(ctx).find("s2 (add) repeats s1 of the same loop"), std::string::npos) << notes(ctx);
}

TEST(ReuseReductions, WhatMayDifferIsComputedAgain) {
  const Var a = array_param("a"), b = array_param("b"), c = param("c", DType::F64);
  // A store between the loops to the array they sum.
  {
    const Var s1 = local("s1"), s2 = local("s2");
    std::vector<Stmt> body;
    append(body, sum(s1, dim(a), [&](const Expr& i) { return load(a, {i}); }, "first"));
    const Var k = index("k");
    body.push_back(parfor(k, dim(a), {store(a, {val(k)}, add(load(a, {val(k)}), f64c(1)))}));
    append(body, sum(s2, dim(a), [&](const Expr& i) { return load(a, {i}); }, "second"));
    PassContext ctx;
    const ir::Function g = apply(passes::reuse_reductions, function("stored", {a}, body, sub(val(s2), val(s1))), ctx);
    EXPECT_EQ(parfors(g).size(), 3u);
    EXPECT_EQ(notes(ctx), "");
  }
  // Another space, another array, another operator, another start.
  {
    const Var s1 = local("s1"), s2 = local("s2"), s3 = local("s3"), s4 = local("s4"), s5 = local("s5");
    auto x = [&](const Expr& i) { return load(a, {i}); };
    std::vector<Stmt> body;
    append(body, sum(s1, dim(a), x, "all"));
    append(body, sum(s2, sub(dim(a), i64c(1)), x, "head"));
    append(body, sum(s3, dim(b), [&](const Expr& i) { return load(b, {i}); }, "other"));
    const Var i = index("i"), j = index("j");
    body.push_back(let(s4, f64c(-0.0)));
    body.push_back(parfor(i, dim(a), {assign(s4, mul(val(s4), load(a, {val(i)})))}, {{s4, ReduceOp::Mul}}, "product"));
    body.push_back(let(s5, val(c)));
    body.push_back(parfor(j, dim(a), {assign(s5, add(val(s5), load(a, {val(j)})))}, {{s5, ReduceOp::Add}}, "from c"));
    PassContext ctx;
    const Expr r = add(add(add(val(s1), val(s2)), add(val(s3), val(s4))), val(s5));
    const ir::Function g = apply(passes::reuse_reductions, function("different", {a, b, c}, body, r), ctx);
    EXPECT_EQ(parfors(g).size(), 5u);
    EXPECT_EQ(notes(ctx), "");
  }
}

TEST(ReuseReductions, RowStatisticsReadEachRowOnceLess) {
  // var(x, 1), std(x, 1) and std(x, 1, keepdims) as traced: their sums and squared deviations repeat.
  auto stats = [](Array<double, 2> x) {
    return std::tuple{kiln::var(x, 1), kiln::std(x, 1), kiln::std(x, 1, kiln::keepdims)};
  };
  auto k = kiln::jit("row_sums", stats, Options().on(Target::interpreter));
  NDArray<double> x({5, 7});
  for (std::int64_t e = 0; e < x.size(); ++e) x.data()[e] = 0.25 * static_cast<double>((e * 7) % 11) - 1.0;
  auto [v, s, sk] = k(x);
  for (std::int64_t r = 0; r < 5; ++r) {
    double m = 0, q = 0;
    for (std::int64_t c = 0; c < 7; ++c) m += x.data()[r * 7 + c];
    m /= 7;
    for (std::int64_t c = 0; c < 7; ++c) q += (x.data()[r * 7 + c] - m) * (x.data()[r * 7 + c] - m);
    EXPECT_NEAR(v.data()[r], q / 7, 1e-14);
    EXPECT_NEAR(s.data()[r], std::sqrt(q / 7), 1e-14);
    EXPECT_EQ(sk.data()[r], s.data()[r]);  // one sum: the same bits
  }
  const std::string d = k.diagnostics();
  EXPECT_NE(d.find("repeats"), std::string::npos) << d;
  EXPECT_NE(d.find("removed, every reduction of it is computed before"), std::string::npos) << d;
}

}  // namespace
}  // namespace kiln::looptest
