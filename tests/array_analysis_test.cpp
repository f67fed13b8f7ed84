// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// array_analysis: equivalence classes of extents (with constant offsets), proven shape checks removed,
// facts scoped to where they hold, extents rewritten to one representative. Every case is also run on the
// interpreter before and after the pass. Golden IR of the example kernels after lower_array_ops and
// array_analysis, and random array programs through these passes and through the whole pipeline.
#include "ir/builder.hpp"
#include "passes/array_analysis.hpp"
#include "passes/lower_array_ops.hpp"
#include "passes/pipeline.hpp"
#include "tests/array_test_util.hpp"
#include "tests/random_array_programs.hpp"

namespace kiln {
namespace {

using namespace kiln::testing;
using ir::Expr;
using ir::Stmt;
using ir::Var;

Var array_param(const std::string& name, int rank = 1, std::uint8_t unit_dims = 0) {
  return ir::make_var(name, ir::Type::array(DType::F64, rank, true, unit_dims), ir::VarKind::Param);
}
Var param(const std::string& name) { return ir::make_var(name, ir::Type::scalar(DType::I64), ir::VarKind::Param); }
Var local_array(const std::string& name) { return ir::make_var(name, ir::Type::array(DType::F64, 1, true), ir::VarKind::Local); }
Var local(const std::string& name) { return ir::make_var(name, ir::Type::scalar(DType::I64), ir::VarKind::Local); }
Var index(const std::string& name) { return ir::make_var(name, ir::Type::scalar(DType::I64), ir::VarKind::Index); }
Expr val(const Var& v) { return ir::make_ref(v); }
Expr dim(const Var& a, int d = 0) { return ir::make_dim(a, d); }
Expr c64(std::int64_t v) { return ir::make_i64(v); }
Expr sub(Expr a, Expr b) { return ir::make_binary(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return ir::make_binary(BinaryOp::Eq, std::move(a), std::move(b)); }
Expr max0(Expr a) { return ir::make_binary(BinaryOp::Max, std::move(a), c64(0)); }
Stmt shape_check(Expr cond, std::vector<Expr> args = {}) {
  std::string holes;
  for (size_t k = 0; k < args.size(); ++k) holes += " {}";
  return ir::make_check(std::move(cond), kShapeMismatch, "shapes differ:" + holes, std::move(args));
}

/// out[i] = a[i] + 1 over [0, n) in a parfor (a store into `out` at i).
Stmt fill(const Var& out, const Var& from, Expr n, const std::string& name) {
  const Var i = index("i");
  return ir::make_parfor({i}, {c64(0)}, {std::move(n)},
                         ir::make_block({ir::make_store(out, {val(i)}, ir::make_binary(BinaryOp::Add, ir::make_load(from, {val(i)}),
                                                                                     ir::make_float(DType::F64, 1)))}),
                         {}, name);
}

ir::Function function(std::vector<Var> params, std::vector<Stmt> body, Var result_array = nullptr) {
  ir::Function f;
  f.name = "analysis";
  f.params = std::move(params);
  f.body = ir::make_block(std::move(body));
  f.result_array = std::move(result_array);
  return f;
}

ir::Function run_analysis(const ir::Function& f) {
  passes::PassContext ctx;
  return passes::array_analysis(f, ctx);
}

std::string notes_of(const ir::Function& f) {
  passes::PassContext ctx;
  passes::array_analysis(f, ctx);
  std::string s;
  for (const auto& n : ctx.notes) s += n.text + "\n";
  return s;
}

/// The parfor headers of f, one a line (what fusion compares).
std::string spaces(const ir::Function& f) {
  std::string out;
  std::istringstream in(ir::to_string(f));
  for (std::string line; std::getline(in, line);)
    if (line.find("parfor") != std::string::npos) out += line.substr(line.find("parfor"), line.find(" {") - line.find("parfor")) + "\n";
  return out;
}

// =========================================================================================================
// Hand-built IR
// =========================================================================================================

TEST(ArrayAnalysis, AllocationsRelateExtentsAndEveryExtentGetsTheRepresentative) {
  const Var a = array_param("a"), out = array_param("out"), t = local_array("t");
  const ir::Function f = function({a, out}, {ir::make_allocate(t, {dim(a)}), fill(t, a, dim(t), "p1"), fill(out, t, dim(t), "p2")});
  for (std::int64_t n : {0, 3}) {
    const auto x = random_values(static_cast<size_t>(n), 1);
    std::vector<double> o(static_cast<size_t>(n));
    const ir::Function g = differential(passes::array_analysis, f, x, o);
    EXPECT_EQ(spaces(g), "parfor (i in 0 .. dim(a, 0))\nparfor (i.1 in 0 .. dim(a, 0))\n") << ir::to_string(g);
  }
}

TEST(ArrayAnalysis, ChecksAreKeptUntilProvenAndFactsHoldOnlyAfterThem) {
  const Var a = array_param("a"), b = array_param("b");
  const Stmt check = shape_check(eq(dim(a), dim(b)), {dim(a), dim(b)});
  // A parfor over a before the check keeps its extent (a and b may differ there); after it, a's extent is
  // b's (the older of the two); the same check again is proven and removed.
  const ir::Function f = function({a, b}, {fill(b, b, dim(b), "first"), fill(a, a, dim(a), "before"), check,
                                           fill(a, a, dim(a), "after"), check});
  const auto x = random_values(4, 2);
  const ir::Function g = differential(passes::array_analysis, f, x, x);
  differential(passes::array_analysis, f, x, random_values(3, 3));  // the ShapeError stays
  EXPECT_EQ(spaces(g), "parfor (i in 0 .. dim(b, 0))\nparfor (i.1 in 0 .. dim(a, 0))\nparfor (i.2 in 0 .. dim(b, 0))\n")
      << ir::to_string(g);
  const std::string t = ir::to_string(g);
  EXPECT_EQ(t.find("check"), t.rfind("check")) << "one check is left:\n" << t;
  const std::string notes = notes_of(f);
  EXPECT_CONTAINS(notes, "array_analysis: kept check `shapes differ` at run time: (dim(a, 0) == dim(b, 0)) is not known");
  EXPECT_CONTAINS(notes, "array_analysis: removed check `shapes differ`: (dim(a, 0) == dim(b, 0)) holds");
  EXPECT_CONTAINS(notes, "array_analysis: equal extents: dim(b, 0); dim(a, 0)");
}

TEST(ArrayAnalysis, OffsetRelationsLenOfInteriorIsNMinus2) {
  // t = empty(n - 2) (so n - 2 >= 0 from then on); len(a[1:-1]) = max(n - 2, 0) is n - 2, and t's extent.
  const Var a = array_param("a"), t = local_array("t"), i = index("i");
  const Expr len = max0(sub(dim(a), c64(2)));
  const Stmt copy = ir::make_parfor(
      {i}, {c64(0)}, {len},
      ir::make_block({ir::make_store(t, {val(i)}, ir::make_load(a, {ir::make_binary(BinaryOp::Add, val(i), c64(1))}))}), {}, "copy");
  const ir::Function f = function({a}, {ir::make_allocate(t, {sub(dim(a), c64(2))}), shape_check(eq(len, dim(t)), {len, dim(t)}), copy}, t);
  for (std::int64_t n : {1, 2, 3, 10}) differential(passes::array_analysis, f, random_values(static_cast<size_t>(n), 4));
  const ir::Function g = differential(passes::array_analysis, f, random_values(5, 4));
  EXPECT_EQ(ir::to_string(g).find("check"), std::string::npos) << ir::to_string(g);
  EXPECT_EQ(spaces(g), "parfor (i in 0 .. (dim(a, 0) - 2))\n");
  // Without the allocation nothing says n >= 2: max(n - 2, 0) stays.
  const ir::Function h = function({a}, {fill(a, a, len, "p")});
  EXPECT_EQ(spaces(run_analysis(h)), "parfor (i in 0 .. max((dim(a, 0) - 2), 0))\n");
}

TEST(ArrayAnalysis, FactsInsideBranchesAndLoopsStayThere) {
  const Var a = array_param("a"), b = array_param("b"), n = param("n"), k = index("k");
  const Stmt check = shape_check(eq(dim(a), dim(b)));
  const ir::Function f = function(
      {a, b, n}, {ir::make_if(ir::make_binary(BinaryOp::Gt, val(n), c64(0)), ir::make_block({check, fill(b, a, dim(b), "in_if")})),
                  ir::make_for(k, c64(0), val(n), ir::make_block({check, fill(b, a, dim(b), "in_loop")})),
                  fill(b, b, dim(b), "after")});
  for (std::int64_t v : {0, 2}) differential(passes::array_analysis, f, random_values(3, 5), random_values(3, 6), v);
  differential(passes::array_analysis, f, random_values(3, 5), random_values(2, 6), std::int64_t{1});
  const ir::Function g = run_analysis(f);
  EXPECT_EQ(spaces(g), "parfor (i in 0 .. dim(a, 0))\nparfor (i.1 in 0 .. dim(a, 0))\nparfor (i.2 in 0 .. dim(b, 0))\n")
      << ir::to_string(g);
}

TEST(ArrayAnalysis, LetsMutableVariablesUnitExtentsAndLowerBounds) {
  const Var a = array_param("a"), u = array_param("u", 2, 0b01), b = array_param("b");
  const Var len = local("len"), m = local("m"), t = local_array("t");
  const ir::Function f = function(
      {a, u, b},
      {ir::make_let(len, sub(dim(a), c64(1))),
       fill(a, a, sub(dim(a), c64(1)), "p1"), fill(a, a, val(len), "p2"),  // the same extent, spelled twice
       ir::make_let(m, dim(a)), ir::make_assign(m, c64(2)),             // m changes: nothing is known of it
       shape_check(eq(val(m), dim(b))), shape_check(eq(val(m), dim(b))),
       fill(b, b, dim(u, 0), "p3"),                                      // u's first extent is 1 in this signature
       ir::make_allocate(t, {c64(3)}),
       ir::make_check(ir::make_binary(BinaryOp::Lt, c64(0), dim(t)), kValueError, "empty"),
       ir::make_check(ir::make_binary(BinaryOp::Lt, c64(0), dim(b)), kValueError, "empty b"),
       ir::make_check(ir::make_binary(BinaryOp::Gt, dim(b), c64(0)), kValueError, "empty b again")});
  NDArray<double> uu({1, 4});
  differential(passes::array_analysis, f, random_values(5, 7), uu, random_values(2, 8));
  differential(passes::array_analysis, f, random_values(5, 7), uu, random_values(0, 8));
  const ir::Function g = run_analysis(f);
  const std::string text = ir::to_string(g);
  EXPECT_EQ(spaces(g), "parfor (i in 0 .. (dim(a, 0) - 1))\nparfor (i.1 in 0 .. (dim(a, 0) - 1))\nparfor (i.2 in 0 .. 1)\n")
      << text;
  EXPECT_NE(text.find("check (m == dim(b, 0))"), text.rfind("check (m == dim(b, 0))")) << "both kept:\n" << text;
  EXPECT_EQ(text.find("\"empty\""), std::string::npos) << text;        // dim(t) is 3
  EXPECT_NE(text.find("\"empty b\""), std::string::npos) << text;      // unknown: kept, and then known
  EXPECT_EQ(text.find("\"empty b again\""), std::string::npos) << text;
}

// =========================================================================================================
// Traced kernels
// =========================================================================================================

ir::Function analysed(const ir::Function& traced) {
  passes::PassContext ctx;
  return passes::array_analysis(passes::lower_array_ops(traced, ctx), ctx);
}

TEST(ArrayAnalysisTraced, RepeatedBroadcastsAreCheckedOnce) {
  auto fn = [](Array<double, 1> a, Array<double, 1> b) { return (a + b) * b - kiln::exp(a) / b; };
  const auto x = random_values(6, 9), y = random_values(6, 10);
  const ir::Function f = trace_ir("once", {"a", "b"}, fn, x, y);
  const ir::Function l = differential(passes::lower_array_ops, f, x, y);
  const ir::Function g = differential(passes::array_analysis, l, x, y);
  differential(passes::array_analysis, l, x, random_values(5, 10));
  const std::string t = ir::to_string(g);
  EXPECT_NE(t.find("check"), std::string::npos);
  EXPECT_EQ(t.find("check"), t.rfind("check")) << t;
  // Every parfor runs over the same space now.
  std::istringstream s(spaces(g));
  for (std::string line; std::getline(s, line);) EXPECT_TRUE(line.ends_with(".. dim(a, 0))")) << spaces(g);
}

TEST(ArrayAnalysisTraced, InteriorOfAnArrayIntoAnArrayOfNMinus2) {
  auto fn = [](Array<double, 1> a) {
    auto out = empty<double>(a.shape(0) - 2);
    out(all) = a[slice(1, -1)] * 2.0;
    return out;
  };
  for (std::int64_t n : {1, 2, 3, 9}) {
    const auto x = random_values(static_cast<size_t>(n), 11);
    const ir::Function f = trace_ir("interior", {"a"}, fn, x);
    const ir::Function g = differential(passes::array_analysis, differential(passes::lower_array_ops, f, x), x);
    if (n == 1) continue;  // a's extent is the constant 1 in this signature: the allocation of -1 fails first
    // The slice assignment's shape check is proven; out's own check that a.shape(0) - 2 is not negative stays.
    auto shape_checks = [](const ir::Function& h) {
      std::istringstream in(ir::to_string(h));
      int count = 0;
      for (std::string line; std::getline(in, line);)
        count += line.find("check ") != std::string::npos && line.find("has a negative extent") == std::string::npos;
      return count;
    };
    EXPECT_GT(shape_checks(f), 0) << ir::to_string(f);  // traced with a check ...
    EXPECT_EQ(shape_checks(g), 0) << ir::to_string(g);  // ... which is proven
  }
}

TEST(ArrayAnalysisTraced, StencilNeedsNoChecks) {
  auto fn = [](Array<double, 1> a) {
    auto b = zeros_like(a);
    b(kiln::range(1, -1)) = a[slice(none, -2)] + a[slice(2, none)];
    return b;
  };
  const auto x = random_values(8, 12);
  const ir::Function f = trace_ir("stencil", {"a"}, fn, x);
  EXPECT_EQ(ir::to_string(f).find("check"), std::string::npos) << ir::to_string(f);
  const ir::Function g = analysed(f);
  EXPECT_EQ(spaces(g), "parfor (i in 0 .. dim(a, 0))\nparfor (i.1 in 0 .. max((dim(a, 0) - 2), 0))\n"
                       "parfor (i.2 in 0 .. max((dim(a, 0) - 2), 0))\n");
}

TEST(ArrayAnalysisTraced, ChecksMoveAboveWhatNobodyCanObserve) {
  // sqrt(T) is computed before the check that T has S's shape; the check moves above it (nothing outside
  // the kernel can tell), so every loop of the formula runs over the same space and fusion makes one.
  auto fn = [](Array<double, 1> S, Array<double, 1> K, Array<double, 1> T, Double r, Double v) {
    auto sqrtT = kiln::sqrt(T);
    auto d1 = (kiln::log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrtT);
    return S * kiln::erf(d1) - K * kiln::exp(-r * T);
  };
  const auto s = random_values(9, 14, 1, 2), k = random_values(9, 15, 1, 2), t = random_values(9, 16, 1, 2);
  const ir::Function f = trace_ir("black_scholes", {"S", "K", "T", "r", "v"}, fn, s, k, t, 0.1, 0.2);
  const ir::Function g = differential(passes::array_analysis, differential(passes::lower_array_ops, f, s, k, t, 0.1, 0.2),
                                      s, k, t, 0.1, 0.2);
  differential(passes::array_analysis, passes::lower_array_ops(f, *std::make_unique<passes::PassContext>()), s, k,
               random_values(8, 16), 0.1, 0.2);
  std::istringstream lines(spaces(g));
  for (std::string line; std::getline(lines, line);) EXPECT_TRUE(line.ends_with(".. dim(S, 0))")) << ir::to_string(g);
  const std::string text = ir::to_string(g);
  EXPECT_LT(text.rfind("check"), text.find("parfor")) << text;
  EXPECT_CONTAINS(notes_of(passes::lower_array_ops(f, *std::make_unique<passes::PassContext>())),
                  "array_analysis: moved check `operands could not be broadcast together in `log(S / K) + ");
  // A write the caller sees stays before the check: a failing call must not have skipped it.
  auto writes = [](Array<double, 1> a, Array<double, 1> b) {
    a += 1.0;
    return a + b;
  };
  const auto x = random_values(3, 17), y = random_values(2, 18);
  const ir::Function w = analysed(trace_ir("writes", {"a", "b"}, writes, x, y));
  EXPECT_LT(ir::to_string(w).find("parfor"), ir::to_string(w).find("check")) << ir::to_string(w);
  differential(passes::array_analysis, passes::lower_array_ops(trace_ir("writes", {"a", "b"}, writes, x, y),
                                                               *std::make_unique<passes::PassContext>()),
               x, y);
}

TEST(ArrayAnalysisTraced, RandomProgramsKeepTheirMeaning) {
  for (unsigned seed = 100; seed < 160; ++seed) {
    const bool column = seed % 4 == 0;
    const RandomProgram program{seed, column};
    for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{5, 4}, {1, 3}, {6, 1}}) {
      const NDArray<double> a = random_matrix(m, n, seed), c = random_matrix(m, column ? 1 : n, seed + 1);
      const auto b = random_values(static_cast<size_t>(n), seed + 2, -2, 2);
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(m) + "x" + std::to_string(n));
      const ir::Function f = trace_ir("random", {"a", "b", "c", "s"}, program, a, b, c, 0.5);
      const ir::Function l = differential(passes::lower_array_ops, f, a, b, c, 0.5);
      differential(passes::array_analysis, l, a, b, c, 0.5);
      // The whole pipeline too: fusion, temporaries, hoisting, simplification keep the meaning.
      const ir::Function p = passes::run_pipeline(f);
      EXPECT_TRUE(interpret(f, a, b, c, 0.5) == interpret(p, a, b, c, 0.5)) << ir::to_string(f) << ir::to_string(p);
    }
  }
}

// BUG (passes/hoist_invariants.cpp): when the value of an argmin/argmax is loop-invariant (here: an array
// whose extent is 1 in this signature, so every iteration loads a[0]), LICM hoists `isnan(x)` out of the
// update `if (k < 0) || (x < v) || (isnan(x) && !isnan(v)) {...}`, which then no longer has the shape
// ir/reductions.hpp requires, and the pipeline fails verification ("argmin_value is read inside its
// parfor outside its own update"). Expected: the argmin of a one-element array, 0.
TEST(ArrayAnalysisTraced, HoistingKeepsArgReductionUpdates) {
  auto k = jit("argmin_one", [](Array<double, 1> a) { return kiln::argmin(a); }, interp());
  EXPECT_EQ(k(std::vector<double>{3.0}), 0);
}

TEST(ArrayAnalysisTraced, RandomProgramsOnTheCpuBackend) {
  if (!has_cpu_backend()) GTEST_SKIP() << "built without the CPU backend";
  for (unsigned seed = 200; seed < 230; ++seed) {
    const bool column = seed % 4 == 0;
    auto interp_k = jit("random", RandomProgram{seed, column}, interp());
    auto cpu_k = jit("random", RandomProgram{seed, column}, cpu());
    const NDArray<double> a = random_matrix(37, 300, seed), c = random_matrix(37, column ? 1 : 300, seed + 1);
    const auto b = random_values(300, seed + 2, -2, 2);
    NDArray<double> a1 = a.clone(), a2 = a.clone(), c1 = c.clone(), c2 = c.clone();
    std::vector<double> b1 = b, b2 = b;
    const NDArray<double> want = interp_k(a1, b1, c1, 0.5), got = cpu_k(a2, b2, c2, 0.5);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_values(got.to_vector(), want.to_vector(), 1e-9, "result");
    expect_values(a2.to_vector(), a1.to_vector(), 1e-9, "a");
    expect_values(c2.to_vector(), c1.to_vector(), 1e-9, "c");
  }
}

// =========================================================================================================
// Golden IR after lower_array_ops and array_analysis (before fusion)
// =========================================================================================================

TEST(ArrayGoldenIR, Softmax) {
  auto fn = [](Array<double, 1> a) {
    auto e = kiln::exp(a - kiln::max(a));
    return e / kiln::sum(e);
  };
  const auto x = random_values(10, 13);
  const ir::Function g = analysed(trace_ir("softmax", {"a"}, fn, x));
  EXPECT_TRUE(interpret(g, x) == interpret(trace_ir("softmax", {"a"}, fn, x), x));
  expect_golden("softmax_arrays.ir", without_lines(ir::to_string(g)));
}

TEST(ArrayGoldenIR, Normalize) {
  auto fn = [](Array<double, 2> x) { return (x - kiln::mean(x, 1, keepdims)) / kiln::std(x, 1, keepdims); };
  const ir::Function g = analysed(trace_ir("normalize", {"x"}, fn, random_matrix(3, 4, 1)));
  expect_golden("normalize_arrays.ir", without_lines(ir::to_string(g)));
}

TEST(ArrayGoldenIR, LogisticRegressionStep) {
  auto fn = [](Array<double, 2> X, Array<double, 1> Y, Array<double, 1> w) {
    w -= dot(((1.0 / (1.0 + kiln::exp(-Y * dot(X, w)))) - 1.0) * Y, X);
  };
  const ir::Function g = analysed(trace_ir("logistic_step", {"X", "Y", "w"}, fn, random_matrix(4, 3, 1),
                                           random_values(4, 2), random_values(3, 3)));
  expect_golden("logistic_step_arrays.ir", without_lines(ir::to_string(g)));
}

}  // namespace
}  // namespace kiln
